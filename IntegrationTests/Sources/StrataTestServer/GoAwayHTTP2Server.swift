import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An `https` server that speaks HTTP/2 only and serves a set number of streams on each connection,
/// as nginx does (`keepalive_requests`, 1,000 by default): on its last stream it sends `GOAWAY`
/// naming that stream as the last it will process, answers the streams up to it, and leaves every
/// later one unanswered — streams the client opened before the `GOAWAY` reached it, which RFC 9113
/// §6.8 says were not processed and may be sent again. Each answer is `200`, the body `ok`.
public final class GoAwayHTTP2Server: Sendable {
    /// `https://127.0.0.1:PORT`
    public let baseURL: URL
    private let channel: any Channel
    private let counts: NIOLockedValueBox<(connections: Int, answered: Int)>

    /// The connections made so far.
    public var connections: Int { counts.withLockedValue { $0.connections } }
    /// The streams answered so far.
    public var answered: Int { counts.withLockedValue { $0.answered } }

    private init(baseURL: URL, channel: any Channel, counts: NIOLockedValueBox<(connections: Int, answered: Int)>) {
        self.baseURL = baseURL
        self.channel = channel
        self.counts = counts
    }

    /// Starts a server presenting ``TestCertificates/server`` that serves `streamsPerConnection`
    /// streams on each connection; with 0, none: the `GOAWAY` on a connection's first stream names
    /// no stream as processed.
    public static func start(streamsPerConnection: Int) async throws -> GoAwayHTTP2Server {
        var tls = try TestServer.tlsConfiguration()
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let counts = NIOLockedValueBox((connections: 0, answered: 0))
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                counts.withLockedValue { $0.connections += 1 }
                let connection = ConnectionStreams(limit: streamsPerConnection)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.pipeline.addHandler(
                            CountedStream(
                                connection: connection, answered: { counts.withLockedValue { $0.answered += 1 } }))
                    }.map { _ in }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port, let url = URL(string: "https://127.0.0.1:\(port)") else {
            try? await channel.close()
            throw TestServerError.noPort
        }
        return GoAwayHTTP2Server(baseURL: url, channel: channel, counts: counts)
    }

    /// Stops listening; open connections are left to close with their clients.
    public func shutdown() async throws {
        try await channel.close()
    }
}

/// The streams of one connection: how many were opened, and the last one processed once the
/// limit is reached.
private final class ConnectionStreams: Sendable {
    private let limit: Int
    private let state = NIOLockedValueBox((opened: 0, highest: HTTP2StreamID(0), last: HTTP2StreamID?.none))

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts stream `id` in; returns the last stream to process when this one reaches the limit.
    func opened(_ id: HTTP2StreamID) -> HTTP2StreamID? {
        state.withLockedValue { state in
            state.opened += 1
            state.highest = max(state.highest, id)
            guard state.opened == max(limit, 1) else { return nil }
            state.last = limit == 0 ? HTTP2StreamID(0) : state.highest
            return state.last
        }
    }

    /// Whether stream `id` is processed: no `GOAWAY` yet, or one naming it or a later stream.
    func processes(_ id: HTTP2StreamID) -> Bool {
        state.withLockedValue { state in state.last.map { id <= $0 } ?? true }
    }
}

/// One stream: counted in as it opens (the one reaching the limit sends `GOAWAY`), answered once
/// its request has ended if the connection processes it, left unanswered otherwise.
private final class CountedStream: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let connection: ConnectionStreams
    private let answered: @Sendable () -> Void

    init(connection: ConnectionStreams, answered: @escaping @Sendable () -> Void) {
        self.connection = connection
        self.answered = answered
    }

    private func id(_ context: ChannelHandlerContext) -> HTTP2StreamID? {
        try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard let id = id(context), let last = connection.opened(id), let parent = context.channel.parent else {
            return
        }
        let goAway = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: nil))
        parent.writeAndFlush(goAway, promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let ended: Bool
        switch unwrapInboundIn(data) {
        case .headers(let headers): ended = headers.endStream
        case .data(let data): ended = data.endStream
        default: ended = false
        }
        guard ended, let id = id(context), connection.processes(id) else { return }
        let head = HPACKHeaders([(":status", "200"), ("content-length", "2")])
        context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
        let body = context.channel.allocator.buffer(string: "ok")
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
        answered()
    }
}
