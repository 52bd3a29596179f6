import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one attempt of a request and reports its response as it arrives: the seam below the
/// pipeline.
///
/// A transport knows nothing of adapters, retries, redirects, credentials, validation, deadlines or
/// where a body goes: a ``SessionManager`` does all of that above it, the same for every transport.
/// It sends the request exactly as given, follows no redirect (a 3xx is a response like any other),
/// and reports to its ``ResponseReceiver``:
///
/// 1. the response head, as soon as it arrives, unasked;
/// 2. then, for each ``ResponseExchange/demand()``, exactly one thing: the next body part, or the
///    end — ``ResponseReceiver/finish(_:)`` with `nil` when the body is complete, or with the
///    error that ended the exchange.
///
/// It reads from the network only as fast as parts are asked for (back-pressure), so a slow
/// consumer holds a bounded amount of the body. An exchange that fails before a head arrives
/// finishes unasked; after ``/StrataCore/NetworkCancellable/cancel()`` it finishes unasked with
/// `URLError(.cancelled)`, unless it had finished. `finish` comes exactly once, and calls to the
/// receiver never overlap.
///
/// Strata's transports check a request handed to them directly as the pipeline checks every
/// attempt — a URL they can send to, a method and fields that keep RFC 9110's grammar — and fail
/// one that does not with a ``/StrataCore/RequestValidationError``, unsent: the libraries under
/// them would trap on some of it, or write it on the wire as it is. They frame it by its body
/// (`URLRequest.framedByItsBody()`) as the pipeline frames every attempt.
///
/// Whether the body goes into memory, into a file or to the caller as it comes is the pipeline's
/// choice, made once for every transport. ``URLSessionTransport`` sends over `URLSession`. To send
/// some other way, implement this one method; a transport that answers from memory — a test
/// double — plays its answer with ``ResponsePlayback``:
///
/// ```swift
/// struct Canned: Transport {
///     func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
///         let url = attempt.request.url ?? URL(fileURLWithPath: "/")
///         let head = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:])
///         return ResponsePlayback.start(head: head, steps: [.part(Data("{}".utf8))], to: receiver)
///     }
/// }
/// let manager = SessionManager(transport: Canned(), retriers: [RetryPolicy()])
/// ```
public protocol Transport: Sendable {
    /// Sends `attempt` and reports its response to `receiver` as described above.
    /// - Returns: The exchange: ask it for each body part, or cancel it.
    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange

    /// Throws unless the transport can send to `url`. The pipeline asks before every request it
    /// hands over — the caller's, one built on a configuration's base URL, and each redirect's
    /// target — so that nothing the transport would choke on reaches it. By default
    /// ``/StrataCore/HTTPURLCheck/validate(_:)``: `http` or `https`, a host that can be connected
    /// to, a port from 1 to 65535. A transport that sends elsewhere (a test double with a scheme
    /// of its own, a Unix socket) widens it.
    func validate(_ url: URL) throws(UnsupportedURLReason)

    /// The cookies the transport adds to each request it sends and keeps from each response, if
    /// it keeps any (by default `nil`: none). The pipeline's ``HTTPCache`` asks it: a response
    /// that varies by `Cookie` is kept, and reused, for the cookies that went with its request —
    /// which only the transport adds.
    var cookieJar: CookieJar? { get }
}

extension Transport {
    /// No cookies.
    public var cookieJar: CookieJar? { nil }

    /// ``/StrataCore/HTTPURLCheck/validate(_:)``.
    public func validate(_ url: URL) throws(UnsupportedURLReason) {
        try HTTPURLCheck.validate(url)
    }

    /// ``validate(_:)`` as the pipeline and the transports report it: a refused `url` throws
    /// ``/StrataCore/RequestValidationError/unsupportedURL(_:reason:)`` naming it as `redaction`
    /// shows it, with the reason.
    public func validateForSending(_ url: URL, redaction: Redaction = .standard) throws(RequestValidationError) {
        do {
            try validate(url)
        } catch {
            throw .unsupportedURL(redaction.redact(url), reason: error)
        }
    }

    /// Sends `attempt` and calls `completion` exactly once with the whole response, its body in
    /// memory (at most `maximumBodyLength` bytes of it: a longer body fails the outcome with
    /// `URLError(.dataLengthExceedsMaximum)`, its head kept).
    @discardableResult
    public func send(
        _ attempt: TransportAttempt, maximumBodyLength: Int = RequestOptions.defaultMaximumBodyLength,
        completion: @escaping @Sendable (TransportOutcome) -> Void
    ) -> any NetworkCancellable {
        let slot = ExchangeSlot()
        slot.set(send(attempt, to: BodyCollector(limit: maximumBodyLength, from: slot, completion)))
        return slot
    }
}

