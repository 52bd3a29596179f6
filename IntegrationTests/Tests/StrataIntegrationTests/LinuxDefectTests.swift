import Foundation
import Strata
import StrataTestServer
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The FoundationNetworking defects of the design notes that concern plain requests, checked
/// against a real server.
@Suite struct LinuxDefectTests {
    /// Default handling of `WWW-Authenticate: Basic` hangs forever on Linux; Strata declines the
    /// challenge and reports the 401, with its body, at once.
    @Test func a401WithBasicChallengeCompletesWithThe401AndItsBody() async throws {
        try await Harness.with(timeout: 30) { (harness) async throws in
            let outcome = await timed(Endpoint<Void>(path: "basic-auth/ann/secret"), through: harness.network)
            guard case .failure(.unacceptableStatusCode(let response)) = outcome.result else {
                Issue.record("expected a 401, got \(outcome.result)")
                return
            }
            #expect(response.statusCode == 401)
            #expect(response.headers["WWW-Authenticate"] == #"Basic realm="strata""#)
            #expect(response.bodyText == #"{"authenticated": false}"#)
            #expect(outcome.elapsed < .seconds(2))
            #expect(outcome.calls == 1)
        }
    }

    @Test func basicCredentialsSentByTheCallerAreAccepted() async throws {
        try await Harness.with { (harness) async throws in
            let credentials = Data("ann:secret".utf8).base64EncodedString()
            let endpoint = Endpoint<Void>(
                path: "basic-auth/ann/secret", headerParameters: ["Authorization": "Basic \(credentials)"])
            try await harness.transfer.request(endpoint)
        }
    }

    @Test func a401WithBearerChallengeCompletesWithThe401() async throws {
        try await Harness.with(timeout: 30) { (harness) async throws in
            let outcome = await timed(Endpoint<Void>(path: "bearer"), through: harness.network)
            #expect(outcome.result.failureStatus == 401)
            #expect(outcome.elapsed < .seconds(2))
        }
    }

    @Test func many401ChallengesAtOnceAllCompleteOnce() async throws {
        try await Harness.with(timeout: 30) { (harness) async throws in
            let recorders = (0..<100).map { _ in CompletionRecorder<Result<NetworkResponse, NetworkError>>() }
            for recorder in recorders {
                harness.network.request(endpoint: Endpoint<Void>(path: "basic-auth/u/p"), completion: recorder.record)
            }
            for recorder in recorders {
                #expect(try #require(await recorder.first(timeout: 10)).failureStatus == 401)
            }
            #expect(recorders.allSatisfy { $0.callCount == 1 })
        }
    }

    /// After a POST, a 302 or 303 redirect is followed with GET and no body, as browsers do.
    @Test(arguments: [302, 303])
    func aRedirectAfterAPostIsFollowedWithGet(code: Int) async throws {
        try await Harness.with { (harness) async throws in
            let endpoint = Endpoint<EchoReply>(
                path: "redirect/\(code)", method: .post, queryParameters: ["to": "/echo"], bodyParameters: ["a": 1])
            let echo = try await harness.transfer.request(endpoint)
            #expect(echo.method == "GET")
            #expect(echo.bodySize == 0)
        }
    }
}

extension Result where Success == NetworkResponse, Failure == NetworkError {
    var failureStatus: Int? {
        if case .failure(let error) = self { return error.statusCode }
        return nil
    }
}
