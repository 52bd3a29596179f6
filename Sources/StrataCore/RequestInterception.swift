import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Changes a request before it is sent: adds credentials, headers, signatures.
///
/// Adapters run in order before every attempt, each on the previous one's output, starting from
/// the original request (so a retry picks up a refreshed credential). An adapter may work
/// asynchronously; it must call `completion` once. A failure ends the request with that error.
public protocol RequestAdapter: Sendable {
    /// Calls `completion` with the adapted request or the error that prevents sending it.
    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void)

    /// The origins the credentials this adapter adds belong to, besides the origin the caller
    /// addressed; `nil` (the default) for none.
    ///
    /// Adapters run again on every redirect. On a redirect to another origin than the caller's
    /// request addressed, a credential field (`Authorization`, `Cookie`, the names of the manager's
    /// ``Redaction``) or a query item whose key the redaction hides (`api_key`, `access_token`,
    /// its query keys) that an adapter adds or changes is taken back unless this set holds the new
    /// origin, so a token never follows a server's redirect to a host nobody named for it.
    var credentialOrigins: Set<Origin>? { get }
}

extension RequestAdapter {
    /// No origin but the one the caller addressed.
    public var credentialOrigins: Set<Origin>? { nil }
}

/// Decides whether a failed request is sent again.
///
/// Retriers are asked in order after a failure (a transport error or an unacceptable status). The
/// first that answers ``RetryDecision/retry`` or ``RetryDecision/retryAfter(_:)`` wins;
/// ``RetryDecision/doNotRetryWithError(_:)`` ends the request with its error; otherwise the next
/// retrier is asked. A cancelled request is never offered to a retrier, nor is one whose body is an
/// `InputStream` of the caller's that a transport has read: a stream goes once, and a retry would
/// send what is left of it — nothing — as the body. Its failure is the outcome. A body in memory
/// or in a file (``FileBodyStream``) is sent again whole.
public protocol RequestRetrier: Sendable {
    /// Calls `completion` once with the decision for `failure`.
    func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void)
}

/// An adapter and a retrier in one, for concerns that need both (authentication, for one).
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Passes the request through unchanged.
    public func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        completion(.success(request))
    }

    /// Does not retry.
    public func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        completion(.doNotRetry)
    }
}

/// What a retrier decides.
public enum RetryDecision: Sendable {
    /// Send the request again now.
    case retry
    /// Send the request again after this many seconds.
    case retryAfter(TimeInterval)
    /// Do not send it again; the next retrier is asked.
    case doNotRetry
    /// Do not send it again, and end the request with this error.
    case doNotRetryWithError(any Error)
}

/// A failed attempt, as a retrier sees it.
///
/// Its description goes through ``/StrataCore/Redaction/standard``: the URL without secret query
/// values, the body as its size, no request headers.
public struct RequestFailure: Sendable, CustomStringConvertible {
    /// The request as it was sent (after adaptation).
    public let request: URLRequest
    /// The response, if one arrived.
    public let response: HTTPURLResponse?
    /// The body received, possibly empty.
    public let data: Data
    /// Why the attempt failed: a `URLError`, a `SessionError` (from StrataSession), or another error.
    public let error: any Error
    /// How many attempts have been made, this one included (1 after the first).
    public let attemptCount: Int
    /// When the request's first attempt started.
    public let startDate: Date

    /// Creates a failure description.
    public init(
        request: URLRequest,
        response: HTTPURLResponse?,
        data: Data,
        error: any Error,
        attemptCount: Int,
        startDate: Date = Date()
    ) {
        self.request = request
        self.response = response
        self.data = data
        self.error = error
        self.attemptCount = attemptCount
        self.startDate = startDate
    }

    /// The response's status code, if a response arrived.
    public var statusCode: Int? { response?.statusCode }

    /// `RequestFailure(GET https://…?token=<redacted>, attempt 2, status 503, body: 12 bytes, error: …)`.
    public var description: String {
        let target = "\(request.httpMethod ?? "GET") " + (request.url.map(Redaction.standard.redact) ?? "<no URL>")
        let error = (self.error as? URLError).map { "URLError(\($0.code.rawValue))" } ?? String(describing: self.error)
        let status = statusCode.map { ", status \($0)" } ?? ""
        return "RequestFailure(\(target), attempt \(attemptCount)\(status), body: \(data.count) bytes, error: \(error))"
    }
}
