import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A log at the most verbose level, over sign-in, token refresh, protected calls, Basic auth and
/// redirects, holds no credential.
@Suite struct VerboseLogTests {
    @Test func theMostVerboseLogHoldsNoCredential() async throws {
        try await Harness.with { (harness) async throws in
            let server = harness.server
            let log = CompletionRecorder<String>()
            let logger = ConsoleNetworkLogger(level: .verbose, output: log.record)
            // The logger is a monitor of each manager: it logs requests as they go on the wire.
            func service(_ manager: SessionManager? = nil) -> DefaultDataTransferService {
                DefaultDataTransferService(
                    networkService: DefaultNetworkService(
                        configuration: NetworkConfiguration(baseURL: server.baseURL),
                        sessionManager: manager ?? SessionManager.underTest(monitors: [logger])
                    ),
                    completionQueue: .global()
                )
            }
            // Sign in (a password in the form body), then expire the token.
            let tokens = try await service().request(
                Endpoint<Tokens>(
                    path: "auth/token",
                    method: .post,
                    bodyParameters: ["grant_type": "password", "username": "ann", "password": "hunter2-password"],
                    bodyEncoding: URLEncoding.httpBody
                )
            )
            server.state.expireAccessTokens()
            // Protected calls through a refresh that is itself logged.
            struct LoggedAuthenticator: Authenticator {
                let tokens: DefaultDataTransferService
                func apply(_ credential: OAuthCredential, to request: inout URLRequest) {
                    request.setValue("Bearer \(credential.access)", forHTTPHeaderField: "Authorization")
                }
                func refresh(
                    _ credential: OAuthCredential,
                    completion: @escaping @Sendable (Result<OAuthCredential, any Error>) -> Void
                ) {
                    let endpoint = Endpoint<Tokens>(
                        path: "auth/token",
                        method: .post,
                        bodyParameters: ["grant_type": "refresh_token", "refresh_token": .string(credential.refresh)],
                        bodyEncoding: JSONEncoding.default
                    )
                    tokens.request(with: endpoint) { result in
                        completion(
                            result.map { OAuthCredential(access: $0.access_token, refresh: $0.refresh_token) }.mapError
                            { $0 })
                    }
                }
                func isRequest(_ request: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
                    request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.access)"
                }
            }
            let auth = AuthenticationInterceptor(
                authenticator: LoggedAuthenticator(tokens: service()),
                credential: OAuthCredential(access: tokens.access_token, refresh: tokens.refresh_token),
                origins: [try #require(Origin(server.baseURL))]
            )
            let protected = service(SessionManager.underTest(adapters: [auth], retriers: [auth], monitors: [logger]))
            for _ in 0..<3 {
                try await protected.request(Endpoint<Void>(path: "auth/protected"))
            }
            // Basic credentials, cookies and an API key, across a same-origin and a cross-origin redirect.
            let basic = "Basic " + Data("ann:basic-secret".utf8).base64EncodedString()
            try await service().request(
                Endpoint<Void>(path: "basic-auth/ann/basic-secret", headerParameters: ["Authorization": basic]))
            let credentials: HTTPHeaders = ["Authorization": "Bearer header-secret", "Cookie": "session=cookie-secret"]
            _ = try await service().request(
                Endpoint<EchoReply>(
                    path: "redirect/302", headerParameters: credentials,
                    queryParameters: ["to": "/echo", "token": "query-secret"])
            )
            _ = try await service().request(
                Endpoint<EchoReply>(
                    path: "redirect-other-origin/307", headerParameters: credentials, queryParameters: ["path": "/echo"]
                )
            )

            // Lines are written from the managers' event queues: wait until they stop coming.
            var written = -1
            while written != log.callCount {
                written = log.callCount
                try await Task.sleep(for: .milliseconds(200))
            }
            let text = log.values.joined(separator: "\n")
            // The protected calls were logged with the credential the interceptor added, redacted.
            #expect(text.contains("Authorization: <redacted>"))
            let secrets =
                server.state.issuedTokens + [
                    // The Basic route names its expected password in its own path; the credential sent is the header.
                    "hunter2-password", Data("ann:basic-secret".utf8).base64EncodedString(),
                    "header-secret",
                    "cookie-secret", "query-secret",
                ]
            #expect(server.state.refreshCount == 1)
            #expect(log.callCount >= 16)
            #expect(text.contains("curl -X POST"))
            for secret in secrets {
                #expect(!text.contains(secret), "the log holds \(secret)")
            }
        }
    }
}
