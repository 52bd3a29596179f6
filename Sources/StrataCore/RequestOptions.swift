import Foundation

/// How one request is sent: the settings a session manager honours for it, beyond the `URLRequest`.
///
/// An endpoint carries one (`Requestable.options`, in StrataEndpoint), the network service
/// passes it to the session manager, and the manager's pipeline applies it. It is defined here,
/// below both, so that describing a call does not depend on the layer that sends it.
///
/// ```swift
/// Endpoint<Report>(
///     path: "reports/latest",
///     options: RequestOptions(
///         acceptableStatusCodes: [200, 202],
///         downloadDestination: reportsFolder.appending(path: "latest.pdf")
///     )
/// )
/// ```
public struct RequestOptions: Sendable {
    /// `200..<300`: the codes that count as success when neither the request nor the manager names others.
    public static let defaultAcceptableStatusCodes = Set(200..<300)
    /// 64 MiB: how far a stream's consumer may fall behind a transport that cannot hold the server back.
    public static let defaultStreamBufferLimit = 64 * 1_048_576
    /// 4 GiB: the most a body held in memory can be, what one `Data` on every platform, and one NIO
    /// `ByteBuffer`, can hold. Bodies that large belong in a file.
    public static let defaultMaximumBodyLength = Int(UInt32.max)

    /// The status codes that count as success for this request; `nil` for the manager's.
    public var acceptableStatusCodes: Set<Int>?
    /// Called as the body is sent, with a `Progress` whose units are bytes. Each attempt has a new
    /// `Progress` (on Linux, setting a total back to zero traps, so one is never reused). Calls come
    /// in order on a serial queue of the request's own, never on the transport's, and all of them
    /// before the request's completion, which waits for the last to return.
    public var uploadProgress: (@Sendable (Progress) -> Void)?
    /// An interceptor for this request alone, run after the manager's own adapters and retriers.
    public var interceptor: (any RequestInterceptor)?
    /// The redirect policy for this request; `nil` for the manager's.
    public var redirectPolicy: RedirectPolicy?
    /// Where to save the response body instead of collecting it in memory; an existing file there
    /// is replaced, as is a link (not what it names); a folder, a device (`/dev/null`), a pipe or a
    /// socket there is not: the download fails with a typed error, unsent. Missing folders
    /// on the way are created. The response then has an empty body and this `fileURL`.
    public var downloadDestination: URL?
    /// Called as the response body arrives — written to ``downloadDestination``, or held in memory
    /// — with a `Progress` counting bytes against the announced length (unknown, `-1`, for a
    /// compressed body, whose `Content-Length` counts the compressed bytes; a new one for each attempt;
    /// the body of a redirect that is followed is not counted), in order on a serial queue of the
    /// request's own, all before the request's completion. A streamed body is not counted: its
    /// parts are the caller's as they come.
    public var downloadProgress: (@Sendable (Progress) -> Void)?
    /// Whether a download to ``downloadDestination`` picks up where an earlier one stopped. When an
    /// attempt is cut short — the connection lost, the deadline passed, the request cancelled — the
    /// bytes written are kept beside the destination (`.<name>.download`), with what says which
    /// version of the resource they are part of (its strong `ETag`, or its `Last-Modified`); the
    /// next attempt, a retry or a later request for the same URL to the same destination, asks for
    /// the rest with `Range` and `If-Range`. A `206` that continues the kept bytes is appended to
    /// them (it counts as success whatever ``acceptableStatusCodes`` says); a `200` — the resource
    /// changed, or the server sends whole bodies only — replaces them. A body without such a
    /// validator, or in a content coding, is not kept; a `206` for another range removes what was
    /// kept, and so does a `416`, after which the whole body is asked for at once. A request with a
    /// `Range` of its own, or whose method is not `GET`, does not resume. One request at a time
    /// resumes a destination: another, while that one is under way, downloads the whole body to a
    /// file of its own; one started after it completed — from a cancelled download's completion,
    /// say — waits for its writer to end, then resumes. Over `URLSessionTransport` such a download
    /// goes through a data task, whose parts Strata writes.
    public var resumesDownload: Bool
    /// Names of headers that belong to the request's origin rather than to the request — those of a
    /// configuration shared by every request to one API. A redirect to another origin removes them,
    /// as it removes credentials (see ``RedirectPolicy``). The network service adds the
    /// configuration's header names to those named here.
    public var originBoundHeaderNames: Set<String>
    /// For a streamed response: the longest wait for the next body part once it is asked for, in
    /// seconds; past it the stream fails with ``StreamError/idleTimeout(_:)``. `nil`: no limit
    /// (the request's `timeoutInterval` bounds only the wait for the response head).
    public var streamIdleTimeout: TimeInterval?
    /// For a streamed response: how long the whole stream may last from the request's start, in
    /// seconds; past it the stream fails with ``StreamError/deadlineExceeded(_:)``. `nil`: no limit.
    public var streamDeadline: TimeInterval?
    /// For a streamed response over a transport that cannot hold the server back
    /// (`URLSessionTransport`: its data tasks push every part as it arrives): the most bytes
    /// received and not yet taken by the consumer; past it the stream fails with
    /// ``StreamError/consumerFellBehind(limit:)`` after the parts already received, and the request
    /// is cancelled, so that a server sending faster than the consumer reads (an endless stream, a
    /// slow consumer) cannot fill memory. Each part queued counts 64 bytes more, so a server
    /// sending a byte at a time cannot queue millions of parts. `Int.max`: no limit. A transport
    /// that holds the server back (AsyncHTTPClient) never comes near it.
    public var streamBufferLimit: Int
    /// The longest response body held in memory for this request, in bytes, as the caller gets it
    /// (decoded from its content coding), counted as it arrives; a longer one fails the request
    /// with `URLError(.dataLengthExceedsMaximum)` and stops its transfer. A bound on what a server
    /// can make the app hold, a compressed body that expands a thousandfold included. A body saved
    /// to a file (``downloadDestination``) or streamed is not held, and not bounded by it; at most
    /// ``defaultMaximumBodyLength``.
    public var maximumBodyLength: Int
    /// What the request carries from where it was made (see ``RequestContext``): values the
    /// caller gives it here, to which a session manager adds what its monitors keep of the
    /// caller's task when the request starts.
    public var context = RequestContext()
    /// Whether the completion only hands the outcome on — resumes a Swift task — and runs none of
    /// the caller's code: a session manager may then complete a success on the thread the answer
    /// arrived on, as the task's resumption is a hop of its own. Strata's async methods set it.
    package var handsOffCompletion = false

