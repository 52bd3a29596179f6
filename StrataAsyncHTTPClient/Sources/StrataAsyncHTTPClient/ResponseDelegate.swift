import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOPosix
import StrataCore
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Receives one attempt's response and relays it — the head, then each body part as the consumer
/// asks — and reports upload progress and the end once, when the task's future completes.
///
/// AsyncHTTPClient calls it on the task's event loop, one call at a time, and reads the next body
/// part only when the future returned for the last one has completed. While the relay holds at
/// most ``readAhead`` bytes, that future is complete at once; past it, the client is held until
/// the consumer has taken the relay down to ``resumeBelow`` bytes. So memory stays bounded however
/// fast the server and however slow the consumer, and a consumer that is behind lets the client
/// read on a batch of parts at a time, not one part per part it takes (each release wakes the
/// event loop from the consumer's thread). Small parts that arrive in one turn of the event loop
/// are relayed joined, as one part, so that what is queued is bounded by its bytes whatever size
/// of chunk the server sends.
final class ResponseDelegate: HTTPClientResponseDelegate {
    typealias Response = Void

    /// The bytes queued for the consumer up to which the next part is read at once: a few reads
    /// (AsyncHTTPClient reads up to four parts of up to 64 KiB per wake-up), so that a consumer in
    /// another thread, woken for a part, rarely finds the client held when it catches up. At
    /// 256 KiB, one wake-up's reads, a consumer keeping up still held the client every few parts:
    /// 1 GiB from nginx came at 0.61–0.81x the throughput of AsyncHTTPClient's own
    /// `response.body`, at 0.71–0.90x with 1 MiB (`StreamProbe`, Benchmarks/RESULTS.md).
    static let readAhead = 1024 * 1024
    /// The bytes queued for the consumer at or below which a held client reads on.
    static let resumeBelow = readAhead / 2

    private struct State {
        var sent: Int64 = 0
        var visits = 0
        var head: ResponseHead?
        /// Whether the request's head was written on the connection.
        var headSent = false
        /// Whether the whole request went out.
        var requestSent = false
        /// The bytes of the response body received.
        var received: Int64 = 0
        /// Whether the response leaves its HTTP/1.1 connection open after it
        /// (`HTTPResponseHead.isKeepAlive`).
        var keepsConnection = false
        /// Whether a whole response arrived while the request body was still going out: a
        /// `3xx`–`5xx` one ends the exchange (see ``endIfAnsweredEarly(_:)``), and either stands as
        /// the answer whatever becomes of the rest of the body.
        var answeredEarly = false
        /// The future AsyncHTTPClient waits on before it reads more, while the consumer is behind.
        var held: EventLoopPromise<Void>?
        /// The future AsyncHTTPClient waits on before it ends a whole `2xx` response that arrived
        /// while the request body was still going out (see ``holdForUpload(on:)``).
        var uploadHold: EventLoopPromise<Void>?
        /// Whether a `3xx`–`5xx` response without a length to count is watched for its end (see
        /// ``endIfAnsweredEarly(_:)``).
        var watchesRefusal = false
        /// Small parts received in this turn of the event loop, joined, not relayed yet.
        var small = Data()
        var task: HTTPClient.Task<Void>?
        var cancelled = false
        /// How many times the request has gone out again, by why (see ``resendsAfter(_:)``).
        var resends: [Resend: Int] = [:]
        /// Why a successful response's body, in a content coding nobody asked for and nobody
        /// decodes (see ``Decoding``), cannot be read; its first byte fails the exchange.
        var undecodable: String?
        /// What undoes the body's content codings, when the transport does.
        var decoder: ContentDecoder?
    }

    /// Who undoes a response body's content codings.
    enum Decoding {
        /// The caller, whose request named its own `Accept-Encoding`: the body goes on as it came.
        case byCaller
        /// The client, whose configuration decompresses `gzip` and `deflate`.
        case byClient
        /// The transport (``ContentDecoder``).
        case byTransport
    }