/// What a ``Transport`` reports one exchange to. Its methods are called one at a time, from the
/// transport's threads; they should return quickly, and ask for more with
/// ``ResponseExchange/demand()`` when ready (from any thread, also from within these methods).
public protocol ResponseReceiver: AnyObject, Sendable {
    /// The response head arrived; at most once, before anything else.
    func receive(_ head: ResponseHead)
    /// The next body part, in answer to a demand; never empty.
    func receive(_ part: Data)
    /// The exchange is over: `nil` when the whole body was received, else why it ended. Exactly once,
    /// unless the receiver took the body as a file.
    func finish(_ error: (any Error)?)

    /// The whole body is already in a file at `url`, which a transport that wrote it to disk itself
    /// offers in answer to a demand: return `true` to take it — the file is then the receiver's to
    /// move or remove, and nothing more comes, not even ``finish(_:)`` — or `false` (the default)
    /// to have it as parts.
    func take(bodyFile url: URL) -> Bool
}

extension ResponseReceiver {
    /// Declines the file: the body comes as parts.
    public func take(bodyFile url: URL) -> Bool { false }
}

/// One exchange under way with a ``Transport``: ask for the body part by part, or cancel.
public protocol ResponseExchange: NetworkCancellable {
    /// Asks for the next body part, or the end; the transport answers once, when it has it.
    func demand()
}

/// One attempt for a ``Transport`` to send: the request as it goes on the wire, and where its
/// upload progress goes.
public struct TransportAttempt: Sendable {
    /// The request, adapted and checked. A body on disk is a ``/StrataCore/FileBodyStream`` in
    /// `httpBodyStream`, for the transport to upload from its file.
    public var request: URLRequest
    /// Called as the body is sent, with the bytes sent so far and the bytes to send (`-1` when
    /// unknown). Calls come in order; the pipeline turns them into the caller's `Progress`.
    public var uploadProgress: (@Sendable (_ sent: Int64, _ expected: Int64) -> Void)?
    /// Whether the response body is bound for a file (a download): a transport that cannot hold
    /// the server back as parts are asked for — `URLSession` — writes it to disk itself and then
    /// plays it from there, so that memory stays bounded. A transport that can ignores it.
    public var bodyIsBoundForFile: Bool
    /// For a transport that writes a file-bound body to disk itself: called as it writes, with the
    /// bytes written so far and the bytes expected (`-1` when unknown), in order.
    public var fileProgress: (@Sendable (_ written: Int64, _ expected: Int64) -> Void)?
    /// For a transport that cannot hold the server back: the most body bytes its relay may keep for
    /// a consumer that falls behind
    /// (``ResponseRelay/init(to:bufferLimit:joiningSmallParts:onTaken:stop:)``); `nil`, no limit.
    /// The pipeline sets it for a streamed response, whose consumer reads at its own pace
    /// (``/StrataCore/RequestOptions/streamBufferLimit``); every other consumer takes each part as
    /// it comes. A transport that holds the server back ignores it.
    public var bufferLimit: Int?

    /// Describes an attempt.
    public init(
        request: URLRequest,
        uploadProgress: (@Sendable (_ sent: Int64, _ expected: Int64) -> Void)? = nil,
        bodyIsBoundForFile: Bool = false,
        fileProgress: (@Sendable (_ written: Int64, _ expected: Int64) -> Void)? = nil,
        bufferLimit: Int? = nil
    ) {
        self.request = request
        self.uploadProgress = uploadProgress
        self.bodyIsBoundForFile = bodyIsBoundForFile
        self.fileProgress = fileProgress
        self.bufferLimit = bufferLimit
    }
}

/// What one attempt came back with, its body whole: the response head and body, or the error
/// that ended it.
///
/// An error may come with a response and part of a body (a connection lost mid-body).
public struct TransportOutcome: Sendable {
    /// The response, if one arrived: the head's ``ResponseHead/httpURLResponse``, made when first read.
    public var response: URLResponse? {
        get { head?.httpURLResponse }
        set { head = (newValue as? HTTPURLResponse).map { ResponseHead($0) } }
    }
    /// The response head, if one arrived.
    public var head: ResponseHead?
    /// The body received in memory; empty for a body written to ``fileURL``.
    public var body: Data
    /// Where the body was written, when the pipeline wrote it to a file (a download to its
    /// destination); `nil` when it is in ``body``.
    public var fileURL: URL?
    /// Why the attempt failed, or `nil` if it completed.
    public var error: (any Error)?
    /// Whether the pipeline's ``HTTPCache`` answered, and nothing reached the wire.
    public var isFromCache: Bool

    /// Describes an outcome whose response is Foundation's.
    public init(
        response: URLResponse? = nil, body: Data = Data(), error: (any Error)? = nil, isFromCache: Bool = false
    ) {
        self.head = (response as? HTTPURLResponse).map { ResponseHead($0) }
        self.body = body
        self.error = error
        self.isFromCache = isFromCache
    }

