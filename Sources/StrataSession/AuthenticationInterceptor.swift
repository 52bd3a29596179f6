import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A credential an ``Authenticator`` applies to requests.
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential must be refreshed before it is used (an access token about to expire).
    var requiresRefresh: Bool { get }
}

/// What an ``AuthenticationInterceptor`` needs to know about a kind of credential.
public protocol Authenticator: Sendable {
    /// The credential type.
    associatedtype Credential: AuthenticationCredential

    /// Applies `credential` to `request` (usually an `Authorization` header).
    func apply(_ credential: Credential, to request: inout URLRequest)

    /// Obtains a new credential from `credential`; calls `completion` once.
    func refresh(_ credential: Credential, completion: @escaping @Sendable (Result<Credential, any Error>) -> Void)

    /// Whether `failure` happened because the credential was rejected. By default: a `401`.
    func isAuthenticationFailure(_ failure: RequestFailure) -> Bool

    /// Whether `request` was sent with `credential` (if not, a newer credential already exists and
    /// the request can simply be retried).
    func isRequest(_ request: URLRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
    /// A `401` response.
    public func isAuthenticationFailure(_ failure: RequestFailure) -> Bool {
        failure.statusCode == 401
    }
}

/// Why an ``AuthenticationInterceptor`` could not authenticate a request.
public enum AuthenticationError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// There is no credential to apply.
    case missingCredential
    /// The refresh did not call back within the timeout.
    case refreshTimedOut(after: TimeInterval)
    /// More refreshes than allowed happened within the window: the server keeps rejecting fresh
    /// credentials, and refreshing again would only storm it.
    case excessiveRefresh(count: Int, within: TimeInterval)

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .missingCredential: return "There is no credential to authenticate the request with."
        case .refreshTimedOut(let seconds): return "Refreshing the credential did not finish within \(seconds) s."
        case .excessiveRefresh(let count, let window):
            return "The credential was refreshed \(count) times within \(window) s and is still rejected."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}

/// Applies a credential to requests for its origins and refreshes it when the server rejects it:
/// exactly one refresh runs however many requests fail at once; the others wait and are retried
/// with the new credential.
///
/// ```swift
/// let auth = AuthenticationInterceptor(
///     authenticator: OAuthAuthenticator(tokenService: tokens),
///     credential: storedCredential,
///     origins: [Origin(scheme: "https", host: "api.example.com")]
/// )
/// let manager = URLSessionManager(interceptors: [auth])
/// ```
///
/// - A credential belongs to origins — scheme, host and port: a token for
///   `https://api.example.com` goes neither to `http://api.example.com` nor to another port, and
///   requests to other origins pass through untouched.
/// - A request that failed with an old credential after a refresh already happened is retried
///   with the current one, without another refresh.
/// - A refresh's result is applied only if the credential it refreshed is still the current one:
///   one that finishes after ``credential`` was cleared (a sign-out) or replaced (another account)
///   is dropped, and the requests that waited for it go on with the current credential, or fail
///   with ``AuthenticationError/missingCredential`` when there is none.
/// - A failed refresh fails every waiting request with its error, and every later request rejected
///   with the same credential, without refreshing again, until ``credential`` is set anew. A
///   refresh that never calls back fails them with ``AuthenticationError/refreshTimedOut(after:)``.
/// - At most ``RefreshWindow/maximumAttempts`` refreshes run within ``RefreshWindow/interval``;
///   past that, requests fail with ``AuthenticationError/excessiveRefresh(count:within:)``.
/// - A request cancelled while it waits for a refresh completes at once (its session manager sees
///   to that) and is not sent again.
/// - The authenticator's methods and the credential's ``AuthenticationCredential/requiresRefresh``
///   are called with no lock held, so they may take their time or start requests of their own.
public final class AuthenticationInterceptor<A: Authenticator>: RequestInterceptor {
    /// How many refreshes may run within how long.
    public struct RefreshWindow: Hashable, Sendable {
        /// The window's length in seconds; one that is not a number counts as 0 (no refresh is
        /// held against another).
        public var interval: TimeInterval
        /// The most refreshes within it.
        public var maximumAttempts: Int

