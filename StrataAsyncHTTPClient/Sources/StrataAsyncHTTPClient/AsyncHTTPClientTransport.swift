import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import StrataCore
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ``/StrataSession/Transport`` over AsyncHTTPClient: Strata's pipeline on SwiftNIO, the HTTP
/// client server-side Swift already runs.
///
/// Everything above the transport — adapters, retriers, authentication, redirects, validation,
/// deadlines, caching, event monitors — is Strata's and works as over `URLSession`. Below it,
/// AsyncHTTPClient sends each attempt: connection pooling, HTTP/2 when the server offers it, TLS by
/// NIOSSL (custom roots and certificate pinning on Linux too), and request bodies and downloads
/// streamed with back-pressure, so a file of any size is sent or saved in bounded memory.
///
/// **Content codings** are decoded as `URLSession` (libcurl) decodes them: a request that names no
/// `Accept-Encoding` asks for `gzip, deflate, br, zstd`, and the transport decodes the body as it
/// arrives — `gzip` and `x-gzip`, `deflate` as a zlib stream or as the raw deflate data some
/// servers send, `br` and `zstd` through the system's libraries (opened when first needed; one
/// the system lacks is not asked for), several codings applied in turn — up to 500
/// times its size on the wire (a decompression bomb fails with
/// `URLError(.cannotDecodeContentData)`). A request that names its own `Accept-Encoding`
/// gets the body as it came. Transfer codings but `chunked` (`Transfer-Encoding: gzip, chunked`)
/// are undone first, for every request, and one the transport does not decode fails the same way.
///
/// ```swift
/// let transport = AsyncHTTPClientTransport()
/// let manager = SessionManager(transport: transport, retriers: [RetryPolicy()])
/// ```
///
/// **The client.** `AsyncHTTPClientTransport()` creates a client of its own, configured for Strata
/// (``strataConfiguration()``), and shuts it down when the transport is released, which is after
/// the last request through it has finished (each request keeps its manager's transport alive);
/// ``shutdown()`` shuts it down earlier, waiting for it. ``shared`` is one such transport for the
/// whole process, never shut down. ``init(client:decompresses:)`` sends over a client of yours,
/// which stays yours to shut down; its configuration must not follow redirects (Strata's
/// ``/StrataCore/RedirectPolicy`` decides, and strips credentials on the way): an attempt whose
/// client followed one fails with ``AsyncHTTPClientTransportError/clientFollowedRedirect``.
///
/// **Deadlines** are the pipeline's, as for every transport: the ``/StrataSession/SessionManager``
/// ends an attempt at its request's `timeoutInterval` (`URLError(.timedOut)`), and a streamed
/// response, once accepted, at its stream deadlines. No AsyncHTTPClient deadline is set, which
/// would end a stream that outlives its request's timeout, and cost each request a timer on the
/// event loop, scheduled and cancelled from another thread. The client's connect timeout
/// (``strataConfiguration()``'s is ``longestConnectWait``) also ends a request's wait for a
/// connection of the pool: such a request was not sent, and goes out again, so that a request
/// queued behind a busy pool, or behind a connection attempt to a host that stopped answering,
/// waits until its own deadline.
///
/// **A connection closed under a request.** A server may close a kept-alive connection just as
/// the next request on it goes out (its keep-alive timeout ran out). A request that it closed
/// before a byte of the answer, and that may be sent twice — no body, an idempotent method — goes
/// out again on a new connection, once, within the same deadline, as `URLSession` does; any other
/// fails with `URLError(.networkConnectionLost)` for the retriers to judge.
///
/// **Cookies** work as over `URLSession`: each attempt carries the cookies ``cookieStorage`` holds
/// for its URL (unless the request's `httpShouldHandleCookies` is off), and every response's
/// `Set-Cookie` fields, a redirect's included, are stored there before the pipeline sees the
/// response, so a login answered with a redirect carries its session to the next hop. By default
/// that is `HTTPCookieStorage.shared`, as for a session of `URLSessionConfiguration.default`; a
/// server that sends on behalf of many users passes `cookieStorage: nil`, or a storage per user.
///
/// **Errors** come as `URLError`s with the codes `URLSession` would give (`.timedOut`,
/// `.cannotConnectToHost`, `.networkConnectionLost`, `.badServerResponse`, …) and the failing URL,
/// the AsyncHTTPClient or NIO error under `NSUnderlyingErrorKey`, so retriers and error resolvers
/// work unchanged; a refused certificate is the ``/StrataSession/ServerTrustError`` the evaluator threw.
public final class AsyncHTTPClientTransport: Transport {
    /// The client every attempt is sent over.
    public let client: HTTPClient
    /// Whether the transport created the client, and so shuts it down.
    private let ownsClient: Bool
    /// Whether the client decompresses bodies itself; otherwise the transport does.
    private let decompresses: Bool
    /// Where cookies are kept: sent with each attempt to a URL they match, stored from each
    /// response's `Set-Cookie` fields; `nil` for none.
    public var cookieStorage: HTTPCookieStorage? { cookieJar?.storage }
    /// ``cookieStorage``, as the transport keeps it.
    public let cookieJar: CookieJar?
    private let isShutDown = NIOLockedValueBox(false)
    /// Requests as ``makeRequest(_:)`` built them for a method and URL, before headers and body:
    /// AsyncHTTPClient takes a URL apart again for every request it is given (`HTTPClient.Request`'s
    /// `DeconstructedURL`: a tenth of the instructions Strata adds to a small GET), and apps ask for
    /// the same URLs again and again. Only URLs that passed the check are kept.
    private let parsedRequests = NIOLockedValueBox([ParsedRequestKey: HTTPClient.Request]())
    /// How many parsed requests are kept; once there are as many, they are dropped and kept anew.
    static let parsedRequestLimit = 64
    /// The longest URL whose parsed request is kept, in bytes: the kept ones hold at most 64 of these.
    static let parsedRequestURLLimit = 4_096

