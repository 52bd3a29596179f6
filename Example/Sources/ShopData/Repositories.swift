import Foundation
import ShopDomain
import Strata

/// The catalogue over the shop API.
public struct RemoteProductRepository: ProductRepository {
    private let transfer: any DataTransferService

    /// Creates the repository over `transfer`.
    public init(transfer: any DataTransferService) {
        self.transfer = transfer
    }

    /// `GET products` with the query's filters.
    public func products(matching query: ProductQuery) async throws(ShopError) -> ProductPage {
        do {
            let page = try await transfer.request(ProductEndpoints.list(query))
            return ProductPage(products: page.items.map(\.domain), page: page.page, totalCount: page.total)
        } catch {
            throw ShopError(error)
        }
    }

    /// The XML inventory query.
    public func stockLevel(of productID: Int) async throws(ShopError) -> StockLevel {
        do {
            let level = try await transfer.request(ProductEndpoints.stockLevel(of: productID))
            return StockLevel(productID: level.productID, available: level.available, warehouse: level.warehouse)
        } catch {
            throw ShopError(error)
        }
    }
}

/// Orders over the shop API.
public struct RemoteOrderRepository: OrderRepository {
    private let transfer: any DataTransferService

    /// Creates the repository over `transfer`.
    public init(transfer: any DataTransferService) {
        self.transfer = transfer
    }

    /// `POST orders`; a shortage arrives as ``ShopDomain/ShopError/outOfStock(available:)``.
    public func placeOrder(productID: Int, quantity: Int) async throws(ShopError) -> Order {
        do {
            let order = try await transfer.request(OrderEndpoints.place(productID: productID, quantity: quantity))
            return Order(
                id: order.id, productID: order.product_id, quantity: order.quantity, totalCents: order.total_cents)
        } catch {
            throw ShopError(error)
        }
    }

    /// `GET reports/sales`, with a handle to cancel it.
    @discardableResult
    public func salesReport(
        completion: @escaping @Sendable (Result<SalesReport, ShopError>) -> Void
    ) -> any Cancellable {
        let request = transfer.request(with: OrderEndpoints.salesReport()) { result in
            completion(result.map { SalesReport(orderCount: $0.order_count) }.mapError(ShopError.init))
        }
        return RequestHandle(request: request)
    }

    /// Reads the order's tracking stream, one Server-Sent Event per step, each event's data a
    /// JSON ``OrderUpdateDTO``; the stream ends when the order is delivered.
    public func trackOrder(
        _ orderID: String, update: @escaping @Sendable (OrderUpdate) -> Void
    ) async throws(ShopError) {
        do {
            for try await event in transfer.events(OrderEndpoints.tracking(orderID: orderID)) {
                let data = Data(event.data.utf8)
                let dto: OrderUpdateDTO
                do {
                    dto = try JSONDecoder().decode(OrderUpdateDTO.self, from: data)
                } catch {
                    throw DataTransferError.parsing(error, body: data)
                }
                update(OrderUpdate(orderID: dto.order_id, status: dto.status))
            }
        } catch let error as DataTransferError {
            throw ShopError(error)
        } catch {
            throw ShopError(.parsing(error, body: Data()))
        }
    }
}

/// The newsletter over the shop API.
public struct RemoteNewsletterRepository: NewsletterRepository {
    private let transfer: any DataTransferService

    /// Creates the repository over `transfer`.
    public init(transfer: any DataTransferService) {
        self.transfer = transfer
    }

    /// `POST newsletter/subscriptions` as a form.
    public func subscribe(email: String, topics: [String]) async throws(ShopError) -> Subscription {
        do {
            let subscription = try await transfer.request(NewsletterEndpoints.subscribe(email: email, topics: topics))
            return Subscription(email: subscription.email, topics: subscription.topics)
        } catch {
            throw ShopError(error)
        }
    }
}

/// Review attachments over the shop API.
public struct RemoteAttachmentRepository: AttachmentRepository {
    private let transfer: any DataTransferService

    /// Creates the repository over `transfer`.
    public init(transfer: any DataTransferService) {
        self.transfer = transfer
    }

    /// `POST attachments` as multipart, the file streamed from disk.
    public func upload(
        fileURL: URL, caption: String, progress: @escaping @Sendable (Double) -> Void
    ) async throws(ShopError) -> Attachment {
        let endpoint: Endpoint<UploadReceiptDTO>
        do {
            endpoint = try AttachmentEndpoints.upload(fileURL: fileURL, caption: caption) {
                progress($0.fractionCompleted)
            }
        } catch {
            throw .invalidInput(error.localizedDescription)
        }
        let receipt: UploadReceiptDTO
        do {
            receipt = try await transfer.request(endpoint)
        } catch {
            throw ShopError(error)
        }
        guard let file = receipt.parts.first(where: { $0.name == "file" }) else {
            throw .unexpected("the server received no file")
        }
        let sentCaption = receipt.parts.first { $0.name == "caption" }?.text ?? ""
        return Attachment(fileName: file.filename ?? fileURL.lastPathComponent, size: file.size, caption: sentCaption)
    }
}

/// The account over the shop API: sign-in through the public service, account calls through the
/// service whose session manager carries `authentication`.
public struct RemoteAccountRepository: AccountRepository {
    private let transfer: any DataTransferService
    private let protectedTransfer: any DataTransferService
    private let authentication: AuthenticationInterceptor<ShopAuthenticator>

    /// Creates the repository.
    /// - Parameters:
    ///   - transfer: The service for public calls (sign-in).
    ///   - protectedTransfer: The service whose session manager runs `authentication`.
    ///   - authentication: Where the credential obtained by signing in is kept.
    public init(
        transfer: any DataTransferService,
        protectedTransfer: any DataTransferService,
        authentication: AuthenticationInterceptor<ShopAuthenticator>
    ) {
        self.transfer = transfer
        self.protectedTransfer = protectedTransfer
        self.authentication = authentication
    }

    /// `POST auth/token`; the tokens become the interceptor's credential.
    public func signIn(user: String, password: String) async throws(ShopError) {
        do {
            let tokens = try await transfer.request(AccountEndpoints.signIn(user: user, password: password))
            authentication.credential = ShopCredential(
                accessToken: tokens.access_token, refreshToken: tokens.refresh_token)
        } catch {
            throw ShopError(error)
        }
    }

    /// `GET account`, refreshing the token when it has expired.
    public func account() async throws(ShopError) -> Account {
        do {
            let account = try await protectedTransfer.request(AccountEndpoints.account())
            return Account(name: account.name, points: account.points)
        } catch {
            throw ShopError(error)
        }
    }
}
