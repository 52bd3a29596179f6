import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An `https` server that offers HTTP/2 and HTTP/1.1 (ALPN) and answers as nginx answers a request
/// it does not read the body of (a `return` directive): over HTTP/2 it sends the whole response as
/// soon as the request's head arrives and then resets the stream with `NO_ERROR`, which RFC 9113
/// §8.1 allows (the client is to stop sending the body). Over HTTP/1.1 it reads the request and
/// answers it. Each answer is `200`, the body `ok`, and the protocol in `X-Protocol`; over HTTP/2, a
/// path `/status/CODE` is answered with `:status` `CODE` as written, whatever it is.
public final class EarlyAnswerHTTP2Server: Sendable {
    /// `https://127.0.0.1:PORT`
    public let baseURL: URL
    private let channel: any Channel

    private init(baseURL: URL, channel: any Channel) {
        self.baseURL = baseURL
        self.channel = channel
    }

    /// Starts a server presenting ``TestCertificates/server``.
    public static func start() async throws -> EarlyAnswerHTTP2Server {
        var tls = try TestServer.tlsConfiguration()
        tls.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            channel.configureHTTP2Pipeline(mode: .server) { stream in
                                stream.pipeline.addHandler(AnswerThenReset())
                            }.map { _ in }
                        },
                        http1ChannelConfigurator: { channel in
                            channel.pipeline.configureHTTPServerPipeline().flatMap {
                                channel.pipeline.addHandler(AnswerHTTP1())
                            }
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port, let url = URL(string: "https://127.0.0.1:\(port)") else {
            try? await channel.close()
            throw TestServerError.noPort
        }
        return EarlyAnswerHTTP2Server(baseURL: url, channel: channel)
    }

    /// Stops listening; open connections are left to close with their clients.
    public func shutdown() async throws {
        try await channel.close()
    }
}

/// One HTTP/2 stream: the response as soon as the request's head is in, then `RST_STREAM(NO_ERROR)`.
private final class AnswerThenReset: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .headers(let request) = unwrapInboundIn(data) else { return }
        let path = request.headers.first(name: ":path") ?? ""
        let status = path.hasPrefix("/status/") ? String(path.dropFirst("/status/".count)) : "200"
        // A request without a body has nothing to stop: answered in full, with no reset.
        answer(context, status: status, thenReset: !request.endStream)
    }

    private func answer(_ context: ChannelHandlerContext, status: String, thenReset: Bool) {
        let head = HPACKHeaders([(":status", status), ("content-length", "2"), ("x-protocol", "h2")])
        context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
        let body = context.channel.allocator.buffer(string: "ok")
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
        if thenReset {
            context.write(wrapOutboundOut(.rstStream(.noError)), promise: nil)
        }
        context.flush()
    }
}

/// HTTP/1.1: each request read whole, then answered.
private final class AnswerHTTP1: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders([("Content-Length", "2"), ("X-Protocol", "http/1.1")])
        headers.add(name: "Content-Type", value: "text/plain")
        context.write(wrapOutboundOut(.head(.init(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "ok")))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
