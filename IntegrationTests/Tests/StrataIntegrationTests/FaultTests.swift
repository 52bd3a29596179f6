import Foundation
import Strata
import StrataAsyncHTTPClient
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
    /// The documented outcome of each fault: the `NetworkError` case, the same over both
    /// transports (for a transport failure, its code: see ``codes``).
    static let expectations: [(Fault, String)] = [
        (.closeBeforeResponse, "transport"),
        (.closeMidBody, "transport"),
        (.shortContentLength, "transport"),
        (.malformedStatusLine, "transport"),
        (.unfinishedHeaders, "timedOut"),
        (.noAnswer, "timedOut"),
        (.interimThenClose, "transport"),
        (.interimThenGarbage, "transport"),
        (.contentLengthNotANumber, "transport"),
        (.fieldWithoutColon, "transport"),
        (.fieldWithoutName, "transport"),
        (.nulInFieldValue, "transport"),
        (.http2StatusLine, "transport"),
    ]

    /// The `URLError` code of each transport failure, the one Apple's `URLSession` gives, over both
    /// transports (a close before any byte of the answer was `.badServerResponse` over
    /// `URLSession`, as FoundationNetworking reads libcurl's "Empty reply from server").
    static let codes: [Fault: URLError.Code] = [
        .closeBeforeResponse: .networkConnectionLost, .closeMidBody: .networkConnectionLost,
        .shortContentLength: .networkConnectionLost, .malformedStatusLine: .badServerResponse,
        .interimThenClose: .networkConnectionLost, .interimThenGarbage: .badServerResponse,
        .contentLengthNotANumber: .badServerResponse, .fieldWithoutColon: .badServerResponse,
        .fieldWithoutName: .badServerResponse, .nulInFieldValue: .badServerResponse,
        .http2StatusLine: .badServerResponse,
    ]

    @Test(arguments: FaultTests.expectations)
    func eachFaultFailsWithItsDocumentedErrorInBoundedTime(fault: Fault, expected: String) async throws {
        try await Harness.with(timeout: 1) { (harness) async throws in
            let outcome = await timed(Endpoint<Void>(path: "fault/\(fault.rawValue)"), through: harness.network)
            switch outcome.result {
            case .failure(.transport(let error)):
                #expect(expected == "transport", "\(outcome.result)")
                #expect(
                    error.code == Self.codes[fault],
                    "\(fault.rawValue) over \(TestTransport.current): \(error.code.rawValue)")
            case .failure(.timedOut): #expect(expected == "timedOut")
            default: Issue.record("\(fault.rawValue): unexpected \(outcome.result)")
            }
            #expect(outcome.elapsed < .seconds(4), "\(fault.rawValue) took \(outcome.elapsed)")
            #expect(outcome.calls == 1)
        }
    }

    /// Each failure says what happened, in words a user can act on, over either transport: a
    /// refused connection, which deadline fired, a certificate nobody here trusts and why; the
    /// URL redacted.
    @Test func eachFailureSaysWhatHappenedInWords() async throws {
        try await Harness.with(timeout: 0.5) { (_) async throws in
            let closed = try await TestServer.start()
            let port = try #require(closed.baseURL.port)
            try await closed.shutdown()
            let refused = try #require(URL(string: "http://127.0.0.1:\(port)/items?api_key=s3cret"))
            let secure = try await TestServer.start(tls: try TestServer.tlsConfiguration())
            let silent = try await TestServer.start()
            defer {
                Task {
                    try? await secure.shutdown()
                    try? await silent.shutdown()
                }
            }
            // A transport that trusts only the system's roots, which never signed the test server's.
            let untrusting: any Transport =
                TestTransport.current == .urlSession ? URLSessionTransport() : AsyncHTTPClientTransport()
            let cases: [(String, URL, any Transport, [String])] = [
                (
                    "refused", refused, TestTransport.current.makeTransport(),
                    ["No connection could be made to the server", "api_key=<redacted>", "[URLError -1004]"]
                ),
                (
                    "deadline", silent.url("/fault/no-answer"), TestTransport.current.makeTransport(),
                    ["The request timed out: no complete answer came within the request's timeout of 0.5 s"]
                ),
                (
                    "untrusted", secure.url("/echo"), untrusting,
                    ["certificate is not trusted"]
                        + [
                            TestTransport.current == .urlSession
                                ? "unable to get local issuer certificate" : "does not verify against the trusted roots"
                        ]
                ),
            ]
            for (name, url, transport, words) in cases {
                var request = URLRequest(url: url)
                request.timeoutInterval = 0.5
                let service = DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: url, timeoutInterval: 0.5),
                    sessionManager: SessionManager(transport: transport))
                let outcome = await timed(Endpoint<Void>(path: ""), through: service)
                guard case .failure(let error) = outcome.result else {
                    Issue.record("\(name): \(outcome.result)")
                    continue
                }
                for word in words {
                    #expect(error.description.contains(word), "\(name): \(error.description)")
                }
                #expect(!error.description.contains("s3cret"))
                #expect(!error.description.contains("could not be completed"), "\(name): \(error.description)")
                print("\(TestTransport.current) \(name): \(error.description)")
            }
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
        let outcome = await timed(
            Endpoint<Void>(path: "echo", queryParameters: ["page": 2, "api_key": "s3cret"]), through: service)
        guard case .failure(.transport(let error)) = outcome.result else {
            Issue.record("expected a transport failure, got \(outcome.result)")
            return
        }
        #expect(error.code == .cannotConnectToHost)
        #expect(outcome.calls == 1)
        // Over either transport the error names the URL it failed for, as redacted text under
        // `NSURLErrorFailingURLStringErrorKey` (deprecated in Foundation, so spelt out).
        let failing = error.userInfo["NSErrorFailingURLStringKey"] as? String
        #expect(failing?.contains("/echo?") == true, "\(error)")
        #expect(failing?.contains("page=2") == true, "\(error)")
        #expect(!String(reflecting: outcome.result).contains("s3cret"))
    }
}