    /// Creates options; by default the manager's settings, and the body received in memory.
    public init(
        acceptableStatusCodes: Set<Int>? = nil,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        redirectPolicy: RedirectPolicy? = nil,
        downloadDestination: URL? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        resumesDownload: Bool = false,
        originBoundHeaderNames: Set<String> = [],
        streamIdleTimeout: TimeInterval? = nil,
        streamDeadline: TimeInterval? = nil,
        streamBufferLimit: Int = Self.defaultStreamBufferLimit,
        maximumBodyLength: Int = Self.defaultMaximumBodyLength
    ) {
        self.maximumBodyLength = maximumBodyLength
        self.streamIdleTimeout = streamIdleTimeout
        self.streamDeadline = streamDeadline
        self.streamBufferLimit = streamBufferLimit
        self.acceptableStatusCodes = acceptableStatusCodes
        self.uploadProgress = uploadProgress
        self.interceptor = interceptor
        self.redirectPolicy = redirectPolicy
        self.downloadDestination = downloadDestination
        self.downloadProgress = downloadProgress
        self.resumesDownload = resumesDownload
        self.originBoundHeaderNames = originBoundHeaderNames
    }

    /// Throws unless every limit is in its range: the stream timeouts `nil` or a positive number
    /// of seconds (`.infinity`: none), the stream buffer limit a positive number of bytes, the
    /// longest body zero bytes or more. A session manager checks before it sends anything, so a
    /// careless limit fails the same way over every transport instead of meaning no limit (a
    /// timeout that is not a number) or failing on the first byte over one transport only.
    public func validate() throws(RequestValidationError) {
        // `!(x > 0)`: not a number is out of range too. Checked for every request: no array made.
        if let seconds = streamIdleTimeout, !(seconds > 0) {
            throw .invalidOption(name: "streamIdleTimeout", value: "\(seconds)")
        }
        if let seconds = streamDeadline, !(seconds > 0) {
            throw .invalidOption(name: "streamDeadline", value: "\(seconds)")
        }
        guard streamBufferLimit > 0 else {
            throw .invalidOption(name: "streamBufferLimit", value: "\(streamBufferLimit)")
        }
        guard maximumBodyLength >= 0 else {
            throw .invalidOption(name: "maximumBodyLength", value: "\(maximumBodyLength)")
        }
    }
}
