import AsyncHTTPClient
import Foundation
import NIOSSL
import Strata
import StrataAsyncHTTPClient
import StrataTestServer
import StrataTestTransports
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `https` on loopback, against a server presenting a certificate of the test authority
/// (``TestCertificates``): custom trust roots and certificate pinning through the seam's trust hook.
///
/// Differs by transport: over AsyncHTTPClient (NIOSSL) both work on Linux; over `URLSession` on
/// Linux, FoundationNetworking takes no custom roots and shows no chain, so an evaluator refuses
/// every `https` request unsent (``ServerTrustError/evaluationUnavailable``).
@Suite(.serialized) struct TLSTests {
    /// A client configuration trusting only the test authority.
    static func trustingTestAuthority() throws -> HTTPClient.Configuration {
        var configuration = AsyncHTTPClientTransport.strataConfiguration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: Array(TestCertificates.authority.utf8), format: .pem)
        ])
        configuration.tlsConfiguration = tls
        return configuration
    }

    /// The DER bytes of a PEM certificate.
    static func der(_ pem: String) throws -> Data {
        Data(try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem).toDERBytes())
    }

    /// Runs `endpoint` through `transport` against a TLS server (the rogue one if `rogue`).
    static func echo(
        over transport: any Transport, rogue: Bool = false
    ) async throws -> Result<
        EchoReply, DataTransferError
    > {
        let server = try await TestServer.start(tls: try TestServer.tlsConfiguration(rogue: rogue))
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
                sessionManager: SessionManager(transport: transport)
            ),
            completionQueue: .global()
        )
        let result: Result<EchoReply, DataTransferError>
        do {
            result = .success(
                try await transfer.request(Endpoint<EchoReply>(path: "echo", queryParameters: ["q": "tls"])))
        } catch {
            result = .failure(error)
        }
        try await server.shutdown()
        return result
    }

    @Test func overAsyncHTTPClientCustomRootsLetAPrivateAuthorityThrough() async throws {
        let transport = AsyncHTTPClientTransport(configuration: try Self.trustingTestAuthority())
        let reply = try await Self.echo(over: transport).get()
        #expect(reply.queryValue("q") == "tls")
        try await transport.shutdown()
    }

    @Test func overAsyncHTTPClientTheSystemRootsRefuseAPrivateAuthority() async throws {
        let transport = AsyncHTTPClientTransport()
        let result = try await Self.echo(over: transport)
        guard case .failure(.networkFailure(.transport(let error))) = result else {
            Issue.record("expected a TLS failure, got \(result)")
            return
        }
        #expect([.serverCertificateUntrusted, .secureConnectionFailed].contains(error.code), "\(error.code)")
        try await transport.shutdown()
    }

    @Test func overAsyncHTTPClientAPinnedCertificateIsTrustedAndTheEvaluatorSeesIt() async throws {
        let evaluator = RecordingEvaluator(
            pinning: CertificatePinning(certificates: [try Self.der(TestCertificates.server)]))
        let transport = AsyncHTTPClientTransport(
            configuration: try Self.trustingTestAuthority(), serverTrust: evaluator)
        let reply = try await Self.echo(over: transport).get()
        #expect(reply.queryValue("q") == "tls")
        let chains = evaluator.chains
        #expect(chains.count == 1)  // once for the one connection
        #expect(chains.first?.certificates == [try Self.der(TestCertificates.server)])
        #expect(chains.first?.host == "127.0.0.1")
        try await transport.shutdown()
    }

    @Test func overAsyncHTTPClientACertificateNotPinnedIsRefusedUnsentWithTheEvaluatorsError() async throws {
        // The rogue server's certificate passes NIOSSL's verification (its authority is trusted
        // too) and is refused by the pin alone.
        var configuration = try Self.trustingTestAuthority()
        configuration.tlsConfiguration?.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: Array(TestCertificates.authority.utf8), format: .pem),
            try NIOSSLCertificate(bytes: Array(TestCertificates.rogueAuthority.utf8), format: .pem),
        ])
        let pinning = CertificatePinning(certificates: [try Self.der(TestCertificates.server)])
        let transport = AsyncHTTPClientTransport(configuration: configuration, serverTrust: pinning)
        let started = ContinuousClock.now
        let result = try await Self.echo(over: transport, rogue: true)
        guard case .failure(.networkFailure(.serverTrust(let error))) = result else {
            Issue.record("expected the pin's refusal, got \(result)")
            return
        }
        #expect(error == .refused(host: "127.0.0.1", reason: "no certificate in the chain is a pinned one"))
        #expect(ContinuousClock.now - started < .seconds(5))
        try await transport.shutdown()
    }

    #if canImport(FoundationNetworking)
        @Test func overURLSessionOnLinuxAnEvaluatorRefusesHTTPSUnsent() async throws {
            let transport = URLSessionTransport(serverTrust: CertificatePinning(certificates: []))
            let result = try await Self.echo(over: transport)
            guard case .failure(.networkFailure(.serverTrust(.evaluationUnavailable))) = result else {
                Issue.record("expected evaluationUnavailable, got \(result)")
                return
            }
        }
    #endif
}

/// Pins as told and keeps every chain it was shown.
private final class RecordingEvaluator: ServerTrustEvaluator, @unchecked Sendable {  // `shown` is under `lock`.
    private let pinning: CertificatePinning
    private let lock = NSLock()
    private var shown: [ServerTrustChain] = []
    var chains: [ServerTrustChain] { lock.withLock { shown } }

    init(pinning: CertificatePinning) {
        self.pinning = pinning
    }

    func evaluate(_ chain: ServerTrustChain) throws(ServerTrustError) {
        lock.withLock { shown.append(chain) }
        try pinning.evaluate(chain)
    }
}
