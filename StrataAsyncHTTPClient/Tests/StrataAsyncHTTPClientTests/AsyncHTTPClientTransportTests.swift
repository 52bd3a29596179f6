import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import StrataCore
import StrataSession
import Testing

@testable import StrataAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the transport does without a server: its errors, deadlines, response heads and the life of
/// its client. Everything over a real server is in the integration suite, which runs whole over
/// this transport (`STRATA_TRANSPORT=asynchttpclient`).
@Suite struct AsyncHTTPClientTransportTests {
    @Test(arguments: [
        (HTTPClientError.cancelled, URLError.Code.cancelled),
        (HTTPClientError.alreadyShutdown, .cancelled),
        (HTTPClientError.deadlineExceeded, .timedOut),
        (HTTPClientError.readTimeout, .timedOut),
        (HTTPClientError.connectTimeout, .timedOut),
        (HTTPClientError.tlsHandshakeTimeout, .timedOut),
        (HTTPClientError.remoteConnectionClosed, .networkConnectionLost),
        (HTTPClientError.bodyLengthMismatch, .networkConnectionLost),
        // The exchange ended before the body was sent: not the caller's cancellation.
        (HTTPClientError.requestStreamCancelled, .networkConnectionLost),
        (HTTPClientError.invalidURL, .badURL),
        (HTTPClientError.emptyHost, .badURL),
        (HTTPClientError.unsupportedScheme("ftp"), .unsupportedURL),
        (HTTPClientError.invalidHeaderFieldValues(["x"]), .badServerResponse),
    ])
    func clientErrorsBecomeTheURLErrorsURLSessionGives(error: HTTPClientError, code: URLError.Code) throws {
        let url = try #require(URL(string: "https://api.example.com/items?page=2"))
        let mapped = try #require(AsyncHTTPClientTransport.transportError(error, url: url) as? URLError)
        #expect(mapped.code == code)
        #expect(mapped.userInfo[NSUnderlyingErrorKey] as? HTTPClientError == error)
        // As URLSession's: the request's URL.
        #expect(mapped.failingURL == url)
        #expect((AsyncHTTPClientTransport.transportError(error, url: nil) as? URLError)?.failingURL == nil)
    }

