import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one attempt of a request and reports what came back: the seam below the pipeline.
///
/// A transport knows nothing of adapters, retries, redirects, credentials, validation or deadlines:
/// a ``SessionManager`` does all of that above it, the same for every transport. It sends the
/// request exactly as given, follows no redirect (a 3xx is an outcome like any other), and calls
/// `completion` exactly once — also after ``/StrataCore/NetworkCancellable/cancel()``, with a
/// `URLError(.cancelled)`.
///
/// ``URLSessionTransport`` sends over `URLSession`. To send some other way, implement this one
/// method; a transport that answers from memory makes a test double:
///
/// ```swift
/// struct Canned: Transport {
///     func send(_ attempt: TransportAttempt, completion: @escaping @Sendable (TransportOutcome) -> Void)
///         -> any NetworkCancellable
///     {
///         let url = attempt.request.url ?? URL(fileURLWithPath: "/")
///         let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
///         completion(TransportOutcome(response: response, body: Data("{}".utf8)))
///         return CancellationToken()
///     }
/// }
/// let manager = SessionManager(transport: Canned(), retriers: [RetryPolicy()])
/// ```
public protocol Transport: Sendable {
    /// Sends `attempt` and calls `completion` exactly once with its outcome.
    /// - Returns: A handle that stops the attempt; the completion then reports `URLError(.cancelled)`
    ///   unless the outcome had already been reported.
    func send(
        _ attempt: TransportAttempt, completion: @escaping @Sendable (TransportOutcome) -> Void
    )
        -> any NetworkCancellable
}

/// One attempt for a ``Transport`` to send: the request as it goes on the wire, and where its
/// progress and body go.
public struct TransportAttempt: Sendable {
    /// The request, adapted and checked. A body on disk is a ``/StrataCore/FileBodyStream`` in
    /// `httpBodyStream`, for the transport to upload from its file.
    public var request: URLRequest
    /// Called as the body is sent, with the bytes sent so far and the bytes to send (`-1` when
    /// unknown). Calls come in order; the pipeline turns them into the caller's `Progress`.
    public var uploadProgress: (@Sendable (_ sent: Int64, _ expected: Int64) -> Void)?
    /// Where to write the response body instead of reporting it in memory; an existing file there
    /// is replaced. Only a `2xx` body is written there: another status's body (up to 1 MiB of it)
    /// is reported in ``TransportOutcome/body``.
    public var downloadDestination: URL?
    /// Called as a download's body is written, with the bytes written so far and the bytes expected
    /// (`-1` when unknown). Calls come in order.
    public var downloadProgress: (@Sendable (_ written: Int64, _ expected: Int64) -> Void)?

    /// Describes an attempt.
    public init(
        request: URLRequest,
        uploadProgress: (@Sendable (_ sent: Int64, _ expected: Int64) -> Void)? = nil,
        downloadDestination: URL? = nil,
        downloadProgress: (@Sendable (_ written: Int64, _ expected: Int64) -> Void)? = nil
    ) {
        self.request = request
        self.uploadProgress = uploadProgress
        self.downloadDestination = downloadDestination
        self.downloadProgress = downloadProgress
    }
}

/// What one attempt came back with: the response head and body, or the error that ended it.
///
/// An error may come with a response and part of a body (a connection lost mid-body).
public struct TransportOutcome: Sendable {
    /// The response, if one arrived.
    public var response: URLResponse?
    /// The body received in memory; empty for a download written to its destination.
    public var body: Data
    /// Why the attempt failed, or `nil` if it completed.
    public var error: (any Error)?
    /// Whether the pipeline's ``HTTPCache`` answered, and nothing reached the wire.
    public var isFromCache: Bool

    /// Describes an outcome.
    public init(
        response: URLResponse? = nil, body: Data = Data(), error: (any Error)? = nil, isFromCache: Bool = false
    ) {
        self.response = response
        self.body = body
        self.error = error
        self.isFromCache = isFromCache
    }

    /// A cancelled attempt's outcome, `URLError(.cancelled)`: made once, as making a `URLError`
    /// makes an `NSError` with its dictionary.
    static let cancelled = TransportOutcome(error: URLError(.cancelled))
}
