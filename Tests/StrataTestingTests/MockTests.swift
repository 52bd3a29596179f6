import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataSession
import StrataTesting
import StrataTransfer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Item: Codable, Equatable, Sendable {
    let id: Int
}

@Suite struct MockNetworkSessionManagerTests {
    @Test func answersInOrderThenWithTheFallbackAndRecordsEveryRequest() async throws {
        let manager = MockNetworkSessionManager(
            responses: [.success(statusCode: 201, body: Data("first".utf8)), .failure(URLError(.timedOut))],
            fallback: .success(statusCode: 202),
            completionQueue: nil
        )
        let recorded = Locked<[(Data?, URLResponse?, (any Error)?)]>([])
        for path in ["a", "b", "c"] {
            manager.request(URLRequest(url: MockDefaults.baseURL.appendingPathComponent(path))) {
                data, response, error in
                recorded.withLock { $0.append((data, response, error)) }
            }
        }
        let outcomes = recorded.value
        #expect(outcomes.count == 3)
        #expect(outcomes[0].0 == Data("first".utf8))
        #expect((outcomes[0].1 as? HTTPURLResponse)?.statusCode == 201)
        #expect((outcomes[1].2 as? URLError)?.code == .timedOut)
        #expect((outcomes[2].1 as? HTTPURLResponse)?.statusCode == 202)
        #expect(manager.requests.map { $0.url?.lastPathComponent } == ["a", "b", "c"])
    }

    @Test func validatesStatusCodesLikeARealManager() {
        let manager = MockNetworkSessionManager(
            responses: [.success(statusCode: 500), .success(statusCode: 500)], completionQueue: nil)
        let errors = Locked<[SessionError?]>([])
        manager.request(URLRequest(url: MockDefaults.baseURL)) { _, _, error in
            errors.withLock { $0.append(error as? SessionError) }
        }
        manager.request(
            URLRequest(url: MockDefaults.baseURL), options: RequestOptions(acceptableStatusCodes: [500])
        ) { _, _, error in
            errors.withLock { $0.append(error as? SessionError) }
        }
        #expect(errors.value == [.unacceptableStatusCode(500), nil])
    }

    /// Options out of range fail as a real manager fails them, before any stubbed answer is used.
    @Test(arguments: [
        RequestOptions(streamIdleTimeout: -1), RequestOptions(streamDeadline: .nan),
        RequestOptions(streamBufferLimit: 0), RequestOptions(maximumBodyLength: -5),
    ])
    func validatesOptionsLikeARealManager(options: RequestOptions) {
        let manager = MockNetworkSessionManager(responses: [.success(statusCode: 201)], completionQueue: nil)
        let outcomes = Locked<[(status: Int?, error: (any Error)?)]>([])
        for options in [options, RequestOptions()] {
            manager.request(URLRequest(url: MockDefaults.baseURL), options: options) { _, response, error in
                outcomes.withLock { $0.append(((response as? HTTPURLResponse)?.statusCode, error)) }
            }
        }
        let (refused, answered) = (outcomes.value[0], outcomes.value[1])
        guard case .invalidOption? = refused.error as? RequestValidationError else {
            Issue.record("expected invalidOption, got \(String(describing: refused.error))")
            return
        }
        #expect(refused.status == nil)
        #expect(answered.status == 201 && answered.error == nil)
        #expect(manager.requests.count == 2)
    }

    @Test func aPendingRequestCompletesOnlyWhenCancelled() async throws {
        let manager = MockNetworkSessionManager(responses: [.pending])
        let recorder = CompletionRecorder<Bool>()
        let cancellable = manager.request(URLRequest(url: MockDefaults.baseURL)) { _, _, error in
            recorder.record((error as? URLError)?.code == .cancelled)
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.callCount == 0)
        cancellable.cancel()
        #expect(await recorder.first() == true)
    }

