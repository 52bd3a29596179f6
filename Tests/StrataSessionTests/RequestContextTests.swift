import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A task-local value of an app's, as a trace context or a logger is.
private enum Tenant {
    @TaskLocal static var current: String?
}

/// Keeps the caller's tenant for the request, and writes down the tenant every hook sees.
private final class TenantMonitor: EventMonitor {
    let keeps: Bool
    private let seen = Locked<[String]>([])

    init(keeps: Bool = true) {
        self.keeps = keeps
    }

    var log: [String] { seen.value }

    func note(_ event: String) {
        seen.withLock { $0.append("\(event): \(Tenant.current ?? "-")") }
    }

    func captureContext(into context: inout RequestContext) {
        guard keeps, let tenant = Tenant.current else { return }
        context.rebinding { body in Tenant.$current.withValue(tenant, operation: body) }
    }

    func requestCreated(_ request: URLRequest, id: RequestID) { note("created") }
    func requestSent(_ request: URLRequest, id: RequestID, attempt: Int) { note("sent \(attempt)") }
    func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID) { note("retrying") }
    func requestRedirected(_ response: HTTPURLResponse, to next: URLRequest, id: RequestID) { note("redirected") }
    func requestFinished(_ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics) {
        note("finished")
    }
}

/// Sends through `base`, writing down the tenant it is called with.
private final class TenantTransport: Transport {
    let base: any Transport
    let monitor: TenantMonitor

    init(_ base: any Transport, monitor: TenantMonitor) {
        self.base = base
        self.monitor = monitor
    }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        monitor.note("transport \(attempt.request.url?.path ?? "")")
        return base.send(attempt, to: receiver)
    }
}

private struct TenantAdapter: RequestAdapter {
    let monitor: TenantMonitor
    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        monitor.note("adapter")
        completion(.success(request))
    }
}

private struct TenantRetrier: RequestRetrier {
    let monitor: TenantMonitor
    func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        monitor.note("retrier")
        completion(failure.attemptCount < 2 ? .retry : .doNotRetry)
    }
}

/// A request keeps what its caller's task had bound, as its monitors say, and every piece of code
/// that runs for it later — adapters, retriers, redirect decisions, the transport, the monitors'
/// hooks — sees it again, on whatever thread it runs.
@Suite struct RequestContextTests {
    /// A 503, then a redirect, then the answer: every step the pipeline takes.
    private func stub() -> URLProtocolStub {
        let calls = Locked(0)
        return URLProtocolStub { request in
            if request.url?.path == "/landing" { return .response(statusCode: 200, body: Data("ok".utf8)) }
            let call = calls.withLock {
                $0 += 1; return $0
            }
            return call == 1
                ? .response(statusCode: 503) : .response(statusCode: 302, headers: ["Location": "/landing"])
        }
    }

    private func manager(_ stub: URLProtocolStub, monitor: TenantMonitor) -> SessionManager {
        SessionManager(
            transport: TenantTransport(
                URLSessionTransport(configuration: stub.makeSessionConfiguration()), monitor: monitor),
            adapters: [TenantAdapter(monitor: monitor)],
            retriers: [TenantRetrier(monitor: monitor)],
            redirectPolicy: .custom { next, _ in
                monitor.note("redirect decision")
                return next
            },
            monitors: [monitor]
        )
    }

    /// What every step saw, in the order the pipeline takes them (the monitors' hooks come on their
    /// own queue, so they are compared apart).
    private static let steps = [
        "adapter: acme", "transport : acme", "retrier: acme", "adapter: acme", "transport : acme",
        "redirect decision: acme", "adapter: acme", "transport /landing: acme",
    ]
    private static let hooks = [
        "created: acme", "sent 1: acme", "retrying: acme", "sent 2: acme", "redirected: acme", "sent 2: acme",
        "finished: acme",
    ]

    @Test func theCallersTaskLocalValuesReachEveryStepOfTheCallbackAPIFromAPlainThread() async throws {
        let stub = stub()
        let monitor = TenantMonitor()
        let manager = manager(stub, monitor: monitor)
        let outcome = try #require(await sendAsAcmeFromAPlainThread(URLRequest(url: stub.baseURL), through: manager))
        #expect(outcome.data == Data("ok".utf8))
        try await waitForHooks(of: monitor)
        #expect(monitor.log.filter { !Self.hooks.contains($0) } == Self.steps)
        #expect(monitor.log.filter { Self.hooks.contains($0) } == Self.hooks)
    }

