import Foundation
import ShopDomain
import Strata
import StrataTesting
import Testing

@testable import ShopData

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Repositories over `MockDataTransferService`: the request each one builds, and how answers and
/// failures become domain values and `ShopError`s. No network, no service below.
@Suite struct RepositoryTests {
    @Test func anOrdersTrackingStreamIsReadEventByEventUntilDelivered() async throws {
        let transfer = MockDataTransferService(stubs: [
            .stream(
                .events(
                    ["packed", "shipped", "delivered"].map {
                        ServerSentEvent(event: "update", data: #"{"order_id":"ord-1","status":"\#($0)"}"#)
                    }, every: 0.01))
        ])
        let seen = UpdatesSeen()
        try await RemoteOrderRepository(transfer: transfer).trackOrder("ord-1") { seen.append($0) }
        #expect(seen.all.map(\.status) == ["packed", "shipped", "delivered"])
        #expect(transfer.requests.first?.url?.path == "/orders/ord-1/tracking")
        #expect(transfer.requests.first?.value(forHTTPHeaderField: "Accept") == nil)

        // An update the app cannot read fails the tracking with a shop error, after those it could.
        let broken = MockDataTransferService(stubs: [
            .stream(
                .events([ServerSentEvent(data: #"{"order_id":"ord-1","status":"packed"}"#), ServerSentEvent(data: "?")])
            )
        ])
        let before = UpdatesSeen()
        await #expect(throws: ShopError.self) {
            try await RemoteOrderRepository(transfer: broken).trackOrder("ord-1") { before.append($0) }
        }
        #expect(before.all.count == 1)
    }

    @Test func productsAreQueriedWithTheFiltersAndMappedToTheDomain() async throws {
        let transfer = MockDataTransferService(stubs: [
            .value(
                ProductPageDTO(
                    page: 1, total: 3,
                    items: [
                        .init(id: 1, name: "Swift in Depth", price_cents: 3_900, category: "books", tags: ["swift"])
                    ]
                ))
        ])
        let page = try await RemoteProductRepository(transfer: transfer).products(
            matching: ProductQuery(category: "books", tags: ["swift", "new"], page: 1, pageSize: 2))

        #expect(
            page
                == ProductPage(
                    products: [
                        Product(id: 1, name: "Swift in Depth", priceCents: 3_900, category: "books", tags: ["swift"])
                    ], page: 1, totalCount: 3))
        #expect(page.products.first?.price == "$39.00")
        let request = try #require(transfer.requests.first)
        #expect(request.httpMethod == "GET")
        #expect(request.url?.path == "/products")
        #expect(request.url?.query == "category=books&page=1&per_page=2&tags%5B%5D=swift&tags%5B%5D=new")
    }

    @Test func anOrderIsPostedAsJSON() async throws {
        let transfer = MockDataTransferService(stubs: [
            .value(OrderDTO(id: "ord-1", product_id: 1, quantity: 2, total_cents: 7_800))
        ])
        let order = try await RemoteOrderRepository(transfer: transfer).placeOrder(productID: 1, quantity: 2)

        #expect(order == Order(id: "ord-1", productID: 1, quantity: 2, totalCents: 7_800))
        let request = try #require(transfer.requests.first)
        #expect(request.httpMethod == "POST")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(request.httpBody == Data(#"{"product_id":1,"quantity":2}"#.utf8))
    }

    @Test func aFailureTheResolverMadeIntoAShopErrorReachesTheCallerAsIs() async throws {
        let transfer = MockDataTransferService(stubs: [
            .failure(.resolvedNetworkFailure(ShopError.outOfStock(available: 3)))
        ])
        await #expect(throws: ShopError.outOfStock(available: 3)) {
            try await RemoteOrderRepository(transfer: transfer).placeOrder(productID: 2, quantity: 10)
        }
    }

    @Test(arguments: [
        (NetworkError.notConnected, ShopError.offline), (.timedOut, .offline), (.cancelled, .cancelled),
        (.underlying(AuthenticationError.missingCredential), .signInRequired),
    ])
    func transportFailuresBecomeShopErrors(failure: NetworkError, expected: ShopError) async throws {
        let transfer = MockDataTransferService(stubs: [.failure(.networkFailure(failure))])
        await #expect(throws: expected) {
            try await RemoteProductRepository(transfer: transfer).products(matching: ProductQuery())
        }
    }

