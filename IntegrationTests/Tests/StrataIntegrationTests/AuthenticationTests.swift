import Foundation
import NIOConcurrencyHelpers
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Tokens: Decodable, Sendable {
    let access_token: String
    let refresh_token: String
}

struct OAuthCredential: AuthenticationCredential {
    let access: String
    let refresh: String
    var requiresRefresh: Bool { false }
}

/// Refreshes against the server's `/auth/token`, through a plain stack of its own.
struct ServerAuthenticator: Authenticator {
    let tokens: DefaultDataTransferService
    var refreshDelay: TimeInterval = 0
    var neverCallsBack = false

    init(server: TestServer, refreshDelay: TimeInterval = 0, neverCallsBack: Bool = false) {
        tokens = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL), sessionManager: SessionManager.underTest()
            ),
            completionQueue: .global()
        )
        self.refreshDelay = refreshDelay
        self.neverCallsBack = neverCallsBack
    }

    func apply(_ credential: OAuthCredential, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.access)", forHTTPHeaderField: "Authorization")
    }

    func refresh(
        _ credential: OAuthCredential, completion: @escaping @Sendable (Result<OAuthCredential, any Error>) -> Void
    ) {
        guard !neverCallsBack else { return }
        let endpoint = Endpoint<Tokens>(
            path: "auth/token",
            method: .post,
            bodyParameters: ["grant_type": "refresh_token", "refresh_token": .string(credential.refresh)],
            bodyEncoding: URLEncoding.httpBody
        )
        DispatchQueue.global().asyncAfter(deadline: .now() + refreshDelay) {
            tokens.request(with: endpoint) { result in
                completion(
                    result.map { OAuthCredential(access: $0.access_token, refresh: $0.refresh_token) }.mapError { $0 })
            }
        }
    }

    func isRequest(_ request: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.access)"
    }
}

/// Refreshes through the stack its interceptor is part of, as an app with one stack does: at once
/// from `refresh`, or from a task it starts there.
struct SameStackAuthenticator: Authenticator {
    let stack: NIOLockedValueBox<DefaultDataTransferService?>
    var path = "auth/token"
    var fromATask = false

    func apply(_ credential: OAuthCredential, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.access)", forHTTPHeaderField: "Authorization")
    }

    func refresh(
        _ credential: OAuthCredential, completion: @escaping @Sendable (Result<OAuthCredential, any Error>) -> Void
    ) {
        guard let tokens = stack.withLockedValue({ $0 }) else { return completion(.failure(URLError(.unknown))) }
        let endpoint = Endpoint<Tokens>(
            path: path, method: .post,
            bodyParameters: ["grant_type": "refresh_token", "refresh_token": .string(credential.refresh)],
            bodyEncoding: URLEncoding.httpBody)
        let credential: @Sendable (Tokens) -> OAuthCredential = {
            OAuthCredential(access: $0.access_token, refresh: $0.refresh_token)
        }
        guard fromATask else {
            tokens.request(with: endpoint) { completion($0.map(credential).mapError { $0 }) }
            return
        }
        Task {
            do { completion(.success(credential(try await tokens.request(endpoint)))) } catch {
                completion(.failure(error))
            }
        }
    }

    func isRequest(_ request: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.access)"
    }
}

/// Signs in with a password grant and expires the access token at once, so the next use gets a 401.
func expiredCredential(_ server: TestServer) async throws -> OAuthCredential {
    let tokens = try await ServerAuthenticator(server: server).tokens.request(
        Endpoint<Tokens>(
            path: "auth/token", method: .post, bodyParameters: ["grant_type": "password"],
            bodyEncoding: URLEncoding.httpBody)
    )
    server.state.expireAccessTokens()
    return OAuthCredential(access: tokens.access_token, refresh: tokens.refresh_token)
}

