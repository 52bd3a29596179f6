/// The 1 MiB catalog the encoding benchmarks and `XMLInstructions` share.
public enum CatalogFixture {
    /// One product.
    public struct Product: Codable, Sendable {
        /// The product's number.
        public let id: Int
        /// Its name.
        public let name: String
        /// A sentence about it.
        public let description: String
        /// Its price in cents.
        public let priceCents: Int
        /// Three tags.
        public let tags: [String]
        /// Whether it is in stock.
        public let inStock: Bool
    }

    /// A titled list of products.
    public struct Catalog: Codable, Sendable {
        /// The catalog's title.
        public let title: String
        /// Its products.
        public let products: [Product]
    }

    /// A catalog of about 1 MiB as JSON: 5,600 products.
    public static let catalog = Catalog(
        title: "Catalog",
        products: (0..<5_600).map { index in
            Product(
                id: index, name: "Product \(index)", description: "A thing worth having, number \(index) of many",
                priceCents: 100 + index, tags: ["swift", "linux", "tag-\(index % 17)"], inStock: index % 3 != 0)
        }
    )
}