    @Test func nioAndTLSAndDecompressionErrorsHaveCodesOfTheirOwn() {
        #expect(AsyncHTTPClientTransport.code(for: ChannelError.connectTimeout(.seconds(1))) == .timedOut)
        #expect(AsyncHTTPClientTransport.code(for: ChannelError.eof) == .networkConnectionLost)
        #expect(AsyncHTTPClientTransport.code(for: ChannelError.ioOnClosedChannel) == .networkConnectionLost)
        #expect(
            AsyncHTTPClientTransport.code(for: IOError(errnoCode: ECONNRESET, reason: "read")) == .networkConnectionLost
        )
        #expect(
            AsyncHTTPClientTransport.code(for: IOError(errnoCode: ECONNREFUSED, reason: "connect"))
                == .cannotConnectToHost)
        #expect(AsyncHTTPClientTransport.code(for: IOError(errnoCode: ETIMEDOUT, reason: "connect")) == .timedOut)
        #expect(AsyncHTTPClientTransport.code(for: HTTPParserError.invalidStatus) == .badServerResponse)
        // The connection closed before the message ended (a body cut short): lost, as URLSession says.
        #expect(AsyncHTTPClientTransport.code(for: HTTPParserError.invalidEOFState) == .networkConnectionLost)
        #expect(
            AsyncHTTPClientTransport.code(for: NIOHTTPDecompression.DecompressionError.limit)
                == .cannotDecodeContentData)
        #expect(AsyncHTTPClientTransport.code(for: NIOSSLError.uncleanShutdown) == .secureConnectionFailed)
        // A handshake that failed for another reason than the certificate (a server that speaks
        // plain HTTP on the port, or closes) is no refused certificate; a certificate for another
        // name is.
        #expect(
            AsyncHTTPClientTransport.code(for: NIOSSLError.handshakeFailed(.sslError([]))) == .secureConnectionFailed)
        #expect(
            AsyncHTTPClientTransport.code(for: NIOSSLExtraError.failedToValidateHostname) == .serverCertificateUntrusted
        )
        #expect(AsyncHTTPClientTransport.code(for: CancellationError()) == .unknown)
    }

    /// HTTP/2's errors, for a client configured to speak it: a stream the server reset is a lost
    /// connection, anything else a response not read; each says what happened.
    @Test func http2ErrorsSayWhatHappened() throws {
        let reset = NIOHTTP2Errors.streamClosed(streamID: HTTP2StreamID(1), errorCode: .refusedStream)
        let mapped = try #require(AsyncHTTPClientTransport.transportError(reset, url: nil) as? URLError)
        #expect(mapped.code == .networkConnectionLost)
        #expect(mapped.localizedDescription.contains("the server reset the HTTP/2 stream"))
        let protocolError = NIOHTTP2Errors.badClientMagic()
        #expect(AsyncHTTPClientTransport.code(for: protocolError) == .badServerResponse)
        #expect(AsyncHTTPClientTransport.detail(of: protocolError)?.hasPrefix("the HTTP/2 exchange failed") == true)
        // A field's value an error holds is not repeated: it may be a credential, or hold CR LF.
        let forbidden = NIOHTTP2Errors.forbiddenHeaderField(name: "connection", value: "secret\r\nX-Injected: 1")
        let said = try #require(AsyncHTTPClientTransport.detail(of: forbidden))
        #expect(!said.contains("secret") && !said.contains("\r"), "\(said)")
    }

    /// AsyncHTTPClient 1.37 traps on HTTP/2 stream errors that arrive after a response (see
    /// ``AsyncHTTPClientTransport/strataConfiguration()``): Strata's configuration keeps to HTTP/1.1.
    @Test func strataConfigurationSpeaksHTTP1Only() {
        #expect(AsyncHTTPClientTransport.strataConfiguration().httpVersion == .http1Only)
    }

    @Test func strataErrorsAndURLErrorsPassUnchanged() {
        let trust = ServerTrustError.refused(host: "127.0.0.1", reason: "not pinned")
        let url = URL(string: "https://api.example.com/items")
        #expect(AsyncHTTPClientTransport.transportError(trust, url: url) as? ServerTrustError == trust)
        let redirect = AsyncHTTPClientTransportError.clientFollowedRedirect
        #expect(
            AsyncHTTPClientTransport.transportError(redirect, url: url) as? AsyncHTTPClientTransportError == redirect)
        let file = URLError(.cannotOpenFile, userInfo: [NSURLErrorFailingURLErrorKey: URL(fileURLWithPath: "/body")])
        let passed = AsyncHTTPClientTransport.transportError(file, url: url) as? URLError
        #expect(passed?.code == .cannotOpenFile)
        #expect(passed?.failingURL == URL(fileURLWithPath: "/body"))
    }

    /// A large part that fills most of its buffer is handed on without a copy; a small part, or
    /// one that would keep a much larger buffer alive while it waits, is copied.
    @Test func aBodyPartSharesItsBufferOnlyWhenItFillsMostOfIt() {
        var whole = ByteBufferAllocator().buffer(capacity: 65_536)
        whole.writeBytes((0..<65_536).map { UInt8(truncatingIfNeeded: $0) })
        let shared = ResponseDelegate.data(whole)
        #expect(shared == Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0) }))
        #expect(sharesMemory(shared, whole))

        let small = whole.getSlice(at: 100, length: 1_000)!
        let copiedSmall = ResponseDelegate.data(small)
        #expect(copiedSmall == Data(whole.getBytes(at: 100, length: 1_000)!))
        #expect(!sharesMemory(copiedSmall, small))

        // 20 KiB of a 64 KiB buffer: large, but it would keep three times its size alive.
        let slice = whole.getSlice(at: 0, length: 20_480)!
        #expect(!sharesMemory(ResponseDelegate.data(slice), slice))
    }

    private func sharesMemory(_ data: Data, _ buffer: ByteBuffer) -> Bool {
        data.withUnsafeBytes { bytes in
            buffer.withUnsafeReadableBytes { $0.baseAddress == bytes.baseAddress }
        }
    }

    /// A client that decompresses decodes a body whose first content coding is `gzip` or
    /// `deflate`, and only that one (SwiftNIO's decompressor); any other coding leaves the body
    /// encoded.
    @Test(arguments: [
        ([String](), String?.none), (["identity"], nil), (["gzip"], nil), (["DEFLATE"], nil),
        (["gzip", "identity"], nil), (["br"], "br"), (["x-gzip"], "x-gzip"), (["gzip, br"], "gzip, br"),
        (["gzip", "br"], "gzip, br"), (["identity", "gzip"], "gzip"),
    ])
    func aBodyIsLeftEncodedByEveryCodingButTheOneTheClientDecodes(codings: [String], leftEncoded: String?) {
        var headers = NIOHTTP1.HTTPHeaders()
        for coding in codings { headers.add(name: "Content-Encoding", value: coding) }
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
        #expect(ResponseDelegate.codingLeftEncoded(head) == leftEncoded)
    }

    /// The transfer codings the transport undoes: every one but `chunked` (SwiftNIO's) and
    /// `identity`, in the order applied, from every `Transfer-Encoding` field.
    @Test(arguments: [
        ([String](), [String]()), (["chunked"], []), (["gzip, chunked"], ["gzip"]), (["GZIP ,Chunked"], ["gzip"]),
        (["identity, chunked"], []), (["x-custom"], ["x-custom"]),
        (["deflate", "gzip, chunked"], ["deflate", "gzip"]),
    ])
    func transferCodingsAreEveryOneButChunked(fields: [String], codings: [String]) {
        var headers = NIOHTTP1.HTTPHeaders()
        for field in fields { headers.add(name: "Transfer-Encoding", value: field) }
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
        #expect(ResponseDelegate.transferCodings(head) == codings)
    }

    @Test func aResponseHeadKeepsItsFieldsInOrderAndBecomesAnHTTPURLResponseWithRepeatedHeadersJoined() throws {
        let url = try #require(URL(string: "http://127.0.0.1/x"))
        var headers = NIOHTTP1.HTTPHeaders()
        headers.add(name: "Set-Cookie", value: "a=1")
        headers.add(name: "Set-Cookie", value: "b=2")
        headers.add(name: "Content-Type", value: "application/json")
        let wire = HTTPResponseHead(version: .http1_1, status: .custom(code: 999, reasonPhrase: "?"), headers: headers)
        let head = ResponseDelegate.head(wire, url: url)
        #expect(head.statusCode == 999)
        #expect(head.httpVersion == "HTTP/1.1")
        #expect(head.headers.map(\.value) == ["a=1", "b=2", "application/json"])
        let response = try #require(head.httpURLResponse)
        #expect(head.httpURLResponse === response)
        #expect(response.statusCode == 999)
        #expect(response.value(forHTTPHeaderField: "set-cookie") == "a=1, b=2")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(response.url == url)
    }

    /// The default `User-Agent` names the process and Strata, and holds nothing a header cannot.
    @Test(arguments: [
        ("Reports", "Reports Strata"), ("my app", "my app Strata"), ("bad\r\nX-Injected: 1", "badX-Injected: 1 Strata"),
        ("\u{7F}\u{0}", "Strata"), ("", "Strata"), ("café", "caf Strata"), (" padded\t", "padded Strata"),
    ])
    func theDefaultUserAgentNamesTheProcessInHeaderText(processName: String, expected: String) {
        #expect(AsyncHTTPClientTransport.userAgent(processName: processName) == expected)
    }

    @Test func theStrataConfigurationFollowsNoRedirectAndDecompressesWithALimit() {
        let configuration = AsyncHTTPClientTransport.strataConfiguration()
        #expect(configuration.connectionPool.retryConnectionEstablishment == false)
        guard case .enabled = configuration.decompression else {
            Issue.record("decompression is off")
            return
        }
    }

    @Test func aRefusedConnectionFailsAtOnceWithCannotConnectToHost() async throws {
        let transport = AsyncHTTPClientTransport()
        let url = try closedPortURL()
        let outcome = try await send(URLRequest(url: url), over: transport, timeout: 30)
        #expect((outcome.error as? URLError)?.code == .cannotConnectToHost)
        #expect((outcome.error as? URLError)?.failingURL == url)
        try await transport.shutdown()
    }

    @Test func afterShutdownAnAttemptFailsAsCancelledOnce() async throws {
        let transport = AsyncHTTPClientTransport()
        try await transport.shutdown()
        try await transport.shutdown()  // a second shutdown does nothing
        let outcome = try await send(URLRequest(url: try closedPortURL()), over: transport, timeout: 30)
        #expect((outcome.error as? URLError)?.code == .cancelled)
    }

    @Test func aClientPassedInIsLeftRunning() async throws {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        do {
            let transport = AsyncHTTPClientTransport(client: client)
            try await transport.shutdown()
        }
        // Still running: a request is attempted and refused, not failed as shut down.
        let transport = AsyncHTTPClientTransport(client: client)
        let outcome = try await send(URLRequest(url: try closedPortURL()), over: transport, timeout: 30)
        #expect((outcome.error as? URLError)?.code == .cannotConnectToHost)
        try await client.shutdown()
    }

    @Test func anUnsupportedSchemeFailsUnsentOnce() async throws {
        let transport = AsyncHTTPClientTransport()
        let outcome = try await send(
            URLRequest(url: try #require(URL(string: "ftp://127.0.0.1/file"))), over: transport)
        #expect(
            outcome.error as? RequestValidationError
                == .unsupportedURL("ftp://127.0.0.1/file", reason: .unsupportedScheme("ftp")))
        try await transport.shutdown()
    }

    /// The transport keeps the requests it parsed by method and URL, but no URL it refused (each
    /// refusal is made again) and none longer than its limit: a caller's 1 MB URL is not kept alive.
    @Test func parsedRequestsAreKeptOnlyForShortURLsThatPassedTheCheck() async throws {
        let server = try await CannedServer.start(answer: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let client = HTTPClient(configuration: AsyncHTTPClientTransport.strataConfiguration())
        let transport = AsyncHTTPClientTransport(client: client)
        let short = server.url.appendingPathComponent("items")
        for _ in 0..<3 {
            #expect(try await send(URLRequest(url: short), over: transport).error == nil)
        }
        #expect(transport.parsedRequestCount == 1)
        let long = try #require(URL(string: short.absoluteString + "?q=" + String(repeating: "a", count: 1_048_576)))
        #expect(try await send(URLRequest(url: long), over: transport).error == nil)
        #expect(transport.parsedRequestCount == 1)
        let trap = try #require(URL(string: "http://127.0.0.1:99999/x"))
        for _ in 0..<2 {
            let error = try await send(URLRequest(url: trap), over: transport).error
            guard case .unsupportedURL? = error as? RequestValidationError else {
                Issue.record("expected an unsupported URL, got \(String(describing: error))")
                break
            }
        }
        #expect(transport.parsedRequestCount == 1)
        try await client.shutdown()
        try await server.channel.close()
    }

    /// Sent straight to the transport, not through the pipeline, a URL SwiftNIO traps on (a port
    /// above 65535), or reads wrongly (a port too large for an `Int`, which AsyncHTTPClient reads as
    /// none and sends to port 80; an empty bracketed host), is refused by the transport's own check.
    @Test(arguments: ["http://127.0.0.1:99999/x", "http://[]/x", "http://127.0.0.1:9223372036854775808/"])
    func aURLSwiftNIOTrapsOnFailsUnsentOnce(url: String) async throws {
        let transport = AsyncHTTPClientTransport()
        let outcome = try await send(URLRequest(url: try #require(URL(string: url))), over: transport)
        guard case .unsupportedURL? = outcome.error as? RequestValidationError else {
            Issue.record("expected an unsupported URL, got \(String(describing: outcome.error))")
            return
        }
        try await transport.shutdown()
    }

    /// Sent straight to the transport, a request whose method or header fields break HTTP's grammar
    /// fails unsent with the error the pipeline gives it: SwiftNIO traps on a field name that is not
    /// ASCII, and writes a method as it is (one holding CR LF would add fields of its own).
    @Test(arguments: [
        ("GET", "Ünïcode", "v"), ("GET", "X Evil", "v"), ("GET", "X-Value", "del\u{7F}"),
        ("GET", "X-Value", "bell\u{7}"), ("GET\r\nX-Injected: 1", "X-Value", "v"), ("GE T", "X-Value", "v"),
        ("(GET)", "X-Value", "v"), ("CONNECT", "X-Value", "v"), ("connect", "X-Value", "v"),
    ])
    func aRequestThatBreaksHTTPGrammarFailsUnsentOnce(method: String, name: String, value: String) async throws {
        var request = URLRequest(url: try closedPortURL())
        request.httpMethod = method
        request.setValue(value, forHTTPHeaderField: name)
        // URLRequest keeps each of these as given (it drops a value holding CR, LF or NUL itself).
        #expect(request.value(forHTTPHeaderField: name) == value)
        let transport = AsyncHTTPClientTransport()
        let error = try await send(request, over: transport).error
        switch error as? RequestValidationError {
        case .invalidMethod(let refused)?: #expect(refused == method)
        case .tunnelMethod(let refused)?: #expect(refused == method.uppercased())
        case .invalidHeaderName(let refused)?: #expect(refused == name)
        case .invalidHeaderValue(let refused)?: #expect(refused == name)
        default: Issue.record("expected the request to be refused unsent, got \(String(describing: error))")
        }
        try await transport.shutdown()
    }

    /// Sent straight to the transport, a request without a URL fails unsent as the pipeline's does.
    /// (Not through `send(_:over:)`, which sets a timeout: on Linux, changing a copy of a request
    /// without a URL traps inside FoundationNetworking.)
    @Test func aRequestWithoutAURLFailsUnsentOnce() async throws {
        var request = URLRequest(url: try closedPortURL())
        request.url = nil
        let transport = AsyncHTTPClientTransport()
        let calls = Counter()
        let outcome = await withCheckedContinuation { continuation in
            transport.send(TransportAttempt(request: request)) { outcome in
                if calls.increment() == 1 { continuation.resume(returning: outcome) }
            }
        }
        #expect(outcome.error as? RequestValidationError == .missingURL)
        try await Task.sleep(for: .milliseconds(50))
        #expect(calls.value == 1)
        try await transport.shutdown()
    }

    @Test func aTransportReleasedShutsItsClientDown() async throws {
        weak var released: AsyncHTTPClientTransport?
        do {
            let transport = AsyncHTTPClientTransport()
            released = transport
            _ = try await send(URLRequest(url: try closedPortURL()), over: transport)
        }
        // An unreleased client would trap in its deinit in a debug build; this one was shut down.
        try await Task.sleep(for: .milliseconds(200))
        #expect(released == nil)
    }
}

/// A body larger than may be held in memory fails the attempt with a `URLError` rather than
/// trapping in a buffer (a `ByteBuffer` holds at most 4 GiB), whatever the server sends.
@Suite struct MemoryBodyLimitTests {
    @Test(arguments: [true, false])
    func aBodyOverTheLimitFailsWithDataLengthExceedsMaximum(chunked: Bool) async throws {
        let body = String(repeating: "x", count: 64 * 1024)
        let head =
            chunked
            ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n"
            : "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let server = try await CannedServer.start(answer: head)
        let client = HTTPClient(configuration: AsyncHTTPClientTransport.strataConfiguration())
        let transport = AsyncHTTPClientTransport(client: client, decompresses: true)
        let outcome = try await send(URLRequest(url: server.url), over: transport, maximumBodyLength: 16 * 1024)
        #expect((outcome.error as? URLError)?.code == .dataLengthExceedsMaximum, "\(String(describing: outcome.error))")
        // Under the limit, the same answer arrives whole.
        let whole = try await send(URLRequest(url: server.url), over: transport, maximumBodyLength: 64 * 1024)
        #expect(whole.error == nil)
        #expect(whole.body.count == 64 * 1024)
        try await client.shutdown()
        try await server.channel.close()
    }
}

/// A response whose status code is below 100, which AsyncHTTPClient 1.37 takes for an interim one
/// and then traps on (at its end, or at its first body part), fails its request as an unreadable
/// response, over a transport's own client and over a client passed in alike; the connection is
/// not used again.
@Suite struct StatusCodeBelow100Tests {
    static let answers = [
        "HTTP/1.1 000 None\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 099 Odd\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nodd!\r\n0\r\n\r\n",
        "HTTP/1.1 042 Odd\r\nContent-Length: 4\r\n\r\nodd!",
    ]

    @Test(arguments: answers)
    func failsAsABadServerResponseOverTheTransportsOwnClient(answer: String) async throws {
        let server = try await CannedServer.start(answer: answer)
        let transport = AsyncHTTPClientTransport()
        for _ in 0..<2 {
            let outcome = try await send(URLRequest(url: server.url), over: transport)
            #expect((outcome.error as? URLError)?.code == .badServerResponse, "\(String(describing: outcome.error))")
        }
        try await transport.shutdown()
        try await server.channel.close()
    }

    /// Applied twice, on a configuration with a debug initializer of the caller's: that initializer
    /// still runs, once per connection, and the guard is added once.
    @Test func failsOverAClientPassedInWhoseConfigurationRefusesThem() async throws {
        let server = try await CannedServer.start(answer: Self.answers[1])
        let connections = NIOLockedValueBox(0)
        let guards = NIOLockedValueBox<[Int]>([])
        var configuration = AsyncHTTPClientTransport.strataConfiguration()
        configuration.http1_1ConnectionDebugInitializer = { channel in
            connections.withLockedValue { $0 += 1 }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        configuration.refusesStatusCodesBelow100()
        configuration.refusesStatusCodesBelow100()
        let counting = configuration.http1_1ConnectionDebugInitializer
        configuration.http1_1ConnectionDebugInitializer = { channel in
            (counting?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()).map {
                let count = channel.pipeline.debugDescription.components(separatedBy: "StatusCodeGuard").count - 1
                guards.withLockedValue { $0.append(count) }
            }
        }
        let client = HTTPClient(configuration: configuration)
        let transport = AsyncHTTPClientTransport(client: client)
        for _ in 0..<2 {
            let outcome = try await send(URLRequest(url: server.url), over: transport)
            #expect((outcome.error as? URLError)?.code == .badServerResponse, "\(String(describing: outcome.error))")
        }
        #expect(connections.withLockedValue { $0 } == 2)
        #expect(guards.withLockedValue { $0 } == [1, 1])
        try await client.shutdown()
        try await server.channel.close()
    }
}

/// A body sent a byte a chunk reaches the receiver a read at a time, not a part per byte: small
/// parts that arrive together are joined, in order, so that what waits for a slow consumer is
/// bounded by its bytes, not by a queued part for each.
@Suite struct SmallPartTests {
    /// Asks for every part at once, and keeps them.
    final class Collector: ResponseReceiver, @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
        private let lock = NSLock()
        private var exchange: (any ResponseExchange)?
        private var demandPending = false
        private var parts: [Data] = []
        private var ended: (any Error)??
        private var waiting: CheckedContinuation<Void, Never>?

        func attach(_ exchange: any ResponseExchange) {
            let demands = lock.withLock {
                self.exchange = exchange
                defer { demandPending = false }
                return demandPending
            }
            if demands { exchange.demand() }
        }

        private func demand() {
            let attached = lock.withLock {
                if exchange == nil { demandPending = true }
                return exchange
            }
            attached?.demand()
        }

        func receive(_ head: ResponseHead) { demand() }

        func receive(_ part: Data) {
            lock.withLock { parts.append(part) }
            demand()
        }

        func finish(_ error: (any Error)?) {
            let resumes = lock.withLock {
                ended = .some(error)
                defer { waiting = nil }
                return waiting
            }
            resumes?.resume()
        }

        /// The parts and the end, once it has come.
        func result() async -> (parts: [Data], error: (any Error)?) {
            await withCheckedContinuation { continuation in
                let done = lock.withLock {
                    if ended == nil { waiting = continuation }
                    return ended != nil
                }
                if done { continuation.resume() }
            }
            return lock.withLock { (parts, ended ?? nil) }
        }
    }

    @Test func aBodySentAByteAChunkArrivesJoinedAndInOrder() async throws {
        let body = (0..<3_000).map { Character(UnicodeScalar(UInt8(ascii: "a") + UInt8($0 % 26))) }
        let chunks = body.map { "1\r\n\($0)\r\n" }.joined()
        // One write: 3,000 chunks of one byte, which AsyncHTTPClient reads in one or a few reads.
        let server = try await CannedServer.start(
            answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(chunks)0\r\n\r\n")
        let client = HTTPClient(configuration: AsyncHTTPClientTransport.strataConfiguration())
        let transport = AsyncHTTPClientTransport(client: client)
        let collector = Collector()
        collector.attach(transport.send(TransportAttempt(request: URLRequest(url: server.url)), to: collector))
        let (parts, error) = await collector.result()
        #expect(error == nil)
        #expect(String(decoding: parts.reduce(Data(), +), as: UTF8.self) == String(body))
        #expect(parts.count <= 300, "\(parts.count) parts for 3,000 chunks of a byte")
        try await client.shutdown()
        try await server.channel.close()
    }
}

/// A server that answers every request on a connection with the same bytes.
struct CannedServer {
    let channel: any Channel
    let url: URL
    /// The heads of the requests answered, as they arrived, the last at the end.
    let heads: NIOLockedValueBox<[String]>

    static func start(answer: String) async throws -> CannedServer {
        try await start(answer: Array(answer.utf8))
    }

    static func start(answer: [UInt8]) async throws -> CannedServer {
        let heads = NIOLockedValueBox<[String]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Answer(bytes: answer, heads: heads))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        return CannedServer(
            channel: channel, url: try #require(URL(string: "http://127.0.0.1:\(port)/")), heads: heads)
    }

    /// Writes the answer once a request's head has ended (its blank line has arrived).
    private final class Answer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let bytes: [UInt8]
        let heads: NIOLockedValueBox<[String]>
        init(bytes: [UInt8], heads: NIOLockedValueBox<[String]>) {
            self.bytes = bytes
            self.heads = heads
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let request = unwrapInboundIn(data)
            guard request.readableBytesView.contains(UInt8(ascii: "\n")) else { return }
            heads.withLockedValue { $0.append(String(buffer: request)) }
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        }
    }
}

/// A URL on loopback where nothing listens.
func closedPortURL() throws -> URL {
    let socket = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0)
        .wait()
    let port = socket.localAddress?.port ?? 9
    try socket.close().wait()
    return try #require(URL(string: "http://127.0.0.1:\(port)/"))
}

/// Sends `request` and waits for its one outcome.
func send(
    _ request: URLRequest, over transport: any Transport, timeout: TimeInterval = 10,
    maximumBodyLength: Int = Int(UInt32.max)
) async throws
    -> TransportOutcome
{
    var request = request
    request.timeoutInterval = timeout
    let calls = Counter()
    let outcome = await withCheckedContinuation { continuation in
        transport.send(TransportAttempt(request: request), maximumBodyLength: maximumBodyLength) { outcome in
            if calls.increment() == 1 { continuation.resume(returning: outcome) }
        }
    }
    try await Task.sleep(for: .milliseconds(50))
    #expect(calls.value == 1)
    return outcome
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() -> Int {
        lock.withLock {
            count += 1; return count
        }
    }
}
