import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries failed requests that are safe to repeat, backing off exponentially (with jitter) or as
/// long as the server's `Retry-After` says, within a maximum number of attempts and an overall
/// deadline.
///
/// ```swift
/// let manager = URLSessionManager(retriers: [RetryPolicy(maximumAttempts: 4, deadline: 30)])
/// ```
///
/// By default it retries only idempotent methods (RFC 9110 §9.2.2), the statuses 408, 429, 500,
/// 502, 503 and 504, and transient `URLError`s (timeouts, lost or refused connections, DNS
/// failures); every part is configurable. A cancelled request is never offered to it.
public struct RetryPolicy: RequestRetrier {
    /// GET, HEAD, PUT, DELETE, OPTIONS and TRACE.
    public static let idempotentMethods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace]
    /// 408, 429, 500, 502, 503 and 504.
    public static let transientStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// Timeouts, lost, refused and empty connections, DNS failures and loss of connectivity.
    public static let transientURLErrorCodes: Set<URLError.Code> = [
        .timedOut, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
        .notConnectedToInternet, .badServerResponse, .cannotLoadFromNetwork, .secureConnectionFailed,
        .dataNotAllowed, .callIsActive, .internationalRoamingOff,
    ]

    /// The most attempts, the first included.
    public var maximumAttempts: Int
    /// The delay before the first retry, in seconds.
    public var initialDelay: TimeInterval
    /// How much each further delay grows.
    public var multiplier: Double
    /// The longest delay, in seconds: backoff stops growing there, and a `Retry-After` asking for
    /// longer is not retried at all.
    public var maximumDelay: TimeInterval
    /// How much a backoff delay may vary: `0.25` spreads it over ±25 %. Kept within 0…1 however it
    /// is set (not a number is 0).
    public var jitter: Double {
        didSet { jitter = Self.clamped(jitter) }
    }
    /// The most seconds from the first attempt to the start of the last; `nil` for no deadline.
    public var deadline: TimeInterval?
    /// Whether a `Retry-After` header sets the delay.
    public var honoursRetryAfter: Bool
    /// The methods that are retried.
    public var retryableMethods: Set<HTTPMethod>
    /// The status codes that are retried.
    public var retryableStatusCodes: Set<Int>
    /// The `URLError` codes that are retried.
    public var retryableURLErrorCodes: Set<URLError.Code>

    /// Creates a policy.
    public init(
        maximumAttempts: Int = 3,
        initialDelay: TimeInterval = 0.5,
        multiplier: Double = 2,
        maximumDelay: TimeInterval = 30,
        jitter: Double = 0.25,
        deadline: TimeInterval? = nil,
        honoursRetryAfter: Bool = true,
        retryableMethods: Set<HTTPMethod> = RetryPolicy.idempotentMethods,
        retryableStatusCodes: Set<Int> = RetryPolicy.transientStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.transientURLErrorCodes
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = Self.clamped(jitter)
        self.deadline = deadline
        self.honoursRetryAfter = honoursRetryAfter
        self.retryableMethods = retryableMethods
        self.retryableStatusCodes = retryableStatusCodes
        self.retryableURLErrorCodes = retryableURLErrorCodes
    }

    /// `jitter` within 0…1; 0 for not a number.
    private static func clamped(_ jitter: Double) -> Double {
        jitter.isNaN ? 0 : min(max(jitter, 0), 1)
    }

    /// Decides, as documented above.
    public func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        completion(decision(for: failure))
    }

    /// The decision for `failure`, at `now`.
    public func decision(for failure: RequestFailure, now: Date = Date()) -> RetryDecision {
        guard failure.attemptCount < maximumAttempts,
            retryableMethods.contains(HTTPMethod(rawValue: failure.request.httpMethod ?? "GET")),
            isTransient(failure)
        else { return .doNotRetry }
        let requested = retryAfter(failure.response, now: now)
        if let requested, requested > maximumDelay {
            return .doNotRetry  // retrying sooner than the server asked would only add to its load
        }
        let delay = requested ?? backoff(afterAttempt: failure.attemptCount)
        if let deadline, now.timeIntervalSince(failure.startDate) + delay > deadline {
            return .doNotRetry
        }
        return delay > 0 ? .retryAfter(delay) : .retry
    }

    private func isTransient(_ failure: RequestFailure) -> Bool {
        if let status = failure.statusCode, retryableStatusCodes.contains(status) { return true }
        if let error = failure.error as? URLError { return retryableURLErrorCodes.contains(error.code) }
        return false
    }

    /// The backoff before the retry after attempt `attempt`: `initialDelay × multiplier^(attempt−1)`,
    /// spread by ``jitter``, at most ``maximumDelay``.
    public func backoff(afterAttempt attempt: Int) -> TimeInterval {
        let base = initialDelay * pow(multiplier, Double(max(0, attempt - 1)))
        var generator = SystemRandomNumberGenerator()
        let spread = jitter > 0 ? Double.random(in: (1 - jitter)...(1 + jitter), using: &generator) : 1
        return min(maximumDelay, base * spread)
    }

    /// The delay a `Retry-After` header asks for: whole seconds, or an HTTP date (RFC 9110 §10.2.3).
    func retryAfter(_ response: HTTPURLResponse?, now: Date) -> TimeInterval? {
        guard honoursRetryAfter, let value = response?.value(forHTTPHeaderField: "Retry-After") else { return nil }
        return Self.parseRetryAfter(value, now: now)
    }

    /// The seconds `value` stands for, as delay-seconds (`1*DIGIT`, at most 2³¹: one too large to
    /// hold is a wait of 68 years) or an HTTP date; `nil` when it is neither, a sign or a fraction
    /// included.
    public static func parseRetryAfter(_ value: String, now: Date = Date()) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        return DeltaSeconds.parse(trimmed) ?? HTTPDate.parse(trimmed).map { max(0, $0.timeIntervalSince(now)) }
    }
}
