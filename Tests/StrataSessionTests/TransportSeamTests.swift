import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that never touches a socket: each attempt is recorded and answered by `answer`, or
/// left pending when it returns `nil` (then only cancellation ends it). It reports an
/// `HTTPURLResponse`, as `URLSessionTransport` does, or with `reportsHead` a ``ResponseHead``, as
/// a transport that gets no `HTTPURLResponse` from below does.
final class InMemoryTransport: Transport {
    private let answer: @Sendable (URLRequest) -> (status: Int, headers: [String: String], body: String)?
    private let reportsHead: Bool
    private let sent = Locked<[URLRequest]>([])
    private let cancelled = Locked(0)

    init(
        reportsHead: Bool = false,
        _ answer: @escaping @Sendable (URLRequest) -> (status: Int, headers: [String: String], body: String)?
    ) {
        self.reportsHead = reportsHead
        self.answer = answer
    }

    var requests: [URLRequest] { sent.value }
    var cancellations: Int { cancelled.value }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        sent.withLock { $0.append(attempt.request) }
        let relay = ResponseRelay(to: receiver, stop: { [cancelled] in cancelled.withLock { $0 += 1 } })
        guard let (status, headers, body) = answer(attempt.request), let url = attempt.request.url else { return relay }
        let head =
            reportsHead
            ? ResponseHead(url: url, statusCode: status, httpVersion: "HTTP/1.1", headers: HTTPHeaders(headers))
            : HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers).map {
                ResponseHead($0)
            }
        DispatchQueue.global().async {
            if let head { relay.push(head) }
            relay.push(Data(body.utf8))
            relay.end(nil)
        }
        return relay
    }
}

/// The pipeline's policies — adapt, validate, redirect, retry, deadlines, cancellation — work the
/// same over any transport: here one that answers from memory.
@Suite struct TransportSeamTests {
    private let origin = URL(string: "https://api.strata.test/items") ?? URL(fileURLWithPath: "/")

