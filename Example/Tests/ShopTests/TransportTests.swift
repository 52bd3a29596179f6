import Foundation
import ShopApp
import ShopData
import ShopDomain
import Strata
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The whole stack as the app builds it, down to `MockNetworkSessionManager`: each environment's
/// base URL and headers reach the wire, and transport failures reach the app as `ShopError`s.
@Suite struct TransportTests {
    private func repository(
        _ environment: NetworkEnvironment, answering responses: [MockNetworkSessionManager.Response]
    ) throws -> (RemoteProductRepository, MockNetworkSessionManager) {
        let configuration = try ShopEnvironments.all(localBaseURL: "http://127.0.0.1:8080")
            .configuration(for: environment)
        let manager = MockNetworkSessionManager(responses: responses)
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(configuration: configuration, sessionManager: manager),
            errorResolver: ShopErrorResolver(),
            completionQueue: .global()
        )
        return (RemoteProductRepository(transfer: transfer), manager)
    }

    private let emptyPage = MockNetworkSessionManager.Response.success(
        headers: ["Content-Type": "application/json"], body: Data(#"{"page": 1, "total": 0, "items": []}"#.utf8))

    @Test(arguments: [
        (NetworkEnvironment.local, "http://127.0.0.1:8080/products", "local" as String?),
        (.staging, "https://staging.api.strata-shop.example/products", "staging"),
        (.production, "https://api.strata-shop.example/products", nil),
    ])
    func eachEnvironmentSendsToItsBaseURLWithItsHeaders(
        environment: NetworkEnvironment, url: String, environmentHeader: String?
    ) async throws {
        let (repository, manager) = try repository(environment, answering: [emptyPage])
        _ = try await repository.products(matching: ProductQuery(pageSize: 5))
        let request = try #require(manager.requests.first)
        #expect(request.url?.absoluteString == url + "?page=1&per_page=5")
        #expect(request.value(forHTTPHeaderField: "X-Client") == "strata-example")
        #expect(request.value(forHTTPHeaderField: "X-Environment") == environmentHeader)
    }

    @Test(arguments: [
        (URLError.Code.timedOut, ShopError.offline), (.notConnectedToInternet, .offline),
        (.cannotFindHost, .offline), (.cancelled, .cancelled),
    ])
    func transportFailuresReachTheAppAsShopErrors(code: URLError.Code, expected: ShopError) async throws {
        let (repository, _) = try repository(.production, answering: [.failure(URLError(code))])
        await #expect(throws: expected) { try await repository.products(matching: ProductQuery()) }
    }

    @Test func aServerErrorFromTheTransportIsUnavailable() async throws {
        let (repository, _) = try repository(.staging, answering: [.success(statusCode: 502)])
        await #expect(throws: ShopError.unavailable) { try await repository.products(matching: ProductQuery()) }
    }
}
