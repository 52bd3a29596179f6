import Foundation

/// A handle to cancel work a repository started.
public protocol Cancellable: Sendable {
    /// Cancels the work; its completion is then called with ``ShopError/cancelled``.
    func cancel()
}

/// The catalogue.
public protocol ProductRepository: Sendable {
    /// The products matching `query`.
    func products(matching query: ProductQuery) async throws(ShopError) -> ProductPage
    /// How many of a product the warehouses hold.
    func stockLevel(of productID: Int) async throws(ShopError) -> StockLevel
}

/// Orders.
public protocol OrderRepository: Sendable {
    /// Places an order.
    func placeOrder(productID: Int, quantity: Int) async throws(ShopError) -> Order
    /// Starts building the sales report; `completion` is called once, also when cancelled.
    @discardableResult
    func salesReport(completion: @escaping @Sendable (Result<SalesReport, ShopError>) -> Void) -> any Cancellable
    /// Follows an order's delivery: `update` is called for each step as the shop announces it,
    /// and the call returns once the order is delivered.
    func trackOrder(_ orderID: String, update: @escaping @Sendable (OrderUpdate) -> Void) async throws(ShopError)
}

/// The newsletter.
public protocol NewsletterRepository: Sendable {
    /// Subscribes `email` to `topics`.
    func subscribe(email: String, topics: [String]) async throws(ShopError) -> Subscription
}

/// Review attachments.
public protocol AttachmentRepository: Sendable {
    /// Uploads the file at `fileURL` with a caption, reporting the fraction sent (0...1).
    func upload(
        fileURL: URL, caption: String, progress: @escaping @Sendable (Double) -> Void
    ) async throws(ShopError) -> Attachment
}

/// The customer's account, behind sign-in.
public protocol AccountRepository: Sendable {
    /// Signs in; later calls are made on the customer's behalf.
    func signIn(user: String, password: String) async throws(ShopError)
    /// The signed-in customer's account.
    func account() async throws(ShopError) -> Account
}