    @Test(arguments: [false, true]) func adaptersRetriersAndValidationRunAboveTheTransport(
        reportsHead: Bool
    ) async throws {
        let transport = InMemoryTransport(reportsHead: reportsHead) { request in
            request.value(forHTTPHeaderField: "X-Attempt") == "1" ? (503, [:], "busy") : (200, [:], "ok")
        }
        let attempts = Locked(0)
        let manager = SessionManager(
            transport: transport,
            adapters: [
                HeadersAdapter(["Authorization": "Bearer t"]),
                ClosureAdapter { request in
                    var request = request
                    request.setValue("\(attempts.withLock { $0 += 1; return $0 })", forHTTPHeaderField: "X-Attempt")
                    return request
                },
            ],
            retriers: [CountingRetrier(decision: .retry)]
        )
        let (recorder, _) = send(URLRequest(url: origin), through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error == nil)
        #expect(outcome.data == Data("ok".utf8))
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "X-Attempt") } == ["1", "2"])
        #expect(transport.requests.allSatisfy { $0.value(forHTTPHeaderField: "Authorization") == "Bearer t" })

        let refused = InMemoryTransport(reportsHead: reportsHead) { _ in (404, [:], #"{"error":"missing"}"#) }
        let (failed, _) = send(URLRequest(url: origin), through: SessionManager(transport: refused))
        let failure = try #require(await failed.first())
        #expect(failure.error as? SessionError == .unacceptableStatusCode(404))
        #expect(failure.data == Data(#"{"error":"missing"}"#.utf8))
    }

    @Test(arguments: [false, true]) func thePipelineFollowsRedirectsAndTheTransportOnlySendsWhatItIsGiven(
        reportsHead: Bool
    ) async throws {
        let transport = InMemoryTransport(reportsHead: reportsHead) { request in
            switch request.url?.host {
            case "api.strata.test": (302, ["Location": "https://cdn.strata.test/items/1"], "")
            default: (200, [:], "landed")
            }
        }
        let manager = SessionManager(transport: transport, adapters: [HeadersAdapter(["Authorization": "Bearer t"])])
        var request = URLRequest(url: origin)
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        let (recorder, _) = send(request, through: manager)
        let outcome = try #require(await recorder.first())
        #expect(outcome.data == Data("landed".utf8))
        #expect(transport.requests.map { $0.url?.host } == ["api.strata.test", "cdn.strata.test"])
        // The adapter runs again for the new origin, but it is bound to no origin: neither its
        // credential nor the caller's own goes there.
        #expect(transport.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(transport.requests.last?.value(forHTTPHeaderField: "Authorization") == nil)
        let bound = InMemoryTransport(reportsHead: reportsHead) { request in
            switch request.url?.host {
            case "api.strata.test": (302, ["Location": "https://cdn.strata.test/items/1"], "")
            default: (200, [:], "landed")
            }
        }
        let cdn = try #require(Origin(URL(string: "https://cdn.strata.test") ?? origin))
        let boundManager = SessionManager(
            transport: bound, adapters: [HeadersAdapter(["Authorization": "Bearer cdn"], origins: [cdn])])
        _ = try #require(await send(request, through: boundManager).0.first())
        #expect(bound.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer t", "Bearer cdn"])

        let bare = InMemoryTransport(reportsHead: reportsHead) { request in
            request.url?.host == "api.strata.test"
                ? (302, ["Location": "https://cdn.strata.test/"], "") : (200, [:], "")
        }
        let (plain, _) = send(request, through: SessionManager(transport: bare))
        _ = try #require(await plain.first())
        #expect(bare.requests.last?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func cancellingEndsThePendingAttemptAndCompletesOnce() async throws {
        let transport = InMemoryTransport { _ in nil }
        let manager = SessionManager(transport: transport)
        let (recorder, cancellable) = send(URLRequest(url: origin), through: manager)
        while transport.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        cancellable.cancel()
        cancellable.cancel()
        #expect(isCancelled(try #require(await recorder.first()).error))
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.callCount == 1)
        #expect(transport.cancellations == 1)
    }

    @Test func aTransportThatNeverAnswersEndsAtTheDeadline() async throws {
        let transport = InMemoryTransport { _ in nil }
        var request = URLRequest(url: origin)
        request.timeoutInterval = 0.2
        let started = ContinuousClock.now
        let (recorder, _) = send(request, through: SessionManager(transport: transport))
        let outcome = try #require(await recorder.first())
        #expect((outcome.error as? URLError)?.code == .timedOut)
        #expect(try #require(recorder.instants.first) - started < .seconds(5))
        #expect(transport.cancellations == 1)
    }
}

/// An adapter from a closure.
/// A request's `maximumBodyLength` bounds what a server can make the app hold: a longer body fails
/// the request, whatever its status; one that fits, and an empty one under a limit of 0, succeed
/// (a negative limit fails unsent: `StreamingTests.anOptionOutOfItsRangeIsATypedErrorAndNothingIsSent`).
@Suite struct MaximumBodyLengthTests {
    private let origin = URL(string: "https://api.strata.test/items") ?? URL(fileURLWithPath: "/")

    @Test(arguments: [
        (status: 200, body: 100, limit: 99, fails: true), (status: 200, body: 100, limit: 100, fails: false),
        (status: 500, body: 100, limit: 10, fails: true), (status: 204, body: 0, limit: 0, fails: false),
    ])
    func aBodyLongerThanTheRequestsLimitFailsWithATypedError(
        status: Int, body: Int, limit: Int, fails: Bool
    )
        async throws
    {
        let transport = InMemoryTransport { _ in (status, [:], String(repeating: "x", count: body)) }
        let manager = SessionManager(transport: transport, acceptableStatusCodes: Set(200..<300))
        let (recorder, _) = send(
            URLRequest(url: origin), through: manager, options: RequestOptions(maximumBodyLength: limit))
        let outcome = try #require(await recorder.first())
        if fails {
            #expect(
                (outcome.error as? URLError)?.code == .dataLengthExceedsMaximum, "\(String(describing: outcome.error))")
            #expect(outcome.data == nil || outcome.data?.isEmpty == true)
        } else {
            #expect(outcome.error == nil)
            #expect(outcome.data?.count == body)
        }
    }
}

private struct ClosureAdapter: RequestAdapter {
    let change: @Sendable (URLRequest) -> URLRequest
    init(_ change: @escaping @Sendable (URLRequest) -> URLRequest) { self.change = change }
    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        completion(.success(change(request)))
    }
}