@Suite struct AuthenticationTests {
    private func stack(
        _ server: TestServer,
        authenticator: ServerAuthenticator,
        credential: OAuthCredential,
        refreshTimeout: TimeInterval = 10,
        window: AuthenticationInterceptor<ServerAuthenticator>.RefreshWindow = .init()
    ) -> DefaultDataTransferService {
        let auth = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: credential,
            origins: Set([Origin(server.baseURL)].compactMap { $0 }),
            refreshTimeout: refreshTimeout,
            refreshWindow: window
        )
        return DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL),
                sessionManager: SessionManager.underTest(adapters: [auth], retriers: [auth])
            ),
            completionQueue: .global()
        )
    }

    @Test func aHundredConcurrent401sCauseExactlyOneRefreshAndAllSucceed() async throws {
        try await Harness.with { (harness) async throws in
            let credential = try await expiredCredential(harness.server)
            let transfer = stack(
                harness.server, authenticator: ServerAuthenticator(server: harness.server), credential: credential)
            let recorders = (0..<100).map { _ in CompletionRecorder<Result<Void, DataTransferError>>() }
            for recorder in recorders {
                transfer.request(with: Endpoint<Void>(path: "auth/protected"), completion: recorder.record)
            }
            for recorder in recorders {
                let result = try #require(await recorder.first(timeout: 30))
                #expect((try? result.get()) != nil, "\(result)")
            }
            #expect(harness.server.state.refreshCount == 1)
            #expect(recorders.allSatisfy { $0.callCount == 1 })
        }
    }

    @Test func aRequestRejectedForACredentialAlreadyReplacedIsRetriedWithoutAnotherRefresh() async throws {
        try await Harness.with { (harness) async throws in
            let credential = try await expiredCredential(harness.server)
            let hits = CompletionRecorder<String>()
            // Holds a request sent with the old token, so its 401 arrives after the refresh is done.
            harness.server.router.add("GET", "/slow-protected") { request in
                let authorization = request.header("Authorization") ?? ""
                hits.record(authorization)
                return authorization == "Bearer \(credential.access)"
                    ? .delayed(.milliseconds(800), .json(#"{"error": "invalid_token"}"#, status: 401))
                    : .json(#"{"ok": true}"#)
            }
            let transfer = stack(
                harness.server, authenticator: ServerAuthenticator(server: harness.server), credential: credential)
            let slow = CompletionRecorder<Result<Void, DataTransferError>>()
            transfer.request(with: Endpoint<Void>(path: "slow-protected"), completion: slow.record)
            try await Task.sleep(for: .milliseconds(100))
            try await transfer.request(Endpoint<Void>(path: "auth/protected"))
            #expect(harness.server.state.refreshCount == 1)

            let result = try #require(await slow.first(timeout: 10))
            #expect((try? result.get()) != nil, "\(result)")
            #expect(harness.server.state.refreshCount == 1)
            #expect(hits.values.count == 2)
            #expect(hits.values.first == "Bearer \(credential.access)")
            #expect(hits.values.last != hits.values.first)
        }
    }

    @Test func aFailingRefreshFailsEveryWaitingRequestWithItsError() async throws {
        try await Harness.with { (harness) async throws in
            let expired = try await expiredCredential(harness.server)
            let bogus = OAuthCredential(access: expired.access, refresh: "not-a-refresh-token")
            let transfer = stack(
                harness.server, authenticator: ServerAuthenticator(server: harness.server), credential: bogus)
            let recorders = (0..<100).map { _ in CompletionRecorder<Result<Void, DataTransferError>>() }
            for recorder in recorders {
                transfer.request(with: Endpoint<Void>(path: "auth/protected"), completion: recorder.record)
            }
            for recorder in recorders {
                let result = try #require(await recorder.first(timeout: 30))
                guard case .failure(.networkFailure(.underlying(let refreshError as DataTransferError))) = result,
                    case .networkFailure(.unacceptableStatusCode(let response)) = refreshError
                else {
                    Issue.record("expected the refresh's 400, got \(result)")
                    continue
                }
                #expect(response.statusCode == 400)
            }
            #expect(harness.server.state.refreshCount == 0)
        }
    }

    @Test func aServerThatAlwaysAnswers401StopsAfterTheRefreshCap() async throws {
        try await Harness.with { (harness) async throws in
            let credential = try await expiredCredential(harness.server)
            let transfer = stack(
                harness.server,
                authenticator: ServerAuthenticator(server: harness.server),
                credential: credential,
                window: .init(interval: 60, maximumAttempts: 3)
            )
            let started = ContinuousClock.now
            let error = await failure { () async throws(DataTransferError) in
                try await transfer.request(Endpoint<Void>(path: "status/401"))
            }
            guard case .networkFailure(.underlying(let underlying)) = error else {
                Issue.record("expected excessiveRefresh, got \(String(describing: error))")
                return
            }
            #expect(underlying as? AuthenticationError == .excessiveRefresh(count: 3, within: 60))
            #expect(harness.server.state.refreshCount == 3)
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }

    /// An authenticator that asks for its token through the stack its interceptor is part of (one
    /// stack for the app, its token endpoint on the API's origin) gets it at once, from `refresh`
    /// or from a task it starts there: the token request goes past the refresh it is part of. One
    /// the token endpoint rejects with a `401` is not retried, so the refresh fails at once. Before,
    /// each waited for the refresh it belonged to, and every request failed at the refresh's
    /// timeout.
    @Test(arguments: [false, true])
    func anAuthenticatorThatRefreshesThroughItsOwnStackIsNotHeldUpByItsRefresh(fromATask: Bool) async throws {
        try await Harness.with { (harness) async throws in
            harness.server.router.add("POST", "/auth/token-refused") { _ in
                .json(#"{"error": "invalid_client"}"#, status: 401)
            }
            for (path, succeeds) in [("auth/token", true), ("auth/token-refused", false)] {
                let stack = NIOLockedValueBox<DefaultDataTransferService?>(nil)
                let auth = AuthenticationInterceptor(
                    authenticator: SameStackAuthenticator(stack: stack, path: path, fromATask: fromATask),
                    credential: try await expiredCredential(harness.server),
                    origins: Set([Origin(harness.server.baseURL)].compactMap { $0 }),
                    refreshTimeout: 10)
                stack.withLockedValue {
                    $0 = DefaultDataTransferService(
                        networkService: DefaultNetworkService(
                            configuration: NetworkConfiguration(baseURL: harness.server.baseURL),
                            sessionManager: SessionManager.underTest(adapters: [auth], retriers: [auth])),
                        completionQueue: .global())
                }
                let transfer = try #require(stack.withLockedValue { $0 })
                let started = ContinuousClock.now
                let recorders = (0..<5).map { _ in CompletionRecorder<Result<Void, DataTransferError>>() }
                for recorder in recorders {
                    transfer.request(with: Endpoint<Void>(path: "auth/protected"), completion: recorder.record)
                }
                for recorder in recorders {
                    let result = try #require(await recorder.first(timeout: 15))
                    #expect(((try? result.get()) != nil) == succeeds, "\(path): \(result)")
                    if !succeeds, case .failure(.networkFailure(.unacceptableStatusCode(let response))) = result {
                        Issue.record("\(path): failed with the protected page's own status \(response.statusCode)")
                    }
                }
                #expect(ContinuousClock.now - started < .seconds(3), "\(path)")
            }
        }
    }

    @Test func aRefreshThatNeverCallsBackTimesOut() async throws {
        try await Harness.with { (harness) async throws in
            let credential = try await expiredCredential(harness.server)
            let transfer = stack(
                harness.server,
                authenticator: ServerAuthenticator(server: harness.server, neverCallsBack: true),
                credential: credential,
                refreshTimeout: 0.5
            )
            let started = ContinuousClock.now
            let error = await failure { () async throws(DataTransferError) in
                try await transfer.request(Endpoint<Void>(path: "auth/protected"))
            }
            guard case .networkFailure(.underlying(let underlying)) = error else {
                Issue.record("expected refreshTimedOut, got \(String(describing: error))")
                return
            }
            #expect(underlying as? AuthenticationError == .refreshTimedOut(after: 0.5))
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }

    @Test func cancellingWhileWaitingForARefreshCompletesOnceAndIsNeverSentAgain() async throws {
        try await Harness.with { (harness) async throws in
            let hits = CompletionRecorder<String>()
            harness.server.router.add("GET", "/counted") { request in
                hits.record(request.header("Authorization") ?? "")
                return .json(#"{"error": "expired"}"#, status: 401)
            }
            let credential = try await expiredCredential(harness.server)
            let transfer = stack(
                harness.server,
                authenticator: ServerAuthenticator(server: harness.server, refreshDelay: 1),
                credential: credential
            )
            let recorder = CompletionRecorder<Result<Void, DataTransferError>>()
            let cancellable = transfer.request(with: Endpoint<Void>(path: "counted"), completion: recorder.record)
            _ = await hits.first(timeout: 5)
            try await Task.sleep(for: .milliseconds(200))
            let cancelled = ContinuousClock.now
            cancellable.cancel()
            let result = try #require(await recorder.first(timeout: 5))
            #expect(ContinuousClock.now - cancelled < .milliseconds(300))
            guard case .failure(let error) = result, error.isCancelled else {
                Issue.record("expected cancellation, got \(result)")
                return
            }
            try await Task.sleep(for: .milliseconds(2_000))
            #expect(hits.callCount == 1)
            #expect(recorder.callCount == 1)
        }
    }
}

/// An event source re-runs the pipeline on every connection: a token that expired between two
/// connections is refreshed by the authentication interceptor before the next one is read.
@Suite struct EventSourceAuthenticationTests {
    @Test func eachReconnectionIsAuthenticatedAfreshAndResumesFromTheLastEventID() async throws {
        try await Harness.with { (harness) async throws in
            let server = harness.server
            let credential = try await expiredCredential(server)
            let auth = AuthenticationInterceptor(
                authenticator: ServerAuthenticator(server: server), credential: credential,
                origins: Set([Origin(server.baseURL)].compactMap { $0 }))
            let network = DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL),
                sessionManager: SessionManager.underTest(adapters: [auth], retriers: [auth]))
            let key = UUID().uuidString
            let events = CompletionRecorder<String>()
            let end = CompletionRecorder<Result<Void, NetworkError>>()
            network.eventSource(
                endpoint: Endpoint<Void>(path: "sse-session", queryParameters: ["key": .string(key), "auth": "1"])
            ) { event in
                events.record(event.data)
                // The token expires between the first connection and the next.
                if event.data == "two" { server.state.expireAccessTokens() }
            } completion: {
                end.record($0)
            }
            let result = try #require(await end.first(timeout: 20))
            #expect((try? result.get()) != nil, "\(result)")
            #expect(events.values == ["one", "two", "three"])
            #expect(server.state.refreshCount == 2)
            // Three connections reached the route with a valid token: events, events, 204.
            #expect(server.state.attemptCount(for: key) == 3)
        }
    }
}
