import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// An HTTP/1.1 server on 127.0.0.1 with two listeners on ports the OS chooses: the main one and a
/// second one that is a different origin (for cross-origin redirects). Both answer from one
/// ``Router``, filled with the standard routes (see ``StandardRoutes``) unless told otherwise.
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { try await server.shutdown() } }
/// server.router.add("GET", "/hello") { _ in .json(#"{"hello": "world"}"#) }
/// let url = server.baseURL.appendingPathComponent("hello")
/// ```
public final class TestServer: Sendable {
    /// The routes both listeners answer from; add your own at any time.
    public let router: Router
    /// `http://127.0.0.1:<port>` of the main listener.
    public let baseURL: URL
    /// `http://127.0.0.1:<port>` of the second listener, a different origin.
    public let otherOriginURL: URL
    /// State behind the standard routes (tokens, attempt counters), for tests to inspect.
    public let state: ServerState
    private let channels: [any Channel]

    private init(router: Router, baseURL: URL, otherOriginURL: URL, state: ServerState, channels: [any Channel]) {
        self.router = router
        self.baseURL = baseURL
        self.otherOriginURL = otherOriginURL
        self.state = state
        self.channels = channels
    }

    /// Starts a server.
    /// - Parameters:
    ///   - standardRoutes: Whether to install the standard routes.
    ///   - tls: Serves `https` with this configuration (see ``TestCertificates``) instead of `http`.
    public static func start(standardRoutes: Bool = true, tls: TLSConfiguration? = nil) async throws -> TestServer {
        let context = try tls.map { try NIOSSLContext(configuration: $0) }
        let scheme = tls == nil ? "http" : "https"
        let router = Router()
        let state = ServerState()
        let group = MultiThreadedEventLoopGroup.singleton
        let addresses = AddressBox()
        func bind() async throws -> any Channel {
            try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let context {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                        }
                        let handlers: [any ChannelHandler] = [
                            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
                            ConnectionHandler(
                                router: router, addresses: addresses.addresses(for: channel.localAddress?.port)),
                        ]
                        try channel.pipeline.syncOperations.addHandlers(handlers)
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
        }
        let main = try await bind()
        let other = try await bind()
        guard let mainPort = main.localAddress?.port, let otherPort = other.localAddress?.port,
            let baseURL = URL(string: "\(scheme)://127.0.0.1:\(mainPort)"),
            let otherURL = URL(string: "\(scheme)://127.0.0.1:\(otherPort)")
        else {
            try? await main.close()
            try? await other.close()
            throw TestServerError.noPort
        }
        addresses.set(main: baseURL, other: otherURL, mainPort: mainPort)
        let server = TestServer(
            router: router, baseURL: baseURL, otherOriginURL: otherURL, state: state, channels: [main, other])
        if standardRoutes {
            StandardRoutes.install(on: router, state: state)
        }
        return server
    }

    /// The `https` configuration of a server presenting ``TestCertificates/server`` (or, if `rogue`,
    /// ``TestCertificates/rogueServer``).
    public static func tlsConfiguration(rogue: Bool = false) throws -> TLSConfiguration {
        let certificate = rogue ? TestCertificates.rogueServer : TestCertificates.server
        let key = rogue ? TestCertificates.rogueServerKey : TestCertificates.serverKey
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificate.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem))
        )
    }

    /// Stops both listeners; open connections are closed.
    public func shutdown() async throws {
        for channel in channels {
            try await channel.close()
        }
    }

    /// A URL on the main listener.
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery) ?? baseURL
    }
}

/// Why the server could not start.
public enum TestServerError: Error {
    /// A listener has no port.
    case noPort
}

/// The two listeners' URLs, known once both are bound; read by connections when they open.
private final class AddressBox: Sendable {
    private let value = NIOLockedValueBox<(main: URL, other: URL, mainPort: Int)?>(nil)

    func set(main: URL, other: URL, mainPort: Int) {
        value.withLockedValue { $0 = (main, other, mainPort) }
    }

    func addresses(for localPort: Int?) -> ServerAddresses {
        let fallback = URL(fileURLWithPath: "/")
        guard let known = value.withLockedValue({ $0 }) else {
            return ServerAddresses(current: fallback, other: fallback)
        }
        return localPort == known.mainPort
            ? ServerAddresses(current: known.main, other: known.other)
            : ServerAddresses(current: known.other, other: known.main)
    }
}
