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
public enum AuthenticationError: Error, Hashable, Sendable, LocalizedError {
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
}

/// Applies a credential to requests for its hosts and refreshes it when the server rejects it:
/// exactly one refresh runs however many requests fail at once; the others wait and are retried
/// with the new credential.
///
/// ```swift
/// let auth = AuthenticationInterceptor(
///     authenticator: OAuthAuthenticator(tokenService: tokens),
///     credential: storedCredential,
///     hosts: ["api.example.com"]
/// )
/// let manager = URLSessionManager(interceptors: [auth])
/// ```
///
/// - A request that failed with an old credential after a refresh already happened is retried
///   with the current one, without another refresh.
/// - A failed refresh fails every waiting request with its error, and every later request rejected
///   with the same credential, without refreshing again, until ``credential`` is set anew. A
///   refresh that never calls back fails them with ``AuthenticationError/refreshTimedOut(after:)``.
/// - At most ``RefreshWindow/maximumAttempts`` refreshes run within ``RefreshWindow/interval``;
///   past that, requests fail with ``AuthenticationError/excessiveRefresh(count:within:)``.
/// - Requests to other hosts pass through untouched: the credential never leaves its hosts.
/// - A request cancelled while it waits for a refresh completes at once (its session manager sees
///   to that) and is not sent again.
public final class AuthenticationInterceptor<A: Authenticator>: RequestInterceptor {
    /// How many refreshes may run within how long.
    public struct RefreshWindow: Hashable, Sendable {
        /// The window's length in seconds.
        public var interval: TimeInterval
        /// The most refreshes within it.
        public var maximumAttempts: Int

        /// Creates a window: by default at most 5 refreshes within 30 seconds.
        public init(interval: TimeInterval = 30, maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    /// What a request does next, decided under the lock.
    private enum Step {
        /// Go ahead with this credential.
        case proceed(A.Credential)
        /// Send again with the current credential.
        case retry
        /// Fail with this error.
        case fail(any Error)
        /// Wait for the refresh; start it with this credential unless one is already running.
        case wait(startRefresh: A.Credential?)
    }

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
        var isRefreshing = false
        var refreshGeneration = 0
        var waitingAdapters: [@Sendable (Result<A.Credential, any Error>) -> Void] = []
        var waitingRetries: [@Sendable (RetryDecision) -> Void] = []
        var refreshTimes: [Date] = []
    }

    /// The authenticator.
    public let authenticator: A
    /// The hosts (lowercased) the credential is applied to.
    public let hosts: Set<String>
    /// How long a refresh may take.
    public let refreshTimeout: TimeInterval
    /// The refresh cap.
    public let refreshWindow: RefreshWindow
    private let state: Locked<State>

    /// Creates the interceptor.
    /// - Parameters:
    ///   - authenticator: Applies and refreshes credentials.
    ///   - credential: The current credential, if there is one.
    ///   - hosts: The hosts the credential belongs to; requests to other hosts get no credential.
    ///   - refreshTimeout: How long a refresh may take before waiting requests fail.
    ///   - refreshWindow: How many refreshes may run within how long.
    public init(
        authenticator: A,
        credential: A.Credential?,
        hosts: Set<String>,
        refreshTimeout: TimeInterval = 30,
        refreshWindow: RefreshWindow = RefreshWindow()
    ) {
        self.authenticator = authenticator
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.refreshTimeout = refreshTimeout
        self.refreshWindow = refreshWindow
        self.state = Locked(State(credential: credential))
    }

    /// The current credential; setting it (after a sign-in, say) does not start a refresh.
    public var credential: A.Credential? {
        get { state.withLock { $0.credential } }
        set { state.withLock { $0.credential = newValue } }
    }

    private func belongs(_ request: URLRequest) -> Bool {
        request.url?.host.map { hosts.contains($0.lowercased()) } ?? false
    }

