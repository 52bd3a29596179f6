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
    @Test func theCredentialIsAttachedOnlyToItsOwnHosts() async throws {
        let api = URLProtocolStub { _ in .response() }
        let elsewhere = URLProtocolStub { _ in .response() }
        let auth = AuthenticationInterceptor(
            authenticator: StaticAuthenticator(), credential: StaticToken(value: "t"), hosts: [api.host])
        let manager = URLSessionManager(
            configuration: api.makeSessionConfiguration(), adapters: [auth], retriers: [auth])
        for stub in [api, elsewhere] {
            let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
            _ = await recorder.first()
        }
        #expect(api.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(elsewhere.requests.first?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func withoutACredentialRequestsToItsHostsFailWithMissingCredential() async throws {
        let api = URLProtocolStub { _ in .response() }
        let auth = AuthenticationInterceptor<StaticAuthenticator>(
            authenticator: StaticAuthenticator(), credential: nil, hosts: [api.host])
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
            options: SessionRequestOptions(interceptor: Tagging(log: log))
        )
        _ = await recorder.first()
        #expect(stub.requests.first?.value(forHTTPHeaderField: "X-Order") == "manager,request")
    }
}