    private let url: URL
    /// The request's method, as sent.
    private let method: String
    private let uploadLength: Int64
    private let uploadProgress: (@Sendable (Int64, Int64) -> Void)?
    private let state: NIOLockedValueBox<State>
    /// What the consumer is handed the response through; the exchange the transport returns.
    let relay: ResponseRelay
    /// The request, as the client was given it, to send again (see ``resendsAfter(_:)``).
    private let request: HTTPClient.Request
    /// Whether the request may be sent again once it went out and its connection closed before a
    /// byte of the answer: it has no body, and its method is idempotent.
    private let mayResendUnanswered: Bool
    private let transport: AsyncHTTPClientTransport
    /// Where the response's cookies are kept, and the request they answer; `nil` for none.
    private let cookies: (jar: CookieJar, request: URLRequest)?
    /// Who undoes the body's content codings.
    private let decoding: Decoding

    init(
        url: URL,
        method: String,
        uploadLength: Int64,
        uploadProgress: (@Sendable (Int64, Int64) -> Void)?,
        receiver: any ResponseReceiver,
        transport: AsyncHTTPClientTransport,
        request: HTTPClient.Request,
        mayResendUnanswered: Bool,
        cookies: (jar: CookieJar, request: URLRequest)?,
        decoding: Decoding
    ) {
        self.url = url
        self.method = method
        self.cookies = cookies
        self.decoding = decoding
        self.uploadLength = uploadLength
        self.uploadProgress = uploadProgress
        self.transport = transport
        self.request = request
        self.mayResendUnanswered = mayResendUnanswered
        let state = NIOLockedValueBox(State())
        self.state = state
        relay = ResponseRelay(
            to: receiver,
            onTaken: { [state] stillBuffered in
                guard stillBuffered <= Self.resumeBelow else { return }
                state.withLockedValue { state in
                    defer { state.held = nil }
                    return state.held
                }?.succeed()
            },
            // Holding the transport keeps an owned client alive while the task can still be cancelled.
            stop: { [state, transport] in
                let (task, held, uploadHold) = state.withLockedValue { state in
                    state.cancelled = true
                    defer { (state.held, state.uploadHold) = (nil, nil) }
                    return (state.task, state.held, state.uploadHold)
                }
                // Never from inside AsyncHTTPClient's call into this delegate (a consumer may cancel
                // as it is handed a part, which comes from there; AsyncHTTPClient's pool then loses
                // track of the connection): on the loop's next turn.
                guard let task else {
                    held?.fail(HTTPClientError.cancelled)
                    uploadHold?.fail(HTTPClientError.cancelled)
                    return
                }
                task.eventLoop.execute {
                    withExtendedLifetime(transport) {
                        held?.fail(HTTPClientError.cancelled)
                        uploadHold?.fail(HTTPClientError.cancelled)
                        task.cancel()
                    }
                }
            })
    }

    /// The delegate of the request sent again after `first` failed unsent or unanswered: the same relay
    /// and state, so that the consumer and a cancellation reach whichever is under way, and the
    /// resends counted in it bound the next.
    private init(resending first: ResponseDelegate) {
        url = first.url
        method = first.method
        uploadLength = first.uploadLength
        uploadProgress = first.uploadProgress
        state = first.state
        relay = first.relay
        transport = first.transport
        request = first.request
        mayResendUnanswered = first.mayResendUnanswered
        cookies = first.cookies
        decoding = first.decoding
    }

    /// The task is under way; a cancellation that came first cancels it now.
    func started(_ task: HTTPClient.Task<Void>) {
        let cancelled = state.withLockedValue { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.eventLoop.execute { task.cancel() } }
        task.futureResult.whenComplete { [self] result in
            finish(result)
        }
    }

    func didSendRequestHead(task: HTTPClient.Task<Void>, _ head: HTTPRequestHead) {
        state.withLockedValue { $0.headSent = true }
    }

    func didSendRequest(task: HTTPClient.Task<Void>) {
        let uploadHold = state.withLockedValue { state in
            state.requestSent = true
            defer { state.uploadHold = nil }
            return state.uploadHold
        }
        uploadHold?.succeed()
    }

