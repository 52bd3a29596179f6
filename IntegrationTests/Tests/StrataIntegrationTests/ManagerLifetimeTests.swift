import Foundation
import NIOConcurrencyHelpers
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a careless caller does with session managers and streams: lets a manager go while its
/// requests run, makes one per request, starts and cancels streams by the hundred.
@Suite struct ManagerLifetimeTests {
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case value, download, stream, cancelledAfterRelease
        var description: String { rawValue }
    }

    /// The request keeps what it needs: released (with its services) while the server takes
    /// 300 ms to answer, the manager still completes the request, once — or cancels it, once,
    /// when the caller cancels it afterwards.
    @Test(arguments: Kind.allCases)
    func aManagerReleasedWithARequestInFlightCompletesItOnce(kind: Kind) async throws {
        let server = try RawServer { connection in
            guard connection.readHead() != nil else { return }
            Thread.sleep(forTimeInterval: 0.3)
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")
            connection.waitForClose(limit: .seconds(5))
        }
        defer { server.shutdown() }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("strata-lifetime-\(UUID())")
        defer { try? FileManager.default.removeItem(at: destination) }
        let results = CompletionRecorder<String>()
        weak var released: SessionManager?
        var task: (any NetworkCancellable)?
        do {
            let manager = SessionManager.underTest()
            released = manager
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 5),
                    sessionManager: manager),
                completionQueue: DispatchQueue(label: "ManagerLifetimeTests"))
            let record: @Sendable (Result<Data, DataTransferError>) -> Void = { results.record("\($0)") }
            switch kind {
            case .value, .cancelledAfterRelease:
                task = transfer.request(with: Endpoint<Data>(path: "x"), completion: record)
            case .download:
                let options = RequestOptions(downloadDestination: destination)
                task = transfer.request(with: Endpoint<Data>(path: "x", options: options), completion: record)
            case .stream:
                let parts = NIOLockedValueBox(Data())
                task = transfer.stream(
                    Endpoint<Data>(path: "x"), decoding: ByteChunks(), on: nil,
                    receive: { part in parts.withLockedValue { $0 += part } },
                    completion: { result in results.record("\(result.map { parts.withLockedValue { $0 } })") })
            }
        }
        #expect(released == nil)
        if kind == .cancelledAfterRelease { task?.cancel() }
        let result = try #require(await results.first(timeout: 5))
        try await Task.sleep(for: .milliseconds(200))
        #expect(results.callCount == 1)
        switch kind {
        case .value, .stream: #expect(result == "success(2 bytes)")
        case .download:
            #expect(result == "success(0 bytes)")
            #expect(try Data(contentsOf: destination) == Data("ok".utf8))
        case .cancelledAfterRelease: #expect(result.contains("cancelled"))
        }
        _ = task
    }

    /// A manager takes no thread of its own: 300 made at once over a shared transport (a service
    /// made per call, as some apps do), some of them used for a request, then released together,
    /// leave the process's thread count where it was. Each manager's deadline timer had a queue of
    /// its own, which libdispatch gave a thread when the timer was set up and again when it was
    /// cancelled: 261 threads at once, libdispatch's limit, where other work then waits.
    @Test func managersMadeAndReleasedTakeNoThreadEach() async throws {
        guard processThreadCount() != nil else { return }  // Linux's /proc only
        try await Harness.with { harness in
            let transport = TestTransport.current.makeTransport()
            func service() -> DefaultDataTransferService {
                DefaultDataTransferService(
                    networkService: DefaultNetworkService(
                        configuration: NetworkConfiguration(baseURL: harness.server.baseURL),
                        sessionManager: SessionManager(transport: transport)),
                    completionQueue: DispatchQueue(label: "ManagerLifetimeTests"))
            }
            _ = try await service().request(Endpoint<Data>(path: "bytes/100"))
            try await Task.sleep(for: .milliseconds(200))
            let before = try #require(processThreadCount())
            var most = before
            var services: [DefaultDataTransferService] = []
            for _ in 0..<300 {
                services.append(service())
                most = max(most, processThreadCount() ?? 0)
            }
            for service in services.prefix(20) {
                _ = try await service.request(Endpoint<Data>(path: "bytes/100"))
            }
            services.removeAll()
            for _ in 0..<20 {
                most = max(most, processThreadCount() ?? 0)
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(most - before < 24, "\(before) threads before, \(most) at most")
        }
    }

    /// The most threads the process had above its count before `start` ran, while what it started
    /// ran for `running`, was cancelled, and ended (`ended` true, within 5 s).
    static func threadsTaken(
        running: Duration, ended: () -> Bool, _ start: () -> [any NetworkCancellable]
    ) async throws -> Int {
        let before = try #require(processThreadCount())
        let started = start()
        var most = before
        let clock = ContinuousClock()
        let cancelAt = clock.now + running
        let giveUpAt = cancelAt + .seconds(5)
        var cancelled = false
        while clock.now < giveUpAt {
            try await Task.sleep(for: .milliseconds(10))
            most = max(most, processThreadCount() ?? 0)
            if !cancelled, clock.now >= cancelAt {
                for request in started { request.cancel() }
                cancelled = true
            }
            // Watched for half a second after the cancellation, and until all have ended.
            if cancelled, clock.now >= cancelAt + .milliseconds(500), ended() { break }
        }
        return most - before
    }

    /// Streams take no thread each: 200 started at once (most waiting for one of the transport's
    /// connections to the host) and cancelled together leave the thread count where it was. Each
    /// stream decoded on a `DispatchQueue` of its own, and each timer had one: every cancelled
    /// stream's end took a thread, 60 over AsyncHTTPClient and 131–214 over URLSession.
    @Test func streamsCancelledTogetherTakeNoThreadEach() async throws {
        guard processThreadCount() != nil else { return }  // Linux's /proc only
        try await Harness.with(timeout: 30) { harness in
            let options = RequestOptions(streamIdleTimeout: 5, streamDeadline: 20)
            let ends = CompletionRecorder<Bool>()
            let taken = try await Self.threadsTaken(running: .milliseconds(300), ended: { ends.callCount == 200 }) {
                (0..<200).map { _ in
                    harness.transfer.stream(
                        Endpoint<Data>(path: "trickle", queryParameters: ["interval": 20], options: options),
                        decoding: ByteChunks(), on: nil, receive: { _ in },
                        completion: { ends.record((try? $0.get()) != nil) })
                }
            }
            #expect(ends.callCount == 200)
            #expect(taken < 24, "\(taken) threads more at most")
        }
    }

    /// Event sources take no thread each: 200 open at once, each reconnecting after its short
    /// stream ends (three events, 50 ms apart), then cancelled together, leave the thread count
    /// where it was, and their events flow meanwhile. Each source had a `DispatchQueue` of its own,
    /// for its state, events and reconnection timer: 208 threads over AsyncHTTPClient and 213 over
    /// URLSession, and the sources, crowded out, took 24 and 0 events in 1.5 s.
    @Test func eventSourcesOpenTogetherTakeNoThreadEach() async throws {
        guard processThreadCount() != nil else { return }  // Linux's /proc only
        try await Harness.with(timeout: 30) { harness in
            let ends = CompletionRecorder<Bool>()
            let events = NIOLockedValueBox(0)
            let taken = try await Self.threadsTaken(running: .milliseconds(1500), ended: { ends.callCount == 200 }) {
                (0..<200).map { _ in
                    harness.network.eventSource(
                        endpoint: Endpoint<Void>(path: "sse", queryParameters: ["count": 3]), reconnectionTime: 0.05,
                        onEvent: { _ in events.withLockedValue { $0 += 1 } },
                        completion: { ends.record((try? $0.get()) != nil) })
                }
            }
            #expect(ends.callCount == 200)
            #expect(ends.values.allSatisfy { !$0 }, "every source ends cancelled")
            #expect(events.withLockedValue { $0 } >= 600, "\(events.withLockedValue { $0 }) events")
            #expect(taken < 24, "\(taken) threads more at most")
        }
    }

    /// Multipart forms, which are encoded off the caller's thread, take no thread each: 300 of
    /// 200 KB each sent at once, then cancelled, leave the thread count where it was. Each form was
    /// encoded on a `DispatchQueue` of its own: 254 threads more (libdispatch's limit) over both
    /// transports.
    @Test func formsSentTogetherTakeNoThreadEach() async throws {
        guard processThreadCount() != nil else { return }  // Linux's /proc only
        try await Harness.with(timeout: 30) { harness in
            let ends = CompletionRecorder<Bool>()
            let fields: [String: ParameterValue] = ["a": .string(String(repeating: "x", count: 200_000)), "b": "c"]
            let taken = try await Self.threadsTaken(running: .seconds(1), ended: { ends.callCount == 300 }) {
                (0..<300).map { _ in
                    harness.transfer.request(
                        with: Endpoint<Data>(
                            path: "multipart", method: .post, bodyParameters: fields, bodyEncoding: MultipartEncoding()),
                        completion: { ends.record((try? $0.get()) != nil) })
                }
            }
            #expect(ends.callCount == 300)
            #expect(taken < 24, "\(taken) threads more at most")
        }
    }
}
