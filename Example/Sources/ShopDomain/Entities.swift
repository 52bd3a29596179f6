import Foundation

/// Something the shop sells.
public struct Product: Hashable, Sendable {
    /// The product's id.
    public let id: Int
    /// Its name.
    public let name: String
    /// The price in cents.
    public let priceCents: Int
    /// The category it is listed in.
    public let category: String
    /// Free-form tags.
    public let tags: [String]

    /// Creates a product.
    public init(id: Int, name: String, priceCents: Int, category: String, tags: [String]) {
        self.id = id
        self.name = name
        self.priceCents = priceCents
        self.category = category
        self.tags = tags
    }

    /// The price as text, for example `$39.00`.
    public var price: String { String(format: "$%d.%02d", priceCents / 100, priceCents % 100) }
}

/// One page of a product listing.
public struct ProductPage: Hashable, Sendable {
    /// The products on this page.
    public let products: [Product]
    /// The page number, from 1.
    public let page: Int
    /// How many products match, over all pages.
    public let totalCount: Int

    /// Creates a page.
    public init(products: [Product], page: Int, totalCount: Int) {
        self.products = products
        self.page = page
        self.totalCount = totalCount
    }
}

/// What to search for in the catalogue.
public struct ProductQuery: Hashable, Sendable {
    /// The category, or `nil` for every category.
    public var category: String?
    /// Tags every product found must have.
    public var tags: [String]
    /// The page to fetch, from 1.
    public var page: Int
    /// Products per page.
    public var pageSize: Int

    /// Creates a query.
    public init(category: String? = nil, tags: [String] = [], page: Int = 1, pageSize: Int = 20) {
        self.category = category
        self.tags = tags
        self.page = page
        self.pageSize = pageSize
    }
}

/// A placed order.
public struct Order: Hashable, Sendable {
    /// The order's id.
    public let id: String
    /// The product ordered.
    public let productID: Int
    /// How many.
    public let quantity: Int
    /// The total in cents.
    public let totalCents: Int

    /// Creates an order.
    public init(id: String, productID: Int, quantity: Int, totalCents: Int) {
        self.id = id
        self.productID = productID
        self.quantity = quantity
        self.totalCents = totalCents
    }
}

/// A newsletter subscription.
public struct Subscription: Hashable, Sendable {
    /// The subscribed address.
    public let email: String
    /// The topics subscribed to.
    public let topics: [String]

    /// Creates a subscription.
    public init(email: String, topics: [String]) {
        self.email = email
        self.topics = topics
    }
}

/// A file attached to a product review, as the server stored it.
public struct Attachment: Hashable, Sendable {
    /// The file name.
    public let fileName: String
    /// Its size in bytes, as the server received it.
    public let size: Int
    /// The caption sent with it.
    public let caption: String

    /// Creates an attachment.
    public init(fileName: String, size: Int, caption: String) {
        self.fileName = fileName
        self.size = size
        self.caption = caption
    }
}

/// How many of a product a warehouse holds.
public struct StockLevel: Hashable, Sendable {
    /// The product.
    public let productID: Int
    /// How many are available.
    public let available: Int
    /// The warehouse that holds them.
    public let warehouse: String

    /// Creates a stock level.
    public init(productID: Int, available: Int, warehouse: String) {
        self.productID = productID
        self.available = available
        self.warehouse = warehouse
    }
}

/// The signed-in customer.
public struct Account: Hashable, Sendable {
    /// The customer's name.
    public let name: String
    /// Their loyalty points.
    public let points: Int

    /// Creates an account.
    public init(name: String, points: Int) {
        self.name = name
        self.points = points
    }
}

/// A sales report, which takes the server a while to produce.
public struct SalesReport: Hashable, Sendable {
    /// The orders counted.
    public let orderCount: Int

    /// Creates a report.
    public init(orderCount: Int) {
        self.orderCount = orderCount
    }
}

/// A step in an order's delivery, as the shop announces it.
public struct OrderUpdate: Hashable, Sendable {
    /// The order.
    public let orderID: String
    /// Where it is: `packed`, `shipped`, `out for delivery`, `delivered`.
    public let status: String

    /// Creates an update.
    public init(orderID: String, status: String) {
        self.orderID = orderID
        self.status = status
    }
}
