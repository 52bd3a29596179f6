import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the service layer sends through: a `URLRequest` in, data, response and error out. It is
/// also the interception point, where requests are adapted (credentials, headers) and failed
/// requests retried.
///
/// ``SessionManager`` is the implementation: the pipeline of adapters, redirects, validation and
/// retries over a ``Transport`` (by default ``URLSessionTransport``). Replace the transport to send
/// requests some other way while keeping the pipeline; replace the whole manager with
/// `MockNetworkSessionManager` (from `StrataTesting`) in tests of the service layer.
///
/// An implementation calls `completion` exactly once, also when the request is cancelled (with a
/// `URLError(.cancelled)`). It validates the status — the request's acceptable codes
/// (``/StrataCore/RequestOptions/acceptableStatusCodes``), else its own — and when the status is
/// not acceptable passes the data and response along with
/// ``SessionError/unacceptableStatusCode(_:)``; nothing above it checks the status again.
public protocol NetworkSessionManager: Sendable {
    /// What an implementation reports: the body received, the response, and the error if it failed.
    typealias CompletionHandler = @Sendable (Data?, URLResponse?, (any Error)?) -> Void

    /// Sends `request` and calls `completion` exactly once.
    /// - Returns: a handle that cancels the request, including while it is adapted or waits for a retry.
    func request(
        _ request: URLRequest, options: RequestOptions, completion: @escaping CompletionHandler
    )
        -> any NetworkCancellable

    /// Sends `request` and calls `completion` exactly once with its outcome: the response head,
    /// the body — in memory, or written to the options' download destination (then
    /// ``TransportOutcome/fileURL`` says so) — and the error, if it failed. The form Strata's own
    /// layers use: the head is read as it arrived, and no `HTTPURLResponse` is made for it. Its
    /// completion runs where ``request(_:options:completion:)``'s does.
    ///
    /// A manager that does not write downloads itself (a test double) gets a default built on
    /// ``request(_:options:completion:)``, whose outcome names no file.
    @discardableResult
    func send(
        _ request: URLRequest, options: RequestOptions, completion: @escaping @Sendable (TransportOutcome) -> Void
    )
        -> any NetworkCancellable

    /// Sends `request` and hands its accepted response to `receiver` as it comes: the head, then
    /// one body part per ``ResponseExchange/demand()``, then the end, exactly once. A request that
    /// fails before a response is accepted ends with the error — a ``FailedResponse`` when it came
    /// with one (a status that is not acceptable: its head and body). Whatever is retried is
    /// retried before the head is handed on; nothing after.
    ///
    /// A manager that has no stream of its own (a test double) gets a default that plays the
    /// whole response once it has arrived.
    /// - Returns: The stream: ask it for each part, or cancel it (the end is then
    ///   `URLError(.cancelled)`, unless the stream had ended).
    func stream(
        _ request: URLRequest, options: RequestOptions, to receiver: any ResponseReceiver
    )
        -> any ResponseExchange

    /// `context` with what the manager keeps of the calling task for a request that starts here
    /// (a ``SessionManager`` asks its monitors: ``EventMonitor/captureContext(into:)``). A manager
    /// does this itself, on the thread that calls it; a caller that hops to another queue before
    /// sending — a service encoding a large body — asks first and sends with the result in the
    /// options, which the manager then keeps as it is.
    ///
    /// A manager that keeps nothing (a test double) gets a default that returns `context`.
    func captureContext(_ context: RequestContext) -> RequestContext
}

extension NetworkSessionManager {
    /// Returns `context` as it is.
    public func captureContext(_ context: RequestContext) -> RequestContext {
        context
    }

    /// ``request(_:options:completion:)``, its report as an outcome.
    @discardableResult
    public func send(
        _ request: URLRequest, options: RequestOptions, completion: @escaping @Sendable (TransportOutcome) -> Void
    ) -> any NetworkCancellable {
        self.request(request, options: options) { data, response, error in
            completion(TransportOutcome(response: response, body: data ?? Data(), error: error))
        }
    }

    /// Sends `request` with default options.
    @discardableResult
    public func request(_ request: URLRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        self.request(request, options: RequestOptions(), completion: completion)
    }
}

/// Failures a session manager reports that are not `URLError`s.
public enum SessionError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// The server answered with a status code that is not acceptable.
    case unacceptableStatusCode(Int)
    /// The response is not an HTTP response.
    case invalidResponse
    /// The body is shorter than the response's `Content-Length` announced.
    case incompleteBody(expected: Int, received: Int)
    /// The loading system ended the request, with no error, with a `1xx` response for its answer:
    /// `101 Switching Protocols`, which no request of Strata's asks for, or an interim response
    /// (`100 Continue`, `103 Early Hints`) that a `URLProtocol` reported as its answer. An interim
    /// response before an answer is skipped, over every transport; one that the connection's end
    /// cuts off from its answer fails as that end does (`URLError(.networkConnectionLost)`).
    case interimResponseTakenForAnswer(statusCode: Int)
    /// The response's `Content-Length` is not one length (two that differ, one beyond any
    /// integer), so where its body ends cannot be known: the response is discarded.
    case invalidContentLength(String)
    /// A download that resumes asked for the rest of its body and the server's `206` does not
    /// continue it: its `Content-Range` (given) starts elsewhere, or is missing or unreadable.
    /// What was kept is removed, so the next attempt downloads the whole body.
    case unexpectedContentRange(String)

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .unacceptableStatusCode(let code):
            return "The server answered with status \(code), which is not acceptable for this request."
        case .invalidResponse:
            return "The server's response is not an HTTP response."
        case .incompleteBody(let expected, let received):
            return "The connection ended after \(received) of \(expected) announced body bytes."
        case .interimResponseTakenForAnswer(let code):
            return code == 101
                ? "The server switched protocols (101), which the request did not ask for."
                : "The request ended with an interim response (\(code)) and no answer after it."
        case .invalidContentLength(let value):
            return "The server's Content-Length (\(value.prefix(64))) is not one length, so where the body ends "
                + "cannot be known; the response was discarded."
        case .unexpectedContentRange(let value):
            return "The server answered the download's resumption with a range (Content-Range: '\(value.prefix(64))') "
                + "that does not continue the bytes kept; they were removed."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}