    @Test func theCallersTaskLocalValuesReachEveryStepFromATask() async throws {
        let stub = stub()
        let monitor = TenantMonitor()
        let manager = manager(stub, monitor: monitor)
        let outcome = try await Tenant.$current.withValue("acme") {
            let recorder = CompletionRecorder<Outcome>()
            _ = manager.request(URLRequest(url: stub.baseURL), options: RequestOptions()) {
                recorder.record(($0, $1, $2))
            }
            return try #require(await recorder.first())
        }
        #expect(outcome.data == Data("ok".utf8))
        try await waitForHooks(of: monitor)
        #expect(monitor.log.filter { !Self.hooks.contains($0) } == Self.steps)
        #expect(monitor.log.filter { Self.hooks.contains($0) } == Self.hooks)
    }

    /// The control: the same request, its monitor keeping nothing, loses the value after the
    /// first hop (the first adapter and the first send still run on the caller's thread).
    @Test func withoutAMonitorThatKeepsItTheValueIsLostOnTheQueuesOfTheRequest() async throws {
        let stub = stub()
        let monitor = TenantMonitor(keeps: false)
        let manager = manager(stub, monitor: monitor)
        _ = try #require(await sendAsAcmeFromAPlainThread(URLRequest(url: stub.baseURL), through: manager))
        try await waitForHooks(of: monitor)
        let log = monitor.log
        // The first adapter runs on the caller's thread (the monitor's hooks, on their own queue, may come first).
        #expect(log.first { $0.hasPrefix("adapter") } == "adapter: acme")
        for lost in ["retrier: -", "redirect decision: -", "transport /landing: -", "created: -", "finished: -"] {
            #expect(log.contains(lost), "\(log)")
        }
    }