    /// Progress is told as a real manager tells it: the body sent, then each part received,
    /// counted against the announced length, in order and all before the completion.
    @Test(arguments: [
        (
            MockNetworkSessionManager.Response.success(body: Data("0123456789".utf8)),
            ["up 5/5", "down 10/10", "done"]
        ),
        (
            .success(headers: ["Content-Length": "10"], body: Data("0123".utf8)),
            ["up 5/5", "down 4/10", "done"]
        ),
        (
            .stream(
                StreamScript(
                    headers: ["Content-Length": "7"],
                    steps: [.part(Data("abc".utf8)), .pause(0.01), .part(Data("defg".utf8))])),
            ["up 5/5", "down 3/7", "down 7/7", "done"]
        ),
        (
            .success(headers: ["Content-Encoding": "gzip", "Content-Length": "3"], body: Data("0123456789".utf8)),
            ["up 5/5", "down 10/-1", "done"]
        ),
        (.failure(URLError(.timedOut)), ["done"]),
    ])
    func progressIsToldInOrderBeforeTheCompletion(answer: MockNetworkSessionManager.Response, told: [String]) async {
        let manager = MockNetworkSessionManager(responses: [answer])
        let events = Locked<[String]>([])
        let recorder = CompletionRecorder<Bool>()
        var request = URLRequest(url: MockDefaults.baseURL)
        request.httpMethod = "POST"
        request.httpBody = Data("hello".utf8)
        let options = RequestOptions(
            uploadProgress: { progress in
                events.withLock { $0.append("up \(progress.completedUnitCount)/\(progress.totalUnitCount)") }
            },
            downloadProgress: { progress in
                events.withLock { $0.append("down \(progress.completedUnitCount)/\(progress.totalUnitCount)") }
            })
        manager.request(request, options: options) { _, _, _ in
            events.withLock { $0.append("done") }
            recorder.record(true)
        }
        #expect(await recorder.first() == true)
        try? await Task.sleep(for: .milliseconds(50))  // nothing is told after the completion
        #expect(events.value == told)
    }

    /// A progress closure that starts another request on the same mock, answered in place, holds
    /// nothing up: both complete, each once.
    @Test func aProgressClosureThatStartsAnotherRequestHoldsNothingUp() {
        let manager = MockNetworkSessionManager(
            responses: [.success(body: Data("first".utf8)), .success(body: Data("second".utf8))],
            completionQueue: nil)
        let completed = Locked<[String]>([])
        let options = RequestOptions(downloadProgress: { _ in
            manager.request(URLRequest(url: MockDefaults.baseURL)) { data, _, _ in
                completed.withLock { $0.append(String(decoding: data ?? Data(), as: UTF8.self)) }
            }
        })
        manager.request(URLRequest(url: MockDefaults.baseURL), options: options) { data, _, _ in
            completed.withLock { $0.append(String(decoding: data ?? Data(), as: UTF8.self)) }
        }
        #expect(completed.value == ["second", "first"])
    }

    /// A request cancelled before its answer comes is told nothing; one without a body of known
    /// length is told no upload.
    @Test func aCancelledRequestIsToldNoProgressAndAStreamedBodyNoUpload() async throws {
        let manager = MockNetworkSessionManager(
            responses: [.stream(StreamScript(pauseBeforeHead: 0.2, steps: [.part(Data("late".utf8))])), .success()])
        let told = Locked<[String]>([])
        var request = URLRequest(url: MockDefaults.baseURL)
        request.httpBody = Data("hello".utf8)
        let options = RequestOptions(
            uploadProgress: { _ in told.withLock { $0.append("up") } },
            downloadProgress: { _ in told.withLock { $0.append("down") } })
        let cancelled = CompletionRecorder<Bool>()
        manager.request(request, options: options) { _, _, error in
            cancelled.record((error as? URLError)?.code == .cancelled)
        }.cancel()
        #expect(await cancelled.first() == true)

        request.httpBody = nil
        request.httpBodyStream = InputStream(data: Data("unknown length".utf8))
        let answered = CompletionRecorder<Bool>()
        manager.request(request, options: options) { _, _, error in answered.record(error == nil) }
        #expect(await answered.first() == true)
        try await Task.sleep(for: .milliseconds(300))
        #expect(told.value == [])
    }

