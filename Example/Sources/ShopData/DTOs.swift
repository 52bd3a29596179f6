import Foundation
import ShopDomain

// The shapes the shop API sends and receives. They stay in the data layer; repositories turn them
// into domain entities.

/// A product as the API sends it.
public struct ProductDTO: Codable, Sendable, Hashable {
    /// The id.
    public let id: Int
    /// The name.
    public let name: String
    /// The price in cents.
    public let price_cents: Int
    /// The category.
    public let category: String
    /// The tags.
    public let tags: [String]

    var domain: Product {
        Product(id: id, name: name, priceCents: price_cents, category: category, tags: tags)
    }
}

/// A page of products as the API sends it.
public struct ProductPageDTO: Codable, Sendable, Hashable {
    /// The page number.
    public let page: Int
    /// How many match in all.
    public let total: Int
    /// The products on the page.
    public let items: [ProductDTO]
}

/// The body of a new order.
public struct NewOrderDTO: Codable, Sendable, Hashable {
    /// The product to order.
    public let product_id: Int
    /// How many.
    public let quantity: Int
}

/// An order as the API sends it.
public struct OrderDTO: Codable, Sendable, Hashable {
    /// The order id.
    public let id: String
    /// The product ordered.
    public let product_id: Int
    /// How many.
    public let quantity: Int
    /// The total in cents.
    public let total_cents: Int
}

/// A subscription as the API sends it.
public struct SubscriptionDTO: Codable, Sendable, Hashable {
    /// The address.
    public let email: String
    /// The topics.
    public let topics: [String]
}

/// The multipart parts the API received.
public struct UploadReceiptDTO: Codable, Sendable, Hashable {
    /// One part.
    public struct Part: Codable, Sendable, Hashable {
        /// The form field name.
        public let name: String?
        /// The file name, for a file part.
        public let filename: String?
        /// The part's size in bytes.
        public let size: Int
        /// The part's text, for a text part.
        public let text: String?
    }

    /// The parts, in order.
    public let parts: [Part]
}

/// The XML body of a stock query: `<inventoryQuery><productID>…</productID></inventoryQuery>`.
public struct StockQueryDTO: Codable, Sendable, Hashable {
    /// The product asked about.
    public let productID: Int
}

/// The XML answer to a stock query.
public struct StockLevelDTO: Codable, Sendable, Hashable {
    /// The product.
    public let productID: Int
    /// How many are available.
    public let available: Int
    /// The warehouse that holds them.
    public let warehouse: String
}

/// An account as the API sends it.
public struct AccountDTO: Codable, Sendable, Hashable {
    /// The customer's name.
    public let name: String
    /// Their loyalty points.
    public let points: Int
}

/// Tokens from the sign-in endpoint.
public struct TokensDTO: Codable, Sendable, Hashable {
    /// The access token.
    public let access_token: String
    /// The refresh token.
    public let refresh_token: String
}

/// A sales report as the API sends it.
public struct SalesReportDTO: Codable, Sendable, Hashable {
    /// The orders counted.
    public let order_count: Int
}

/// The body the API sends with an error: `{"error": "out_of_stock", "message": "…", "available": 3}`.
public struct ShopErrorBody: Codable, Sendable, Hashable {
    /// A machine-readable code.
    public let error: String
    /// A sentence for people.
    public let message: String?
    /// For `out_of_stock`, how many are left.
    public let available: Int?
}

/// One event of `GET orders/{id}/tracking`: its `data` field, as JSON.
public struct OrderUpdateDTO: Codable, Sendable {
    /// The order.
    public let order_id: String
    /// The step it reached.
    public let status: String

    /// Creates an update.
    public init(order_id: String, status: String) {
        self.order_id = order_id
        self.status = status
    }
}
