import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `SessionManager.cancelAllRequests()`: what a manager has under way — sent, waiting for its
/// adapter, waiting to be retried, streaming — completes once, as cancelled; what is sent after is
/// left alone; and the manager keeps nothing of a request once it has completed, however it did.
@Suite struct CancelAllRequestsTests {
    private static let base = URL(string: "https://api.strata.test") ?? URL(fileURLWithPath: "/")

    /// Answers `/answered` and `/retried` (a `503` asking to be tried again in a minute); leaves
    /// anything else pending, for cancellation alone to end.
    private static func transport() -> InMemoryTransport {
        InMemoryTransport { request in
            switch request.url?.path {
            case "/answered": return (200, [:], "ok")
            case "/retried": return (503, ["Retry-After": "60"], "busy")
            default: return nil
            }
        }
    }

    /// An adapter that keeps the request's callback until `release()`.
    private final class HeldAdapter: RequestInterceptor, @unchecked Sendable {  // Sendable: `held` is locked.
        private let held = Locked<[@Sendable (Result<URLRequest, any Error>) -> Void]>([])
        let asked = CompletionRecorder<Void>()

        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            held.withLock { $0.append(completion) }
            asked.record(())
        }

        func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
            completion(.doNotRetry)
        }

        /// Calls back now: too late for a request cancelled meanwhile.
        func release(_ request: URLRequest) {
            for completion in held.withLock({ held in
                defer { held = [] }; return held
            }) {
                completion(.success(request))
            }
        }
    }

    /// Asks for the attempt again in a minute, and says when it was asked.
    private struct SlowRetrier: RequestRetrier {
        let asked = CompletionRecorder<Void>()

        func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
            asked.record(())
            completion(.retryAfter(60))
        }
    }

    @Test func everyRequestUnderWayCompletesOnceAsCancelledAndLaterOnesAreAnswered() async throws {
        let transport = Self.transport()
        let retrier = SlowRetrier()
        let manager = SessionManager(transport: transport, retriers: [retrier])
        let adapter = HeldAdapter()

        let sent = (0..<20).map { _ in
            send(URLRequest(url: Self.base.appendingPathComponent("pending")), through: manager)
        }
        let (adapting, _) = send(
            URLRequest(url: Self.base.appendingPathComponent("answered")), through: manager,
            options: RequestOptions(interceptor: adapter))
        let (retrying, _) = send(URLRequest(url: Self.base.appendingPathComponent("retried")), through: manager)
        let stream = StreamRecorder()
        stream.exchange = manager.stream(
            URLRequest(url: Self.base.appendingPathComponent("pending")), options: RequestOptions(), to: stream)
        #expect(await adapter.asked.first() != nil)
        #expect(await retrier.asked.first() != nil)
        #expect(manager.core.underWay.count == 23)

        manager.cancelAllRequests()

        for recorder in sent.map(\.0) + [adapting, retrying] {
            #expect(isCancelled(try #require(await recorder.first(timeout: 5)).error))
        }
        #expect(await stream.ended())
        #expect(isCancelled(stream.endError), "\(String(describing: stream.endError))")
        #expect(stream.endCount == 1)
        #expect(manager.core.underWay.count == 0)
        // The adapter's late answer sends nothing: the request it was for is over.
        adapter.release(URLRequest(url: Self.base.appendingPathComponent("answered")))
        try await Task.sleep(for: .milliseconds(100))
        #expect(!transport.requests.contains { $0.url?.path == "/answered" })
        // The twenty sends and the stream's, ended at the transport; the retried request's attempt
        // was over, and the adapted one was never sent.
        #expect(transport.cancellations == 21)

        let (later, _) = send(URLRequest(url: Self.base.appendingPathComponent("answered")), through: manager)
        let outcome = try #require(await later.first())
        #expect(outcome.error == nil)
        #expect(outcome.data == Data("ok".utf8))
        for recorder in sent.map(\.0) + [adapting, retrying, later] {
            #expect(recorder.callCount == 1)
        }
    }

    /// Cancelling all while requests complete on other threads: each completes exactly once, with
    /// its answer or as cancelled, and none is left kept.
    @Test func cancellingAllWhileRequestsCompleteCompletesEachOnce() async throws {
        let transport = Self.transport()
        let manager = SessionManager(transport: transport)
        var generator = SeededGenerator(seed: 7)
        let requests = (0..<400).map { _ in
            send(
                URLRequest(
                    url: Self.base.appendingPathComponent(Bool.random(using: &generator) ? "answered" : "pending")),
                through: manager)
        }
        manager.cancelAllRequests()
        let (later, _) = send(URLRequest(url: Self.base.appendingPathComponent("answered")), through: manager)
        var answered = 0
        for (recorder, _) in requests {
            let outcome = try #require(await recorder.first(timeout: 5))
            if outcome.error == nil { answered += 1 } else { #expect(isCancelled(outcome.error)) }
        }
        #expect(try #require(await later.first()).error == nil)
        try await Task.sleep(for: .milliseconds(100))
        #expect(requests.allSatisfy { $0.0.callCount == 1 })
        #expect(manager.core.underWay.count == 0)
        #expect(answered < 400)
    }

    /// Completions that call back into the manager as they run — cancelling all again, sending
    /// another request — neither deadlock nor complete anything twice; what they send is answered.
    @Test func completionsThatCancelAllAgainOrSendAnotherRequestAreServed() async throws {
        let manager = SessionManager(transport: Self.transport())
        let followUps = CompletionRecorder<Outcome>()
        let originals = (0..<50).map { number in
            let recorder = CompletionRecorder<Outcome>()
            _ = manager.request(URLRequest(url: Self.base.appendingPathComponent("pending")), options: RequestOptions())
            { data, response, error in
                recorder.record((data, response, error))
                if number.isMultiple(of: 2) {
                    manager.cancelAllRequests()
                } else {
                    _ = manager.request(
                        URLRequest(url: Self.base.appendingPathComponent("answered")), options: RequestOptions()
                    ) { followUps.record(($0, $1, $2)) }
                }
            }
            return recorder
        }
        manager.cancelAllRequests()
        for recorder in originals {
            #expect(isCancelled(try #require(await recorder.first(timeout: 5)).error))
        }
        for _ in 0..<500 where followUps.callCount < 25 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(originals.allSatisfy { $0.callCount == 1 })
        // A follow-up is sent while others cancel all: it is answered or cancelled, once.
        #expect(followUps.callCount == 25)
        #expect(manager.core.underWay.count == 0)
    }

    /// A request ends its place among those under way however it ends: answered, refused before it
    /// starts, failed, cancelled by its caller, or timed out.
    @Test func aCompletedRequestIsNotKept() async throws {
        let manager = SessionManager(transport: Self.transport())
        var timed = URLRequest(url: Self.base.appendingPathComponent("pending"))
        timed.timeoutInterval = 0.05
        let (answered, _) = send(URLRequest(url: Self.base.appendingPathComponent("answered")), through: manager)
        let (refused, _) = send(
            URLRequest(url: Self.base.appendingPathComponent("answered")), through: manager,
            options: RequestOptions(maximumBodyLength: -1))
        let (failed, _) = send(URLRequest(url: Self.base.appendingPathComponent("retried")), through: manager)
        let (cancelled, handle) = send(URLRequest(url: Self.base.appendingPathComponent("pending")), through: manager)
        handle.cancel()
        let (timedOut, _) = send(timed, through: manager)
        for recorder in [answered, refused, failed, cancelled, timedOut] {
            _ = try #require(await recorder.first())
        }
        #expect(manager.core.underWay.count == 0)
        // Nothing left to cancel, and nothing breaks for asking.
        manager.cancelAllRequests()
        #expect([answered, refused, failed, cancelled, timedOut].allSatisfy { $0.callCount == 1 })
    }
}
