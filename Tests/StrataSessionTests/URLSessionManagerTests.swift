import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

typealias Outcome = (data: Data?, response: URLResponse?, error: (any Error)?)

/// Sends `request` through `manager` and returns the recorder of its completion.
func send(
    _ request: URLRequest,
    through manager: some NetworkSessionManager,
    options: RequestOptions = RequestOptions()
) -> (CompletionRecorder<Outcome>, any NetworkCancellable) {
    let recorder = CompletionRecorder<Outcome>()
    let cancellable = manager.request(request, options: options) { recorder.record(($0, $1, $2)) }
    return (recorder, cancellable)
}

func isCancelled(_ error: (any Error)?) -> Bool {
    (error as? URLError)?.code == .cancelled
}

@Suite struct URLSessionManagerTests {
    @Test func deliversBodyAndResponseOfAnAcceptableStatus() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 201, headers: ["X-Id": "7"], body: Data("created".utf8))
        }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (recorder, _) = send(URLRequest(url: stub.baseURL.appendingPathComponent("items")), through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error == nil)
        #expect(outcome.data == Data("created".utf8))
        let response = try #require(outcome.response as? HTTPURLResponse)
        #expect(response.statusCode == 201)
        #expect(response.value(forHTTPHeaderField: "x-id") == "7")
        #expect(recorder.callCount == 1)
    }

    @Test func anUnacceptableStatusArrivesWithItsBodyAndASessionError() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 404, body: Data(#"{"error":"missing"}"#.utf8)) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error as? SessionError == .unacceptableStatusCode(404))
        #expect(outcome.data == Data(#"{"error":"missing"}"#.utf8))
        #expect((outcome.response as? HTTPURLResponse)?.statusCode == 404)
    }

    @Test func perRequestAcceptableStatusCodesOverrideTheManagers() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 404) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), acceptableStatusCodes: [200])
        let (recorder, _) = send(
            URLRequest(url: stub.baseURL), through: manager,
            options: RequestOptions(acceptableStatusCodes: [404]))
        #expect(try #require(await recorder.first()).error == nil)
    }

    @Test func aBodyShorterThanItsContentLengthIsAFailureNotATruncatedSuccess() async throws {
        let stub = URLProtocolStub { _ in
            .response(statusCode: 200, headers: ["Content-Length": "100"], body: Data("short".utf8))
        }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error as? SessionError == .incompleteBody(expected: 100, received: 5))
    }

    #if canImport(FoundationNetworking)
        /// FoundationNetworking hands on what a server should not have sent, and libcurl reads on:
        /// an interim response as the answer, a `Content-Length` that is not one length. The
        /// session delegate ends such a request with a typed error rather than a wrong status or a
        /// body cut where nobody knows.
        @Test(arguments: [
            (
                status: 103, headers: ["Link": "</a.css>; rel=preload"],
                error: SessionError.interimResponseTakenForAnswer(statusCode: 103)
            ),
            (status: 100, headers: [:], error: .interimResponseTakenForAnswer(statusCode: 100)),
            (status: 200, headers: ["Content-Length": "5, 10"], error: .invalidContentLength("5, 10")),
            (
                status: 200, headers: ["Content-Length": "99999999999999999999"],
                error: .invalidContentLength("99999999999999999999")
            ),
        ])
        func aResponseTheLoadingSystemShouldHaveRefusedEndsWithATypedError(
            status: Int, headers: [String: String], error: SessionError
        ) async throws {
            let stub = URLProtocolStub { _ in .response(statusCode: status, headers: headers, body: Data("body".utf8)) }
            let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
            let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
            let outcome = try #require(await recorder.first())
            #expect(outcome.error as? SessionError == error)
            #expect(outcome.response == nil)
            try await Task.sleep(for: .milliseconds(50))
            #expect(recorder.callCount == 1)
        }
    #endif

    /// Where `Content-Length` is not the length of the body delivered, a shorter body is no failure:
    /// a compressed body arrives decoded, and `HEAD`, `204` and `304` responses have no body.
    @Test(arguments: [
        (method: "GET", status: 200, headers: ["Content-Length": "100", "Content-Encoding": "gzip"]),
        (method: "HEAD", status: 200, headers: ["Content-Length": "100"]),
        (method: "GET", status: 204, headers: ["Content-Length": "100"]),
        (method: "GET", status: 304, headers: ["Content-Length": "100"]),
    ])
    func aContentLengthThatIsNotTheBodysIsNoFailure(method: String, status: Int, headers: [String: String]) async throws
    {
        let stub = URLProtocolStub { _ in .response(statusCode: status, headers: headers, body: Data("short".utf8)) }
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), acceptableStatusCodes: [200, 204, 304])
        var request = URLRequest(url: stub.baseURL)
        request.httpMethod = method
        let (recorder, _) = send(request, through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error == nil)
        #expect((outcome.response as? HTTPURLResponse)?.statusCode == status)
    }

    @Test func aTransportErrorIsDeliveredAsIs() async throws {
        let stub = URLProtocolStub { _ in .failure(URLError(.cannotConnectToHost)) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        #expect((try #require(await recorder.first()).error as? URLError)?.code == .cannotConnectToHost)
    }

    @Test func requestBodiesReachTheServer() async throws {
        let stub = URLProtocolStub { _ in .response() }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var request = URLRequest(url: stub.baseURL)
        request.httpMethod = "PUT"
        request.httpBody = Data("payload".utf8)
        let (recorder, _) = send(request, through: manager)
        _ = await recorder.first()
        #expect(stub.requests.first?.httpMethod == "PUT")
        #expect(stub.requests.first?.httpBody == Data("payload".utf8))
    }
}