    /// Describes an outcome whose response is `head`: the pipeline reads its status and fields
    /// without making an `HTTPURLResponse`, which only ``response`` makes.
    public init(head: ResponseHead?, body: Data = Data(), fileURL: URL? = nil, error: (any Error)? = nil) {
        self.head = head
        self.body = body
        self.fileURL = fileURL
        self.error = error
        self.isFromCache = error == nil && (head?.isFromCache ?? false)
    }

    /// The head, for code that plays the outcome again (``ResponsePlayback/start(_:to:)``).
    var responseHead: ResponseHead? { head }

    /// Whether a response arrived, without making one from the head.
    var hasResponse: Bool { head != nil }

    /// The body as a `URLSession` completion handler reports it: `nil` when nothing arrived.
    package var data: Data? { !hasResponse && body.isEmpty ? nil : body }

    /// The response's status code, if an HTTP response arrived.
    var statusCode: Int? { head?.statusCode }

    /// The first value of the response's header field `name`, compared without case.
    func headerValue(_ name: String) -> String? {
        head?.headers[name]
    }

    /// The response's `Content-Length`, or `-1` when it names none.
    var expectedContentLength: Int64 {
        head?.expectedContentLength ?? -1
    }

    /// Whether the body in memory is shorter than the response's `Content-Length`: the connection
    /// ended early (see ``ResponseHead/isShorterThanAnnounced(_:for:)``).
    func isShorterThanAnnounced(for request: URLRequest) -> Bool {
        head?.isShorterThanAnnounced(Int64(body.count), for: request) ?? false
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
/// `HTTPURLResponse` from below (``TransportOutcome/init(head:body:fileURL:error:)``) reports a head, and
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
    /// Whether the pipeline's ``HTTPCache`` answered with this head, and nothing reached the wire.
    public let isFromCache: Bool
    private let made = Locked<HTTPURLResponse??>(nil)

    /// Describes a response head.
    public init(url: URL, statusCode: Int, httpVersion: String, headers: HTTPHeaders, isFromCache: Bool = false) {
        self.url = url
        self.isFromCache = isFromCache
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headers = headers
        expectedContentLength = headers["Content-Length"].flatMap { Int64($0) } ?? -1
    }

    /// The head of Foundation's `response`, which ``httpURLResponse`` then is.
    public convenience init(_ response: HTTPURLResponse, isFromCache: Bool = false) {
        var fields: [HTTPHeader] = []
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                fields.append(HTTPHeader(name: name, value: value))
            }
        }
        self.init(
            url: response.url ?? URL(fileURLWithPath: "/"), statusCode: response.statusCode,
            httpVersion: "HTTP/1.1", headers: HTTPHeaders(sortingByName: fields), isFromCache: isFromCache)
        made.withLock { $0 = .some(response) }
    }

    /// What a body's progress is counted against: the `Content-Length` announced, or `-1` (unknown)
    /// for a content-coded body, whose length is that of the coded bytes while the transport
    /// delivers them decoded — counted against it, a compressed body would pass its total.
    package var progressTotal: Int64 {
        headers["Content-Encoding"] == nil ? expectedContentLength : -1
    }

    /// How many times its size on the wire a content-coded body may decode to: a response that
    /// decodes to more is a decompression bomb. A transport that decodes bodies itself keeps the
    /// same ratio (`AsyncHTTPClientTransport`'s decoder, and the client decompressor its
    /// `strataConfiguration()` sets up).
    public static let decodedRatioLimit: Int64 = 500

    /// The error for a body of `received` bytes that decodes to more than ``decodedRatioLimit``
    /// times the `Content-Length` announced for its coded bytes, or `nil`. A body sent without a
    /// length is bounded by the request's `maximumBodyLength` alone.
    package func decompressionBomb(_ received: Int64) -> URLError? {
        guard expectedContentLength > 0, received > expectedContentLength,
            (received - 1) / Self.decodedRatioLimit >= expectedContentLength, headers["Content-Encoding"] != nil
        else { return nil }
        return URLError(
            .cannotDecodeContentData,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "the body decodes to more than \(Self.decodedRatioLimit) times the \(expectedContentLength) bytes "
                    + "of its content coding",
                NSURLErrorFailingURLErrorKey: url,
            ])
    }

    /// Whether a body of `received` bytes is shorter than the `Content-Length` announced: the
    /// connection ended early. Not where the length is not the body's: a compressed body (the
    /// transport delivers it decoded), and responses that have no body whatever their headers
    /// say — to `HEAD`, and `1xx`, `204` and `304` (RFC 9110, 6.4.1).
    func isShorterThanAnnounced(_ received: Int64, for request: URLRequest) -> Bool {
        !hasNoBody(answering: request.httpMethod) && expectedContentLength > received
            && headers["Content-Encoding"] == nil
    }

    /// Whether the response has no body whatever its fields say (RFC 9110, 6.4.1): it answers a
    /// request whose `method` is `HEAD`, or its status is `1xx`, `204` or `304`.
    public func hasNoBody(answering method: String?) -> Bool {
        statusCode < 200 || statusCode == 204 || statusCode == 304 || method == HTTPMethod.head.rawValue
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