        /// Creates a window: by default at most 5 refreshes within 30 seconds.
        public init(interval: TimeInterval = 30, maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    /// What a request does next, decided under the lock from what was found outside it.
    private enum Step {
        /// Go ahead with this credential.
        case proceed(A.Credential)
        /// Send again with the current credential.
        case retry
        /// Fail with this error.
        case fail(any Error)
        /// Wait for the refresh; start it with this credential unless one is already running.
        case wait(startRefresh: A.Credential?)
        /// The credential changed while it was looked at: look again.
        case reconsider
        /// Not retried: the request fails as it did.
        case giveUp
    }

    /// A request waiting for a refresh, to adapt once it has finished.
    private typealias WaitingAdapter = (
        request: URLRequest, completion: @Sendable (Result<URLRequest, any Error>) -> Void
    )

    private struct State: Sendable {
        var credential: A.Credential? {
            didSet {
                credentialVersion += 1
                failedRefresh = nil
            }
        }
        /// Changes whenever the credential does.
        var credentialVersion = 0
        /// The error of a refresh that failed for the current credential: it is not tried again.
        var failedRefresh: (version: Int, error: any Error)?
        /// The refresh under way: its number, and the version of the credential it refreshes.
        var refreshing: (generation: Int, version: Int)?
        var refreshGeneration = 0
        var waitingAdapters: [WaitingAdapter] = []
        var waitingRetries: [@Sendable (RetryDecision) -> Void] = []
        var refreshTimes: [Date] = []
        /// The requests (`METHOD URL`) the refresh under way sent through this interceptor itself.
        var refreshRequests: Set<String> = []
    }

    /// The authenticator.
    public let authenticator: A
    /// The origins the credential is applied to.
    public let origins: Set<Origin>

    /// ``origins``: a redirect to one of them gets the credential too.
    public var credentialOrigins: Set<Origin>? { origins }
    /// How long a refresh may take.
    public let refreshTimeout: TimeInterval
    /// The refresh cap.
    public let refreshWindow: RefreshWindow
    private let state: Locked<State>

    /// Creates the interceptor.
    /// - Parameters:
    ///   - authenticator: Applies and refreshes credentials.
    ///   - credential: The current credential, if there is one.
    ///   - origins: The origins (scheme, host, port) the credential belongs to; requests to others
    ///     get no credential.
    ///   - refreshTimeout: How long a refresh may take before waiting requests fail.
    ///   - refreshWindow: How many refreshes may run within how long.
    public init(
        authenticator: A,
        credential: A.Credential?,
        origins: Set<Origin>,
        refreshTimeout: TimeInterval = 30,
        refreshWindow: RefreshWindow = RefreshWindow()
    ) {
        self.authenticator = authenticator
        self.origins = origins
        self.refreshTimeout = refreshTimeout
        self.refreshWindow = refreshWindow
        self.state = Locked(State(credential: credential))
    }

    /// The current credential; setting it (after a sign-in, say) does not start a refresh, and a
    /// refresh already under way for the previous one is then dropped.
    public var credential: A.Credential? {
        get { state.withLock { $0.credential } }
        set { state.withLock { $0.credential = newValue } }
    }

    private func belongs(_ request: URLRequest) -> Bool {
        request.url.flatMap(Origin.init).map(origins.contains) ?? false
    }

    /// The credential and its version, read under the lock.
    private var current: (credential: A.Credential?, version: Int) {
        state.withLock { ($0.credential, $0.credentialVersion) }
    }

    /// Applies the credential, after a refresh if it requires one; other origins pass through.
    ///
    /// A request the authenticator's ``Authenticator/refresh(_:completion:)`` sends through this
    /// interceptor for the new credential (a token endpoint on the same origin, reached through
    /// the app's one stack) goes as the authenticator made it: it started while `refresh` ran, on
    /// its thread or in a task it started, and waiting for the refresh it is part of, it would
    /// hold every request until ``refreshTimeout``. Rejected, it is not retried: the refresh fails.
    public func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        guard belongs(request) else { return completion(.success(request)) }
        if let marked = RefreshScope.refreshing, marked.interceptor == ObjectIdentifier(self) {
            let sentByRefresh = state.withLock { state in
                guard state.refreshing?.generation == marked.generation else { return false }
                state.refreshRequests.insert(Self.key(request))
                return true
            }
            if sentByRefresh { return completion(.success(request)) }
        }
        var next = Step.reconsider
        while case .reconsider = next {
            let (credential, version) = current
            // Asked outside the lock: a credential's own code may take its time.
            let requiresRefresh = credential?.requiresRefresh ?? false
            next = state.withLock { state -> Step in
                guard state.credentialVersion == version else { return .reconsider }
                guard let credential else { return .fail(AuthenticationError.missingCredential) }
                if state.refreshing != nil {
                    state.waitingAdapters.append((request, completion))
                    return .wait(startRefresh: nil)
                }
                guard requiresRefresh else { return .proceed(credential) }
                if let failed = state.failedRefresh, failed.version == version {
                    return .fail(failed.error)
                }
                state.waitingAdapters.append((request, completion))
                return .wait(startRefresh: credential)
            }
        }
        switch next {
        case .proceed(let credential):
            var request = request
            authenticator.apply(credential, to: &request)
            completion(.success(request))
        case .fail(let error): completion(.failure(error))
        case .wait(let credential): if let credential { refresh(credential) }
        case .retry, .reconsider, .giveUp: completion(.failure(AuthenticationError.missingCredential))
        }
    }