    /// Applies the credential, after a refresh if it requires one; other hosts pass through.
    public func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        guard belongs(request) else { return completion(.success(request)) }
        let authenticator = self.authenticator
        let apply: @Sendable (Result<A.Credential, any Error>) -> Void = { result in
            completion(
                result.map { credential in
                    var request = request
                    authenticator.apply(credential, to: &request)
                    return request
                }
            )
        }
        let next = state.withLock { state -> Step in
            guard let credential = state.credential else { return .fail(AuthenticationError.missingCredential) }
            if state.isRefreshing {
                state.waitingAdapters.append(apply)
                return .wait(startRefresh: nil)
            }
            guard credential.requiresRefresh else { return .proceed(credential) }
            if let failed = state.failedRefresh, failed.version == state.credentialVersion {
                return .fail(failed.error)
            }
            state.waitingAdapters.append(apply)
            return .wait(startRefresh: credential)
        }
        switch next {
        case .proceed(let credential): apply(.success(credential))
        case .fail(let error): completion(.failure(error))
        case .retry: apply(.failure(AuthenticationError.missingCredential))
        case .wait(let credential): if let credential { refresh(credential) }
        }
    }

    /// Refreshes and retries requests rejected for their credential; others are not this
    /// interceptor's to retry.
    public func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        guard belongs(failure.request), authenticator.isAuthenticationFailure(failure) else {
            return completion(.doNotRetry)
        }
        let next = state.withLock { state -> Step in
            guard let credential = state.credential else { return .fail(AuthenticationError.missingCredential) }
            if state.isRefreshing {
                state.waitingRetries.append(completion)
                return .wait(startRefresh: nil)
            }
            guard authenticator.isRequest(failure.request, authenticatedWith: credential) else { return .retry }
            if let failed = state.failedRefresh, failed.version == state.credentialVersion {
                return .fail(failed.error)
            }
            state.waitingRetries.append(completion)
            return .wait(startRefresh: credential)
        }
        switch next {
        case .retry, .proceed: completion(.retry)
        case .fail(let error): completion(.doNotRetryWithError(error))
        case .wait(let credential): if let credential { refresh(credential) }
        }
    }

    /// Starts the one refresh (the caller has already queued itself and set nothing else).
    private func refresh(_ credential: A.Credential) {
        let generation = state.withLock { state -> Int? in
            guard !state.isRefreshing else { return nil }
            let now = Date()
            state.refreshTimes.removeAll { now.timeIntervalSince($0) > refreshWindow.interval }
            guard state.refreshTimes.count < refreshWindow.maximumAttempts else { return -1 }
            state.refreshTimes.append(now)
            state.isRefreshing = true
            state.refreshGeneration += 1
            return state.refreshGeneration
        }
        guard let generation else { return }
        guard generation >= 0 else {
            let error = AuthenticationError.excessiveRefresh(
                count: refreshWindow.maximumAttempts, within: refreshWindow.interval)
            return finishRefresh(generation: nil, with: .failure(error))
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + refreshTimeout) { [self] in
            finishRefresh(
                generation: generation, with: .failure(AuthenticationError.refreshTimedOut(after: refreshTimeout)))
        }
        authenticator.refresh(credential) { [self] result in
            finishRefresh(generation: generation, with: result)
        }
    }

    /// Ends refresh `generation` (or, with `nil`, fails whoever waits without a refresh having
    /// started) and answers every waiting request; later calls for the same generation do nothing.
    private func finishRefresh(generation: Int?, with result: Result<A.Credential, any Error>) {
        let waiting = state.withLock {
            state -> (
                adapters: [@Sendable (Result<A.Credential, any Error>) -> Void],
                retries: [@Sendable (RetryDecision) -> Void]
            )? in
            if let generation {
                guard state.isRefreshing, state.refreshGeneration == generation else { return nil }
                state.isRefreshing = false
                switch result {
                case .success(let credential): state.credential = credential
                case .failure(let error): state.failedRefresh = (state.credentialVersion, error)
                }
            }
            defer {
                state.waitingAdapters = []
                state.waitingRetries = []
            }
            return (state.waitingAdapters, state.waitingRetries)
        }
        guard let waiting else { return }
        for adapter in waiting.adapters {
            adapter(result)
        }
        for retry in waiting.retries {
            switch result {
            case .success: retry(.retry)
            case .failure(let error): retry(.doNotRetryWithError(error))
            }
        }
    }
}
