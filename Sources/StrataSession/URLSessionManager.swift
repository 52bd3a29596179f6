import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ``NetworkSessionManager`` over `URLSession`.
///
/// It owns one long-lived, delegate-based session for its lifetime (short-lived sessions can crash
/// at teardown on Linux) and invalidates it once, after the manager is released and its last request
/// has finished. Each request runs the adapters, is checked against HTTP's grammar, is sent within
/// its deadline, follows redirects as the ``/StrataCore/RedirectPolicy`` says, has its status validated, and on
/// failure asks the retriers whether to go again.
///
/// A request's `timeoutInterval` bounds each attempt as a whole — from sending it to the last byte
/// of the final response, redirects included — on a timer of Strata's own, whatever the server does
/// (never answers, stops after `100 Continue`, trickles a body); the attempt then fails with
/// `URLError(.timedOut)`. Set a timeout that fits the largest transfer you expect. The adapters'
/// work before an attempt's first request (a token refresh, say) and the waits between retries do
/// not count; ``RetryPolicy/deadline`` bounds the attempts together.
///
/// ```swift
/// let manager = URLSessionManager(adapters: [ApiKeyAdapter()], retriers: [MyRetrier()])
/// let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
/// ```
public final class URLSessionManager: NetworkSessionManager {
    /// The status codes that count as success for requests that do not name their own.
    public let acceptableStatusCodes: Set<Int>
    private let core: SessionCore

    /// Creates a manager.
    /// - Parameters:
    ///   - configuration: The session configuration; copied, so later changes have no effect.
    ///   - acceptableStatusCodes: The status codes that count as success.
    ///   - adapters: Adapters run in order before each attempt.
    ///   - retriers: Retriers asked in order after a failed attempt.
    ///   - interceptors: Interceptors that both adapt and retry (authentication), after `adapters`
    ///     and `retriers`.
    ///   - redirectPolicy: What to do when a server redirects; by default, follow (made safe).
    ///   - reachability: Consulted before every attempt; an unreachable target fails at once with
    ///     `URLError(.notConnectedToInternet)`. `nil` (the default) attempts every request.
    ///   - authenticationChallengeTimeout: How long a task may run after an authentication challenge
    ///     was declined before it is ended with the `401` response (a guard for a Linux hang).
    ///   - redaction: Which headers are credentials: a redirect to another origin removes them. By
    ///     default ``/StrataCore/Redaction/standard``.
    public init(
        configuration: URLSessionConfiguration = .default,
        acceptableStatusCodes: Set<Int> = RequestOptions.defaultAcceptableStatusCodes,
        adapters: [any RequestAdapter] = [],
        retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = [],
        redirectPolicy: RedirectPolicy = .follow,
        reachability: (any ReachabilityGate)? = nil,
        authenticationChallengeTimeout: TimeInterval = 10,
        redaction: Redaction = .standard
    ) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.core = SessionCore(
            configuration: configuration,
            interceptor: Interceptor(adapters: adapters, retriers: retriers, interceptors: interceptors),
            redirectPolicy: redirectPolicy,
            reachability: reachability,
            challengeTimeout: authenticationChallengeTimeout,
            redaction: redaction
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
        let execution = RequestExecution(
            core: core,
            request: request,
            options: options,
            acceptableStatusCodes: options.acceptableStatusCodes ?? acceptableStatusCodes,
            completion: completion
        )
        execution.start()
        return execution.token
    }
}

/// The session and interceptors shared by a manager and its requests in flight; each request keeps
/// it alive, so the session is invalidated only after the last one has finished.
final class SessionCore: Sendable {
    let session: URLSession
    let delegate: SessionDelegate
    let interceptor: Interceptor
    let redirectPolicy: RedirectPolicy
    let reachability: (any ReachabilityGate)?
    let redaction: Redaction
    let deadlines = Deadlines()

    init(
        configuration: URLSessionConfiguration,
        interceptor: Interceptor,
        redirectPolicy: RedirectPolicy,
        reachability: (any ReachabilityGate)?,
        challengeTimeout: TimeInterval,
        redaction: Redaction
    ) {
        #if canImport(FoundationNetworking)
            let delegateQueue: OperationQueue = SerialDelegateQueue(label: "Strata.URLSessionManager.delegate")
        #else
            let delegateQueue = OperationQueue()
            delegateQueue.name = "Strata.URLSessionManager.delegate"
            delegateQueue.maxConcurrentOperationCount = 1
        #endif
        delegate = SessionDelegate(challengeTimeout: challengeTimeout)
        #if canImport(FoundationNetworking)
            // URLCache never stores on Linux, and with one a task's protocol is created after an
            // asynchronous cache lookup, which lets a cancellation race the task's start.
            let configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration
            configuration.urlCache = nil
        #endif
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
        self.interceptor = interceptor
        self.redirectPolicy = redirectPolicy
        self.reachability = reachability
        self.redaction = redaction
    }

    deinit {
        session.finishTasksAndInvalidate()
    }
}