    @Test func aSubscriptionIsPostedAsAForm() async throws {
        let transfer = MockDataTransferService(stubs: [
            .value(SubscriptionDTO(email: "ada@example.com", topics: ["releases", "offers & news"]))
        ])
        let subscription = try await RemoteNewsletterRepository(transfer: transfer).subscribe(
            email: "ada@example.com", topics: ["releases", "offers & news"])

        #expect(subscription == Subscription(email: "ada@example.com", topics: ["releases", "offers & news"]))
        let request = try #require(transfer.requests.first)
        #expect(
            request.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)
        #expect(
            request.httpBody.map { String(decoding: $0, as: UTF8.self) }
                == "email=ada%40example.com&topics=releases&topics=offers%20%26%20news")
    }

    @Test func aStockQueryIsSentAndAnsweredInXML() async throws {
        let xml =
            #"<?xml version="1.0"?><inventory><productID>2</productID><available>3</available><warehouse>Rotterdam</warehouse></inventory>"#
        let transfer = MockDataTransferService(stubs: [
            .response(
                NetworkResponse(statusCode: 200, headers: ["Content-Type": "application/xml"], body: Data(xml.utf8)))
        ])
        let level = try await RemoteProductRepository(transfer: transfer).stockLevel(of: 2)

        #expect(level == StockLevel(productID: 2, available: 3, warehouse: "Rotterdam"))
        let body = try #require(transfer.requests.first?.httpBody).map { Character(UnicodeScalar($0)) }
        #expect(String(body).contains("<inventoryQuery><productID>2</productID></inventoryQuery>"))
    }

    @Test func anAttachmentIsUploadedAsMultipartWithItsCaption() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-example-\(UUID()).jpg")
        try Data("photo".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let transfer = MockDataTransferService(stubs: [
            .value(
                UploadReceiptDTO(parts: [
                    .init(name: "caption", filename: nil, size: 11, text: "Great book!"),
                    .init(name: "file", filename: file.lastPathComponent, size: 5, text: nil),
                ]))
        ])
        let attachment = try await RemoteAttachmentRepository(transfer: transfer).upload(
            fileURL: file, caption: "Great book!", progress: { _ in })

        #expect(attachment == Attachment(fileName: file.lastPathComponent, size: 5, caption: "Great book!"))
        let request = try #require(transfer.requests.first)
        #expect(request.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        let body = String(decoding: try #require(request.httpBody), as: UTF8.self)
        #expect(body.contains(#"name="caption""#) && body.contains("Great book!"))
        #expect(body.contains(#"name="file"; filename="\#(file.lastPathComponent)""#) && body.contains("photo"))
    }

    @Test func aMissingFileIsInvalidInputAndNothingIsSent() async throws {
        let transfer = MockDataTransferService()
        let missing = URL(fileURLWithPath: "/nonexistent/photo.jpg")
        await #expect(throws: ShopError.self) {
            try await RemoteAttachmentRepository(transfer: transfer).upload(
                fileURL: missing, caption: "", progress: { _ in })
        }
        #expect(transfer.requests.isEmpty)
    }

    @Test func signingInStoresTheCredentialForTheProtectedService() async throws {
        let transfer = MockDataTransferService(stubs: [.value(TokensDTO(access_token: "a1", refresh_token: "r1"))])
        let protected = MockDataTransferService(stubs: [.value(AccountDTO(name: "Ada", points: 1_200))])
        let authentication = AuthenticationInterceptor(
            authenticator: ShopAuthenticator(transfer: transfer), credential: nil,
            origins: [Origin(scheme: "https", host: "api.strata.test")])
        let repository = RemoteAccountRepository(
            transfer: transfer, protectedTransfer: protected, authentication: authentication)

        try await repository.signIn(user: "ada", password: "secret")
        #expect(authentication.credential == ShopCredential(accessToken: "a1", refreshToken: "r1"))
        #expect(transfer.requests.first?.url?.path == "/auth/token")
        #expect(try await repository.account() == Account(name: "Ada", points: 1_200))
        #expect(protected.requests.first?.url?.path == "/account")
    }

    @Test func cancellingTheReportCompletesItOnceAsCancelled() async throws {
        let transfer = MockDataTransferService(stubs: [.pending])
        let recorder = CompletionRecorder<Result<SalesReport, ShopError>>()
        let request = RemoteOrderRepository(transfer: transfer).salesReport(completion: recorder.record)
        request.cancel()
        request.cancel()
        let result = try #require(await recorder.first())
        #expect(throws: ShopError.cancelled) { try result.get() }
        #expect(recorder.callCount == 1)
    }
}

/// Collects updates from a callback.
final class UpdatesSeen: @unchecked Sendable {  // Sendable: `lock` guards `updates`.
    private let lock = NSLock()
    private var updates: [OrderUpdate] = []

    var all: [OrderUpdate] {
        lock.lock()
        defer { lock.unlock() }
        return updates
    }

    func append(_ update: OrderUpdate) {
        lock.lock()
        defer { lock.unlock() }
        updates.append(update)
    }
}