    @Test func aValueTheCallerPutsInTheOptionsIsKeptAndItsCaptureRunsOnce() async throws {
        enum Note: RequestContextKey { typealias Value = String }
        let captures = Locked(0)
        final class Counting: EventMonitor {
            let captures: Locked<Int>
            init(_ captures: Locked<Int>) { self.captures = captures }
            func captureContext(into context: inout RequestContext) {
                captures.withLock { $0 += 1 }
                #expect(context[Note.self] == "from the caller")
            }
        }
        let stub = URLProtocolStub { _ in .response(statusCode: 200) }
        let manager = SessionManager(configuration: stub.makeSessionConfiguration(), monitors: [Counting(captures)])
        var options = RequestOptions()
        options.context[Note.self] = "from the caller"
        // A service that hops before sending fills the context first; the manager keeps it as it is.
        options.context = manager.captureContext(options.context)
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager, options: options)
        #expect(try #require(await recorder.first()).error == nil)
        #expect(captures.value == 1)
    }

    /// A retry after a delay starts from a timer's thread: the reachability gate still sees the
    /// caller's values there, as every other step does.
    @Test func theReachabilityGateSeesTheCallersValuesOnEveryAttempt() async throws {
        struct Gate: ReachabilityGate {
            let monitor: TenantMonitor
            func isReachable(_ url: URL?) -> Bool {
                monitor.note("gate")
                return true
            }
        }
        struct LaterRetrier: RequestRetrier {
            func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
                completion(failure.attemptCount < 2 ? .retryAfter(0.01) : .doNotRetry)
            }
        }
        let calls = Locked(0)
        let stub = URLProtocolStub { _ in
            calls.withLock { count in
                count += 1
                return count
            } == 1 ? .response(statusCode: 503) : .response(statusCode: 200)
        }
        let monitor = TenantMonitor()
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(), retriers: [LaterRetrier()],
            reachability: Gate(monitor: monitor), monitors: [monitor])
        _ = try #require(await sendAsAcmeFromAPlainThread(URLRequest(url: stub.baseURL), through: manager))
        #expect(monitor.log.filter { $0.hasPrefix("gate") } == ["gate: acme", "gate: acme"])
    }

    /// Sends `request` with the tenant `acme` bound, from a thread with no task at all, as an app's
    /// main thread or a dispatch queue is; its outcome.
    private func sendAsAcmeFromAPlainThread(_ request: URLRequest, through manager: SessionManager) async -> Outcome? {
        let recorder = CompletionRecorder<Outcome>()
        DispatchQueue(label: "caller").async {
            Tenant.$current.withValue("acme") {
                _ = manager.request(request, options: RequestOptions()) { recorder.record(($0, $1, $2)) }
            }
        }
        return await recorder.first()
    }

    private func waitForHooks(of monitor: TenantMonitor) async throws {
        for _ in 0..<400 where !monitor.log.contains(where: { $0.hasPrefix("finished") }) {
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// What a monitor opens as a request starts — a span — is the request's for the rest of its life:
/// started once, on the caller's thread, inside what the monitors kept, and seen by every step.
@Suite struct RequestStartingTests {
    private enum Span {
        @TaskLocal static var current: String?
    }

    private final class SpanMonitor: EventMonitor {
        private let seen = Locked<[String]>([])
        var log: [String] { seen.value }

        func note(_ event: String) {
            seen.withLock { $0.append("\(event): \(Span.current ?? "-") in \(Tenant.current ?? "-")") }
        }

        func captureContext(into context: inout RequestContext) {
            guard let tenant = Tenant.current else { return }
            context.rebinding { body in Tenant.$current.withValue(tenant, operation: body) }
        }

        func requestStarting(_ request: URLRequest, id: RequestID, context: inout RequestContext) {
            note("starting")
            let span = "span \(id.rawValue)"
            context.rebinding { body in Span.$current.withValue(span, operation: body) }
        }

        func requestFinished(
            _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
        ) {
            note("finished")
        }
    }

    private struct SpanAdapter: RequestAdapter {
        let monitor: SpanMonitor
        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            monitor.note("adapter")
            completion(.success(request))
        }
    }

    @Test func aRequestStartsOnceInsideTheCallersContextAndEveryStepSeesWhatItAdded() async throws {
        let calls = Locked(0)
        let stub = URLProtocolStub { _ in
            calls.withLock {
                $0 += 1; return $0
            } == 1 ? .response(statusCode: 503) : .response(statusCode: 200)
        }
        let monitor = SpanMonitor()
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(), adapters: [SpanAdapter(monitor: monitor)],
            retriers: [TenantRetrier(monitor: TenantMonitor())], monitors: [monitor])
        let recorder = CompletionRecorder<Outcome>()
        DispatchQueue(label: "caller").async {
            Tenant.$current.withValue("acme") {
                _ = manager.request(URLRequest(url: stub.baseURL), options: RequestOptions()) {
                    recorder.record(($0, $1, $2))
                }
            }
        }
        #expect(try #require(await recorder.first()).error == nil)
        for _ in 0..<400 where !monitor.log.contains(where: { $0.hasPrefix("finished") }) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let log = monitor.log
        #expect(log.first == "starting: - in acme", "\(log)")
        #expect(log.dropFirst().allSatisfy { $0.contains(": span ") && $0.hasSuffix(" in acme") }, "\(log)")
        #expect(log.filter { $0.hasPrefix("adapter") }.count == 2)
        #expect(log.filter { $0.hasPrefix("starting") }.count == 1)
        #expect(log.last?.hasPrefix("finished") == true)
    }

    @Test func aRequestCancelledBeforeItsAdapterAnswersStillFinishesOnce() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 200) }
        let monitor = SpanMonitor()
        let manager = SessionManager(configuration: stub.makeSessionConfiguration(), monitors: [monitor])
        for _ in 0..<50 {
            manager.request(URLRequest(url: stub.baseURL), options: RequestOptions()) { _, _, _ in }.cancel()
        }
        for _ in 0..<400 where monitor.log.filter({ $0.hasPrefix("finished") }).count < 50 {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(monitor.log.filter { $0.hasPrefix("starting") }.count == 50)
        #expect(monitor.log.filter { $0.hasPrefix("finished") }.count == 50)
    }
}
