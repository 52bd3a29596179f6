/// The 1 MiB catalog the encoding benchmarks and `XMLInstructions` share.
public enum CatalogFixture {
    public struct Product: Codable, Sendable {
        public let id: Int
        public let name: String
        public let description: String
        public let priceCents: Int
        public let tags: [String]
        public let inStock: Bool
    }

    public struct Catalog: Codable, Sendable {
        public let title: String
        public let products: [Product]
    }

    /// A catalog of about 1 MiB as JSON.
    public static let catalog = Catalog(
        title: "Catalog",
        products: (0..<5_600).map { index in
            Product(
                id: index, name: "Product \(index)", description: "A thing worth having, number \(index) of many",
                priceCents: 100 + index, tags: ["swift", "linux", "tag-\(index % 17)"], inStock: index % 3 != 0)
        }
    )
}