/// A monitor that writes down every hook, in the order they come.
private final class RecordingMonitor: EventMonitor {
    private let events = Locked<[String]>([])
    private let finished = CompletionRecorder<RequestMetrics>()

    var log: [String] { events.value }
    func metrics() async -> RequestMetrics? { await finished.first() }

    private func note(_ event: String) {
        events.withLock { $0.append(event) }
    }

    func requestCreated(_ request: URLRequest, id: RequestID) {
        note("created \(request.url?.host ?? "")")
    }
    func requestAdapted(_ request: URLRequest, id: RequestID, attempt: Int) {
        note("adapted \(attempt)")
    }
    func requestSent(_ request: URLRequest, id: RequestID, attempt: Int) {
        note("sent \(attempt) \(request.url?.host ?? "") \(request.value(forHTTPHeaderField: "Authorization") ?? "-")")
    }
    func responseReceived(_ outcome: TransportOutcome, for request: URLRequest, id: RequestID, timing: AttemptTiming) {
        note("received \((outcome.response as? HTTPURLResponse)?.statusCode ?? 0) attempt \(timing.attempt)")
    }
    func requestRedirected(_ response: HTTPURLResponse, to next: URLRequest, id: RequestID) {
        note("redirected \(response.statusCode) \(next.url?.host ?? "")")
    }
    func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID) {
        note("retrying after \(failure.statusCode ?? 0)")
    }
    func requestFinished(_ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics) {
        note("finished \((outcome.response as? HTTPURLResponse)?.statusCode ?? 0) \(request.url?.host ?? "")")
        finished.record(metrics)
    }
}

@Suite struct EventMonitorTests {
    @Test(arguments: [false, true]) func everyHookComesOnceInOrderOnTheEventQueueWithTimings(
        reportsHead: Bool
    ) async throws {
        let calls = Locked(0)
        let transport = InMemoryTransport(reportsHead: reportsHead) { request in
            if request.url?.host == "api.strata.test" {
                return calls.withLock {
                    $0 += 1; return $0
                } == 1
                    ? (503, [:], "") : (302, ["Location": "https://cdn.strata.test/x"], "")
            }
            return (200, [:], "ok")
        }
        let monitor = RecordingMonitor()
        let manager = SessionManager(
            transport: transport,
            adapters: [HeadersAdapter(["Authorization": "Bearer t"])],
            retriers: [CountingRetrier(decision: .retry)],
            monitors: [monitor]
        )
        let (recorder, _) = send(
            URLRequest(url: URL(string: "https://api.strata.test/") ?? URL(fileURLWithPath: "/")), through: manager)
        #expect(try #require(await recorder.first()).error == nil)
        let metrics = try #require(await monitor.metrics())
        #expect(
            monitor.log == [
                "created api.strata.test",
                "adapted 1", "sent 1 api.strata.test Bearer t", "received 503 attempt 1",
                "retrying after 503",
                "adapted 2", "sent 2 api.strata.test Bearer t", "received 302 attempt 2",
                "redirected 302 cdn.strata.test",
                "adapted 2", "sent 2 cdn.strata.test -", "received 200 attempt 2",
                "finished 200 cdn.strata.test",
            ])
        #expect(metrics.attempts == 2)
        #expect(metrics.exchanges.map(\.attempt) == [1, 2, 2])
        #expect(metrics.exchanges.allSatisfy { $0.duration >= .zero && $0.duration <= metrics.duration })
    }

    @Test func aCancelledRequestFinishesOnceForTheMonitors() async throws {
        let monitor = RecordingMonitor()
        let manager = SessionManager(transport: InMemoryTransport { _ in nil }, monitors: [monitor])
        let (recorder, cancellable) = send(
            URLRequest(url: URL(string: "https://api.strata.test/") ?? URL(fileURLWithPath: "/")), through: manager)
        while !monitor.log.contains(where: { $0.hasPrefix("sent") }) { try await Task.sleep(for: .milliseconds(5)) }
        cancellable.cancel()
        #expect(isCancelled(try #require(await recorder.first()).error))
        _ = await monitor.metrics()
        try await Task.sleep(for: .milliseconds(50))
        #expect(monitor.log.filter { $0.hasPrefix("finished") } == ["finished 0 api.strata.test"])
    }
}
