// The README's blocks on AsyncHTTPClient, compiled here; the root package's DocumentationTests checks
// that each stands here line for line.

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTPCompression
import NIOSSL
import Strata
import StrataAsyncHTTPClient

enum AsyncHTTPClientReadmeSnippets {
    static func ownClient(configuration: NetworkConfiguration) async throws {
        let transport = AsyncHTTPClientTransport()
        let manager = SessionManager(transport: transport, retriers: [RetryPolicy()])
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        // The transport's own client shuts down when the last reference to the transport goes, after its
        // last request; a server shutting down gracefully can wait for it instead:
        try await transport.shutdown()
        _ = service
    }

    static func yourClient(eventLoopGroup: any EventLoopGroup) {
        let client = HTTPClient(
            eventLoopGroup: eventLoopGroup,
            configuration: HTTPClient.Configuration(
                redirectConfiguration: .disallow, decompression: .enabled(limit: .ratio(500)))
        )
        let shared = AsyncHTTPClientTransport(client: client, decompresses: true)
        _ = shared
    }

    static func pinning(serverCertificateDER: Data) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile("/etc/api/ca.pem"))
        var clientConfiguration = AsyncHTTPClientTransport.strataConfiguration()
        clientConfiguration.tlsConfiguration = tls
        let pinned = AsyncHTTPClientTransport(
            configuration: clientConfiguration,
            serverTrust: CertificatePinning(certificates: [serverCertificateDER])
        )
        _ = pinned
    }
}
