import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOHTTP2

extension HTTPClient.Configuration {
    /// Fails a response whose status code is below 100 with `HTTPParserError.invalidStatus` and
    /// closes its connection, where AsyncHTTPClient 1.37 would trap the process.
    ///
    /// No status code is below 100 (RFC 9110 §15: three digits, the first from 1 to 5), yet NIO's
    /// parser reads `HTTP/1.1 000` or `HTTP/1.1 099` as a response. AsyncHTTPClient takes every
    /// status below 200 but `101` for an interim (`1xx`) response and waits for the final one; the
    /// response's body or its end then arrives with no head before it, and AsyncHTTPClient's state
    /// machine stops the process ("How can we receive a response end, if we haven't a received a
    /// head"). One broken or hostile server would so end every request of the process.
    ///
    /// ``AsyncHTTPClientTransport`` applies it to every client it creates, and
    /// ``AsyncHTTPClientTransport/strataConfiguration()`` includes it; call it on the configuration
    /// of a client you pass in. Applied twice, it guards once. Debug initializers set before still
    /// run, first.
    public mutating func refusesStatusCodesBelow100() {
        http1_1ConnectionDebugInitializer = Self.guardingStatusCodes(after: http1_1ConnectionDebugInitializer) {
            try $0.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
        }
        http2StreamChannelDebugInitializer = Self.guardingStatusCodes(after: http2StreamChannelDebugInitializer) {
            try $0.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
        }
    }

    /// An initializer that runs `previous`, then puts a ``StatusCodeGuard`` right behind the handler
    /// `decoder` finds (where responses become heads and bodies), unless the channel has one.
    private static func guardingStatusCodes(
        after previous: (@Sendable (any Channel) -> EventLoopFuture<Void>)?,
        behind decoder: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> any ChannelHandler
    ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        chaining(after: previous) { channel in
            let operations = channel.pipeline.syncOperations
            guard (try? operations.handler(type: StatusCodeGuard.self)) == nil else { return }
            try operations.addHandler(StatusCodeGuard(), position: .after(try decoder(operations)))
        }
    }
}

/// Stops a response whose status code is below 100 before AsyncHTTPClient sees it (see
/// `HTTPClient.Configuration.refusesStatusCodesBelow100()`): its request fails with
/// `HTTPParserError.invalidStatus`, the connection closes, and nothing more read from it goes on.
final class StatusCodeGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    /// Whether a response was refused: what follows it on the connection is dropped.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data), head.status.code < 100 {
            refused = true
            context.fireErrorCaught(HTTPParserError.invalidStatus)
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }
}
