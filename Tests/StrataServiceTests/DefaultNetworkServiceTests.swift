import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private let configuration = NetworkConfiguration(
    baseURL: URL(string: "https://api.example.com/v1") ?? URL(fileURLWithPath: "/"),
    headers: ["X-Client": "strata"]
)

private func run(
    _ endpoint: any Requestable,
    with manager: MockNetworkSessionManager
) async throws -> Result<NetworkResponse, NetworkError> {
    let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
    let recorder = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
    service.request(endpoint: endpoint, completion: recorder.record)
    let result = try #require(await recorder.first())
    try await Task.sleep(for: .milliseconds(20))
    #expect(recorder.callCount == 1)
    return result
}

@Suite struct DefaultNetworkServiceTests {
    @Test func successDeliversStatusHeadersAndBody() async throws {
        let manager = MockNetworkSessionManager(responses: [
            .success(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
        ])
        let response = try await run(Endpoint<Void>(path: "users"), with: manager).get()
        #expect(response.statusCode == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.body == Data("{}".utf8))
        #expect(response.url?.absoluteString == "https://api.example.com/v1/users")
    }

    @Test func theBuiltRequestReachesTheSessionManagerWithConfigurationAndEndpointSettings() async throws {
        let manager = MockNetworkSessionManager()
        _ = try await run(
            Endpoint<Void>(path: "users", method: .post, headerParameters: ["X-Trace": "1"], bodyParameters: ["a": 1]),
            with: manager)
        let request = try #require(manager.requests.first)
        #expect(request.httpMethod == "POST")
        #expect(request.value(forHTTPHeaderField: "X-Client") == "strata")
        #expect(request.value(forHTTPHeaderField: "X-Trace") == "1")
        #expect(request.httpBody == Data(#"{"a":1}"#.utf8))
    }

    @Test(arguments: [400, 401, 404, 422, 500, 503])
    func a4xxOr5xxIsAFailureCarryingStatusHeadersAndBody(status: Int) async throws {
        let manager = MockNetworkSessionManager(responses: [
            .success(statusCode: status, headers: ["Retry-After": "5"], body: Data(#"{"error":"x"}"#.utf8))
        ])
        let result = try await run(Endpoint<Void>(path: "x"), with: manager)
        guard case .failure(.unacceptableStatusCode(let response)) = result else {
            Issue.record("expected unacceptableStatusCode, got \(result)")
            return
        }
        #expect(response.statusCode == status)
        #expect(response.headers["retry-after"] == "5")
        #expect(response.body == Data(#"{"error":"x"}"#.utf8))
    }

    @Test func theEndpointsAcceptableStatusCodesAreUsedAndPassedToTheManager() async throws {
        let manager = MockNetworkSessionManager(responses: [.success(statusCode: 404)])
        let result = try await run(
            Endpoint<Void>(path: "x", options: RequestOptions(acceptableStatusCodes: [200, 404])), with: manager)
        #expect(try result.get().statusCode == 404)
        #expect(manager.receivedOptions.first?.acceptableStatusCodes == [200, 404])
    }

    @Test func theEndpointsTransportSettingsReachTheManager() async throws {
        let manager = MockNetworkSessionManager()
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID()).bin")
        // The test double writes its body there, as a manager would.
        defer { try? FileManager.default.removeItem(at: destination) }
        let uploads = CompletionRecorder<Progress>()
        let downloads = CompletionRecorder<Progress>()
        _ = try await run(
            Endpoint<Void>(
                path: "x",
                options: RequestOptions(
                    uploadProgress: uploads.record,
                    interceptor: Interceptor(adapters: [HeadersAdapter(["X-Endpoint": "1"])]),
                    redirectPolicy: .doNotFollow,
                    downloadDestination: destination,
                    downloadProgress: downloads.record,
                    originBoundHeaderNames: ["X-Tenant"]
                )
            ),
            with: manager
        )
        let options = try #require(manager.receivedOptions.first)
        #expect(options.interceptor != nil)
        #expect(options.redirectPolicy != nil)
        #expect(options.downloadDestination == destination)
        #expect(options.originBoundHeaderNames == ["X-Tenant", "X-Client"])
        options.uploadProgress?(Progress(totalUnitCount: 1))
        options.downloadProgress?(Progress(totalUnitCount: 2))
        #expect(uploads.values.map(\.totalUnitCount) == [1])
        #expect(downloads.values.map(\.totalUnitCount) == [2])
    }

    @Test func theManagersDefaultsApplyWhenTheEndpointNamesNoTransportSettings() async throws {
        let manager = MockNetworkSessionManager()
        _ = try await run(Endpoint<Void>(path: "x"), with: manager)
        let options = try #require(manager.receivedOptions.first)
        #expect(options.interceptor == nil)
        #expect(options.redirectPolicy == nil)
        #expect(options.downloadDestination == nil)
        #expect(options.uploadProgress == nil && options.downloadProgress == nil)
    }

    @Test func theManagersAcceptableStatusCodesApplyWhenTheEndpointNamesNone() async throws {
        let manager = MockNetworkSessionManager(
            responses: [.success(statusCode: 304)], acceptableStatusCodes: Set(200..<400))
        #expect(try await run(Endpoint<Void>(path: "x"), with: manager).get().statusCode == 304)
        // The service leaves the choice to the manager, which validates once.
        #expect(manager.receivedOptions.first?.acceptableStatusCodes == nil)
    }

    @Test(
        arguments: [
            (URLError.Code.notConnectedToInternet, "notConnected"), (.dataNotAllowed, "notConnected"),
            (.internationalRoamingOff, "notConnected"), (.timedOut, "timedOut"), (.cancelled, "cancelled"),
            (.cannotConnectToHost, "transport"), (.networkConnectionLost, "transport"), (.cannotFindHost, "transport"),
        ]
    )
    func urlErrorsAreMappedByCode(code: URLError.Code, expected: String) async throws {
        let manager = MockNetworkSessionManager(responses: [.failure(URLError(code))])
        let result = try await run(Endpoint<Void>(path: "x"), with: manager)
        switch result {
        case .failure(.notConnected): #expect(expected == "notConnected")
        case .failure(.timedOut): #expect(expected == "timedOut")
        case .failure(.cancelled): #expect(expected == "cancelled")
        case .failure(.transport(let error)):
            #expect(expected == "transport")
            #expect(error.code == code)
        default: Issue.record("unexpected \(result)")
        }
    }

    @Test func aTransportErrorAfterA2xxIsAFailureNotATruncatedSuccess() async throws {
        struct CutShort: NetworkSessionManager {
            func request(
                _ request: URLRequest, options: RequestOptions, completion: @escaping CompletionHandler
            )
                -> any NetworkCancellable
            {
                let response = HTTPURLResponse(
                    url: request.url ?? URL(fileURLWithPath: "/"), statusCode: 200, httpVersion: nil, headerFields: nil)
                completion(Data("partial".utf8), response, URLError(.networkConnectionLost))
                return CancellationToken()
            }
        }
        let service = DefaultNetworkService(configuration: configuration, sessionManager: CutShort())
        let result = await withCheckedContinuation { continuation in
            service.request(endpoint: Endpoint<Void>(path: "x")) { continuation.resume(returning: $0) }
        }
        guard case .failure(.transport(let error)) = result else {
            Issue.record("expected a transport failure, got \(result)")
            return
        }
        #expect(error.code == .networkConnectionLost)
    }

    @Test func anIncompleteBodyReportedByTheSessionIsATransportFailure() async throws {
        let manager = MockNetworkSessionManager(responses: [
            .failure(SessionError.incompleteBody(expected: 10, received: 4))
        ])
        guard case .failure(.transport(let error)) = try await run(Endpoint<Void>(path: "x"), with: manager) else {
            Issue.record("expected a transport failure")
            return
        }
        #expect(error.code == .networkConnectionLost)
        #expect(error.localizedDescription.contains("4 of 10"))
    }

    @Test func aResponseThatIsNotHTTPIsInvalidResponse() async throws {
        struct FileLike: NetworkSessionManager {
            func request(
                _ request: URLRequest, options: RequestOptions, completion: @escaping CompletionHandler
            )
                -> any NetworkCancellable
            {
                let url = request.url ?? URL(fileURLWithPath: "/")
                completion(
                    Data("x".utf8),
                    URLResponse(url: url, mimeType: nil, expectedContentLength: 1, textEncodingName: nil), nil)
                return CancellationToken()
            }
        }
        let service = DefaultNetworkService(configuration: configuration, sessionManager: FileLike())
        let result = await withCheckedContinuation { continuation in
            service.request(endpoint: Endpoint<Void>(path: "x")) { continuation.resume(returning: $0) }
        }
        guard case .failure(.invalidResponse) = result else {
            Issue.record("expected invalidResponse, got \(result)")
            return
        }
    }

    @Test func otherErrorsAreKeptAsUnderlying() async throws {
        struct TokenStoreLocked: Error {}
        let manager = MockNetworkSessionManager(responses: [.failure(TokenStoreLocked())])
        guard case .failure(.underlying(let error)) = try await run(Endpoint<Void>(path: "x"), with: manager) else {
            Issue.record("expected an underlying failure")
            return
        }
        #expect(error is TokenStoreLocked)
    }

    @Test func aRefusedServerIsATypedServerTrustFailure() async throws {
        let manager = MockNetworkSessionManager(responses: [.failure(ServerTrustError.noPinnedKey(host: "x.test"))])
        let result = try await run(Endpoint<Void>(path: "x"), with: manager)
        guard case .failure(.serverTrust(.noPinnedKey(let host))) = result else {
            Issue.record("expected serverTrust, got \(result)")
            return
        }
        #expect(host == "x.test")
    }

    @Test func aBadURLIsATypedErrorAndNothingIsSent() async throws {
        let manager = MockNetworkSessionManager()
        let result = try await run(Endpoint<Void>(path: "::not a url", isFullPath: true), with: manager)
        guard case .failure(.urlGeneration(.invalidURL)) = result else {
            Issue.record("expected urlGeneration, got \(result)")
            return
        }
        #expect(manager.requests.isEmpty)
    }

    @Test func anEncodingFailureIsATypedErrorAndNothingIsSent() async throws {
        struct Bad: Encodable, Sendable { let value = Double.infinity }
        let manager = MockNetworkSessionManager()
        let result = try await run(
            Endpoint<Void>(path: "x", method: .post, bodyParametersEncodable: Bad()), with: manager)
        guard case .failure(.encoding(let error)) = result else {
            Issue.record("expected encoding, got \(result)")
            return
        }
        #expect(error.localizedDescription.contains("Bad"))
        #expect(manager.requests.isEmpty)
    }

    @Test func cancellingCompletesOnceWithCancelledEvenIfTheManagerNeverAnswers() async throws {
        let manager = MockNetworkSessionManager(responses: [.pending])
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        let recorder = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
        let cancellable = service.request(endpoint: Endpoint<Void>(path: "x"), completion: recorder.record)
        cancellable.cancel()
        cancellable.cancel()
        let result = try #require(await recorder.first())
        #expect(result.failure?.isCancelled == true)
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.callCount == 1)
    }

    @Test func cancelRacingCompletionCompletesExactlyOnce() async throws {
        let manager = MockNetworkSessionManager(fallback: .success(body: Data("ok".utf8)))
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        var recorders: [CompletionRecorder<Result<NetworkResponse, NetworkError>>] = []
        for iteration in 0..<5_000 {
            let recorder = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
            let cancellable = service.request(endpoint: Endpoint<Void>(path: "x"), completion: recorder.record)
            if iteration.isMultiple(of: 2) {
                DispatchQueue.global().async { cancellable.cancel() }
            }
            recorders.append(recorder)
        }
        for recorder in recorders {
            _ = try #require(await recorder.first())
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorders.allSatisfy { $0.callCount == 1 })
    }

    @Test func theAsyncBridgeReturnsTheResponseOrThrowsTheTypedError() async throws {
        let manager = MockNetworkSessionManager(responses: [
            .success(statusCode: 200, body: Data("a".utf8)), .success(statusCode: 500),
        ])
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        #expect(try await service.request(endpoint: Endpoint<Void>(path: "x")).body == Data("a".utf8))
        do {
            _ = try await service.request(endpoint: Endpoint<Void>(path: "x"))
            Issue.record("expected an error")
        } catch {
            #expect(error.statusCode == 500)
        }
    }

    @Test func theAsyncBridgeCancelsTheRequestWhenTheTaskIsCancelled() async throws {
        let manager = MockNetworkSessionManager(responses: [.pending])
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        let task = Task { try await service.request(endpoint: Endpoint<Void>(path: "x")) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let result = await task.result
        #expect((result.failure as? NetworkError)?.isCancelled == true)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// What a service does by default scales: one shared manager, and slow bodies encoded off the
/// caller's thread.
@Suite struct DefaultsThatScaleTests {
    private static let callerKey = DispatchSpecificKey<Bool>()

    /// An encoding that says it is slow, and notes whether it ran on the caller's queue.
    private struct SlowEncoding: ParameterEncoding {
        let onCaller: Locked<[Bool]>
        var isSlowToEncode: Bool { true }
        var writesBodyWithoutParameters: Bool { true }
        func encode(
            _ request: URLRequest, with parameters: [String: ParameterValue]
        ) throws(ParameterEncodingError)
            -> URLRequest
        {
            onCaller.withLock { $0.append(DispatchQueue.getSpecific(key: DefaultsThatScaleTests.callerKey) == true) }
            var request = request
            request.httpBody = Data("slow".utf8)
            return request
        }
    }

    @Test func servicesThatNameNoManagerShareOne() {
        let first = DefaultNetworkService(configuration: configuration)
        let second = DefaultNetworkService(configuration: configuration)
        #expect((first.sessionManager as? SessionManager) === SessionManager.shared)
        #expect((second.sessionManager as? SessionManager) === SessionManager.shared)
    }

    @Test func aSlowBodyIsEncodedOffTheCallersQueueAndAFastOneOnIt() async throws {
        #expect(MultipartEncoding(form: MultipartFormData()).isSlowToEncode)
        #expect(!JSONEncoding.default.isSlowToEncode)
        let caller = DispatchQueue(label: "strata.test.caller")
        caller.setSpecific(key: Self.callerKey, value: true)
        let onCaller = Locked<[Bool]>([])
        let manager = MockNetworkSessionManager()
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        let slow = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
        caller.sync {
            _ = service.request(
                endpoint: Endpoint<Void>(path: "upload", method: .post, bodyEncoding: SlowEncoding(onCaller: onCaller)),
                completion: slow.record)
        }
        #expect(try #require(await slow.first()).failure == nil)
        #expect(onCaller.value == [false])
        #expect(manager.requests.first?.httpBody == Data("slow".utf8))
    }

    /// A request whose body is slow to encode, cancelled, completes after `cancel()` returns, not
    /// within it, where a completion that takes a lock or a queue the canceller holds (as a caller
    /// guarding its state would) deadlocks.
    @Test func cancellingASlowBodysRequestCompletesOffTheCancellersStack() async throws {
        let manager = MockNetworkSessionManager(fallback: .pending)
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        let canceller = DispatchQueue(label: "strata.test.canceller")
        canceller.setSpecific(key: Self.callerKey, value: true)
        let recorder = CompletionRecorder<(cancelled: Bool, withinCancel: Bool)>()
        let call = service.request(
            endpoint: Endpoint<Void>(path: "upload", method: .post, bodyEncoding: SlowEncoding(onCaller: Locked([])))
        ) { result in
            recorder.record(
                (result.failure?.isCancelled == true, DispatchQueue.getSpecific(key: Self.callerKey) == true))
        }
        canceller.sync { call.cancel() }
        let outcome = try #require(await recorder.first(timeout: 5))
        #expect(outcome.cancelled)
        #expect(!outcome.withinCancel)
    }

    @Test func cancellingWhileASlowBodyIsEncodedCompletesOnceWithCancelled() async throws {
        // The manager never answers: whether a request was cancelled before or after it was encoded
        // and sent, cancelling is the only way it ends.
        let manager = MockNetworkSessionManager(fallback: .pending)
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        let recorders = (0..<200).map { _ in CompletionRecorder<Result<NetworkResponse, NetworkError>>() }
        for recorder in recorders {
            service.request(
                endpoint: Endpoint<Void>(
                    path: "upload", method: .post, bodyEncoding: SlowEncoding(onCaller: Locked([]))),
                completion: recorder.record
            ).cancel()
        }
        for recorder in recorders {
            #expect(try #require(await recorder.first()).failure?.isCancelled == true)
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorders.allSatisfy { $0.callCount == 1 })
    }
}

/// A transport that answers before `send` returns, as a test double may: `/ok` with a `200` and a
/// body, anything else with a `503`.
private struct AnswersAtOnce: Transport {
    let sent = Locked(0)

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        sent.withLock { $0 += 1 }
        let url = attempt.request.url ?? URL(fileURLWithPath: "/")
        let status = url.path.hasSuffix("/ok") ? 200 : 503
        let relay = ResponseRelay(to: receiver)
        relay.push(ResponseHead(url: url, statusCode: status, httpVersion: "HTTP/1.1", headers: [:]))
        relay.push(Data("{\"id\":1}".utf8))
        relay.end(nil)
        return relay
    }
}

/// Retries a failure once, and counts the failures it was asked about.
private struct RetriesOnce: RequestRetrier {
    let asked = Locked(0)

    func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        asked.withLock { $0 += 1 }
        completion(failure.attemptCount < 2 ? .retry : .doNotRetry)
    }
}

/// The async methods take a success where the transport reports it; with a transport that reports
/// before `send` returns, the whole request completes inside the call, once, and failures still
/// reach the retriers.
@Suite struct AsyncOverASynchronousTransportTests {
    @Test func successesAndFailuresCompleteOnceWhenTheTransportAnswersAtOnce() async throws {
        let transport = AnswersAtOnce()
        let retrier = RetriesOnce()
        let service = DefaultNetworkService(
            configuration: configuration, sessionManager: SessionManager(transport: transport, retriers: [retrier]))
        for _ in 0..<100 {
            let response = try await service.request(endpoint: Endpoint<Void>(path: "ok"))
            #expect(response.statusCode == 200)
            #expect(response.body == Data("{\"id\":1}".utf8))
        }
        #expect(transport.sent.value == 100)
        await #expect(throws: NetworkError.self) { try await service.request(endpoint: Endpoint<Void>(path: "down")) }
        #expect(retrier.asked.value == 2)
        #expect(transport.sent.value == 102)
    }

    @Test func aCancelledTaskStillEndsOnceWhenTheAnswerCameFirst() async throws {
        let service = DefaultNetworkService(
            configuration: configuration, sessionManager: SessionManager(transport: AnswersAtOnce()))
        for _ in 0..<100 {
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await service.request(endpoint: Endpoint<Void>(path: "ok"))
            }
            // Cancelled before it started: either outcome is right, and it ends.
            switch await task.result {
            case .success(let response): #expect(response.statusCode == 200)
            case .failure(let error): #expect((error as? NetworkError)?.isCancelled == true)
            }
        }
    }
}

/// A transport that reports each response as a ``ResponseHead``, keeping every head it made.
private final class ReportsHeads: Transport {
    private let answer: @Sendable (URL) -> (status: Int, headers: HTTPHeaders, body: String)
    private let made = Locked<[ResponseHead]>([])

