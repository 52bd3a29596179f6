import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The request pipeline: the ``NetworkSessionManager`` that adapts, sends, follows redirects,
/// validates and retries, over any ``Transport``.
///
/// Each request runs the adapters, is checked against HTTP's grammar, is sent by the transport
/// within its deadline, follows redirects as the ``/StrataCore/RedirectPolicy`` says (the pipeline
/// makes each next request, never the transport), has its status validated once, and on failure
/// asks the retriers whether to go again. All of that is the same whatever the transport;
/// `SessionManager()` sends over ``URLSessionTransport``.
///
/// **Queues.** Nothing the caller wrote runs on the transport's queue (for `URLSession`, its one
/// serial delegate queue), so no closure can hold up another transfer: redirect decisions,
/// retriers and the completion run on a serial queue of the request's own; progress closures on
/// another, in order; event monitors on the manager's event queue. None of Strata's own work —
/// deadlines, redirects, retries, hand-overs — runs on `DispatchQueue.global()`, whose threads a
/// caller can block. Adapters run
/// where the attempt starts: on the caller's thread for the first, on the request's queue after that.
/// (The services' async methods, whose completion only resumes a task, take a success where the
/// transport reports it: resuming the task is a hop of its own.)
///
/// A request's `timeoutInterval` bounds each attempt as a whole — from sending it to the last byte
/// of the final response, redirects included — on a timer of Strata's own, whatever the server does
/// (never answers, stops after `100 Continue`, trickles a body); the attempt then fails with
/// `URLError(.timedOut)`. Set a timeout that fits the largest transfer you expect. The adapters'
/// work before an attempt's first request (a token refresh, say) and the waits between retries do
/// not count; ``RetryPolicy/deadline`` bounds the attempts together. Adapters and retriers that
/// have not called back within the timeout (a completion dropped on some path of their code) are
/// waited for no longer: the request fails with `URLError(.timedOut)` saying which did not.
///
/// ```swift
/// let manager = SessionManager(adapters: [ApiKeyAdapter()], retriers: [MyRetrier()])
/// let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
/// ```
public final class SessionManager: NetworkSessionManager {
    /// The status codes that count as success for requests that do not name their own.
    public let acceptableStatusCodes: Set<Int>
    let core: PipelineCore

    /// One manager over `URLSession` with default settings, shared by every service that names no
    /// manager of its own: one session and one connection pool for the process, however many
    /// services are made.
    public static let shared = SessionManager()