    /// Refreshes and retries requests rejected for their credential; others are not this
    /// interceptor's to retry.
    public func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        guard belongs(failure.request), authenticator.isAuthenticationFailure(failure) else {
            return completion(.doNotRetry)
        }
        var next = Step.reconsider
        while case .reconsider = next {
            let (credential, version) = current
            // Asked outside the lock: the authenticator's own code may take its time.
            let sentWithCurrent = credential.map { authenticator.isRequest(failure.request, authenticatedWith: $0) }
            next = state.withLock { state -> Step in
                guard state.credentialVersion == version else { return .reconsider }
                guard let credential else { return .fail(AuthenticationError.missingCredential) }
                if state.refreshing != nil {
                    // The refresh's own request: waiting for the refresh, it would never end.
                    if state.refreshRequests.contains(Self.key(failure.request)) { return .giveUp }
                    state.waitingRetries.append(completion)
                    return .wait(startRefresh: nil)
                }
                guard sentWithCurrent == true else { return .retry }
                if let failed = state.failedRefresh, failed.version == version {
                    return .fail(failed.error)
                }
                state.waitingRetries.append(completion)
                return .wait(startRefresh: credential)
            }
        }
        switch next {
        case .retry, .proceed: completion(.retry)
        case .fail(let error): completion(.doNotRetryWithError(error))
        case .wait(let credential): if let credential { refresh(credential) }
        case .reconsider, .giveUp: completion(.doNotRetry)
        }
    }

    /// How a request is told apart from the refresh's own: its method and URL.
    private static func key(_ request: URLRequest) -> String {
        "\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "")"
    }

    /// Starts the one refresh (the caller has already queued itself and set nothing else).
    private func refresh(_ credential: A.Credential) {
        let generation = state.withLock { state -> Int? in
            guard state.refreshing == nil else { return nil }
            let now = Date()
            // A window that is not a number would forget no refresh, and refuse every refresh for
            // good once `maximumAttempts` had run.
            let interval = refreshWindow.interval.isNaN ? 0 : refreshWindow.interval
            state.refreshTimes.removeAll { now.timeIntervalSince($0) > interval }
            guard state.refreshTimes.count < refreshWindow.maximumAttempts else { return -1 }
            state.refreshTimes.append(now)
            state.refreshGeneration += 1
            state.refreshing = (state.refreshGeneration, state.credentialVersion)
            return state.refreshGeneration
        }
        guard let generation else { return }
        guard generation >= 0 else {
            let error = AuthenticationError.excessiveRefresh(
                count: refreshWindow.maximumAttempts, within: refreshWindow.interval)
            return finishRefresh(generation: nil, with: .failure(error))
        }
        // Its waiting requests fail: it ends them even while a caller's closures hold every lane.
        StrataQueue.async(after: refreshTimeout, ending: true) { [self] in
            finishRefresh(
                generation: generation, with: .failure(AuthenticationError.refreshTimedOut(after: refreshTimeout)))
        }
        // Marked, so that a request the authenticator sends through this interceptor for the new
        // credential goes past the refresh it belongs to (`adapt`).
        RefreshScope.$refreshing.withValue((ObjectIdentifier(self), generation)) {
            authenticator.refresh(credential) { [self] result in
                finishRefresh(generation: generation, with: result)
            }
        }
    }

    /// Ends refresh `generation` (or, with `nil`, fails whoever waits without a refresh having
    /// started) and answers every waiting request; later calls for the same generation do nothing.
    ///
    /// The result counts only if the credential it refreshed is still the current one. Otherwise it
    /// is dropped, and the waiting requests go on as if they had just arrived: with the current
    /// credential, or failing for want of one.
    private func finishRefresh(generation: Int?, with result: Result<A.Credential, any Error>) {
        let finished = state.withLock {
            state -> (adapters: [WaitingAdapter], retries: [@Sendable (RetryDecision) -> Void], isStale: Bool)? in
            var isStale = false
            if let generation {
                guard let refreshing = state.refreshing, refreshing.generation == generation else { return nil }
                state.refreshing = nil
                state.refreshRequests = []
                isStale = refreshing.version != state.credentialVersion
                switch result {
                case _ where isStale: break
                case .success(let credential): state.credential = credential
                case .failure(let error): state.failedRefresh = (state.credentialVersion, error)
                }
            }
            defer {
                state.waitingAdapters = []
                state.waitingRetries = []
            }
            return (state.waitingAdapters, state.waitingRetries, isStale)
        }
        guard let finished else { return }
        for waiting in finished.adapters {
            switch result {
            case _ where finished.isStale:
                adapt(waiting.request, completion: waiting.completion)
            case .success(let credential):
                var request = waiting.request
                authenticator.apply(credential, to: &request)
                waiting.completion(.success(request))
            case .failure(let error):
                waiting.completion(.failure(error))
            }
        }
        for retry in finished.retries {
            switch result {
            case _ where finished.isStale, .success: retry(.retry)
            case .failure(let error): retry(.doNotRetryWithError(error))
            }
        }
    }
}

/// The refresh an ``AuthenticationInterceptor``'s authenticator is running on this thread, or in a
/// task started from it: the interceptor and the refresh's number.
private enum RefreshScope {
    @TaskLocal static var refreshing: (interceptor: ObjectIdentifier, generation: Int)?
}