@Suite struct CancellationTests {
    @Test func cancelBeforeTheRequestStartsCompletesOnceWithCancelled() async throws {
        let stub = URLProtocolStub { _ in .response(body: Data("x".utf8), delay: 0.2) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (recorder, cancellable) = send(URLRequest(url: stub.baseURL), through: manager)
        cancellable.cancel()
        cancellable.cancel()
        #expect(isCancelled(try #require(await recorder.first()).error))
        try await Task.sleep(for: .milliseconds(400))
        #expect(recorder.callCount == 1)
        #expect(cancellable.isCancelled)
    }

    @Test func cancelMidTransferCompletesOnceWithCancelled() async throws {
        let body = Data(repeating: 1, count: 10_000)
        // A minute of transfer, so the cancel lands mid-way however long a loaded machine
        // (ThreadSanitizer on 2 cores) oversleeps the 200 ms: over 5 s has been seen.
        let stub = URLProtocolStub { _ in .response(body: body, chunks: 1_000, chunkInterval: 0.06) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (recorder, cancellable) = send(URLRequest(url: stub.baseURL), through: manager)
        try await Task.sleep(for: .milliseconds(200))
        cancellable.cancel()
        let outcome = try #require(await recorder.first())
        #expect(isCancelled(outcome.error))
        #expect(outcome.data == nil)
        try await Task.sleep(for: .milliseconds(1200))
        #expect(recorder.callCount == 1)
    }

    @Test func cancelWhileAnAdapterNeverCallsBackStillCompletesOnce() async throws {
        struct SilentAdapter: RequestAdapter {
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            }
        }
        let stub = URLProtocolStub { _ in .response() }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: [SilentAdapter()])
        let (recorder, cancellable) = send(URLRequest(url: stub.baseURL), through: manager)
        cancellable.cancel()
        #expect(isCancelled(try #require(await recorder.first(timeout: 2)).error))
        #expect(stub.requests.isEmpty)
    }

    @Test func cancelDuringARetryDelayCompletesAtOnceAndIsNeverRetried() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 503) }
        let retrier = CountingRetrier(decision: .retryAfter(2))
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), retriers: [retrier])
        let (recorder, cancellable) = send(URLRequest(url: stub.baseURL), through: manager)
        try await waitUntil { retrier.calls >= 1 }
        let cancelled = ContinuousClock.now
        cancellable.cancel()
        #expect(isCancelled(try #require(await recorder.first()).error))
        // Well before the 2 s delay, however busy the machine.
        #expect(try #require(recorder.instants.first) - cancelled < .seconds(1.5))
        // An attempt whose delay ran out just before the cancel may still be on its way; after
        // that, nothing more is sent, though two retry delays pass.
        try await Task.sleep(for: .milliseconds(50))
        let attemptsAfterCancel = stub.requests.count
        try await Task.sleep(for: .milliseconds(4_100))
        #expect(stub.requests.count == attemptsAfterCancel)
        #expect(recorder.callCount == 1)
    }

    @Test func cancelRacingCompletionAlwaysCompletesExactlyOnce() async throws {
        let stub = URLProtocolStub { _ in .response(body: Data("ok".utf8)) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var recorders: [CompletionRecorder<Outcome>] = []
        for iteration in 0..<2_000 {
            let (recorder, cancellable) = send(URLRequest(url: stub.baseURL), through: manager)
            if iteration % 3 != 0 {
                DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(iteration % 500)) {
                    cancellable.cancel()
                }
            }
            recorders.append(recorder)
        }
        for recorder in recorders {
            let outcome = try #require(await recorder.first())
            #expect(outcome.error == nil || isCancelled(outcome.error))
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorders.allSatisfy { $0.callCount == 1 })
    }

    @Test func releasingTheManagerMidFlightStillCompletesTheRequest() async throws {
        let stub = URLProtocolStub { _ in .response(body: Data("late".utf8), delay: 0.3) }
        var manager: URLSessionManager? = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let recorder = CompletionRecorder<Outcome>()
        manager?.request(URLRequest(url: stub.baseURL)) { recorder.record(($0, $1, $2)) }
        manager = nil
        let outcome = try #require(await recorder.first())
        #expect(outcome.data == Data("late".utf8))
        #expect(recorder.callCount == 1)
    }
}

/// Polls `condition` every 10 ms for up to 5 s.
func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within 5 s")
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
