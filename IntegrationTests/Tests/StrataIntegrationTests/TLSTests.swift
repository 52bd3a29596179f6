import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
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

    /// Runs the echo endpoint, with `headers`, through `transport` against a TLS server (the rogue
    /// one if `rogue`), by `host` (by default its address, `127.0.0.1`).
    static func echo(
        over transport: any Transport, rogue: Bool = false, host: String? = nil, headers: HTTPHeaders = [:]
    ) async throws -> Result<
        EchoReply, DataTransferError
    > {
        let server = try await TestServer.start(tls: try TestServer.tlsConfiguration(rogue: rogue))
        var base = URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false)
        base?.host = host ?? server.baseURL.host
        let result = await echo(at: base?.url ?? server.baseURL, over: transport, headers: headers)
        try await server.shutdown()
        return result
    }

    /// Runs the echo endpoint, with `headers`, through `transport` against the server at `base`.
    static func echo(
        at base: URL, over transport: any Transport, timeout: TimeInterval = 10, headers: HTTPHeaders = [:]
    ) async -> Result<EchoReply, DataTransferError> {
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: base, timeoutInterval: timeout),
                sessionManager: SessionManager(transport: transport)
            ),
            completionQueue: .global()
        )
        do {
            return .success(
                try await transfer.request(
                    Endpoint<EchoReply>(path: "echo", headerParameters: headers, queryParameters: ["q": "tls"])))
        } catch {
            return .failure(error)
        }
    }

    @Test func overAsyncHTTPClientCustomRootsLetAPrivateAuthorityThrough() async throws {
        let transport = AsyncHTTPClientTransport(configuration: try Self.trustingTestAuthority())
        let reply = try await Self.echo(over: transport).get()
        #expect(reply.queryValue("q") == "tls")
        try await transport.shutdown()
    }

    /// AsyncHTTPClient 1.37 traps (`HTTP2ClientRequestHandler`, swift-server/async-http-client#922)
    /// when an HTTP/2 stream ends in error after its response has completed: nginx resets the stream
    /// of every request it answers without reading the body, as this server does. So Strata's
    /// configuration speaks HTTP/1.1, which the server also offers; before, the second `POST` brought
    /// the process down.
    @Test func overAsyncHTTPClientAServerThatAnswersBeforeTheBodyAndResetsTheStreamTrapsNothing() async throws {
        let server = try await EarlyAnswerHTTP2Server.start()
        let transport = AsyncHTTPClientTransport(configuration: try Self.trustingTestAuthority())
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
            sessionManager: SessionManager(transport: transport))
        let body: [String: ParameterValue] = ["text": .string(String(repeating: "x", count: 100_000))]
        for method in [HTTPMethod.post, .get, .put, .post, .post] {
            let response = try await service.request(
                endpoint: Endpoint<Data>(
                    path: "answer", method: method, bodyParameters: method == .get ? [:] : body))
            #expect(response.statusCode == 200)
            #expect(response.body == Data("ok".utf8))
            #expect(response.headers["X-Protocol"] == "http/1.1")
        }
        try await transport.shutdown()
        try await server.shutdown()
    }

    /// A network service on `base` over a transport that speaks HTTP/2 where the server offers it,
    /// trusting the test authority.
    static func overHTTP2(to base: URL) throws -> (AsyncHTTPClientTransport, DefaultNetworkService) {
        var configuration = try trustingTestAuthority()
        configuration.httpVersion = .automatic
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: base, timeoutInterval: 10),
            sessionManager: SessionManager(transport: transport))
        return (transport, service)
    }

    /// Over HTTP/2 too (which a configuration may turn on), a response whose status is below 100 —
    /// which AsyncHTTPClient 1.37 takes for an interim one and traps on at its end — fails as an
    /// unreadable response; a stream with a valid status on the same connection still succeeds.
    @Test(arguments: ["000", "099", "042"])
    func overAsyncHTTPClientAnHTTP2StatusBelow100FailsAndTrapsNothing(status: String) async throws {
        let server = try await EarlyAnswerHTTP2Server.start()
        let (transport, service) = try Self.overHTTP2(to: server.baseURL)
        for path in ["status/\(status)", "answer", "status/\(status)", "answer"] {
            do {
                let response = try await service.request(endpoint: Endpoint<Data>(path: path))
                #expect(path == "answer", "\(path) answered \(response.statusCode)")
                #expect(response.headers["X-Protocol"] == "h2")
            } catch {
                guard case .transport(let error) = error else {
                    Issue.record("\(path): expected a transport failure, got \(error)")
                    continue
                }
                #expect(path != "answer")
                #expect(error.code == .badServerResponse, "\(error)")
            }
        }
        try await transport.shutdown()
        try await server.shutdown()
    }

    /// A server that serves a set number of streams on each connection (nginx's
    /// `keepalive_requests`) sends `GOAWAY` naming the last stream it processes; the streams the
    /// client opened past it were not processed (RFC 9113 §6.8), and SwiftNIO closes them with
    /// `CANCEL`. Over HTTP/2 (opted into), such a request goes out again on a new connection if it
    /// may be sent twice — no body, an idempotent method — as a request on a connection that closed
    /// before answering does over HTTP/1.1; and again, up to
    /// ``AsyncHTTPClientTransport/mostUnprocessedResends`` times, while each new connection's
    /// `GOAWAY` leaves it unprocessed. Eight GETs at once: with five streams a connection, three were
    /// sent again once, over two connections or more; with two, the last went out three times more,
    /// over four connections or more (the pool may open two at once) — before, four of them failed
    /// `.transport`.
    @Test(arguments: [5, 2])
    func overAsyncHTTPClientHTTP2GETsPastAGOAWAYAreSentAgainOnANewConnection(streams: Int) async throws {
        let server = try await GoAwayHTTP2Server.start(streamsPerConnection: streams)
        let (transport, service) = try Self.overHTTP2(to: server.baseURL)
        let results = await withTaskGroup(of: Result<NetworkResponse, NetworkError>.self) { group in
            for index in 0..<8 {
                group.addTask { await timed(Endpoint<Data>(path: "items/\(index)"), through: service).result }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for result in results {
            #expect((try? result.get().body) == Data("ok".utf8), "\(result)")
        }
        #expect(server.answered == 8)
        #expect(server.connections >= (8 + streams - 1) / streams)
        try await transport.shutdown()
        try await server.shutdown()
    }

    /// A server that processes no stream — each connection's `GOAWAY` names none — gets a GET
    /// 1 + ``AsyncHTTPClientTransport/mostUnprocessedResends`` times, each on a new connection, and
    /// the caller then `.transport` (`networkConnectionLost`): a server that refuses streams gets a
    /// request a bounded number of times.
    @Test func overAsyncHTTPClientAGETLeftUnprocessedGoesOutABoundedNumberOfTimes() async throws {
        let server = try await GoAwayHTTP2Server.start(streamsPerConnection: 0)
        let (transport, service) = try Self.overHTTP2(to: server.baseURL)
        let result = await timed(Endpoint<Data>(path: "items"), through: service).result
        guard case .failure(.transport(let error)) = result else {
            Issue.record("expected a transport failure, got \(result)")
            return
        }
        #expect(error.code == .networkConnectionLost, "\(error)")
        #expect(server.answered == 0)
        #expect(server.connections == AsyncHTTPClientTransport.mostUnprocessedResends + 1)
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test func overAsyncHTTPClientTheSystemRootsRefuseAPrivateAuthority() async throws {
        let transport = AsyncHTTPClientTransport()
        let result = try await Self.echo(over: transport)
        guard case .failure(.networkFailure(.transport(let error))) = result else {
            Issue.record("expected a TLS failure, got \(result)")
            return
        }
        #expect(error.code == .serverCertificateUntrusted, "\(error)")
        try await transport.shutdown()
    }

    /// A handshake that fails for another reason than the certificate — a server that answers in
    /// plain HTTP on the port (an `https` URL for an `http` service), or closes the connection — is
    /// `.secureConnectionFailed` over both transports, as Apple's `URLSession` says: it was
    /// `.serverCertificateUntrusted` over AsyncHTTPClient, which sent the caller looking at
    /// certificates, and `.unknown` over URLSession.
    ///
    /// The server reads the client's hello first: a socket closed with bytes unread sends a reset,
    /// which is `.networkConnectionLost` (see
    /// ``aResetDuringTheHandshakeIsAConnectionLostOverBothTransports()``).
    @Test(arguments: ["plain HTTP", "a close"])
    func aHandshakeThatFailsForAnotherReasonThanTheCertificateIsASecureConnectionFailure(answer: String) async throws {
        let code = try await Self.handshakeFailure { connection in
            if answer == "plain HTTP" {
                _ = connection.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            }
            connection.close()
        }
        #expect(code == .secureConnectionFailed)
    }

    /// A server that resets the connection during the handshake: `.networkConnectionLost` over both
    /// transports, as a reset after the request went out is (libcurl words the two alike: "Recv
    /// failure: Connection reset by peer"), and which a retrier retries.
    @Test func aResetDuringTheHandshakeIsAConnectionLostOverBothTransports() async throws {
        #expect(try await Self.handshakeFailure { $0.reset() } == .networkConnectionLost)
    }

    /// A server that takes the connection and never answers the client's hello: the request ends
    /// at its own deadline, `.timedOut`, over both transports. Over AsyncHTTPClient the client
    /// gives up the handshake at its connect timeout (1 s here; 10 s in `strataConfiguration()`)
    /// and fails the request, which was not sent: it goes out again on a new connection, until the
    /// deadline. Before, it failed at the connect timeout, where its deadline was 2.5 s.
    @Test func aHandshakeThatNeverEndsLastsUntilTheRequestsDeadline() async throws {
        let server = try RawServer { connection in connection.waitForClose(limit: .seconds(30)) }
        defer { server.shutdown() }
        let transport = TestTransport.current.makeTransport(connectTimeout: .seconds(1))
        let port = try #require(server.baseURL.port)
        let base = try #require(URL(string: "https://127.0.0.1:\(port)"))
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: base), sessionManager: SessionManager(transport: transport))
        let outcome = await timed(Endpoint<Void>(path: "items", timeoutInterval: 2.5), through: service)
        guard case .failure(.timedOut) = outcome.result else {
            Issue.record("expected the request's deadline, got \(outcome.result) after \(outcome.elapsed)")
            return
        }
        #expect(outcome.elapsed > .seconds(2.4) && outcome.elapsed < .seconds(4), "\(outcome.elapsed)")
        if let transport = transport as? AsyncHTTPClientTransport { try await transport.shutdown() }
    }

    /// The code of the `.transport` error that one request to an `https` URL of a server ends
    /// with, which reads the client's hello (so that a close sends no reset for bytes unread) and
    /// then does as `answer` says; `nil`, and an issue recorded, for any other outcome.
    static func handshakeFailure(
        answer: @escaping @Sendable (RawConnection) -> Void
    ) async throws -> URLError.Code? {
        let server = try RawServer { connection in
            if let header = connection.read(5) {
                connection.discard(Int(header[3]) << 8 | Int(header[4]))
            }
            answer(connection)
        }
        defer { server.shutdown() }
        let port = try #require(server.baseURL.port)
        let base = try #require(URL(string: "https://127.0.0.1:\(port)"))
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: base, timeoutInterval: 5),
            sessionManager: SessionManager.underTest())
        let outcome = await timed(Endpoint<Void>(path: "items"), through: network)
        guard case .failure(.transport(let error)) = outcome.result, outcome.calls == 1 else {
            Issue.record("expected one TLS failure, got \(outcome.result), \(outcome.calls) completions")
            return nil
        }
        return error.code
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

    /// The evaluator is told the host the request went to, a name, not the address it resolved
    /// to: an evaluator can pin per host name.
    @Test func overAsyncHTTPClientTheEvaluatorSeesTheRequestsHostName() async throws {
        let evaluator = RecordingEvaluator(
            pinning: CertificatePinning(certificates: [try Self.der(TestCertificates.server)]))
        let transport = AsyncHTTPClientTransport(
            configuration: try Self.trustingTestAuthority(), serverTrust: evaluator)
        let reply = try await Self.echo(over: transport, host: "localhost").get()
        #expect(reply.queryValue("q") == "tls")
        #expect(evaluator.chains.map(\.host) == ["localhost"])
        try await transport.shutdown()
    }

    /// An evaluator that trusts the server for one host name only refuses the same server, the
    /// same certificate, reached by its address.
    @Test func overAsyncHTTPClientAnEvaluatorPinsPerHostName() async throws {
        struct OnlyLocalhost: ServerTrustEvaluator {
            func evaluate(_ chain: ServerTrustChain) throws(ServerTrustError) {
                guard chain.host == "localhost" else {
                    throw .refused(host: chain.host, reason: "not pinned for this host")
                }
            }
        }
        let transport = AsyncHTTPClientTransport(
            configuration: try Self.trustingTestAuthority(), serverTrust: OnlyLocalhost())
        #expect(try await Self.echo(over: transport, host: "localhost").get().queryValue("q") == "tls")
        let byAddress = try await Self.echo(over: transport)
        guard case .failure(.networkFailure(.serverTrust(let error))) = byAddress else {
            Issue.record("expected the evaluator's refusal, got \(byAddress)")
            return
        }
        #expect(error == .refused(host: "127.0.0.1", reason: "not pinned for this host"))
        try await transport.shutdown()
    }

    /// A transport trusting the test authority, asking `evaluator`, over an event loop group of
    /// one thread (shut it down after the transport).
    static func overOneEventLoop(
        asking evaluator: any ServerTrustEvaluator
    ) throws -> (AsyncHTTPClientTransport, MultiThreadedEventLoopGroup) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let transport = AsyncHTTPClientTransport(
            configuration: try trustingTestAuthority(), serverTrust: evaluator, eventLoopGroup: group)
        return (transport, group)
    }

    /// An evaluator that takes its time — a revocation check over the network, a lock held
    /// elsewhere — holds up its own connection alone: it runs off the event loop, and the client's
    /// other requests on that loop (here its only one) go on meanwhile.
    @Test func overAsyncHTTPClientAnEvaluatorThatWaitsHoldsUpNoOtherRequest() async throws {
        let evaluator = WaitingEvaluator()
        let (transport, group) = try Self.overOneEventLoop(asking: evaluator)
        let plain = try await TestServer.start()
        async let secured = Self.echo(over: transport)
        #expect(await evaluator.entered(within: 10))
        let started = ContinuousClock.now
        let reply = try await Self.echo(at: plain.baseURL, over: transport).get()
        let plainTook = ContinuousClock.now - started
        evaluator.release()
        #expect(reply.queryValue("q") == "tls")
        #expect(plainTook < .seconds(2), "the plain request waited \(plainTook) for the evaluator")
        #expect(try await secured.get().queryValue("q") == "tls")
        try await plain.shutdown()
        try await transport.shutdown()
        try await group.shutdownGracefully()
    }

    /// A transport shut down, and its event loops with it, while the evaluator decides: the request
    /// fails, the shutdown completes, and the verdict that comes after finds no loop to go to.
    @Test func overAsyncHTTPClientATransportShutDownWhileTheEvaluatorDecides() async throws {
        let evaluator = WaitingEvaluator()
        let (transport, group) = try Self.overOneEventLoop(asking: evaluator)
        let server = try await TestServer.start(tls: try TestServer.tlsConfiguration(rogue: false))
        async let result = Self.echo(at: server.baseURL, over: transport)
        #expect(await evaluator.entered(within: 10))
        try await transport.shutdown()
        try await group.shutdownGracefully()
        evaluator.release()
        guard case .failure(.networkFailure) = await result else {
            Issue.record("expected the request to fail, got \(await result)")
            return
        }
        try await Task.sleep(for: .milliseconds(100))
        try await server.shutdown()
    }

    /// A request whose deadline fires while the evaluator is still deciding fails at its deadline,
    /// and the verdict that comes after, for a connection that is gone, changes nothing.
    @Test(arguments: [false, true])
    func overAsyncHTTPClientADeadlineFiresWhileTheEvaluatorDecides(trusting: Bool) async throws {
        let evaluator = WaitingEvaluator(refusing: !trusting)
        let transport = AsyncHTTPClientTransport(
            configuration: try Self.trustingTestAuthority(), serverTrust: evaluator)
        let server = try await TestServer.start(tls: try TestServer.tlsConfiguration(rogue: false))
        let started = ContinuousClock.now
        async let late = Self.echo(at: server.baseURL, over: transport, timeout: 0.5)
        #expect(await evaluator.entered(within: 10))
        let result = await late
        let took = ContinuousClock.now - started
        evaluator.release()
        guard case .failure(.networkFailure(.timedOut)) = result else {
            Issue.record("expected the deadline, got \(result)")
            return
        }
        #expect(took < .seconds(3))
        // The verdict has come; the transport sends on, on a new connection (whose evaluator no
        // longer waits).
        try await Task.sleep(for: .milliseconds(200))
        let next = await Self.echo(at: server.baseURL, over: transport)
        if trusting {
            #expect(try next.get().queryValue("q") == "tls")
        } else {
            guard case .failure(.networkFailure(.serverTrust)) = next else {
                Issue.record("expected the evaluator's refusal, got \(next)")
                return
            }
        }
        try await server.shutdown()
        try await transport.shutdown()
    }

    /// A certificate for other names fails host name verification, before any evaluator is asked:
    /// the server's certificate names `127.0.0.1` and `localhost`, and the request goes to
    /// `api.strata.test`, resolved to the loopback server by the client's DNS override. NIOSSL alone
    /// accepts it (the certificate's address is the one the name resolved to); Strata's check of
    /// the request's host does not, with or without an evaluator.
    @Test(arguments: [false, true])
    func overAsyncHTTPClientACertificateForAnotherNameFailsHostNameVerification(evaluating: Bool) async throws {
        var configuration = try Self.trustingTestAuthority()
        configuration.dnsOverride = ["api.strata.test": "127.0.0.1"]
        let evaluator = RecordingEvaluator(
            pinning: CertificatePinning(certificates: [try Self.der(TestCertificates.server)]))
        let transport = AsyncHTTPClientTransport(
            configuration: configuration, serverTrust: evaluating ? evaluator : nil)
        Self.expectRefusedForAnotherName(try await Self.echo(over: transport, host: "api.strata.test"))
        #expect(evaluator.chains.isEmpty)
        // The same server and certificate by a name it was issued for.
        #expect(try await Self.echo(over: transport, host: "localhost").get().queryValue("q") == "tls")
        try await transport.shutdown()
    }

    /// A `Host` field of the caller's own names the host the certificate is checked for, besides
    /// the URL's address, which NIOSSL checks: the server's certificate names `127.0.0.1` and
    /// `localhost`, so `Host: localhost` passes and `Host: api.strata.test` is refused.
    @Test func overAsyncHTTPClientAHostFieldOfTheCallersIsCheckedAgainstTheCertificate() async throws {
        let transport = AsyncHTTPClientTransport(configuration: try Self.trustingTestAuthority())
        let reply = try await Self.echo(over: transport, headers: ["Host": "localhost"]).get()
        #expect(reply.headers.first { $0.key.lowercased() == "host" }?.value == "localhost")
        Self.expectRefusedForAnotherName(try await Self.echo(over: transport, headers: ["Host": "api.strata.test"]))
        try await transport.shutdown()
    }

    /// Expects `result` to be the refusal of the test server's certificate for `api.strata.test`.
    static func expectRefusedForAnotherName(_ result: Result<EchoReply, DataTransferError>) {
        guard case .failure(.networkFailure(.serverTrust(let error))) = result else {
            Issue.record("expected a host name verification failure, got \(result)")
            return
        }
        #expect(
            error
                == .refused(
                    host: "api.strata.test",
                    reason: "its certificate was issued for localhost, 127.0.0.1, not for this host"))
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

/// Blocks in `evaluate` until released (at most 10 s), then trusts or refuses.
private final class WaitingEvaluator: ServerTrustEvaluator, Sendable {
    private let refusing: Bool
    private let arrived = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    init(refusing: Bool = false) {
        self.refusing = refusing
    }

    func evaluate(_ chain: ServerTrustChain) throws(ServerTrustError) {
        arrived.signal()
        _ = released.wait(timeout: .now() + 10)
        if refusing { throw .refused(host: chain.host, reason: "refused after a wait") }
    }

    /// Whether `evaluate` was called within `seconds` (waited for off the caller's task).
    func entered(within seconds: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue(label: "WaitingEvaluator").async { [arrived] in
                continuation.resume(returning: arrived.wait(timeout: .now() + .seconds(seconds)) == .success)
            }
        }
    }

    /// Lets every waiting and later `evaluate` return.
    func release() {
        for _ in 0..<16 { released.signal() }
    }
}
