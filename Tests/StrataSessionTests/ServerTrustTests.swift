import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An evaluator that counts how often it is asked, and trusts everything.
private final class CountingEvaluator: ServerTrustEvaluator {
    private let calls = Locked(0)
    var count: Int { calls.value }
    func evaluate(_ chain: ServerTrustChain) throws(ServerTrustError) {
        calls.withLock { $0 += 1 }
    }
}

@Suite struct ServerTrustTests {
    #if canImport(FoundationNetworking)
        /// FoundationNetworking shows no certificate chain: with an evaluator, an `https` request is
        /// refused unsent, never trusted unchecked; plain `http` has no chain and goes through.
        @Test func onLinuxAnEvaluatorRefusesHTTPSUnsentAndLetsHTTPThrough() async throws {
            let stub = URLProtocolStub { _ in .response(body: Data("ok".utf8)) }
            let evaluator = CountingEvaluator()
            let manager = SessionManager(
                transport: URLSessionTransport(configuration: stub.makeSessionConfiguration(), serverTrust: evaluator))
            let (https, _) = send(URLRequest(url: stub.baseURL), through: manager)
            let refused = try #require(await https.first())
            #expect(refused.error as? ServerTrustError == .evaluationUnavailable)
            #expect(refused.response == nil)
            #expect(stub.requests.isEmpty)

            var plain = try #require(URLComponents(url: stub.baseURL, resolvingAgainstBaseURL: false))
            plain.scheme = "http"
            let (http, _) = send(URLRequest(url: try #require(plain.url)), through: manager)
            let sent = try #require(await http.first())
            #expect(sent.error == nil)
            #expect(sent.data == Data("ok".utf8))
            #expect(stub.requests.count == 1)
            #expect(evaluator.count == 0)
        }
    #endif

    @Test func aRefusalSaysWhyWithoutSecrets() {
        #expect(ServerTrustError.evaluationUnavailable.description.contains("Linux"))
        #expect(ServerTrustError.noPinnedKey(host: "api.example.com").description.contains("api.example.com"))
        #expect(
            ServerTrustError.refused(host: "api.example.com", reason: "expired").description
                == "The certificate chain of api.example.com was refused: expired")
    }

    @Test func certificatePinningTrustsAChainHoldingAPinnedCertificateAnywhereInIt() throws {
        let server = Data([0x30, 0x82, 0x01, 0x01])
        let next = Data([0x30, 0x82, 0x02, 0x02])
        let authority = Data([0x30, 0x82, 0x03, 0x03])
        let pinning = CertificatePinning(certificates: [next, server])
        try pinning.evaluate(ServerTrustChain(host: "api.example.com", certificates: [server, authority]))
        try CertificatePinning(certificates: [authority])
            .evaluate(ServerTrustChain(host: "api.example.com", certificates: [server, authority]))
        #expect(pinning.certificates.count == 2)
    }

    @Test func certificatePinningRefusesAChainWithoutOneAndAnEmptyChain() {
        let pinning = CertificatePinning(certificates: [Data([0x30, 0x01])])
        let refusal = ServerTrustError.refused(
            host: "api.example.com", reason: "no certificate in the chain is a pinned one")
        #expect(throws: refusal) {
            try pinning.evaluate(ServerTrustChain(host: "api.example.com", certificates: [Data([0x30, 0x02])]))
        }
        #expect(throws: refusal) {
            try pinning.evaluate(ServerTrustChain(host: "api.example.com", certificates: []))
        }
        // A prefix or an extension of a pinned certificate is another certificate.
        #expect(throws: refusal) {
            try pinning.evaluate(ServerTrustChain(host: "api.example.com", certificates: [Data([0x30, 0x01, 0x00])]))
        }
        #expect(throws: refusal) {
            try CertificatePinning(certificates: []).evaluate(
                ServerTrustChain(host: "api.example.com", certificates: [Data([0x30, 0x01])]))
        }
    }
}
