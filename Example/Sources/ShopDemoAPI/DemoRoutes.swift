import Foundation
import StrataTestServer

/// The shop's routes and their data.
enum DemoRoutes {
    struct Product: Codable, Sendable {
        let id: Int
        let name: String
        let price_cents: Int
        let category: String
        let tags: [String]
        let stock: Int
    }

    static let catalogue = [
        Product(
            id: 1, name: "Swift in Depth", price_cents: 3_900, category: "books", tags: ["swift", "new"], stock: 12),
        Product(id: 2, name: "Networking Field Guide", price_cents: 2_450, category: "books", tags: ["http"], stock: 3),
        Product(
            id: 3, name: "Concurrency Pocket Book", price_cents: 1_999, category: "books", tags: ["swift"], stock: 0),
        Product(id: 4, name: "Layered Mug", price_cents: 1_200, category: "merch", tags: ["new"], stock: 40),
        Product(id: 5, name: "Strata Hoodie", price_cents: 4_800, category: "merch", tags: ["new", "swift"], stock: 7),
        Product(id: 6, name: "HTTP/1.1 Poster", price_cents: 900, category: "merch", tags: ["http"], stock: 25),
        Product(
            id: 7, name: "Server-Side Swift", price_cents: 4_200, category: "books", tags: ["swift", "server"], stock: 5
        ),
    ]

    static func install(on router: Router, state: ServerState) {
        router.add("GET", "/products") { request in
            let category = request.queryValue("category")
            let tags = request.query.filter { $0.name == "tags[]" }.map(\.value)
            let page = max(1, Int(request.queryValue("page") ?? "") ?? 1)
            let perPage = min(50, max(1, Int(request.queryValue("per_page") ?? "") ?? 20))
            let matching = catalogue.filter { product in
                (category == nil || product.category == category) && tags.allSatisfy(product.tags.contains)
            }
            let items = matching.dropFirst((page - 1) * perPage).prefix(perPage)
            return .encoded(ProductPage(page: page, total: matching.count, items: Array(items)))
        }
        router.add("POST", "/inventory/query") { request in
            guard let match = request.bodyText?.firstMatch(of: /<productID>\s*(\d+)\s*<\/productID>/),
                let product = catalogue.first(where: { $0.id == Int(match.1) })
            else {
                return xml("<error>unknown product</error>", status: 404)
            }
            return xml(
                "<inventory><productID>\(product.id)</productID><available>\(product.stock)</available>"
                    + "<warehouse>Rotterdam</warehouse></inventory>")
        }
        router.add("POST", "/orders") { request in
            guard let order = try? JSONDecoder().decode(NewOrder.self, from: Data(request.body)),
                let product = catalogue.first(where: { $0.id == order.product_id })
            else {
                return error("invalid_input", "The order needs an existing product_id and a quantity.", status: 422)
            }
            guard order.quantity > 0 else {
                return error("invalid_input", "The quantity must be at least 1.", status: 422)
            }
            guard order.quantity <= product.stock else {
                return .encoded(
                    ErrorBody(error: "out_of_stock", message: "Not enough in stock.", available: product.stock),
                    status: 409)
            }
            return .encoded(
                Order(
                    id: "ord-" + UUID().uuidString.prefix(8).lowercased(), product_id: product.id,
                    quantity: order.quantity, total_cents: order.quantity * product.price_cents),
                status: 201)
        }
        router.add("GET", "/orders/{id}/tracking") { request in
            let id = request.parameters["id"] ?? ""
            let steps = ["packed", "shipped", "out for delivery", "delivered"]
            return .pieces(
                headers: [("Content-Type", "text/event-stream")],
                steps.enumerated().map { index, step in
                    Array(
                        "id: \(index + 1)\nevent: update\ndata: {\"order_id\":\"\(id)\",\"status\":\"\(step)\"}\n\n"
                            .utf8)
                },
                interval: .milliseconds(150))
        }
        router.add("GET", "/reports/sales") { _ in
            .delayed(.seconds(5), .json(#"{"order_count": 1284}"#))
        }
        router.add("POST", "/newsletter/subscriptions") { request in
            let form = URLComponents(string: "?" + (request.bodyText ?? "").replacingOccurrences(of: "+", with: "%20"))
            let items = form?.queryItems ?? []
            let email = items.first { $0.name == "email" }?.value ?? ""
            guard email.contains("@") else {
                return error("invalid_input", "'\(email)' is not an email address.", status: 422)
            }
            let topics = items.filter { $0.name == "topics" }.compactMap(\.value)
            return .encoded(Subscription(email: email, topics: topics), status: 201)
        }
        router.addStreaming("POST", "/attachments") { MultipartConsumer(contentType: $0.header("Content-Type") ?? "") }
        router.add("GET", "/account") { request in
            let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            guard state.isValid(accessToken: token) else {
                return error("invalid_token", "The access token has expired.", status: 401)
            }
            return .json(#"{"name": "Ada", "points": 1200}"#)
        }
    }

    private struct ProductPage: Codable {
        let page: Int
        let total: Int
        let items: [Product]
    }

    private struct NewOrder: Codable {
        let product_id: Int
        let quantity: Int
    }

    private struct Order: Codable {
        let id: String
        let product_id: Int
        let quantity: Int
        let total_cents: Int
    }

    private struct Subscription: Codable {
        let email: String
        let topics: [String]
    }

    private struct ErrorBody: Codable {
        let error: String
        let message: String
        var available: Int?
    }

    private static func error(_ code: String, _ message: String, status: Int) -> TestReply {
        .encoded(ErrorBody(error: code, message: message), status: status)
    }

    private static func xml(_ text: String, status: Int = 200) -> TestReply {
        .response(
            status: status, headers: [("Content-Type", "application/xml; charset=utf-8")],
            body: Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + text).utf8))
    }
}