    /// Creates a pipeline over `transport`.
    /// - Parameters:
    ///   - transport: Sends each attempt.
    ///   - acceptableStatusCodes: The status codes that count as success.
    ///   - adapters: Adapters run in order before each attempt.
    ///   - retriers: Retriers asked in order after a failed attempt.
    ///   - interceptors: Interceptors that both adapt and retry (authentication), after `adapters`
    ///     and `retriers`.
    ///   - redirectPolicy: What to do when a server redirects; by default, follow (made safe).
    ///   - reachability: Consulted before every attempt; an unreachable target fails at once with
    ///     `URLError(.notConnectedToInternet)`. `nil` (the default) attempts every request.
    ///   - redaction: Which headers are credentials: a redirect to another origin removes them. By
    ///     default ``/StrataCore/Redaction/standard``.
    ///   - monitors: Told of every request's life, on the manager's event queue (see ``EventMonitor``).
    ///   - cache: Answers and revalidates `GET` requests as RFC 9111 allows (see ``HTTPCache``);
    ///     `nil` (the default) caches nothing.
    public init(
        transport: any Transport,
        acceptableStatusCodes: Set<Int> = RequestOptions.defaultAcceptableStatusCodes,
        adapters: [any RequestAdapter] = [],
        retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = [],
        redirectPolicy: RedirectPolicy = .follow,
        reachability: (any ReachabilityGate)? = nil,
        redaction: Redaction = .standard,
        monitors: [any EventMonitor] = [],
        cache: HTTPCache? = nil
    ) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.core = PipelineCore(
            transport: cache.map { CachingTransport(cache: $0, transport: transport) } ?? transport,
            interceptor: Interceptor(adapters: adapters, retriers: retriers, interceptors: interceptors),
            redirectPolicy: redirectPolicy,
            reachability: reachability,
            redaction: redaction,
            monitors: EventMonitors(monitors)
        )
    }

    /// Creates a pipeline over a new ``URLSessionTransport``.
    /// - Parameters:
    ///   - configuration: The session configuration; copied, so later changes have no effect.
    ///   - acceptableStatusCodes: The status codes that count as success.
    ///   - adapters: Adapters run in order before each attempt.
    ///   - retriers: Retriers asked in order after a failed attempt.
    ///   - interceptors: Interceptors that both adapt and retry (authentication), after `adapters`
    ///     and `retriers`.
    ///   - redirectPolicy: What to do when a server redirects; by default, follow (made safe).
    ///   - reachability: Consulted before every attempt; `nil` (the default) attempts every request.
    ///   - authenticationChallengeTimeout: How long a task may run after an authentication challenge
    ///     was declined before it is ended with the `401` response (a guard for a Linux hang).
    ///   - redaction: Which headers are credentials: a redirect to another origin removes them.
    ///   - monitors: Told of every request's life, on the manager's event queue (see ``EventMonitor``).
    ///   - cache: Answers and revalidates `GET` requests as RFC 9111 allows; `nil` caches nothing.
    public convenience init(
        configuration: URLSessionConfiguration = .default,
        acceptableStatusCodes: Set<Int> = RequestOptions.defaultAcceptableStatusCodes,
        adapters: [any RequestAdapter] = [],
        retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = [],
        redirectPolicy: RedirectPolicy = .follow,
        reachability: (any ReachabilityGate)? = nil,
        authenticationChallengeTimeout: TimeInterval = 10,
        redaction: Redaction = .standard,
        monitors: [any EventMonitor] = [],
        cache: HTTPCache? = nil
    ) {
        self.init(
            transport: URLSessionTransport(
                configuration: configuration, authenticationChallengeTimeout: authenticationChallengeTimeout),
            acceptableStatusCodes: acceptableStatusCodes,
            adapters: adapters,
            retriers: retriers,
            interceptors: interceptors,
            redirectPolicy: redirectPolicy,
            reachability: reachability,
            redaction: redaction,
            monitors: monitors,
            cache: cache
        )
    }

    /// Adapts, sends and validates `request`, retrying as the retriers decide; calls `completion`
    /// exactly once.
    @discardableResult
    public func request(
        _ request: URLRequest,
        options: RequestOptions,
        completion: @escaping CompletionHandler
    ) -> any NetworkCancellable {
        send(request, options: options) { outcome in
            completion(outcome.data, outcome.response, outcome.error)
        }
    }

    /// ``request(_:options:completion:)`` with its outcome as it is: a response the transport
    /// reported as a ``ResponseHead`` is read from the head, and a download names its file. A
    /// completion that only hands the outcome on (Strata's async methods say so in the options)
    /// completes a success that needs no redirect decision on the transport's queue, without the
    /// hop to a queue of its own that protects the caller's code.
    @discardableResult
    public func send(
        _ request: URLRequest,
        options: RequestOptions,
        completion: @escaping @Sendable (TransportOutcome) -> Void
    ) -> any NetworkCancellable {
        let execution = RequestExecution(
            core: core,
            request: request,
            options: options,
            acceptableStatusCodes: options.acceptableStatusCodes ?? acceptableStatusCodes,
            completesSuccessInline: options.handsOffCompletion,
            completion: completion
        )
        execution.start()
        return execution.call
    }

    /// Cancels every request the manager has under way — waiting for its adapters or a retry,
    /// sent, downloading, uploading or streaming — as each one's own `cancel()` would: each
    /// completes once, as cancelled (a stream ends as cancelled), and none is retried. A request
    /// started after this call returns is left alone, so an app can sign out, cancel what the old
    /// session started and sign in again at once.
    ///
    /// An event source (StrataService's `EventSource`) whose connection is under way ends, as
    /// cancelled; one waiting to reconnect has no request under way: cancel the source itself.
    ///
    /// ```swift
    /// func signOut() {
    ///     credentials.clear()
    ///     sessionManager.cancelAllRequests()
    /// }
    /// ```
    public func cancelAllRequests() {
        core.underWay.cancelAll()
    }
}

