import Dispatch
import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The caller's closures never run on the session's delegate queue: one that blocks holds up no
/// other request of the same manager.
///
/// Each test blocks a thread of the global pool for a moment (as a careless closure would); they run
/// one at a time, so that together they never take the whole pool (two threads on two cores) from
/// the tests running beside them.
@Suite(.serialized) struct CallbackQueueTests {
    private let stub = URLProtocolStub { request in
        request.url?.path == "/fail" ? .response(statusCode: 503) : .response(body: Data(count: 64 * 1024), chunks: 4)
    }

    @Test func aRetrierThatBlocksHoldsUpNoOtherRequest() async throws {
        let gate = DispatchSemaphore(value: 0)
        let blocking = CountingRetrier { _ in
            gate.wait()
            return .doNotRetry
        }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), retriers: [blocking])
        let (blocked, _) = send(URLRequest(url: stub.baseURL.appendingPathComponent("fail")), through: manager)
        while blocking.failures.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        let (other, _) = send(URLRequest(url: stub.baseURL.appendingPathComponent("ok")), through: manager)
        #expect(try #require(await other.first(timeout: 5)).error == nil)
        gate.signal()
        #expect(try #require(await blocked.first(timeout: 5)).error as? SessionError == .unacceptableStatusCode(503))
    }

    /// A transport that, like URLSession, reports everything from one serial queue: upload
    /// progress, then — at once, or `answersAfter` seconds later — the outcome, and then, a moment
    /// later, a stray count for the exchange that is over.
    private struct SerialQueueTransport: Transport {
        let queue = DispatchQueue(label: "strata.test.delegate")
        var answersAfter: TimeInterval = 0
        func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
            let relay = ResponseRelay(to: receiver)
            queue.async {
                attempt.uploadProgress?(50, 100)
                attempt.uploadProgress?(100, 100)
            }
            queue.asyncAfter(deadline: .now() + answersAfter) {
                let url = attempt.request.url ?? URL(fileURLWithPath: "/")
                relay.push(ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:]))
                relay.end(nil)
                queue.asyncAfter(deadline: .now() + .milliseconds(50)) { attempt.uploadProgress?(100, 100) }
            }
            return relay
        }
    }

    /// A progress closure that blocks holds up its own request's completion, which comes after
    /// every report, and no other request.
    @Test func aProgressClosureThatBlocksHoldsUpNoOtherRequest() async throws {
        let gate = DispatchSemaphore(value: 0)
        let reports = Locked<[Int64]>([])
        let manager = SessionManager(transport: SerialQueueTransport())
        let (blocked, _) = send(
            URLRequest(url: stub.baseURL), through: manager,
            options: RequestOptions(uploadProgress: { progress in
                let count = reports.withLock { reports in
                    reports.append(progress.completedUnitCount)
                    return reports.count
                }
                if count == 1 { gate.wait() }
            }))
        let (other, _) = send(URLRequest(url: stub.baseURL), through: manager)
        #expect(try #require(await other.first(timeout: 5)).error == nil)
        #expect(await blocked.first(timeout: 0.2) == nil)
        gate.signal()
        #expect(try #require(await blocked.first(timeout: 5)).error == nil)
        #expect(reports.value == [50, 100])
    }

    /// Every report reaches the caller before the completion, however slow the closure, and none
    /// comes after it: a count the transport makes once the request is over is dropped.
    @Test func everyProgressReportComesBeforeTheCompletionAndNoneAfter() async throws {
        let reports = Locked<[Int64]>([])
        let completed = Locked(false)
        let reportedAfterCompletion = Locked(false)
        let manager = SessionManager(transport: SerialQueueTransport())
        let (outcomes, _) = send(
            URLRequest(url: stub.baseURL), through: manager,
            options: RequestOptions(uploadProgress: { progress in
                if completed.value { reportedAfterCompletion.withLock { $0 = true } }
                Thread.sleep(forTimeInterval: 0.05)
                reports.withLock { $0.append(progress.completedUnitCount) }
            }))
        let outcome = try #require(await outcomes.first(timeout: 5))
        completed.withLock { $0 = true }
        #expect(outcome.error == nil)
        #expect(reports.value == [50, 100])
        try await Task.sleep(for: .milliseconds(200))
        #expect(reports.value == [50, 100])
        #expect(!reportedAfterCompletion.value)
    }

    /// A progress closure may cancel its own request: the request completes once, cancelled,
    /// without waiting for the answer, and nothing is reported after — the closure's own
    /// `cancel()` does not wait for the progress queue it runs on.
    @Test func aProgressClosureThatCancelsItsOwnRequestEndsItOnce() async throws {
        let task = Locked<(any NetworkCancellable)?>(nil)
        let reports = Locked<[Int64]>([])
        let completed = Locked(false)
        let reportedAfterCompletion = Locked(false)
        let (outcomes, cancellable) = send(
            URLRequest(url: stub.baseURL), through: SessionManager(transport: SerialQueueTransport(answersAfter: 2)),
            options: RequestOptions(uploadProgress: { progress in
                if completed.value { reportedAfterCompletion.withLock { $0 = true } }
                reports.withLock { $0.append(progress.completedUnitCount) }
                // The task is handed back as `request` returns, which may be after the first report.
                for _ in 0..<500 where task.value == nil { Thread.sleep(forTimeInterval: 0.002) }
                task.value?.cancel()
            }))
        task.withLock { $0 = cancellable }
        let started = ContinuousClock.now
        let outcome = try #require(await outcomes.first(timeout: 5))
        completed.withLock { $0 = true }
        #expect(isCancelled(outcome.error), "\(String(describing: outcome.error))")
        #expect(ContinuousClock.now - started < .seconds(1.5), "it waited for the answer")
        try await Task.sleep(for: .milliseconds(100))
        #expect(outcomes.callCount == 1)
        #expect(!reportedAfterCompletion.value)
        #expect(reports.value.first == 50)
    }

    /// A transport that answers on a queue it can recognise: `/ok` with a `200`, `/fail` with a
    /// `503`, `/moved` with a `302` to `/ok`. It answers a moment after `send` returns, as a
    /// transport on the network does (a demand made before then is passed on by the thread that
    /// made it).
    private struct RecognisableQueueTransport: Transport {
        static let key = DispatchSpecificKey<Bool>()
        let queue: DispatchQueue = {
            let queue = DispatchQueue(label: "strata.test.transport")
            queue.setSpecific(key: key, value: true)
            return queue
        }()

        func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
            let relay = ResponseRelay(to: receiver)
            queue.asyncAfter(deadline: .now() + .milliseconds(5)) {
                let url = attempt.request.url ?? URL(fileURLWithPath: "/")
                let status = ["/ok": 200, "/moved": 302][url.path] ?? 503
                let headers: HTTPHeaders = status == 302 ? ["Location": "/ok"] : [:]
                relay.push(ResponseHead(url: url, statusCode: status, httpVersion: "HTTP/1.1", headers: headers))
                relay.end(nil)
            }
            return relay
        }

        static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
    }

    /// Only Strata's async methods, whose completion resumes a task and runs none of the caller's
    /// code, are completed on the transport's queue, and only for a plain success: the caller's
    /// completions, retriers and redirect decisions never run there.
    @Test func onlyASuccessThatResumesATaskCompletesOnTheTransportsQueue() async throws {
        let redirectDecidedThere = Locked<Bool?>(nil)
        let retrierAskedThere = Locked<Bool?>(nil)
        let retrier = CountingRetrier { _ in
            retrierAskedThere.withLock { $0 = RecognisableQueueTransport.isCurrent }
            return .doNotRetry
        }
        let manager = SessionManager(
            transport: RecognisableQueueTransport(), retriers: [retrier],
            redirectPolicy: .custom { next, _ in
                redirectDecidedThere.withLock { $0 = RecognisableQueueTransport.isCurrent }
                return next
            })
        func completesThere(_ path: String, onlyResumesATask: Bool) async throws -> Bool {
            let url = try #require(URL(string: "https://api.example.com\(path)"))
            return await withCheckedContinuation { continuation in
                var options = RequestOptions()
                options.handsOffCompletion = onlyResumesATask
                manager.send(URLRequest(url: url), options: options) { _ in
                    continuation.resume(returning: RecognisableQueueTransport.isCurrent)
                }
            }
        }
        #expect(try await completesThere("/ok", onlyResumesATask: true))
        #expect(try await !completesThere("/ok", onlyResumesATask: false))
        #expect(try await !completesThere("/fail", onlyResumesATask: true))
        #expect(retrierAskedThere.value == false)
        // The redirect is decided off the queue; the success it leads to then completes there.
        #expect(try await completesThere("/moved", onlyResumesATask: true))
        #expect(redirectDecidedThere.value == false)
    }

    /// No completion runs on the stack of the call that started the request or cancelled it: a
    /// caller that holds a lock across `send` or `cancel()` which its completion takes, or starts
    /// the next request from a completion that fails at once, neither deadlocks nor grows the stack
    /// (30,000 such requests in a row overflowed it).
    @Test func noCompletionRunsWithinTheCallThatStartedOrCancelledTheRequest() async throws {
        let transport = InMemoryTransport { request in
            request.url?.path == "/silent" ? nil : (200, [:], "{}")
        }
        let manager = SessionManager(transport: transport, adapters: [ThrowingOnPathAdapter()])
        let base = try #require(URL(string: "https://api.example.com"))
        var badField = URLRequest(url: base.appendingPathComponent("ok"))
        badField.setValue("bell\u{7}", forHTTPHeaderField: "X-Value")
        let starts: [(String, URLRequest, RequestOptions)] = [
            (
                "a success the transport gives before send returns", URLRequest(url: base.appendingPathComponent("ok")),
                RequestOptions()
            ),
            (
                "options out of range", URLRequest(url: base.appendingPathComponent("ok")),
                RequestOptions(maximumBodyLength: -1)
            ),
            ("a field refused after the adapters", badField, RequestOptions()),
            ("an adapter's error", URLRequest(url: base.appendingPathComponent("adapter-fails")), RequestOptions()),
        ]
        for (what, request, options) in starts {
            let recorder = CompletionRecorder<Bool>()
            Self.within { manager.send(request, options: options) { _ in recorder.record(Self.isWithin) } }
            #expect(await recorder.first(timeout: 5) == false, "\(what) completed within send")
        }
        let recorder = CompletionRecorder<Bool>()
        let call = manager.send(URLRequest(url: base.appendingPathComponent("silent")), options: RequestOptions()) {
            _ in
            recorder.record(Self.isWithin)
        }
        Self.within { call.cancel() }
        #expect(await recorder.first(timeout: 5) == false, "the cancellation completed within cancel()")
        try await Task.sleep(for: .milliseconds(20))
        #expect(recorder.callCount == 1)
    }

    /// Runs `call` with this thread marked, for ``isWithin`` to tell whether code runs within it.
    private static func within(_ call: () -> Void) {
        Thread.current.threadDictionary["strata.within"] = true
        call()
        Thread.current.threadDictionary["strata.within"] = nil
    }

    private static var isWithin: Bool { Thread.current.threadDictionary["strata.within"] != nil }

    /// A monitor that blocks until the test lets it go: requests complete meanwhile, since hooks run
    /// on the event queue, not where the transport delivers.
    @Test func aBlockedMonitorHoldsUpNoRequest() async throws {
        struct Blocked: EventMonitor {
            let gate: DispatchSemaphore
            func requestSent(_ request: URLRequest, id: RequestID, attempt: Int) {
                gate.wait()
            }
        }
        let gate = DispatchSemaphore(value: 0)
        let manager = SessionManager(
            transport: SerialQueueTransport(), monitors: [Blocked(gate: gate)])
        for _ in 0..<3 {
            let (recorder, _) = send(
                URLRequest(url: URL(string: "https://api.strata.test/") ?? URL(fileURLWithPath: "/")),
                through: manager)
            #expect(try #require(await recorder.first(timeout: 5)).error == nil)
        }
        for _ in 0..<3 {
            gate.signal()
        }
    }

}

/// Fails the adaptation of a request to `/adapter-fails` before it returns; passes any other.
private struct ThrowingOnPathAdapter: RequestAdapter {
    struct Refused: Error {}

    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        completion(request.url?.path == "/adapter-fails" ? .failure(Refused()) : .success(request))
    }
}