    init(_ answer: @escaping @Sendable (URL) -> (status: Int, headers: HTTPHeaders, body: String)) {
        self.answer = answer
    }

    var heads: [ResponseHead] { made.value }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let url = attempt.request.url ?? URL(fileURLWithPath: "/")
        let (status, headers, body) = answer(url)
        let head = ResponseHead(url: url, statusCode: status, httpVersion: "HTTP/1.1", headers: headers)
        made.withLock { $0.append(head) }
        return ResponsePlayback.start(head: head, steps: [.part(Data(body.utf8))], to: receiver)
    }
}

/// A transport may report a response head instead of an `HTTPURLResponse`: the pipeline and the
/// service read its status and fields, and an `HTTPURLResponse` is made only for code that reads
/// one — the same response either way.
@Suite struct ResponseHeadTests {
    private static let fields: HTTPHeaders = [
        "content-type": "application/json", "Set-Cookie": "a=1", "set-cookie": "b=2", "X-Trace": "t",
    ]

    @Test func theServiceReadsAHeadsFieldsWithoutMakingAnHTTPURLResponse() async throws {
        let transport = ReportsHeads { url in
            url.path.hasSuffix("/missing") ? (404, ["Content-Type": "text/plain"], "gone") : (200, Self.fields, "{}")
        }
        let service = DefaultNetworkService(
            configuration: configuration, sessionManager: SessionManager(transport: transport))

        let response = try await service.request(endpoint: Endpoint<Void>(path: "items"))
        #expect(response.statusCode == 200)
        #expect(response.body == Data("{}".utf8))
        #expect(response.url?.path == "/v1/items")
        // The shape an HTTPURLResponse gives: sorted by name, a repeated name's values joined.
        #expect(response.headers == ["content-type": "application/json", "Set-Cookie": "a=1, b=2", "X-Trace": "t"])

        let error = await #expect(throws: NetworkError.self) {
            try await service.request(endpoint: Endpoint<Void>(path: "missing"))
        }
        guard case .unacceptableStatusCode(let refused) = error else {
            Issue.record("expected unacceptableStatusCode, got \(String(describing: error))")
            return
        }
        #expect(refused.statusCode == 404)
        #expect(refused.headers["content-type"] == "text/plain")
        #expect(refused.bodyText == "gone")
        #expect(transport.heads.count == 2)
        #expect(transport.heads.allSatisfy { !$0.hasMadeResponse })
    }

    @Test func aSessionManagerCompletionGetsTheHeadAsAnHTTPURLResponse() async throws {
        let transport = ReportsHeads { _ in (201, Self.fields, "made") }
        let manager = SessionManager(transport: transport)
        let url = try #require(URL(string: "https://api.example.com/items"))
        let (data, response): (Data?, URLResponse?) = await withCheckedContinuation { continuation in
            manager.request(URLRequest(url: url)) { data, response, _ in
                continuation.resume(returning: (data, response))
            }
        }
        let http = try #require(response as? HTTPURLResponse)
        #expect(data == Data("made".utf8))
        #expect(http.statusCode == 201)
        #expect(http.url == url)
        #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(http.value(forHTTPHeaderField: "set-cookie") == "a=1, b=2")
        let head = try #require(transport.heads.first)
        #expect(head.hasMadeResponse)
        #expect(head.httpURLResponse === http)
    }

    @Test func aBodyShorterThanTheHeadsContentLengthIsAnIncompleteBody() async throws {
        let transport = ReportsHeads { url in
            let compressed = url.path.hasSuffix("/compressed")
            var headers: HTTPHeaders = ["Content-Length": "10"]
            if compressed { headers.add(name: "Content-Encoding", value: "gzip") }
            return (200, headers, "short")
        }
        let service = DefaultNetworkService(
            configuration: configuration, sessionManager: SessionManager(transport: transport))
        let error = await #expect(throws: NetworkError.self) {
            try await service.request(endpoint: Endpoint<Void>(path: "cut"))
        }
        guard case .transport(let lost) = error else {
            Issue.record("expected a transport failure, got \(String(describing: error))")
            return
        }
        #expect(lost.code == .networkConnectionLost)
        #expect(lost.localizedDescription.contains("5 of 10"))
        // A decoded body's length is not the one on the wire.
        let response = try await service.request(endpoint: Endpoint<Void>(path: "compressed"))
        #expect(response.bodyText == "short")
    }

    @Test(arguments: [
        ("1024", Int64(1024)), ("0", 0), ("-5", -5), ("ten", -1), (" 10", -1), ("10, 10", -1),
        ("99999999999999999999", -1), ("", -1),
    ])
    func aHeadReadsItsContentLengthAsURLResponseDoes(field: String, expected: Int64) throws {
        let url = try #require(URL(string: "https://api.example.com/items"))
        let head = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: ["Content-Length": field])
        #expect(head.expectedContentLength == expected)
        #expect(head.httpURLResponse?.expectedContentLength == expected)
        let bare = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:])
        #expect(bare.expectedContentLength == -1)
    }

    @Test func readersRacingForAHeadsResponseAllGetTheOneMade() async throws {
        let url = try #require(URL(string: "https://api.example.com/items"))
        for _ in 0..<50 {
            let head = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: Self.fields)
            let responses = await withTaskGroup(of: ObjectIdentifier?.self) { group in
                for _ in 0..<8 {
                    group.addTask { head.httpURLResponse.map(ObjectIdentifier.init) }
                }
                return await group.reduce(into: Set<ObjectIdentifier?>()) { $0.insert($1) }
            }
            #expect(responses.count == 1)
            #expect(responses.first.flatMap { $0 } != nil)
        }
    }

    @Test func aHeadsRedirectIsFollowed() async throws {
        let transport = ReportsHeads { url in
            url.host == "api.example.com"
                ? (307, ["Location": "https://cdn.example.com/items/1"], "") : (200, [:], "landed")
        }
        let service = DefaultNetworkService(
            configuration: configuration, sessionManager: SessionManager(transport: transport))
        let response = try await service.request(endpoint: Endpoint<Void>(path: "items"))
        #expect(response.bodyText == "landed")
        #expect(response.url?.host == "cdn.example.com")
        #expect(transport.heads.map(\.statusCode) == [307, 200])
    }
}
