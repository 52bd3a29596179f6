import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Each broken answer gives a documented `NetworkError`, within a bounded time, with the
/// completion called exactly once. None hangs; none crashes the process.
@Suite struct FaultTests {
    /// The documented outcome of each fault, as observed on swift-corelibs-foundation (libcurl).
    static let expectations: [(Fault, String)] = [
        (.closeBeforeResponse, "transport"),
        (.closeMidBody, "transport"),
        (.shortContentLength, "transport"),
        (.malformedStatusLine, "transport"),
        (.unfinishedHeaders, "timedOut"),
        (.noAnswer, "timedOut"),
    ]

    @Test(arguments: FaultTests.expectations)
    func eachFaultFailsWithItsDocumentedErrorInBoundedTime(fault: Fault, expected: String) async throws {
        try await Harness.with(timeout: 1) { (harness) async throws in
            let outcome = await timed(Endpoint<Void>(path: "fault/\(fault.rawValue)"), through: harness.network)
            switch outcome.result {
            case .failure(.transport): #expect(expected == "transport", "\(outcome.result)")
            case .failure(.timedOut): #expect(expected == "timedOut")
            default: Issue.record("\(fault.rawValue): unexpected \(outcome.result)")
            }
            #expect(outcome.elapsed < .seconds(4), "\(fault.rawValue) took \(outcome.elapsed)")
            #expect(outcome.calls == 1)
        }
    }

    @Test func everyFaultHasADocumentedOutcome() {
        #expect(Set(Self.expectations.map(\.0)) == Set(Fault.allCases))
    }

    @Test func theServerStillAnswersAfterEveryFault() async throws {
        try await Harness.with(timeout: 1) { (harness) async throws in
            for fault in Fault.allCases {
                _ = await timed(Endpoint<Void>(path: "fault/\(fault.rawValue)"), through: harness.network)
            }
            #expect(try await harness.transfer.request(Endpoint<EchoReply>(path: "echo")).method == "GET")
        }
    }

    @Test func aRedirectLoopFailsInBoundedTime() async throws {
        try await Harness.with(timeout: 2) { (harness) async throws in
            let outcome = await timed(Endpoint<Void>(path: "redirect-loop"), through: harness.network)
            guard case .failure(.redirect(.loop)) = outcome.result else {
                Issue.record("expected a redirect loop, got \(outcome.result)")
                return
            }
            #expect(outcome.elapsed < .seconds(2))
            #expect(outcome.calls == 1)
        }
    }

    @Test func aRefusedConnectionIsATransportFailure() async throws {
        let server = try await TestServer.start()
        let closedURL = server.baseURL
        try await server.shutdown()
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: closedURL, timeoutInterval: 2),
            sessionManager: SessionManager.underTest())
        let outcome = await timed(Endpoint<Void>(path: "echo"), through: service)
        guard case .failure(.transport(let error)) = outcome.result else {
            Issue.record("expected a transport failure, got \(outcome.result)")
            return
        }
        #expect(error.code == .cannotConnectToHost)
        #expect(outcome.calls == 1)
    }
}
