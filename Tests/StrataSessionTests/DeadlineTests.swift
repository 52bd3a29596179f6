import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Strata's own deadline: a request's timeout bounds each attempt whatever the server does, on
/// every platform, whole seconds included. `URLProtocolStub` has no timer of its own, so what ends
/// these requests is Strata's.
///
/// The servers here answer after a minute or take fifty seconds over a body; bounds leave a few
/// seconds of room above each timeout for a loaded machine (ThreadSanitizer on 2 cores), which is
/// still far from what a missing deadline would take. Times are taken when the completion runs,
/// not when the awaiting test resumes: hundreds of tests share the concurrency pool, and it can be
/// seconds behind. The fault matrix measures the margin on a quiet process: a few milliseconds.
@Suite struct DeadlineTests {
    /// Room above a deadline for a busy machine.
    static let slack: Duration = .seconds(4)

    /// A deadline for the tests where something else must come first. On Linux, tests that hold
    /// both threads of the cooperative pool (2 cores, ThreadSanitizer) hold up the dispatch queues
    /// behind it too, timers and URL loading alike, for up to a second here and longer in CI; a
    /// 0.2 s answer behind a 1 s deadline then lost. Five seconds outlasts that; the tests wait
    /// past it to see that nothing fires later.
    static let roomyTimeout: TimeInterval = 5

    /// Sends `request` and returns its error and how long it took.
    private func outcome(
        of request: URLRequest, through manager: URLSessionManager
    ) async throws -> (error: (any Error)?, elapsed: Duration, calls: () -> Int) {
        let started = ContinuousClock.now
        let (recorder, _) = send(request, through: manager)
        let outcome = try #require(await recorder.first(timeout: 20))
        let completed = try #require(recorder.instants.first)
        return (outcome.error, completed - started, { recorder.callCount })
    }

    private static func isTimeout(_ error: (any Error)?) -> Bool {
        (error as? URLError)?.code == .timedOut
    }

    @Test(arguments: [1.0, 2.0])
    func aWholeSecondTimeoutBoundsAServerThatNeverAnswers(timeout: TimeInterval) async throws {
        let stub = URLProtocolStub { _ in .response(delay: 60) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        // Both ways of giving the timeout; FoundationNetworking ignores the initializer's.
        var assigned = URLRequest(url: stub.baseURL)
        assigned.timeoutInterval = timeout
        for request in [URLRequest(url: stub.baseURL, timeoutInterval: timeout), assigned] {
            let result = try await outcome(of: request, through: manager)
            #expect(Self.isTimeout(result.error), "\(String(describing: result.error))")
            #expect(result.elapsed >= .seconds(timeout) - .milliseconds(50))
            #expect(result.elapsed < .seconds(timeout) + Self.slack)
        }
    }

    /// FoundationNetworking would round 0.3 s up to a whole second: a request with 0.3 s ends before
    /// one with 1 s started at the same time, however busy the machine.
    @Test func aSubSecondTimeoutIsKeptAsItIs() async throws {
        let stub = URLProtocolStub { _ in .response(delay: 60) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let order = Locked<[TimeInterval]>([])
        let recorders = [1.0, 0.3].map { timeout in
            let recorder = CompletionRecorder<Outcome>()
            _ = manager.request(URLRequest(url: stub.baseURL, timeoutInterval: timeout), options: .init()) {
                order.withLock { $0.append(timeout) }
                recorder.record(($0, $1, $2))
            }
            return recorder
        }
        for recorder in recorders {
            #expect(Self.isTimeout(try #require(await recorder.first(timeout: 20)).error))
        }
        #expect(order.value == [0.3, 1.0])
    }

    @Test func aBodyTrickledForeverEndsAtTheDeadlineNotWhenItStopsArriving() async throws {
        // A byte every 50 ms for 50 s: the data never stops long enough for an idle timer.
        let stub = URLProtocolStub { _ in
            .response(body: Data(repeating: 7, count: 1_000), chunks: 1_000, chunkInterval: 0.05)
        }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let result = try await outcome(of: URLRequest(url: stub.baseURL, timeoutInterval: 1), through: manager)
        #expect(Self.isTimeout(result.error))
        #expect(result.elapsed < .seconds(1) + Self.slack)
        try await Task.sleep(for: .milliseconds(300))
        #expect(result.calls() == 1)
    }

    @Test func eachAttemptHasItsDeadlineAndTheRetriersJudgeATimeout() async throws {
        let stub = URLProtocolStub { _ in .response(delay: 60) }
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(),
            retriers: [RetryPolicy(maximumAttempts: 2, initialDelay: 0, jitter: 0)]
        )
        let result = try await outcome(of: URLRequest(url: stub.baseURL, timeoutInterval: 0.5), through: manager)
        #expect(Self.isTimeout(result.error))
        #expect(stub.requests.count == 2)
        #expect(result.elapsed >= .milliseconds(950))
        #expect(result.elapsed < .seconds(1) + Self.slack)
    }

    @Test func anAnswerWithinTheDeadlineIsUntouchedByIt() async throws {
        let stub = URLProtocolStub { _ in .response(body: Data("ok".utf8), delay: 0.2) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let request = URLRequest(url: stub.baseURL, timeoutInterval: Self.roomyTimeout)
        let result = try await outcome(of: request, through: manager)
        #expect(result.error == nil)
        // The deadline is gone with the request: nothing fires after it completed.
        try await Task.sleep(for: .seconds(Self.roomyTimeout) + .milliseconds(200))
        #expect(result.calls() == 1)
    }

    @Test(arguments: [TimeInterval.infinity, 1e20, 1e12])
    func aTimeoutTooLongForTheLoadingSystemMeansNoDeadlineAndNoTrap(timeout: TimeInterval) async throws {
        let stub = URLProtocolStub { _ in .response(body: Data("ok".utf8), delay: 0.1) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var request = URLRequest(url: stub.baseURL)
        request.timeoutInterval = timeout
        #expect(try await outcome(of: request, through: manager).error == nil)
    }

    @Test(arguments: [0, -1, TimeInterval.nan])
    func aTimeoutThatIsNotPositiveIsATypedErrorAndNothingIsSent(timeout: TimeInterval) async throws {
        let stub = URLProtocolStub { _ in .response() }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var request = URLRequest(url: stub.baseURL)
        request.timeoutInterval = timeout
        let error = try await outcome(of: request, through: manager).error
        guard case .invalidTimeout? = error as? RequestValidationError else {
            Issue.record("expected invalidTimeout, got \(String(describing: error))")
            return
        }
        #expect(stub.requests.isEmpty)
    }

    /// The cancel comes from a dispatch timer, not the test's task, which the shared pool can keep
    /// waiting for seconds; the test then waits past the deadline for a second call.
    @Test func cancellingBeforeTheDeadlineCompletesOnceWithCancelled() async throws {
        let stub = URLProtocolStub { _ in .response(delay: 60) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let request = URLRequest(url: stub.baseURL, timeoutInterval: Self.roomyTimeout)
        let (recorder, cancellable) = send(request, through: manager)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { cancellable.cancel() }
        #expect(isCancelled(try #require(await recorder.first()).error))
        try await Task.sleep(for: .seconds(Self.roomyTimeout) + .milliseconds(200))
        #expect(recorder.callCount == 1)
    }
}
