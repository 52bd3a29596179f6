import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adds a header, optionally after a delay, and records the order it ran in.
struct HeaderAdapter: RequestAdapter {
    let name: String
    let value: String
    let log: Locked<[String]>
    var delay: TimeInterval = 0

    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        var copy = request
        let existing = request.value(forHTTPHeaderField: name).map { $0 + "," } ?? ""
        copy.setValue(existing + value, forHTTPHeaderField: name)
        let adapted = copy
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
            log.withLock { $0.append(value) }
            completion(.success(adapted))
        }
    }
}

/// Answers every failure with the same decision and counts the calls.
final class CountingRetrier: RequestRetrier {
    private let state = Locked<[RequestFailure]>([])
    let decision: @Sendable (RequestFailure) -> RetryDecision

    init(decision: RetryDecision) {
        self.decision = { _ in decision }
    }

    init(decide: @escaping @Sendable (RequestFailure) -> RetryDecision) {
        self.decision = decide
    }

    var calls: Int { state.value.count }
    var failures: [RequestFailure] { state.value }

    func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        state.withLock { $0.append(failure) }
        completion(decision(failure))
    }
}

struct AdapterFailure: Error, Equatable {}
struct ReplacementError: Error, Equatable {}

@Suite struct InterceptionTests {
    @Test func adaptersRunInOrderEachOnThePreviousOutput() async throws {
        let stub = URLProtocolStub { _ in .response() }
        let log = Locked<[String]>([])
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(),
            adapters: [
                HeaderAdapter(name: "X-Chain", value: "first", log: log, delay: 0.05),
                HeaderAdapter(name: "X-Chain", value: "second", log: log),
            ]
        )
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        _ = await recorder.first()
        #expect(log.value == ["first", "second"])
        #expect(stub.requests.first?.value(forHTTPHeaderField: "X-Chain") == "first,second")
    }

    @Test func aFailingAdapterEndsTheRequestWithItsErrorAndNothingIsSent() async throws {
        struct FailingAdapter: RequestAdapter {
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
                completion(.failure(AdapterFailure()))
            }
        }
        let stub = URLProtocolStub { _ in .response() }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: [FailingAdapter()])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        #expect(try #require(await recorder.first()).error as? AdapterFailure == AdapterFailure())
        #expect(stub.requests.isEmpty)
    }

    /// Calls back after `delay` seconds, or never: an adapter and retrier whose completion a path
    /// of the caller's code dropped.
    struct Late: RequestAdapter, RequestRetrier {
        var delay: TimeInterval?
        let calls = Locked(0)
        /// A queue of its own: the global queue's threads are what other tests block.
        private let queue = DispatchQueue(label: "InterceptionTests.late")

        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            calls.withLock { $0 += 1 }
            guard let delay else { return }
            queue.asyncAfter(deadline: .now() + delay) { completion(.success(request)) }
        }

        func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
            calls.withLock { $0 += 1 }
            guard let delay else { return }
            queue.asyncAfter(deadline: .now() + delay) { completion(.retry) }
        }
    }

    private static func timedOut(_ error: (any Error)?, saying words: String) -> Bool {
        guard let error = error as? URLError, error.code == .timedOut else { return false }
        return error.localizedDescription.contains(words)
    }

    @Test(arguments: [nil, 1.5])
    func anAdapterThatDoesNotCallBackWithinTheTimeoutFailsTheRequestUnsent(delay: TimeInterval?) async throws {
        let stub = URLProtocolStub { _ in .response() }
        let adapter = Late(delay: delay)
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: [adapter])
        let started = ContinuousClock.now
        let (recorder, _) = send(URLRequest(url: stub.baseURL, timeoutInterval: 0.5), through: manager)
        let outcome = try #require(await recorder.first(timeout: 20))
        #expect(ContinuousClock.now - started >= .seconds(0.5))
        #expect(
            Self.timedOut(outcome.error, saying: "adapters had not called back"), "\(String(describing: outcome.error))"
        )
        // A late callback is one nobody waits for: nothing is sent, nothing completes again.
        try await Task.sleep(for: .seconds(1.5))
        #expect(stub.requests.isEmpty)
        #expect(recorder.callCount == 1)
        #expect(adapter.calls.value == 1)
    }

    /// A timeout that is not a positive number bounds nothing, the wait for the adapters included:
    /// the request fails with the typed error before any adapter is asked.
    @Test(arguments: [0, -1, TimeInterval.nan, -TimeInterval.infinity])
    func aTimeoutThatIsNotPositiveFailsBeforeAnAdapterThatNeverCallsBackIsAsked(timeout: TimeInterval) async throws {
        let stub = URLProtocolStub { _ in .response() }
        let adapter = Late(delay: nil)
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: [adapter])
        var request = URLRequest(url: stub.baseURL)
        request.timeoutInterval = timeout
        let (recorder, _) = send(request, through: manager)
        let error = try #require(await recorder.first(timeout: 5)).error
        guard case .invalidTimeout? = error as? RequestValidationError else {
            Issue.record("expected invalidTimeout, got \(String(describing: error))")
            return
        }
        #expect(adapter.calls.value == 0)
        #expect(stub.requests.isEmpty)
        #expect(recorder.callCount == 1)
    }

    /// An adapter may still change the timeout; one it makes not positive fails the request unsent.
    @Test func aTimeoutAnAdapterMakesNotPositiveFailsTheRequestUnsent() async throws {
        struct Untimed: RequestAdapter {
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
                var request = request
                request.timeoutInterval = .nan
                completion(.success(request))
            }
        }
        let stub = URLProtocolStub { _ in .response() }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: [Untimed()])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let error = try #require(await recorder.first(timeout: 5)).error
        guard case .invalidTimeout(let seconds)? = error as? RequestValidationError else {
            Issue.record("expected invalidTimeout, got \(String(describing: error))")
            return
        }
        #expect(seconds.isNaN)
        #expect(stub.requests.isEmpty)
    }

    @Test(arguments: [nil, 1.5])
    func aRetrierThatDoesNotDecideWithinTheTimeoutFailsTheRequestWithItsResponse(delay: TimeInterval?) async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 503, body: Data("busy".utf8)) }
        let retrier = Late(delay: delay)
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), retriers: [retrier])
        let (recorder, _) = send(URLRequest(url: stub.baseURL, timeoutInterval: 0.5), through: manager)
        let outcome = try #require(await recorder.first(timeout: 20))
        #expect(
            Self.timedOut(outcome.error, saying: "retriers had not decided"), "\(String(describing: outcome.error))")
        #expect((outcome.response as? HTTPURLResponse)?.statusCode == 503)
        #expect(outcome.data == Data("busy".utf8))
        // The late `.retry` starts nothing.
        try await Task.sleep(for: .seconds(1.5))
        #expect(stub.requests.count == 1)
        #expect(recorder.callCount == 1)
        #expect(retrier.calls.value == 1)
    }

    @Test func slowAdaptersAndRetriersWithinTheTimeoutAndCancellationWhileWaitingForThemAreUntouched() async throws {
        let attempts = Locked(0)
        let stub = URLProtocolStub { _ in
            let attempt = attempts.withLock {
                $0 += 1
                return $0
            }
            return attempt < 2 ? .response(statusCode: 503) : .response(body: Data("done".utf8))
        }
        let slow = Late(delay: 0.8)
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), adapters: [slow], retriers: [slow])
        // Each wait is bounded by the timeout, not their sum: 0.8 + 0.8 + 0.8 s with a timeout of 2 s
        // (room for a busy machine to be late with each).
        let (recorder, _) = send(URLRequest(url: stub.baseURL, timeoutInterval: 2), through: manager)
        let outcome = try #require(await recorder.first(timeout: 20))
        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
        #expect(outcome.data == Data("done".utf8))
        #expect(slow.calls.value == 3)
        // Cancelled while an adapter that never calls back holds it: cancelled at once, once.
        let silent = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: [Late()])
        let (cancelled, handle) = send(URLRequest(url: stub.baseURL, timeoutInterval: 0.3), through: silent)
        handle.cancel()
        #expect(isCancelled(try #require(await cancelled.first(timeout: 5)).error))
        try await Task.sleep(for: .seconds(0.6))
        #expect(cancelled.callCount == 1)
    }

    @Test func anAdapterOrRetrierThatCallsBackTwiceIsHeardOnce() async throws {
        struct Twice: RequestAdapter, RequestRetrier {
            let asked = Locked(0)
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
                completion(.success(request))
                completion(.failure(AdapterFailure()))
            }
            func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
                let first = asked.withLock {
                    $0 += 1
                    return $0 == 1
                }
                completion(first ? .retry : .doNotRetry)
                completion(first ? .retry : .doNotRetry)
            }
        }
        let stub = URLProtocolStub { _ in .response(statusCode: 503) }
        let twice = Twice()
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), adapters: [twice], retriers: [twice])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let outcome = try #require(await recorder.first(timeout: 20))
        #expect((outcome.response as? HTTPURLResponse)?.statusCode == 503)
        try await Task.sleep(for: .milliseconds(300))
        // One retry, not two attempts at once; one completion.
        #expect(stub.requests.count == 2)
        #expect(twice.asked.value == 2)
        #expect(recorder.callCount == 1)
    }

    @Test func aRetrierIsAskedAfterEachFailureWithTheAttemptCountAndTheResponse() async throws {
        let attempts = Locked(0)
        let stub = URLProtocolStub { _ in
            let attempt = attempts.withLock {
                $0 += 1; return $0
            }
            return attempt < 3
                ? .response(statusCode: 500, body: Data("busy".utf8)) : .response(body: Data("done".utf8))
        }
        let retrier = CountingRetrier(decision: .retry)
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), retriers: [retrier])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error == nil)
        #expect(outcome.data == Data("done".utf8))
        #expect(retrier.failures.map(\.attemptCount) == [1, 2])
        #expect(retrier.failures.map { $0.statusCode ?? 0 } == [500, 500])
        #expect(retrier.failures.first?.data == Data("busy".utf8))
        #expect(retrier.failures.first?.error as? SessionError == .unacceptableStatusCode(500))
    }

    @Test func eachRetryIsAdaptedAgainFromTheOriginalRequest() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 401) }
        let log = Locked<[String]>([])
        let retrier = CountingRetrier { $0.attemptCount < 2 ? .retry : .doNotRetry }
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(),
            adapters: [HeaderAdapter(name: "Authorization", value: "token", log: log)],
            retriers: [retrier]
        )
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error as? SessionError == .unacceptableStatusCode(401))
        #expect(stub.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["token", "token"])
    }

    @Test func retryAfterWaitsBeforeTheNextAttempt() async throws {
        let attempts = Locked(0)
        let stub = URLProtocolStub { _ in
            attempts.withLock {
                $0 += 1; return $0
            } == 1 ? .response(statusCode: 503) : .response()
        }
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), retriers: [CountingRetrier(decision: .retryAfter(0.3))])
        let started = ContinuousClock.now
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        #expect(try #require(await recorder.first()).error == nil)
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(stub.requests.count == 2)
    }

    /// A request cancelled while it waits to be sent again is released at once, with all it
    /// captured, not when the wait a retrier asked for (an hour here) has passed.
    @Test func aRequestCancelledWhileItWaitsForARetryIsReleasedAtOnce() async throws {
        final class Canary: Sendable {}
        struct Watch: @unchecked Sendable { weak var canary: Canary? }
        let stub = URLProtocolStub { _ in .response(statusCode: 503) }
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), retriers: [CountingRetrier(decision: .retryAfter(3_600))])
        var watch = Watch()
        var handle: (any NetworkCancellable)?
        let recorder: CompletionRecorder<Outcome>
        do {
            let canary = Canary()
            watch.canary = canary
            (recorder, handle) = send(
                URLRequest(url: stub.baseURL), through: manager,
                options: RequestOptions(uploadProgress: { _ in _ = canary }))
        }
        for _ in 0..<200 where stub.requests.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        handle?.cancel()
        handle = nil
        #expect((try #require(await recorder.first()).error as? URLError)?.code == .cancelled)
        for _ in 0..<200 where watch.canary != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(watch.canary == nil)
        #expect(stub.requests.count == 1)
    }

    @Test func retriersAreAskedInOrderUntilOneDecides() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 500) }
        let first = CountingRetrier(decision: .doNotRetry)
        let second = CountingRetrier(decision: .doNotRetryWithError(ReplacementError()))
        let third = CountingRetrier(decision: .retry)
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), retriers: [first, second, third])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error as? ReplacementError == ReplacementError())
        #expect((outcome.response as? HTTPURLResponse)?.statusCode == 500)
        #expect([first.calls, second.calls, third.calls] as [Int] == [1, 1, 0])
    }

    @Test func whenNoRetrierRetriesTheOriginalFailureIsDelivered() async throws {
        let stub = URLProtocolStub { _ in .failure(URLError(.networkConnectionLost)) }
        let retrier = CountingRetrier(decision: .doNotRetry)
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), retriers: [retrier])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        #expect((try #require(await recorder.first()).error as? URLError)?.code == .networkConnectionLost)
        #expect(retrier.calls == 1)
    }

    @Test func successesAreNeverOfferedToRetriers() async throws {
        let stub = URLProtocolStub { _ in .response() }
        let retrier = CountingRetrier(decision: .retry)
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), retriers: [retrier])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        _ = await recorder.first()
        #expect(retrier.calls == 0)
    }
}