    /// Through the layers above, as an app's test would use it: a download to a file reports its
    /// progress.
    @Test func aDownloadThroughTheServiceReportsItsProgress() async throws {
        let manager = MockNetworkSessionManager(responses: [.success(body: Data(repeating: 7, count: 1_000))])
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: MockDefaults.baseURL), sessionManager: manager)
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("mock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let fractions = Locked<[Double]>([])
        let response = try await service.request(
            endpoint: Endpoint<Void>(
                path: "file",
                options: RequestOptions(
                    downloadDestination: destination,
                    downloadProgress: { progress in fractions.withLock { $0.append(progress.fractionCompleted) } })))
        #expect(response.fileURL == destination)
        #expect(fractions.value == [1.0])
    }

    /// A streamed response's request is told its body went out before the first part arrives.
    @Test func aStreamedRequestIsToldItsUploadFirst() async throws {
        let manager = MockNetworkSessionManager(
            responses: [.stream(.chunks([Data("a".utf8), Data("b".utf8)], every: 0.01))])
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: MockDefaults.baseURL), sessionManager: manager)
        let told = Locked<[String]>([])
        let endpoint = Endpoint<Void>(
            path: "events", method: .post, bodyParameters: ["q": "swift"],
            options: RequestOptions(uploadProgress: { progress in
                told.withLock { $0.append("up \(progress.completedUnitCount)/\(progress.totalUnitCount)") }
            }))
        for try await part in service.stream(endpoint: endpoint, decoding: .bytes) {
            told.withLock { $0.append(String(decoding: part, as: UTF8.self)) }
        }
        #expect(told.value == ["up 13/13", "a", "b"])
    }
}

