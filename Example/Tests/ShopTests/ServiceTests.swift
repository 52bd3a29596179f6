import Foundation
import ShopData
import ShopDomain
import Strata
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The data-transfer layer as the app configures it, over `MockNetworkService`: decoding, and the
/// `ShopErrorResolver` turning the API's error responses into domain errors.
@Suite struct ServiceTests {
    private func transfer(answering response: NetworkResponse) -> (any DataTransferService, MockNetworkService) {
        let status = response.statusCode
        let network = MockNetworkService(
            results: [(200..<300).contains(status) ? .success(response) : .failure(.unacceptableStatusCode(response))])
        let transfer = DefaultDataTransferService(
            networkService: network, errorResolver: ShopErrorResolver(), completionQueue: .global())
        return (transfer, network)
    }

    private func json(_ status: Int, _ body: String) -> NetworkResponse {
        NetworkResponse(statusCode: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
    }

    @Test func aProductPageIsDecoded() async throws {
        let (transfer, network) = transfer(
            answering: json(
                200,
                #"{"page": 2, "total": 9, "items": [{"id": 4, "name": "Layered Mug", "price_cents": 1200, "category": "merch", "tags": []}]}"#
            ))
        let page = try await RemoteProductRepository(transfer: transfer).products(matching: ProductQuery(page: 2))
        #expect(page.page == 2 && page.totalCount == 9 && page.products.map(\.name) == ["Layered Mug"])
        #expect(network.requests.first?.url?.query == "page=2&per_page=20")
    }

    @Test(arguments: [
        (
            409, #"{"error": "out_of_stock", "message": "Not enough.", "available": 3}"#,
            ShopError.outOfStock(available: 3)
        ),
        (
            422, #"{"error": "invalid_input", "message": "The quantity must be at least 1."}"#,
            .invalidInput("The quantity must be at least 1.")
        ),
        (401, #"{"error": "invalid_token"}"#, .signInRequired),
        (503, "", .unavailable),
        (500, "<html>oops</html>", .unavailable),
    ])
    func errorResponsesAreResolvedToShopErrors(status: Int, body: String, expected: ShopError) async throws {
        let (transfer, _) = transfer(answering: json(status, body))
        await #expect(throws: expected) {
            try await RemoteOrderRepository(transfer: transfer).placeOrder(productID: 2, quantity: 10)
        }
    }

    @Test func aStatusTheResolverDoesNotKnowStaysUnexpectedWithItsCode() async throws {
        let (transfer, _) = transfer(answering: json(418, "{}"))
        do {
            _ = try await RemoteOrderRepository(transfer: transfer).placeOrder(productID: 1, quantity: 1)
            Issue.record("expected a failure")
        } catch {
            guard case .unexpected(let detail) = error else {
                Issue.record("expected unexpected, got \(error)")
                return
            }
            #expect(detail.contains("418"))
        }
    }

    @Test func aBodyThatIsNotTheExpectedShapeIsUnexpected() async throws {
        let (transfer, _) = transfer(answering: json(200, #"{"id": "not a number"}"#))
        await #expect(throws: ShopError.self) {
            try await RemoteOrderRepository(transfer: transfer).placeOrder(productID: 1, quantity: 1)
        }
    }
}