    func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
        // Counted with or without a progress handler: a held response reads on if it stops.
        let sent = state.withLockedValue { state in
            state.sent += Int64(part.readableBytes)
            return state.sent
        }
        uploadProgress?(sent, uploadLength)
    }

    /// Every response head comes here first; a second one means the client followed a redirect,
    /// which only Strata's policy may do.
    func didVisitURL(task: HTTPClient.Task<Void>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        let visits = state.withLockedValue { state in
            state.visits += 1
            return state.visits
        }
        if visits > 1 {
            task.fail(reason: AsyncHTTPClientTransportError.clientFollowedRedirect)
        }
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        // Before the pipeline sees the response: the next hop of a redirect carries what it set.
        let setCookies = head.headers["Set-Cookie"]
        if let (jar, request) = cookies, !setCookies.isEmpty {
            jar.store(setCookies, from: request)
        }
        let received = Self.head(head, url: url)
        // Why the body cannot be decoded, if it cannot.
        var (decoder, undecodable): (ContentDecoder?, String?) = (nil, nil)
        // Transfer codings are the message's, not the content's: undone whatever the request asked
        // for, after `chunked` (which SwiftNIO undoes) and before the content codings.
        let transfer = Self.transferCodings(head)
        // Looking at a coding makes its decoder: more codings than a body may have go to the plan,
        // which refuses them without making any.
        if transfer.count <= ContentDecoder.mostCodings, !hasNoBody(received),
            let unknown = transfer.first(where: { !ContentDecoder.decodes($0) })
        {
            undecodable =
                "the body arrived in the transfer coding '\(unknown.prefix(100))', which the client does not decode"
        } else {
            switch decoding {
            case .byCaller where !hasNoBody(received) && !transfer.isEmpty:
                (decoder, undecodable) = Self.decoding(ContentDecoder.plan(transfer))
            case .byCaller: break
            case .byClient:
                undecodable =
                    transfer.isEmpty
                    ? Self.codingLeftEncoded(head).map(Self.unasked)
                    : "the body arrived in a transfer coding, which a client that decompresses does not decode"
            case .byTransport where !hasNoBody(received):
                (decoder, undecodable) = Self.decoding(
                    ContentDecoder.plan(head.headers[canonicalForm: "Content-Encoding"].map(String.init) + transfer))
            case .byTransport: break
            }
        }
        state.withLockedValue { state in
            state.head = received
            state.keepsConnection = head.isKeepAlive
            // A failure's body in a coding nobody decodes goes on as it came: it is shown, not read.
            state.undecodable = (200..<300).contains(received.statusCode) ? undecodable : nil
            state.decoder = decoder
        }
        endIfAnsweredEarly(task)
        relay.push(received)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        defer { endIfAnsweredEarly(task) }
        let relayed = relay(buffer, of: task)
        // A request without a body (most) waits for no upload: no lock taken for it.
        guard uploadLength != 0, let uploaded = holdForUpload(on: task.eventLoop) else { return relayed }
        return relayed.and(uploaded).map { _ in }
    }

    /// Relays `buffer`; returns what AsyncHTTPClient is to wait on before it reads the next part.
    private func relay(_ buffer: ByteBuffer, of task: HTTPClient.Task<Void>) -> EventLoopFuture<Void> {
        // A small part is copied into the others of this turn of the loop, which go on together
        // once the loop has handled the read that brought them: a body sent a byte a chunk becomes
        // a part per read, not a queued part per byte. A large one goes on now.
        let count = buffer.readableBytes
        let arrival = state.withLockedValue { state -> Arrival in
            if count > 0, let reason = state.undecodable {
                return Arrival(failure: Self.undecodable(reason, url: url))
            }
            state.received += Int64(count)
            var decoded: Data?
            if let decoder = state.decoder {
                do throws(ContentDecoder.DecodingFailure) {
                    decoded = try decoder.decode(buffer)
                } catch {
                    return Arrival(failure: error.urlError(for: url))
                }
            }
            let length = decoded?.count ?? count
            guard length < Self.sharedPartMinimum else {
                defer { state.small = Data() }
                return Arrival(joinedBefore: state.small, part: decoded ?? Self.data(buffer))
            }
            let wasEmpty = state.small.isEmpty
            if let decoded {
                state.small.append(decoded)
            } else {
                buffer.withUnsafeReadableBytes { state.small.append(contentsOf: $0) }
            }
            return Arrival(opensTurn: wasEmpty && length > 0, small: state.small.count)
        }
        if let failure = arrival.failure {
            return task.eventLoop.makeFailedFuture(failure)
        }
        if let part = arrival.part {
            if !arrival.joinedBefore.isEmpty { relay.push(arrival.joinedBefore) }
            relay.push(part)
        } else if arrival.opensTurn {
            task.eventLoop.execute { self.relaySmallParts() }
        }
        // Read on at once while the consumer keeps up.
        guard relay.bufferedBytes + arrival.small > Self.readAhead else {
            return task.eventLoop.makeSucceededVoidFuture()
        }
        // Held: what the consumer is to take the relay down by must be in it.
        relaySmallParts()
        let promise = task.eventLoop.makePromise(of: Void.self)
        state.withLockedValue { $0.held = promise }
        // The consumer may have taken the relay down meanwhile, finding nothing held to release.
        if relay.bufferedBytes <= Self.resumeBelow {
            state.withLockedValue { state in
                defer { state.held = nil }
                return state.held
            }?.succeed()
        }
        return promise.futureResult
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}

    /// How long a held response (see ``holdForUpload(on:)``) waits on a request body that makes no
    /// progress before the client goes on.
    static let uploadStallLimit = TimeAmount.seconds(1)

    /// Holds the client at the last part of a whole `2xx` response (see ``isWhole(_:received:)``)
    /// that arrived while the request body is still going out, until the body is out (or the
    /// exchange ends); returns what to wait on, `nil` if nothing holds.
    ///
    /// AsyncHTTPClient sends such a body on and ends the exchange once the body is out; but when
    /// the response's end comes while it still hands on a part — in the same read as the last
    /// bytes, as a short answer's does — it ends the exchange at once: the body writes fail and
    /// the connection waits, unusable and out of the pool, for a body that no longer comes, until
    /// the server gives up on it (nginx's `return 200`, which reads and drops a body after
    /// answering, after 5 s; a server that waits, never). Eight such uploads took every
    /// connection of a host's pool. Held at the part, the body goes out whole and the connection
    /// serves the next request.
    ///
    /// Only a whole response is held: nothing of it is left to read, so holding the client delays
    /// nothing but its end — where one still coming (a server answering as it reads the body, a
    /// full-duplex exchange) would be held back from the caller. A chunked answer, whose end the
    /// delegate cannot see, is not held, and may still leave its connection waiting. Once the body
    /// has made no progress for ``uploadStallLimit`` the client goes on: a server that answered
    /// and closed the connection, or that never reads the body, fails the exchange, or ends it,
    /// only then (a failure reaches this delegate through the part it is held at), and the answer
    /// stands. A response that closes its connection is not held: its connection is not reused.
    /// Nor is one over HTTP/2 (opted into; `isKeepAlive` is false for it), where the exchange is a
    /// stream of its own and nginx resets the stream of a body it does not read.
    private func holdForUpload(on loop: any EventLoop) -> EventLoopFuture<Void>? {
        let hold = state.withLockedValue { state -> (promise: EventLoopPromise<Void>, sent: Int64)? in
            guard !state.requestSent, state.keepsConnection, state.uploadHold == nil, let head = state.head,
                (200..<300).contains(head.statusCode), Self.isWhole(head, received: state.received)
            else { return nil }
            state.answeredEarly = true
            let promise = loop.makePromise(of: Void.self)
            state.uploadHold = promise
            return (promise, state.sent)
        }
        guard let hold else { return nil }
        readOnIfUploadStalls(hold.promise, on: loop, sent: hold.sent)
        return hold.promise.futureResult
    }

    /// Releases `hold` once the request body has made no progress past `sent` for
    /// ``uploadStallLimit``, unless it was released before.
    private func readOnIfUploadStalls(_ hold: EventLoopPromise<Void>, on loop: any EventLoop, sent: Int64) {
        loop.scheduleTask(in: Self.uploadStallLimit) { [self] in
            let progress = state.withLockedValue { state -> Int64? in
                guard state.uploadHold?.futureResult === hold.futureResult else { return nil }
                guard state.sent == sent else { return state.sent }
                state.uploadHold = nil
                return sent
            }
            guard let progress else { return }
            if progress == sent { hold.succeed() } else { readOnIfUploadStalls(hold, on: loop, sent: progress) }
        }
    }

    /// What became of a body part: relayed at once (after the small parts joined before it), or
    /// joined for the end of the loop's turn, or a failure.
    private struct Arrival {
        var joinedBefore = Data()
        var part: Data?
        /// Whether it is the first part joined in this turn of the loop.
        var opensTurn = false
        /// The bytes joined so far in this turn.
        var small = 0
        var failure: URLError?
    }

    /// Relays the small parts joined since the last time, as one part.
    private func relaySmallParts() {
        let joined = state.withLockedValue { state in
            defer { state.small = Data() }
            return state.small
        }
        if !joined.isEmpty { relay.push(joined) }
    }

    /// The size from which a part may share its read buffer rather than be copied.
    static let sharedPartMinimum = 16_384

    /// A body part as `Data`: on the buffer's memory when the part fills most of it (a large read,
    /// which copying would cost a third of a stream's time), else copied, so that a small part
    /// never keeps a large buffer alive while it waits for the consumer: what is queued stays
    /// within twice the bytes counted against ``readAhead``.
    static func data(_ buffer: ByteBuffer) -> Data {
        let shares = buffer.readableBytes >= sharedPartMinimum && buffer.readableBytes * 2 >= buffer.storageCapacity
        return Data(buffer: buffer, byteTransferStrategy: shares ? .noCopy : .copy)
    }

    /// Ends the task once a whole `3xx`–`5xx` response (see ``isWhole(_:received:)``) has arrived
    /// while the request body is still going out, as a server answers an upload it refuses (`413`,
    /// `401`) without reading it. AsyncHTTPClient stops sending then, for good, but may fail the
    /// exchange for the body it could not send (`requestStreamCancelled`) or, if the server closes
    /// the connection, wait for the deadline; the answer is the server's response, which
    /// ``finish(_:)`` reports.
    ///
    /// Whether a response without a length to count (chunked, ended by the close of the
    /// connection, or in a content coding) has all arrived only AsyncHTTPClient knows, and when
    /// its end came apart from its last bytes it waited for the body it had stopped — until the
    /// deadline. Such a response ends once no byte of it has come for ``refusalIdleLimit``.
    private func endIfAnsweredEarly(_ task: HTTPClient.Task<Void>) {
        // A request without a body (most) has nothing to refuse: no lock taken for it.
        guard uploadLength != 0 else { return }
        let early = state.withLockedValue { state -> (ends: Bool, watches: Bool) in
            guard !state.answeredEarly, !state.requestSent, let head = state.head, head.statusCode >= 300
            else { return (false, false) }
            if Self.isWhole(head, received: state.received) {
                state.answeredEarly = true
                return (true, false)
            }
            guard !Self.isCountable(head), !state.watchesRefusal else { return (false, false) }
            state.watchesRefusal = true
            return (false, true)
        }
        // Not from inside AsyncHTTPClient's call into this delegate: on the loop's next turn, by
        // which time the exchange may have ended on its own, and cancelling does nothing.
        if early.ends {
            task.eventLoop.execute { task.cancel() }
        } else if early.watches {
            endRefusalOnceIdle(task, received: 0)
        }
    }

    /// How long a `3xx`–`5xx` response without a length to count, to a request whose body is still
    /// going out, may bring no byte before it is taken as whole (see ``endIfAnsweredEarly(_:)``).
    static let refusalIdleLimit = TimeAmount.milliseconds(250)

    /// Ends the task as answered once the response has had no byte past `received` for
    /// ``refusalIdleLimit``, unless the task has ended before.
    private func endRefusalOnceIdle(_ task: HTTPClient.Task<Void>, received: Int64) {
        task.eventLoop.scheduleTask(in: Self.refusalIdleLimit) { [self] in
            let progress = state.withLockedValue { state -> Int64? in
                // `task` is cleared as the task ends.
                guard state.task != nil, !state.answeredEarly else { return nil }
                guard state.received == received else { return state.received }
                state.answeredEarly = true
                return received
            }
            guard let progress else { return }
            if progress == received { task.cancel() } else { endRefusalOnceIdle(task, received: progress) }
        }
    }

    /// Whether the bytes of `head`'s body can be counted against its length: it has one, and no
    /// content coding that would make the count differ (a body the client decompresses is counted
    /// decompressed).
    private static func isCountable(_ head: ResponseHead) -> Bool {
        head.expectedContentLength >= 0
            && (head.expectedContentLength == 0 || head.headers.value(for: "Content-Encoding") == nil)
    }

    /// Whether `head`'s body is all here, `received` bytes of it (see ``isCountable(_:)``).
    private static func isWhole(_ head: ResponseHead, received: Int64) -> Bool {
        isCountable(head) && received >= head.expectedContentLength
    }

    /// Ends the relay once the task has ended: a response that answered the request before its
    /// body was sent is complete, whatever became of the rest of the body.
    private func finish(_ result: Result<Void, any Error>) {
        if case .failure(let error) = result, resendsAfter(error) { return }
        let (answeredEarly, held, uploadHold, head, received, decoder, requestSent) = state.withLockedValue { state in
            // The task holds this delegate: no cycle outlives it.
            defer { (state.held, state.uploadHold, state.task, state.decoder) = (nil, nil, nil, nil) }
            return (
                state.answeredEarly, state.held, state.uploadHold, state.head, state.received, state.decoder,
                state.requestSent
            )
        }
        // No promise is left unfulfilled (SwiftNIO traps on one in a debug build).
        held?.succeed()
        uploadHold?.succeed()
        // The end comes after the parts of its own turn of the loop.
        relaySmallParts()
        switch result {
        case .success:
            do throws(ContentDecoder.DecodingFailure) {
                try decoder?.finish()
                relay.end(nil)
            } catch {
                relay.end(error.urlError(for: url))
            }
        case .failure where answeredEarly:
            relay.end(nil)
        case .failure(let error as NIOHTTPDecompression.ExtraDecompressionError)
        where error == .truncatedData && received == 0 && head.map(hasNoBody) == true:
            // The decompressor took a response without a body whose fields name a content coding
            // (the fields of the body a `GET` would get) for a compressed body cut short.
            relay.end(nil)
        case .failure(let error as HTTPClientError)
        where (error == .bodyLengthMismatch || error == .requestStreamCancelled) && !requestSent
            && head.map({ $0.statusCode >= 300 }) == true:
            // AsyncHTTPClient stopped the body at a `3xx`–`5xx` answer and failed the exchange for
            // it — as the answer ended, or as it wrote the rest of the body to a closing connection
            // and counted none of it: the answer stands.
            relay.end(nil)
        case .failure(let error as HTTPClientError) where error == .bodyLengthMismatch && uploadLength >= 0:
            // A body that did not hold the length announced for it — a stream of the caller's, or
            // a file that changed size as it was sent: the request's fault, not the network's.
            relay.end(RequestValidationError.bodyStreamLengthMismatch(announced: uploadLength))
        case .failure(let error):
            relay.end(AsyncHTTPClientTransport.transportError(error, url: url))
        }
    }

    /// Whether `head` ends with no body by its own framing: one to `HEAD`, a `1xx`, `204` or `304`,
    /// or a `Content-Length` of 0.
    private func hasNoBody(_ head: ResponseHead) -> Bool {
        head.hasNoBody(answering: method) || head.expectedContentLength == 0
    }

    /// Why a request goes out again.
    enum Resend: Hashable {
        /// The client failed it before it was written: it waited for a connection of the pool
        /// longer than the connect timeout, or the connection it waited for was not made (connected,
        /// its TLS handshake done) in time.
        case unsent
        /// Its connection closed before its head was written on it.
        case unwritten
        /// It went out, and its connection closed before a byte of the answer.
        case unanswered
        /// It went out on an HTTP/2 stream that was closed unanswered as one the server did not
        /// process.
        case unprocessed
    }

    /// Sends the request again if the client failed it before a byte of it was written, or if its
    /// connection closed before a byte of the answer came and the request may be sent twice.
    ///
    /// - A request the client failed unsent — it waited for a connection longer than the client's
    ///   connect timeout, or the connection it waited for (its connecting, its TLS handshake) timed
    ///   out — goes out again, whatever its method and body, up to
    ///   ``AsyncHTTPClientTransport/mostUnsentResends`` times: the pool
    ///   gives a waiting request to a connection already being made, which may be an attempt
    ///   started for an earlier request to a host unreachable then (its `SYN`s unanswered) and
    ///   reachable since, and the attempt goes on until the connect timeout; the request sent
    ///   again gets a new one.
    /// - A request whose connection closed before its head was written on it — a kept connection
    ///   the server closed as the pool handed it the request — goes out again whatever its method
    ///   and body too, up to ``AsyncHTTPClientTransport/mostUnwrittenResends`` times: the server
    ///   got nothing of it (AsyncHTTPClient asks for the body only once the head is written).
    /// - A connection that closed unanswered was most likely one the pool kept open and the server
    ///   closed as the request went out (a keep-alive timeout), which `URLSession` retries unasked
    ///   too: the request goes out again once. Over HTTP/2 the same holds for a stream closed
    ///   unanswered with `CANCEL` or `REFUSED_STREAM`: SwiftNIO closes with `CANCEL` each stream
    ///   past the last one a `GOAWAY` names, which the server did not process (RFC 9113 §6.8;
    ///   nginx sends one after `keepalive_requests` streams, with more under way). Such a request
    ///   goes again each time its new connection leaves it unprocessed too, up to
    ///   ``AsyncHTTPClientTransport/mostUnprocessedResends`` times. Only a request without a body
    ///   whose method is idempotent (RFC 9110, 9.2.2) goes again after it was sent.
    ///
    /// The pipeline's deadline still bounds every attempt together.
    /// - Returns: Whether the request went out again, and so the relay stays open.
    private func resendsAfter(_ error: any Error) -> Bool {
        guard var why = Self.resend(after: error) else { return false }
        if why == .unanswered, !state.withLockedValue({ $0.headSent }) { why = .unwritten }
        guard why == .unsent || why == .unwritten || mayResendUnanswered else { return false }
        let most =
            switch why {
            case .unsent: AsyncHTTPClientTransport.mostUnsentResends
            case .unwritten: AsyncHTTPClientTransport.mostUnwrittenResends
            case .unanswered: 1
            case .unprocessed: AsyncHTTPClientTransport.mostUnprocessedResends
            }
        let resends = state.withLockedValue { state -> Bool in
            guard !state.cancelled, state.resends[why, default: 0] < most, state.head == nil, state.received == 0
            else { return false }
            state.resends[why, default: 0] += 1
            state.visits = 0
            state.task = nil
            return true
        }
        guard resends else { return false }
        let delegate = ResponseDelegate(resending: self)
        delegate.started(transport.client.execute(request: request, delegate: delegate))
        return true
    }

    /// Why a request that failed with `error` may go out again; `nil` when it may not.
    private static func resend(after error: any Error) -> Resend? {
        switch error {
        case let error as NIOHTTP2Errors.StreamClosed:
            return error.errorCode == .cancel || error.errorCode == .refusedStream ? .unprocessed : nil
        case let error as HTTPClientError:
            switch error {
            case .remoteConnectionClosed: return .unanswered
            // Only a request waiting for a connection of the pool fails with one of these: the
            // wait, or the connection's making (its connecting, its TLS or proxy handshake), took
            // longer than the client's connect timeout.
            case .getConnectionFromPoolTimeout, .connectTimeout, .tlsHandshakeTimeout, .socksHandshakeTimeout,
                .httpProxyHandshakeTimeout:
                return .unsent
            default: return nil
            }
        case let error as IOError: return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE ? .unanswered : nil
        case let error as ChannelError: return error == .ioOnClosedChannel || error == .eof ? .unanswered : nil
        default: return nil
        }
    }

    /// What decodes a body by `plan`, or why it cannot be decoded.
    private static func decoding(_ plan: ContentDecoder.Plan) -> (ContentDecoder?, String?) {
        switch plan {
        case .none: (nil, nil)
        case .decode(let found): (found, nil)
        case .unknown(let codings): (nil, unasked(codings))
        case .tooMany(let count):
            (
                nil,
                "the body arrived in \(count) codings applied in turn, more than the "
                    + "\(ContentDecoder.mostCodings) the transport decodes"
            )
        }
    }

    /// The transfer codings of `head`'s message but `chunked`, which SwiftNIO undoes (and
    /// `identity`, no coding), lowercased, in the order they were applied (`Transfer-Encoding: gzip,
    /// chunked`: `gzip`).
    static func transferCodings(_ head: HTTPResponseHead) -> [String] {
        head.headers[canonicalForm: "Transfer-Encoding"].map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "chunked" && $0 != "identity" }
    }

    /// The content codings that leave `head`'s body encoded as it reaches the consumer over a
    /// client that decompresses, joined as the field lists them; `nil` when it arrives decoded.
    /// SwiftNIO's decompressor decodes a body whose first coding is `gzip` or `deflate`, and only
    /// that one; `identity` is none.
    static func codingLeftEncoded(_ head: HTTPResponseHead) -> String? {
        let codings = head.headers[canonicalForm: "Content-Encoding"].map { $0.lowercased() }
        let applied = codings.filter { $0 != "identity" }
        guard !applied.isEmpty else { return nil }
        if applied.count == 1, codings.first == "gzip" || codings.first == "deflate" { return nil }
        return applied.joined(separator: ", ")
    }

    /// A body that cannot be decoded, for `reason`, fails as `URLSession` fails one:
    /// `URLError(.cannotDecodeContentData)`, not bytes handed on as if decoded.
    static func undecodable(_ reason: String, url: URL) -> URLError {
        URLError(
            .cannotDecodeContentData, userInfo: [NSLocalizedDescriptionKey: reason, NSURLErrorFailingURLErrorKey: url])
    }

    /// Why a body in `codings` (as the field lists them), which the request did not ask for,
    /// cannot be read; a long list is cut.
    static func unasked(_ codings: String) -> String {
        let named = codings.count > 100 ? codings.prefix(100) + "…" : Substring(codings)
        return "the body arrived in the content coding '\(named)', which the request did not ask for and the "
            + "client does not decode"
    }

    /// The response head as the pipeline takes it: fields in the order received.
    static func head(_ head: HTTPResponseHead, url: URL) -> ResponseHead {
        var fields: [StrataCore.HTTPHeader] = []
        fields.reserveCapacity(head.headers.count)
        for (name, value) in head.headers {
            fields.append(StrataCore.HTTPHeader(name: name, value: value))
        }
        return ResponseHead(
            url: url, statusCode: Int(head.status.code), httpVersion: version(head.version),
            headers: StrataCore.HTTPHeaders(fields))
    }

    /// `HTTP/1.1`, as `HTTPURLResponse` takes a version.
    private static func version(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): "HTTP/1.1"
        case (2, 0): "HTTP/2.0"
        case (1, 0): "HTTP/1.0"
        default: "HTTP/\(version.major).\(version.minor)"
        }
    }
}