@Suite struct MockNetworkServiceTests {
    /// An endpoint whose options are out of range fails as over a real manager, before any stubbed
    /// answer is used; its request is recorded.
    @Test func anEndpointWithOptionsOutOfRangeFailsAsTheRealServiceWould() async throws {
        let network = MockNetworkService(results: [.success(NetworkResponse(statusCode: 201, body: Data()))])
        await #expect {
            try await network.request(
                endpoint: Endpoint<Void>(path: "a", options: RequestOptions(streamBufferLimit: 0)))
        } throws: { error in
            guard case .invalidRequest(.invalidOption(let name, _)) = error as? NetworkError else { return false }
            return name == "streamBufferLimit"
        }
        #expect(try await network.request(endpoint: Endpoint<Void>(path: "b")).statusCode == 201)
        #expect(network.requests.map { $0.url?.lastPathComponent } == ["a", "b"])
    }

    @Test func buildsRequestsAgainstItsConfigurationAndRecordsThem() async throws {
        let network = MockNetworkService(
            configuration: NetworkConfiguration(
                baseURL: try #require(URL(string: "https://example.test/api")), headers: ["X-App": "1"]),
            results: [.success(NetworkResponse(statusCode: 200, body: Data("x".utf8)))]
        )
        let response = try await network.request(endpoint: Endpoint<Void>(path: "items", queryParameters: ["page": 2]))
        #expect(response.body == Data("x".utf8))
        let request = try #require(network.requests.first)
        #expect(request.url?.absoluteString == "https://example.test/api/items?page=2")
        #expect(request.value(forHTTPHeaderField: "X-App") == "1")
    }

    @Test func anEndpointThatCannotBeBuiltFailsAsTheRealServiceWould() async throws {
        let network = MockNetworkService()
        do {
            _ = try await network.request(endpoint: Endpoint<Void>(path: "no scheme", isFullPath: true))
            Issue.record("expected an error")
        } catch {
            guard case .urlGeneration = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        #expect(network.requests.isEmpty)
    }
}

@Suite struct MockDataTransferServiceTests {
    @Test func answersWithStubbedValuesInOrderAndRecordsRequests() async throws {
        let transfer = MockDataTransferService(stubs: [.value(Item(id: 1)), .value([Item(id: 2)])])
        #expect(try await transfer.request(Endpoint<Item>(path: "items/1")) == Item(id: 1))
        #expect(try await transfer.request(Endpoint<[Item]>(path: "items")) == [Item(id: 2)])
        #expect(transfer.requests.map { $0.url?.path } == ["/items/1", "/items"])
    }

    @Test func aResponseStubIsValidatedAndDecodedWithTheEndpointsDecoder() async throws {
        let transfer = MockDataTransferService(stubs: [
            .response(NetworkResponse(statusCode: 200, body: Data(#"{"id": 7}"#.utf8))),
            .response(NetworkResponse(statusCode: 404, body: Data("missing".utf8))),
        ])
        #expect(try await transfer.requestResponse(Endpoint<Item>(path: "x")).value == Item(id: 7))
        do {
            _ = try await transfer.request(Endpoint<Item>(path: "y"))
            Issue.record("expected an error")
        } catch {
            #expect(error.localizedDescription.contains("404"))
        }
    }

    @Test func aMissingStubOrAWrongTypeIsAFailureNeverASilentPass() async throws {
        let transfer = MockDataTransferService(stubs: [.value("not an item")])
        do {
            _ = try await transfer.request(Endpoint<Item>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .parsing(let mismatch as MockDataTransferService.TypeMismatch, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(mismatch.expected == "Item")
        }
        do {
            try await transfer.request(Endpoint<Void>(path: "nothing-left"))
            Issue.record("expected an error")
        } catch {
            guard case .resolvedNetworkFailure(let missing as MockDataTransferService.MissingStub) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(missing.url.hasSuffix("/nothing-left"))
        }
    }

    /// An endpoint whose options are out of range fails as over a real service, for a whole
    /// response and for a stream alike; its request is recorded and no stub is used.
    @Test func anEndpointWithOptionsOutOfRangeFailsAsTheRealServiceWould() async throws {
        let transfer = MockDataTransferService(stubs: [.value(7), .value([1, 2])])
        let refused = Endpoint<Int>(path: "a", options: RequestOptions(streamIdleTimeout: -1))
        let isRefusal: @Sendable (any Error) -> Bool = { error in
            guard case .networkFailure(.invalidRequest(.invalidOption(let name, _))) = error as? DataTransferError
            else { return false }
            return name == "streamIdleTimeout"
        }
        await #expect(performing: { try await transfer.request(refused) }, throws: isRefusal)
        let stream = transfer.stream(refused)
        await #expect(performing: { for try await _ in stream {} }, throws: isRefusal)

        #expect(try await transfer.request(Endpoint<Int>(path: "b")) == 7)
        var elements: [Int] = []
        for try await element in transfer.stream(Endpoint<Int>(path: "c")) {
            elements.append(element)
        }
        #expect(elements == [1, 2])
        #expect(transfer.requests.map { $0.url?.lastPathComponent } == ["a", "a", "b", "c"])
    }

    @Test func failureStubsAndPendingStubsBehaveAsRequestsWould() async throws {
        let transfer = MockDataTransferService(stubs: [.failure(.networkFailure(.notConnected)), .pending])
        do {
            try await transfer.request(Endpoint<Void>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .networkFailure(.notConnected) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        let recorder = CompletionRecorder<Result<Void, DataTransferError>>()
        let cancellable = transfer.request(with: Endpoint<Void>(path: "y"), completion: recorder.record)
        try await Task.sleep(for: .milliseconds(30))
        #expect(recorder.callCount == 0)
        cancellable.cancel()
        let result = try #require(await recorder.first())
        #expect((try? result.get()) == nil)
    }
}

@Suite struct URLProtocolStubTests {
    @Test func recordsRequestsWithTheirBodiesAndAnswersOnlyItsOwnHost() async throws {
        let stub = URLProtocolStub { request in .response(statusCode: 200, body: request.httpBody ?? Data()) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var request = URLRequest(url: stub.baseURL.appendingPathComponent("echo"))
        request.httpMethod = "POST"
        request.httpBody = Data("ping".utf8)
        let echoed = CompletionRecorder<Data?>()
        manager.request(request) { data, _, _ in echoed.record(data) }
        #expect(await echoed.first() == Data("ping".utf8))
        #expect(stub.requests.first?.httpBody == Data("ping".utf8))

        let unknown = CompletionRecorder<URLError.Code?>()
        let elsewhere = try #require(URL(string: "https://nobody.strata.test/x"))
        manager.request(URLRequest(url: elsewhere)) { _, _, error in unknown.record((error as? URLError)?.code) }
        #expect(await unknown.first() == .cannotFindHost)
    }

    @Test func theCompletionRecorderTimesOutWithNil() async {
        let recorder = CompletionRecorder<Int>()
        #expect(await recorder.first(timeout: 0.05) == nil)
        recorder.record(1)
        recorder.record(2)
        #expect(await recorder.first() == 1)
        #expect(recorder.values == [1, 2])
    }

    /// FoundationNetworking on Linux keeps a session's tasks in a registry that only its own queue
    /// may touch; a stub answering later from another thread raced tasks being cancelled and removed,
    /// and crashed the process now and then.
    @Test func lateAnswersAndCancellationsOnOneSessionEachCompleteTheirTaskOnce() async throws {
        let stub = URLProtocolStub { request in
            let milliseconds = Double(request.url?.lastPathComponent ?? "") ?? 0
            return .response(
                statusCode: 200, body: Data(repeating: 1, count: 64), delay: milliseconds / 1000, chunks: 4,
                chunkInterval: 0.000_5)
        }
        let session = URLSession(configuration: stub.makeSessionConfiguration())
        defer { session.invalidateAndCancel() }
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<4 {
            let total = 300
            let completions = Locked(0)
            let finished = CompletionRecorder<Void>()
            for _ in 0..<total {
                let delay = Int.random(in: 0...6, using: &generator)
                let url = stub.baseURL.appendingPathComponent("\(delay)")
                let task = session.dataTask(with: url) { _, _, _ in
                    let count = completions.withLock { count in
                        count += 1
                        return count
                    }
                    if count == total { finished.record(()) }
                }
                task.resume()
                if Bool.random(using: &generator) {
                    let cancelAfter = Double.random(in: 0...0.008, using: &generator)
                    StrataQueue.async(after: cancelAfter) { task.cancel() }
                }
            }
            _ = await finished.first()
            try await Task.sleep(for: .milliseconds(20))
            #expect(completions.value == total)
        }
    }

    /// The handler is the test's code: it may start a request on the session it answers (on the
    /// session's own queue, that request waited for the queue it ran on, and libdispatch trapped).
    @Test func aHandlerMayStartARequestOnTheSessionItAnswers() async throws {
        let session = Locked<URLSession?>(nil)
        let inner = CompletionRecorder<Int>()
        let stub = URLProtocolStub { request in
            if request.url?.path == "/outer", let session = session.value, let url = request.url {
                session.dataTask(with: url.deletingLastPathComponent().appendingPathComponent("inner")) {
                    _, response, _ in
                    inner.record((response as? HTTPURLResponse)?.statusCode ?? -1)
                }.resume()
            }
            return .response(statusCode: 200, delay: 0.01)
        }
        session.withLock { $0 = URLSession(configuration: stub.makeSessionConfiguration()) }
        defer { session.value?.invalidateAndCancel() }
        let outer = CompletionRecorder<Int>()
        session.value?.dataTask(with: stub.baseURL.appendingPathComponent("outer")) { _, response, _ in
            outer.record((response as? HTTPURLResponse)?.statusCode ?? -1)
        }.resume()
        #expect(await outer.first() == 200)
        #expect(await inner.first() == 200)
        #expect(stub.requests.compactMap { $0.url?.path }.sorted() == ["/inner", "/outer"])
    }
}

@Suite struct StreamScriptTests {
    /// The events as a server's parser reads them back from the script's bytes.
    private func parsed(_ events: [ServerSentEvent]) throws -> [ServerSentEvent] {
        var decoder = ServerSentEventDecoder()
        var read: [ServerSentEvent] = []
        for case .part(let bytes) in StreamScript.events(events).steps {
            try decoder.decode(bytes) { read.append($0) }
        }
        try decoder.finish { read.append($0) }
        return read
    }

    /// An event's data lines end with CR, LF or CR LF on the wire, each read back as one LF: the
    /// script writes data holding any of them as the lines a server would send, so nothing after
    /// a CR is taken for a field of its own (and dropped).
    @Test(arguments: ["a\rb", "a\r\nb", "a\nb", "a\n\rb", "a\r\r\nb", "\r", "a\r", "\ra", "", "x: y\r data: z"])
    func dataWithAnyLineEndingReadsBackAsTheStreamsLines(data: String) throws {
        let expected = data.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        let read = try parsed([ServerSentEvent(event: "update", data: data, lastEventID: "7")])
        #expect(read == [ServerSentEvent(event: "update", data: expected, lastEventID: "7")])
    }

    /// A type or ID cannot hold a line break on the wire: the script writes what comes before the
    /// first, so the rest cannot stand as fields or an event of its own.
    @Test func aTypeOrIDIsWrittenUpToItsFirstLineBreak() throws {
        let read = try parsed([
            ServerSentEvent(event: "tick\rdata: forged", data: "real", lastEventID: "1\n\nevent: forged"),
            ServerSentEvent(event: "tock", data: "next"),
        ])
        #expect(
            read == [
                ServerSentEvent(event: "tick", data: "real", lastEventID: "1"),
                ServerSentEvent(event: "tock", data: "next", lastEventID: "1"),
            ])
    }
}

/// Each test double completes a cancelled request where it completes every other: on its
/// completion queue, after `cancel()` has returned, as the real layers do — or, made without a
/// queue, within `cancel()`.
@Suite struct MockCancellationTests {
    private static func within(_ call: () -> Void) {
        Thread.current.threadDictionary["strata.within"] = true
        call()
        Thread.current.threadDictionary["strata.within"] = nil
    }

    private static var isWithin: Bool { Thread.current.threadDictionary["strata.within"] != nil }

    @Test(arguments: [true, false])
    func aCancellationCompletesWhereEveryOtherCompletionDoes(withQueue: Bool) async throws {
        let queue = withQueue ? DispatchQueue(label: "strata.test.mock-completions") : nil
        let recorder = CompletionRecorder<(String, Bool)>()
        let manager = MockNetworkSessionManager(responses: [.pending], completionQueue: queue)
        let network = MockNetworkService(completionQueue: queue)
        network.enqueue(stream: StreamScript(pauseBeforeHead: 30, steps: []))
        let transfer = MockDataTransferService(stubs: [.pending], completionQueue: queue)
        let calls: [any NetworkCancellable] = [
            manager.request(URLRequest(url: MockDefaults.baseURL)) { _, _, _ in
                recorder.record(("manager", Self.isWithin))
            },
            network.request(endpoint: Endpoint<Void>(path: "x")) { _ in recorder.record(("network", Self.isWithin)) },
            transfer.request(with: Endpoint<Void>(path: "x")) { _ in recorder.record(("transfer", Self.isWithin)) },
        ]
        Self.within { calls.forEach { $0.cancel() } }
        while recorder.callCount < 3 { try await Task.sleep(for: .milliseconds(5)) }
        for (layer, within) in recorder.values {
            #expect(within == !withQueue, "\(layer)")
        }
    }
}
