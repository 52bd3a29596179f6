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
///
/// A transport that gets no `HTTPURLResponse` from below reports the response as a
/// ``ResponseHead`` (``TransportOutcome/init(head:body:error:)``), which costs far less to make on
/// Linux; an `HTTPURLResponse` is then made only for code that reads one.
public protocol Transport: Sendable {
    /// Sends `attempt` and calls `completion` exactly once with its outcome.
    /// - Returns: A handle that stops the attempt; the completion then reports `URLError(.cancelled)`
    ///   unless the outcome had already been reported.
    func send(
        _ attempt: TransportAttempt, completion: @escaping @Sendable (TransportOutcome) -> Void
    )
        -> any NetworkCancellable

    /// Throws unless the transport can send to `url`. The pipeline asks before every request it
    /// hands over — the caller's, one built on a configuration's base URL, and each redirect's
    /// target — so that nothing the transport would choke on reaches it. By default
    /// ``/StrataCore/HTTPURLCheck/validate(_:)``: `http` or `https`, a host that can be connected
    /// to, a port from 1 to 65535. A transport that sends elsewhere (a test double with a scheme
    /// of its own, a Unix socket) widens it.
    func validate(_ url: URL) throws(UnsupportedURLReason)
}

extension Transport {
    /// ``/StrataCore/HTTPURLCheck/validate(_:)``.
    public func validate(_ url: URL) throws(UnsupportedURLReason) {
        try HTTPURLCheck.validate(url)
    }
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
    /// The response, if one arrived. For an outcome made with a ``ResponseHead``, the head's
    /// ``ResponseHead/httpURLResponse``, made when first read.
    public var response: URLResponse? {
        get { head?.httpURLResponse ?? madeResponse }
        set {
            madeResponse = newValue
            head = nil
        }
    }
    /// The response head as the transport received it, for a transport that reports one instead
    /// of a `URLResponse` (see ``init(head:body:error:)``); `nil` otherwise.
    public private(set) var head: ResponseHead?
    /// The body received in memory; empty for a download written to its destination.
    public var body: Data
    /// Why the attempt failed, or `nil` if it completed.
    public var error: (any Error)?
    /// Whether the pipeline's ``HTTPCache`` answered, and nothing reached the wire.
    public var isFromCache: Bool

    private var madeResponse: URLResponse?

    /// Describes an outcome.
    public init(
        response: URLResponse? = nil, body: Data = Data(), error: (any Error)? = nil, isFromCache: Bool = false
    ) {
        self.madeResponse = response
        self.body = body
        self.error = error
        self.isFromCache = isFromCache
    }

    /// Describes an outcome whose response is `head`: the pipeline reads its status and fields
    /// without making an `HTTPURLResponse`, which only ``response`` makes.
    public init(head: ResponseHead?, body: Data = Data(), error: (any Error)? = nil) {
        self.head = head
        self.body = body
        self.error = error
        self.isFromCache = false
    }

    /// Whether a response arrived, without making one from the head.
    var hasResponse: Bool { head != nil || madeResponse != nil }

    /// The body as a `URLSession` completion handler reports it: `nil` when nothing arrived.
    package var data: Data? { !hasResponse && body.isEmpty ? nil : body }

    /// The response's status code, if an HTTP response arrived.
    var statusCode: Int? { head?.statusCode ?? (madeResponse as? HTTPURLResponse)?.statusCode }

    /// The first value of the response's header field `name`, compared without case.
    func headerValue(_ name: String) -> String? {
        if let head { return head.headers[name] }
        return (madeResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: name)
    }

    /// The response's `Content-Length`, or `-1` when it names none.
    var expectedContentLength: Int64 {
        head?.expectedContentLength ?? madeResponse?.expectedContentLength ?? -1
    }

    /// Whether the body in memory is shorter than the response's `Content-Length`: the connection
    /// ended early. Not where the length is not the body's: a compressed body (the transport
    /// delivers it decoded), and responses that have no body whatever their headers say — to
    /// `HEAD`, and `1xx`, `204` and `304` (RFC 9110, 6.4.1).
    func isShorterThanAnnounced(for request: URLRequest) -> Bool {
        guard let status = statusCode, status >= 200, status != 204, status != 304 else { return false }
        return expectedContentLength > Int64(body.count) && request.httpMethod != HTTPMethod.head.rawValue
            && headerValue("Content-Encoding") == nil
    }

    /// The same response and body, failed with `error`: no longer an answer from the cache.
    func failing(with error: any Error) -> TransportOutcome {
        var failed = self
        failed.error = error
        failed.isFromCache = false
        return failed
    }

    /// A cancelled attempt's outcome, `URLError(.cancelled)`: made once, as making a `URLError`
    /// makes an `NSError` with its dictionary.
    static let cancelled = TransportOutcome(error: URLError(.cancelled))
}

/// A response head as a transport received it — status, HTTP version and header fields — made
/// into an `HTTPURLResponse` only when one is asked for.
///
/// The pipeline reads the status and a few fields (`Location`, `Content-Length`,
/// `Content-Encoding`), and the network service builds its `NetworkResponse`
/// from the fields themselves. On Linux, `HTTPURLResponse`'s initializer capitalizes every field
/// name through Foundation and parses `Content-Type` a character at a time: for a typical response
/// it costs more than the rest of the pipeline's work. A transport that does not get an
/// `HTTPURLResponse` from below (``TransportOutcome/init(head:body:error:)``) reports a head, and
/// only code that reads a `URLResponse` — a `NetworkSessionManager` completion, a retrier, a
/// redirect decision, an event monitor — pays for one, once per head.
public final class ResponseHead: Sendable {
    /// The URL the response answers.
    public let url: URL
    /// The status code.
    public let statusCode: Int
    /// The protocol version, as `HTTP/1.1`.
    public let httpVersion: String
    /// The header fields in the order received; a name may repeat.
    public let headers: HTTPHeaders
    /// The `Content-Length` field as a number, or `-1` when there is none or it is not one, as
    /// `URLResponse.expectedContentLength` reads it. Read once, here: the pipeline checks every
    /// body against it.
    public let expectedContentLength: Int64
    private let made = Locked<HTTPURLResponse??>(nil)

    /// Describes a response head.
    public init(url: URL, statusCode: Int, httpVersion: String, headers: HTTPHeaders) {
        self.url = url
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headers = headers
        expectedContentLength = headers["Content-Length"].flatMap { Int64($0) } ?? -1
    }

    /// Whether ``httpURLResponse`` has been read, and so made.
    package var hasMadeResponse: Bool { made.withLock { $0 != nil } }

    /// The head as Foundation's response, the values of a repeated name joined by commas; made
    /// once, when first read.
    public var httpURLResponse: HTTPURLResponse? {
        made.withLock { made in
            if let response = made { return response }
            let response = HTTPURLResponse(
                url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headers.dictionary)
            made = .some(response)
            return response
        }
    }
}