extension SessionManager {
    /// `context` with what the manager's monitors keep of the calling task
    /// (``EventMonitor/captureContext(into:)``), once: a context filled already is returned as it is.
    public func captureContext(_ context: RequestContext) -> RequestContext {
        core.monitors.capture(into: context)
    }

    /// Sends `request` through the pipeline and hands its accepted response to `receiver` as it
    /// comes (see ``NetworkSessionManager/stream(_:options:to:)``). Until then it is a request like
    /// any other: adapted, redirected, validated and retried, within its `timeoutInterval`; after,
    /// ``/StrataCore/RequestOptions/streamIdleTimeout`` and
    /// ``/StrataCore/RequestOptions/streamDeadline`` bound it. The receiver is called on the
    /// transport's threads: it should hand each call on, not work in it.
    public func stream(
        _ request: URLRequest, options: RequestOptions, to receiver: any ResponseReceiver
    ) -> any ResponseExchange {
        let stream = PipelineStream(to: receiver, options: options)
        let execution = RequestExecution(
            core: core,
            request: request,
            options: options,
            acceptableStatusCodes: options.acceptableStatusCodes ?? acceptableStatusCodes,
            completesSuccessInline: false,
            stream: stream,
            completion: { stream.ended($0) }
        )
        stream.attach(execution)
        execution.start()
        return stream
    }
}

/// The pipeline over `URLSession`: ``SessionManager`` with a ``URLSessionTransport``, under the name
/// it has always had.
public typealias URLSessionManager = SessionManager

/// The transport and policies shared by a manager and its requests in flight; each request keeps
/// it alive, so the transport is released only after the last one has finished.
final class PipelineCore: Sendable {
    let transport: any Transport
    let interceptor: Interceptor
    let redirectPolicy: RedirectPolicy
    let reachability: (any ReachabilityGate)?
    let redaction: Redaction
    let monitors: EventMonitors
    let deadlines = Deadlines()
    let underWay = RequestsUnderWay()

    init(
        transport: any Transport,
        interceptor: Interceptor,
        redirectPolicy: RedirectPolicy,
        reachability: (any ReachabilityGate)?,
        redaction: Redaction,
        monitors: EventMonitors
    ) {
        self.monitors = monitors
        self.transport = transport
        self.interceptor = interceptor
        self.redirectPolicy = redirectPolicy
        self.reachability = reachability
        self.redaction = redaction
    }
}

/// The calls of a manager's requests that have not completed: what
/// ``SessionManager/cancelAllRequests()`` cancels. A request's call is added as the request starts
/// and removed as it completes, however it completes.
final class RequestsUnderWay: Sendable {
    private struct State: Sendable {
        var nextNumber = 0
        var calls: [Int: CancellableCompletion<TransportOutcome>] = [:]
    }

    private let state = Locked(State())

    /// A number for a request about to be made, under which its call is added and removed.
    func number() -> Int {
        state.withLock { state in
            defer { state.nextNumber += 1 }
            return state.nextNumber
        }
    }

    /// Keeps `call` under `number` until ``remove(_:)`` or ``cancelAll()``.
    func add(_ call: CancellableCompletion<TransportOutcome>, as number: Int) {
        state.withLock { $0.calls[number] = call }
    }

    /// Forgets the call under `number`: it completed.
    func remove(_ number: Int) {
        _ = state.withLock { $0.calls.removeValue(forKey: number) }
    }

    /// How many calls are kept.
    var count: Int {
        state.withLock { $0.calls.count }
    }

    /// Cancels every call kept, outside the lock: a cancelled call completes, and its completion
    /// removes it.
    func cancelAll() {
        let calls = state.withLock { state in
            defer { state.calls.removeAll(keepingCapacity: true) }
            return Array(state.calls.values)
        }
        for call in calls {
            call.cancel()
        }
    }
}