    /// The `User-Agent` of a request that names none: the process's name and `Strata`, as
    /// `URLSession` sends the process's name and its own (on Linux, `app (unknown version)
    /// curl/7.88.1`). Some servers refuse a request without one: GitHub's API answers `403`.
    public static let defaultUserAgent = userAgent(processName: ProcessInfo.processInfo.processName)

    /// `processName Strata`, the name without what cannot stand in a header: a byte outside
    /// printable ASCII (a control character would fail every request).
    static func userAgent(processName: String) -> String {
        let name = String(processName.unicodeScalars.filter { (" "..."~").contains($0) })
            .trimmingCharacters(in: .whitespaces)
        return name.isEmpty ? "Strata" : "\(name) Strata"
    }

    /// How many parsed requests are kept now.
    var parsedRequestCount: Int { parsedRequests.withLockedValue { $0.count } }

    /// One transport for the whole process, over a client configured by ``strataConfiguration()``
    /// that is never shut down: for services that name no transport of their own.
    public static let shared = AsyncHTTPClientTransport()

    /// Creates a transport over a client of its own, shut down when the transport is released.
    /// - Parameters:
    ///   - configuration: The client's configuration. Whatever it says, the client follows no
    ///     redirect (Strata's policy decides) and does not decompress (the transport decodes bodies
    ///     itself, more codings than the client's decompressor reads); by default,
    ///     ``strataConfiguration()``.
    ///   - serverTrust: Asked about the certificate of every TLS connection the client makes, after
    ///     NIOSSL verified it against the configuration's trust roots (see
    ///     `HTTPClient.Configuration.evaluatesServerTrust(with:)`); `nil` leaves it to NIOSSL.
    ///   - eventLoopGroup: The event loops the client runs on; by default the process's shared ones.
    ///   - cookieStorage: Where cookies are kept; `nil` for none. By default the shared storage, as
    ///     `URLSession` keeps them.
    public convenience init(
        configuration: HTTPClient.Configuration = AsyncHTTPClientTransport.strataConfiguration(),
        serverTrust: (any ServerTrustEvaluator)? = nil,
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup,
        cookieStorage: HTTPCookieStorage? = .shared
    ) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        configuration.refusesStatusCodesBelow100()
        if let serverTrust {
            configuration.evaluatesServerTrust(with: serverTrust)
        } else {
            configuration.verifiesServerHostNames()
        }
        // The transport decodes bodies itself, and more codings than the client's decompressor.
        configuration.decompression = .disabled
        self.init(
            client: HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration),
            owned: true,
            decompresses: false,
            cookieStorage: cookieStorage
        )
    }

    /// Creates a transport over `client`, which stays yours: shut it down after the last request.
    ///
    /// AsyncHTTPClient's own default configuration speaks HTTP/2 where a server offers it, where
    /// AsyncHTTPClient 1.37 can trap the process (see ``strataConfiguration()``), and lets a
    /// response with a status code below 100 trap it too (see
    /// `HTTPClient.Configuration.refusesStatusCodesBelow100()`); start from that configuration, or
    /// set `httpVersion = .http1Only` and call `refusesStatusCodesBelow100()` on yours.
    /// - Parameters:
    ///   - client: A client whose configuration follows no redirect (`redirectConfiguration: .disallow`).
    ///   - decompresses: Whether the client's configuration enables decompression: then the client
    ///     decodes `gzip` and `deflate` bodies (a zlib stream), the transport asks for those two
    ///     alone and fails a body in any other coding; otherwise the transport decodes bodies
    ///     itself, as over a client of its own.
    ///   - cookieStorage: Where cookies are kept; `nil` for none. By default the shared storage, as
    ///     `URLSession` keeps them.
    public convenience init(
        client: HTTPClient, decompresses: Bool = false, cookieStorage: HTTPCookieStorage? = .shared
    ) {
        self.init(client: client, owned: false, decompresses: decompresses, cookieStorage: cookieStorage)
    }

    init(client: HTTPClient, owned: Bool, decompresses: Bool, cookieStorage: HTTPCookieStorage?) {
        self.client = client
        self.ownsClient = owned
        self.decompresses = decompresses
        self.cookieJar = cookieStorage.map(CookieJar.init)
    }

    deinit {
        guard ownsClient, !isShutDown.withLockedValue({ $0 }) else { return }
        let client = client
        Self.pendingReleasesSettled(in: client).whenComplete { _ in
            client.shutdown { _ in _ = client }
        }
    }

    /// Completes once the client's event loops have run what they hold now, and what that queues in
    /// turn, three times over.
    ///
    /// AsyncHTTPClient 1.37 hands a connection back to its pool a few loop turns after a request
    /// whose response came before the end of its body was written (the release waits for that
    /// write, on the request's loop, then hops to the connection's). Shut down in between, the pool
    /// closes and forgets the connection, and the late release traps the process ("A connection
    /// that we don't know was released"): a transport released as its last upload completed did
    /// so in about one run in ten of `RetryTests.eachAttemptOfARetriedUploadReportsANewProgress`.
    static func pendingReleasesSettled(in client: HTTPClient) -> EventLoopFuture<Void> {
        let loops = Array(client.eventLoopGroup.makeIterator())
        let first = loops.first ?? client.eventLoopGroup.next()
        var settled = first.makeSucceededVoidFuture()
        for _ in 0..<3 {
            settled = settled.flatMap {
                EventLoopFuture.andAllSucceed(loops.map { $0.submit {} }, on: first)
            }
        }
        return settled
    }

    /// The configuration of a client the transport creates: no redirects (the pipeline follows
    /// them), `gzip` and `deflate` bodies decompressed up to 500 times their size on the wire (a
    /// guard against decompression bombs) by a client of yours made with it (a transport that
    /// makes its own client decodes bodies itself), connection failures reported at once rather
    /// than retried until the deadline (Strata's retriers decide), HTTP/1.1 only, no tracing of its own
    /// (Strata's pipeline opens one span per request, for all its attempts), and a response with a
    /// status code below 100 failed rather than let trap the process
    /// (`HTTPClient.Configuration.refusesStatusCodesBelow100()`), and a connect timeout of
    /// ``longestConnectWait``. The request's own deadline (the pipeline's) bounds its wait for a
    /// connection, as over `URLSession`: a request the client fails for a wait longer than the
    /// connect timeout goes out again (see ``mostUnsentResends``).
    ///
    /// HTTP/1.1 only, because AsyncHTTPClient 1.37 over HTTP/2 traps the process when a stream
    /// error (`RST_STREAM`, `GOAWAY`) arrives after the response has completed
    /// (`HTTP2ClientRequestHandler`, swift-server/async-http-client#922), and fails a request whose
    /// complete response the server followed with `RST_STREAM(NO_ERROR)`, which RFC 9113 §8.1
    /// allows. nginx does both for every request it answers without reading the body. Setting
    /// `httpVersion = .automatic` on this configuration speaks HTTP/2 where the server offers it,
    /// with that risk.
    public static func strataConfiguration() -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            decompression: .enabled(limit: .ratio(Int(ResponseHead.decodedRatioLimit)))
        )
        configuration.httpVersion = .http1Only
        configuration.connectionPool.retryConnectionEstablishment = false
        // The client fails a request that waits for a connection of its pool longer than the connect
        // timeout, whatever the request's own deadline; the transport sends such a request again,
        // so that the pipeline's deadline bounds the wait. The timeout bounds each connection
        // attempt, which a later request may be given to wait for.
        configuration.timeout.connect = longestConnectWait
        configuration.refusesStatusCodesBelow100()
        // Strata's pipeline opens the request's span (StrataObservability's TracingMonitor), once
        // for all its attempts and redirects; the client's own would be a second, per attempt,
        // child of whatever context the caller's thread happened to hold.
        configuration.tracing.tracer = nil
        return configuration
    }

    /// The connect timeout of ``strataConfiguration()``: 10 seconds, AsyncHTTPClient's own, for
    /// the connection and its TLS handshake. The client's pool gives a request waiting for a
    /// connection to one being made, and an attempt to a host that does not answer (its `SYN`s
    /// lost) goes on until this timeout: at a year, as it was, a request sent after the host had
    /// come back waited for the system to send a `SYN` again — up to a minute — while `URLSession`
    /// connected at once. A request the client fails for this timeout, or for a wait in the pool
    /// as long, was not sent: it goes out again (``mostUnsentResends``), within its own deadline.
    public static let longestConnectWait: TimeAmount = .seconds(10)

    /// How many times at most a request goes out again after an HTTP/2 connection left it
    /// unprocessed: its stream closed with `REFUSED_STREAM`, or with `CANCEL` past the last stream
    /// a `GOAWAY` names (RFC 9113 §6.8), with nothing of the answer read. Only a request that may be
    /// sent twice — no body, an idempotent method — goes again, each time on whatever connection
    /// the pool has next, within the request's deadline; as Go's HTTP/2 client, six times. A
    /// connection that closes before answering, over HTTP/1.1, has its request sent again once.
    public static let mostUnprocessedResends = 6

    /// How many times at most a request goes out again after the client failed it before writing
    /// a byte of it: it waited for a connection longer than the connect timeout
    /// (``longestConnectWait``), or the connection it waited for was not made in time (connected,
    /// its TLS handshake done: a server that never answers the handshake). Any request goes again,
    /// whatever its method and body, on a new connection or the pool's next free one, so that the
    /// pipeline's deadline, not the connect timeout, bounds its wait: at ``longestConnectWait`` a
    /// try, a hundred are more than sixteen minutes of waiting. The bound is for a client of
    /// yours with a connect timeout so short that each try fails at once.
    public static let mostUnsentResends = 100

    /// How many times at most a request goes out again after the connection it was given to
    /// closed before its head was written on it: most likely a kept connection whose server closed
    /// it, its keep-alive timeout run out, as the pool handed it the request (the close was on its
    /// way). Nothing of the request reached the server, so any request goes again, whatever its
    /// method and body — against nginx closing idle connections after 50 ms, one `POST` in six
    /// failed so. Each try takes the pool's next connection or a new one; the bound is for a
    /// server that closes every connection as it is made.
    public static let mostUnwrittenResends = 4

    /// Shuts the client down, if the transport created it, and waits until it is; attempts sent
    /// after fail with `URLError(.cancelled)`. A client passed in is left alone.
    public func shutdown() async throws {
        guard ownsClient,
            !isShutDown.withLockedValue({ isShutDown in
                defer { isShutDown = true }; return isShutDown
            })
        else { return }
        try? await Self.pendingReleasesSettled(in: client).get()
        try await client.shutdown()
    }

    /// Sends `attempt` over the client, its body from memory, from its file or from its stream;
    /// the response body is read only as fast as the receiver asks for it.
    public func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let request: HTTPClient.Request
        let bodyLength: Int64
        let namesCodings: Bool
        do {
            (request, bodyLength, namesCodings) = try makeRequest(attempt.request)
        } catch {
            return ResponsePlayback.start(
                head: nil, steps: [.fail(Self.transportError(error, url: attempt.request.url))], to: receiver)
        }
        let delegate = ResponseDelegate(
            url: attempt.request.url ?? URL(fileURLWithPath: "/"),
            method: request.method.rawValue,
            uploadLength: bodyLength,
            uploadProgress: attempt.uploadProgress,
            receiver: receiver,
            transport: self,
            request: request,
            mayResendUnanswered: request.body == nil && Self.isIdempotent(request.method),
            cookies: cookieJar.map { ($0, attempt.request) },
            decoding: namesCodings ? .byCaller : decompresses ? .byClient : .byTransport
        )
        let task = client.execute(request: request, delegate: delegate)
        delegate.started(task)
        return delegate.relay
    }

    /// Whether a request of `method` may be sent twice with the effect of once (RFC 9110, 9.2.2).
    private static func isIdempotent(_ method: NIOHTTP1.HTTPMethod) -> Bool {
        switch method {
        case .GET, .HEAD, .OPTIONS, .TRACE, .PUT, .DELETE: return true
        default: return false
        }
    }

    /// The request as AsyncHTTPClient takes it, its body's length (a stream's as announced, `-1`
    /// when unknown), and whether it names the content codings it accepts itself (`Accept-Encoding`).
    private func makeRequest(_ urlRequest: URLRequest) throws -> (HTTPClient.Request, Int64, namesCodings: Bool) {
        guard let url = urlRequest.url else { throw RequestValidationError.missingURL }
        // SwiftNIO traps on a field name that is not ASCII and writes a method (and a stream's
        // `Content-Length`) as it is: a request that did not come through the pipeline, which
        // checks and frames first, is checked and framed here.
        try urlRequest.validateMethodAndHeaders()
        let urlRequest = urlRequest.framedByItsBody()
        let key = ParsedRequestKey(method: urlRequest.httpMethod ?? "GET", url: url)
        var request = try parsedRequests.withLockedValue { $0[key] } ?? parsed(key)
        var headers = NIOHTTP1.HTTPHeaders()
        for (name, value) in urlRequest.allHTTPHeaderFields ?? [:] {
            headers.add(name: name, value: value)
        }
        let namesCodings = headers.contains(name: "Accept-Encoding")
        if !namesCodings {
            // What decodes the body: a client's decompressor reads `gzip` and `deflate` alone.
            headers.add(name: "Accept-Encoding", value: decompresses ? "gzip, deflate" : ContentDecoder.accepted)
        }
        // What `URLSession` adds to a request that names none, so that a server sees the same
        // over either transport (and one that refuses a request without a `User-Agent` takes it).
        if !headers.contains(name: "User-Agent") {
            headers.add(name: "User-Agent", value: Self.defaultUserAgent)
        }
        if !headers.contains(name: "Accept") {
            headers.add(name: "Accept", value: "*/*")
        }
        if let field = cookieJar?.field(for: urlRequest) {
            headers.replaceOrAdd(name: "Cookie", value: field)
        }
        let body: HTTPClient.Body?
        let length: Int64
        if let data = urlRequest.httpBody {
            body = data.count > BodyStreaming.chunkSize ? BodyStreaming.data(data) : .bytes(data)
            length = Int64(data.count)
        } else if let file = urlRequest.httpBodyStream as? FileBodyStream {
            body = BodyStreaming.file(file)
            length = Int64(clamping: file.length)
        } else if let stream = urlRequest.httpBodyStream {
            // The length the request announces for it (the framing kept it only if it is one), or
            // none: then it goes chunked.
            let announced = headers.first(name: "Content-Length").flatMap { Int64($0) }
            body = BodyStreaming.stream(stream, length: announced)
            length = announced ?? -1
        } else {
            body = nil
            length = 0
        }
        request.headers = headers
        request.body = body
        return (request, length, namesCodings)
    }

    /// The request for `key`, without headers or body, kept for the next with the same method and
    /// URL.
    private func parsed(_ key: ParsedRequestKey) throws -> HTTPClient.Request {
        // SwiftNIO traps on some URLs Foundation accepts (a port above 65535); a request that did
        // not come through the pipeline, which checks first, is checked here.
        try validateForSending(key.url)
        let request = try HTTPClient.Request(url: key.url, method: NIOHTTP1.HTTPMethod(rawValue: key.method))
        guard key.url.absoluteString.utf8.count <= Self.parsedRequestURLLimit else { return request }
        parsedRequests.withLockedValue { kept in
            if kept.count >= Self.parsedRequestLimit { kept.removeAll(keepingCapacity: true) }
            kept[key] = request
        }
        return request
    }
}

/// What an `HTTPClient.Request` is parsed from, headers and body aside.
struct ParsedRequestKey: Hashable, Sendable {
    let method: String
    let url: URL
}

/// Why an ``AsyncHTTPClientTransport`` attempt failed, where no `URLError` says it.
public enum AsyncHTTPClientTransportError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// The client followed a redirect itself: its configuration must not (`.disallow`), so that
    /// Strata's redirect policy decides and strips credentials.
    case clientFollowedRedirect

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .clientFollowedRedirect:
            return "The HTTPClient followed a redirect itself; give the transport a client configured with "
                + "redirectConfiguration: .disallow, so that Strata's redirect policy decides."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}
