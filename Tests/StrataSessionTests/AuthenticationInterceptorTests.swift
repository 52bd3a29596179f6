import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct StaticToken: AuthenticationCredential {
    let value: String
    var requiresRefresh: Bool { false }
}

struct StaticAuthenticator: Authenticator {
    func apply(_ credential: StaticToken, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
    }
    func refresh(_ credential: StaticToken, completion: @escaping @Sendable (Result<StaticToken, any Error>) -> Void) {
        completion(.success(StaticToken(value: credential.value + "+")))
    }
    func isRequest(_ request: URLRequest, authenticatedWith credential: StaticToken) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
    }
}

@Suite struct AuthenticationInterceptorTests {
    @Test func theCredentialIsAttachedOnlyToItsOwnOrigins() async throws {
        let api = URLProtocolStub { _ in .response() }
        let elsewhere = URLProtocolStub { _ in .response() }
        let auth = AuthenticationInterceptor(
            authenticator: StaticAuthenticator(), credential: StaticToken(value: "t"),
            origins: [try #require(Origin(api.baseURL))])
        let manager = URLSessionManager(
            configuration: api.makeSessionConfiguration(), adapters: [auth], retriers: [auth])
        for stub in [api, elsewhere] {
            let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
            _ = await recorder.first()
        }
        #expect(api.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(elsewhere.requests.first?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func withoutACredentialRequestsToItsOriginsFailWithMissingCredential() async throws {
        let api = URLProtocolStub { _ in .response() }
        let auth = AuthenticationInterceptor<StaticAuthenticator>(
            authenticator: StaticAuthenticator(), credential: nil, origins: [try #require(Origin(api.baseURL))])
        let manager = URLSessionManager(configuration: api.makeSessionConfiguration(), adapters: [auth])
        let (recorder, _) = send(URLRequest(url: api.baseURL), through: manager)
        #expect(try #require(await recorder.first()).error as? AuthenticationError == .missingCredential)
        #expect(api.requests.isEmpty)
    }

    @Test func aPerRequestInterceptorRunsAfterTheManagersOwn() async throws {
        let stub = URLProtocolStub { _ in .response() }
        let log = Locked<[String]>([])
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(),
            adapters: [HeaderAdapter(name: "X-Order", value: "manager", log: log)]
        )
        struct Tagging: RequestInterceptor {
            let log: Locked<[String]>
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
                HeaderAdapter(name: "X-Order", value: "request", log: log).adapt(request, completion: completion)
            }
        }
        let (recorder, _) = send(
            URLRequest(url: stub.baseURL),
            through: manager,
            options: RequestOptions(interceptor: Tagging(log: log))
        )
        _ = await recorder.first()
        #expect(stub.requests.first?.value(forHTTPHeaderField: "X-Order") == "manager,request")
    }
}

/// Credentials belong to an origin, a refresh counts only for the credential it refreshed, and the
/// authenticator's code runs with no lock held.
@Suite struct AuthenticationSafetyTests {
    @Test func aCredentialGoesNeitherToAnotherSchemeNorToAnotherPort() async throws {
        let stub = URLProtocolStub { _ in .response() }
        let auth = AuthenticationInterceptor(
            authenticator: StaticAuthenticator(), credential: StaticToken(value: "t"),
            origins: [Origin(scheme: "https", host: stub.host)])
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: [auth])
        for url in [
            "https://\(stub.host)/a", "https://\(stub.host):443/b", "http://\(stub.host)/c",
            "https://\(stub.host):8443/d",
        ] {
            let (recorder, _) = send(URLRequest(url: try #require(URL(string: url))), through: manager)
            _ = await recorder.first()
        }
        let sent = Dictionary(
            uniqueKeysWithValues: stub.requests.map {
                ($0.url?.path ?? "", $0.value(forHTTPHeaderField: "Authorization"))
            })
        #expect(sent["/a"] == "Bearer t")
        #expect(sent["/b"] == "Bearer t")
        #expect(sent["/c"] == .some(nil))
        #expect(sent["/d"] == .some(nil))
    }

    /// An authenticator whose refresh finishes only when the test says so.
    final class GatedAuthenticator: Authenticator {
        let pending = Locked<[@Sendable (Result<StaticToken, any Error>) -> Void]>([])

        func apply(_ credential: StaticToken, to request: inout URLRequest) {
            request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
        }
        func refresh(
            _ credential: StaticToken, completion: @escaping @Sendable (Result<StaticToken, any Error>) -> Void
        ) {
            pending.withLock { $0.append(completion) }
        }
        func isRequest(_ request: URLRequest, authenticatedWith credential: StaticToken) -> Bool {
            request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
        }

        /// Finishes the refresh under way with `token`.
        func finishRefresh(with token: StaticToken) async throws {
            let completions = pending.withLock { pending in
                defer { pending = [] }
                return pending
            }
            #expect(completions.count == 1)
            for completion in completions { completion(.success(token)) }
        }
    }

    /// A `401` for `Bearer old`, a `200` otherwise.
    private func rejectingOld() -> URLProtocolStub {
        URLProtocolStub { request in
            request.value(forHTTPHeaderField: "Authorization") == "Bearer old"
                ? .response(statusCode: 401) : .response()
        }
    }

    /// A request rejected for `Bearer old` through an interceptor whose refresh waits for the
    /// test, once that refresh has started.
    private func requestWaitingForARefresh(
        refreshTimeout: TimeInterval = 30
    ) async throws -> (
        stub: URLProtocolStub, authenticator: GatedAuthenticator, auth: AuthenticationInterceptor<GatedAuthenticator>,
        recorder: CompletionRecorder<Outcome>
    ) {
        let stub = rejectingOld()
        let authenticator = GatedAuthenticator()
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: StaticToken(value: "old"),
            origins: [try #require(Origin(stub.baseURL))], refreshTimeout: refreshTimeout)
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), interceptors: [auth])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        for _ in 0..<200 where authenticator.pending.value.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        return (stub, authenticator, auth, recorder)
    }

    @Test func aRefreshThatFinishesAfterSignOutDoesNotPutTheOldCredentialBack() async throws {
        let (stub, authenticator, auth, recorder) = try await requestWaitingForARefresh()
        auth.credential = nil  // signed out while the refresh runs
        try await authenticator.finishRefresh(with: StaticToken(value: "refreshed-old"))
        let outcome = try #require(await recorder.first())
        #expect(auth.credential == nil)
        #expect(outcome.error as? AuthenticationError == .missingCredential)
        #expect(!stub.requests.contains { $0.value(forHTTPHeaderField: "Authorization") == "Bearer refreshed-old" })
    }

    @Test func aRefreshTimeoutThatIsNotANumberEndsTheWaitWithTheTypedErrorInsteadOfNever() async throws {
        let (_, _, _, recorder) = try await requestWaitingForARefresh(refreshTimeout: .nan)
        let outcome = try #require(await recorder.first())
        guard case .refreshTimedOut? = outcome.error as? AuthenticationError else {
            Issue.record("expected refreshTimedOut, got \(String(describing: outcome.error))")
            return
        }
    }

    /// A refresh window whose length is not a number holds no refresh against the next (as a
    /// window of 0 s would); before, it forgot none, and once `maximumAttempts` refreshes had run
    /// every later one failed with `excessiveRefresh`, until the process ended.
    @Test func aRefreshWindowThatIsNotANumberRefusesNoRefresh() async throws {
        let stub = rejectingOld()
        let auth = AuthenticationInterceptor(
            authenticator: StaticAuthenticator(), credential: StaticToken(value: "old"),
            origins: [try #require(Origin(stub.baseURL))], refreshWindow: .init(interval: .nan, maximumAttempts: 1))
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), interceptors: [auth])
        for _ in 0..<3 {
            auth.credential = StaticToken(value: "old")  // signed in again with an expired token
            let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
            let outcome = try #require(await recorder.first())
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(auth.credential?.value == "old+")
        }
    }

    @Test func aRefreshThatFinishesAfterAnAccountSwitchKeepsTheNewAccount() async throws {
        let (stub, authenticator, auth, recorder) = try await requestWaitingForARefresh()
        auth.credential = StaticToken(value: "other-account")
        try await authenticator.finishRefresh(with: StaticToken(value: "refreshed-old"))
        let outcome = try #require(await recorder.first())
        #expect(outcome.error == nil)
        #expect(auth.credential?.value == "other-account")
        #expect(stub.requests.last?.value(forHTTPHeaderField: "Authorization") == "Bearer other-account")
    }

    /// A credential whose `requiresRefresh`, and an authenticator whose `isRequest`, call back into
    /// the interceptor: with Strata's lock held while they ran, this deadlocked.
    @Test func authenticatorCodeRunsWithNoLockHeld() async throws {
        struct Reentrant: AuthenticationCredential {
            let value: String
            let peek: @Sendable () -> Void
            var requiresRefresh: Bool {
                peek()
                return false
            }
        }
        final class ReentrantAuthenticator: Authenticator {
            let interceptor = Locked<AuthenticationInterceptor<ReentrantAuthenticator>?>(nil)
            func apply(_ credential: Reentrant, to request: inout URLRequest) {
                request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
            }
            func refresh(
                _ credential: Reentrant, completion: @escaping @Sendable (Result<Reentrant, any Error>) -> Void
            ) {
                completion(.success(Reentrant(value: "new", peek: credential.peek)))
            }
            func isRequest(_ request: URLRequest, authenticatedWith credential: Reentrant) -> Bool {
                _ = interceptor.value?.credential
                return request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
            }
        }
        let stub = rejectingOld()
        let authenticator = ReentrantAuthenticator()
        let peek: @Sendable () -> Void = { _ = authenticator.interceptor.value?.credential }
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: Reentrant(value: "old", peek: peek),
            origins: [try #require(Origin(stub.baseURL))])
        authenticator.interceptor.withLock { $0 = auth }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), interceptors: [auth])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        #expect(try #require(await recorder.first(timeout: 10)).error == nil)
        #expect(stub.requests.last?.value(forHTTPHeaderField: "Authorization") == "Bearer new")
    }
}
