import NIOCore
import NIOHTTP1

/// Reads HTTP/1.1 requests with NIO's decoder and writes replies as raw bytes, so that faults can
/// break the protocol on purpose. One request is answered at a time, in order.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private let router: Router
    private let addresses: ServerAddresses
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var consumer: (any BodyConsumer)?

    init(router: Router, addresses: ServerAddresses) {
        self.router = router
        self.addresses = addresses
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            consumer = router.consumer(for: request(head, body: []))
        case .body(var buffer):
            if let consumer {
                consumer.consume(buffer)
            } else {
                body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let reply = consumer?.finish() ?? router.reply(to: request(head, body: body))
            consumer = nil
            body = []
            ReplyWriter(channel: context.channel, isHead: head.method == .HEAD, keepAlive: head.isKeepAlive)
                .write(reply)
        }
    }

    private func request(_ head: HTTPRequestHead, body: [UInt8]) -> TestRequest {
        TestRequest(
            method: head.method.rawValue,
            uri: head.uri,
            headers: head.headers.map { ($0.name, $0.value) },
            body: body,
            server: addresses
        )
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Writes one reply to a channel; every step goes through the channel, so it may run later from
/// a scheduled task.
struct ReplyWriter: Sendable {
    let channel: any Channel
    let isHead: Bool
    let keepAlive: Bool

    func write(_ reply: TestReply) {
        switch reply {
        case .response(let status, let headers, let body):
            var fields = headers
            let setsLength = headers.contains { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }
            if !setsLength { fields.append(("Content-Length", String(body.count))) }
            var buffer = head(status: status, headers: fields)
            if !isHead { buffer.writeBytes(body) }
            channel.writeAndFlush(buffer).whenComplete { _ in finish() }
        case .stream(let status, let headers, let size, let chunkSize, let interval, let chunked):
            let framing = chunked ? ("Transfer-Encoding", "chunked") : ("Content-Length", String(size))
            channel.writeAndFlush(head(status: status, headers: headers + [framing])).whenComplete { _ in
                guard !isHead else { return finish() }
                streamBody(from: 0, size: size, chunkSize: max(1, chunkSize), interval: interval, chunked: chunked)
            }
        case .pieces(let status, let headers, let pieces, let interval, let repeats, let cut, let written):
            channel.writeAndFlush(head(status: status, headers: headers + [("Transfer-Encoding", "chunked")]))
                .whenComplete { _ in
                    guard !isHead else { return finish() }
                    writePieces(pieces, at: 0, interval: interval, repeats: repeats, cut: cut, written: written)
                }
        case .delayed(let delay, let reply):
            channel.eventLoop.scheduleTask(in: TimeAmount(delay)) { write(reply) }
        case .raw(let bytes, let thenClose):
            channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).whenComplete { _ in
                if thenClose { channel.close(promise: nil) }
            }
        case .close:
            channel.close(promise: nil)
        case .never:
            break
        }
    }

    private func streamBody(from offset: Int, size: Int, chunkSize: Int, interval: Duration, chunked: Bool) {
        guard channel.isActive else { return }
        guard offset < size else {
            if chunked {
                channel.writeAndFlush(channel.allocator.buffer(string: "0\r\n\r\n")).whenComplete { _ in finish() }
            } else {
                finish()
            }
            return
        }
        let count = min(chunkSize, size - offset)
        var buffer = channel.allocator.buffer(capacity: count + 16)
        if chunked { buffer.writeString(String(count, radix: 16) + "\r\n") }
        TestReply.appendGeneratedBytes(offset: offset, count: count) { buffer.writeBytes($0) }
        if chunked { buffer.writeString("\r\n") }
        channel.writeAndFlush(buffer).whenComplete { result in
            guard case .success = result else { return }
            // The next chunk comes from the event loop, never from inside this callback: a write that
            // completes at once runs its callback at once, and calling on from there would nest one
            // frame per chunk, each keeping its chunk alive, for as long as the client keeps up.
            let next: @Sendable () -> Void = {
                streamBody(from: offset + count, size: size, chunkSize: chunkSize, interval: interval, chunked: chunked)
            }
            if interval > .zero {
                channel.eventLoop.scheduleTask(in: TimeAmount(interval), next)
            } else {
                channel.eventLoop.execute(next)
            }
        }
    }

    private func writePieces(
        _ pieces: [[UInt8]], at index: Int, interval: Duration, repeats: Bool, cut: Bool,
        written: (@Sendable (Int) -> Void)?
    ) {
        guard channel.isActive else { return }
        guard index < pieces.count || (repeats && !pieces.isEmpty) else {
            if cut { return channel.close(promise: nil) }
            channel.writeAndFlush(channel.allocator.buffer(string: "0\r\n\r\n")).whenComplete { _ in finish() }
            return
        }
        let piece = pieces[index % pieces.count]
        var buffer = channel.allocator.buffer(capacity: piece.count + 16)
        buffer.writeString(String(piece.count, radix: 16) + "\r\n")
        buffer.writeBytes(piece)
        buffer.writeString("\r\n")
        channel.writeAndFlush(buffer).whenComplete { result in
            guard case .success = result else { return }
            written?(piece.count)
            // From the event loop, never nested in this callback (see `streamBody`).
            let following = repeats ? (index + 1) % pieces.count : index + 1
            let next: @Sendable () -> Void = {
                writePieces(pieces, at: following, interval: interval, repeats: repeats, cut: cut, written: written)
            }
            if interval > .zero {
                channel.eventLoop.scheduleTask(in: TimeAmount(interval), next)
            } else {
                channel.eventLoop.execute(next)
            }
        }
    }

    private func head(status: Int, headers: [(String, String)]) -> ByteBuffer {
        var buffer = channel.allocator.buffer(capacity: 256)
        let reason = HTTPResponseStatus(statusCode: status).reasonPhrase
        buffer.writeString("HTTP/1.1 \(status) \(reason)\r\n")
        for (name, value) in headers {
            buffer.writeString("\(name): \(value)\r\n")
        }
        if !keepAlive { buffer.writeString("Connection: close\r\n") }
        buffer.writeString("\r\n")
        return buffer
    }

    private func finish() {
        if !keepAlive { channel.close(promise: nil) }
    }
}
