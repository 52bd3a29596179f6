import Foundation
import Strata

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Strata's whole stack without a network — a typed endpoint through `DefaultDataTransferService`,
/// `DefaultNetworkService` and an in-memory session manager — against hand-written code that builds
/// the same `URLRequest` and decodes the same 1 KiB of JSON with `JSONDecoder`. Both get their bytes
/// from the same in-memory transport.
public enum StackOverhead {
    /// One product of a page.
    public struct Item: Codable, Sendable {
        /// Its identifier.
        public let id: Int
        /// Its name.
        public let name: String
        /// Its price in cents.
        public let priceCents: Int
        /// Its tags.
        public let tags: [String]
        /// Whether it is in stock.
        public let inStock: Bool
    }

    /// The response: one page of products.
    public struct Page: Codable, Sendable {
        /// The page number.
        public let page: Int
        /// The number of products on every page.
        public let total: Int
        /// This page's products.
        public let items: [Item]
    }

    /// The API both sides call.
    public static let baseURL = URL(string: "https://api.example.com/v1") ?? URL(fileURLWithPath: "/")

    /// About 1 KiB of JSON.
    public static let body: Data = {
        let items = (1...9).map { index in
            Item(
                id: index, name: "Product number \(index)", priceCents: 1_000 + index,
                tags: ["swift", "linux", "tag-\(index)"], inStock: index % 2 == 0)
        }
        return (try? JSONEncoder().encode(Page(page: 1, total: 90, items: items))) ?? Data()
    }()

    /// The transport both sides share: a `200` with the JSON body, at once.
    public static func transport(_ request: URLRequest) -> (Data, HTTPURLResponse?) {
        let response = HTTPURLResponse(
            url: request.url ?? baseURL, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": "application/json"])
        return (body, response)
    }

    /// A session manager that answers through ``transport(_:)`` before it returns.
    public struct InMemorySessionManager: NetworkSessionManager {
        /// Creates the session manager.
        public init() {}

        /// Answers `request` through ``StackOverhead/transport(_:)`` and returns a token with nothing to cancel.
        public func request(
            _ request: URLRequest, options: RequestOptions, completion: @escaping CompletionHandler
        ) -> any NetworkCancellable {
            let (data, response) = StackOverhead.transport(request)
            completion(data, response, nil)
            return CancellationToken()
        }
    }

    /// The base URL and two shared headers.
    public static let configuration = NetworkConfiguration(
        baseURL: baseURL, headers: ["Accept": "application/json", "X-Client": "bench"])

    /// The endpoint: a path, a header and two query parameters.
    public static let endpoint = Endpoint<Page>(
        path: "items", headerParameters: ["X-Trace": "1"], queryParameters: ["page": 1, "q": "swift"])

    /// What a hand-written client does for the same call.
    public static func baseline(decoder: JSONDecoder) throws -> Page {
        var components = URLComponents(url: baseURL.appendingPathComponent("items"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "page", value: "1"), URLQueryItem(name: "q", value: "swift")]
        guard let url = components?.url else { throw URLError(.badURL) }
        var request = URLRequest(url: url, timeoutInterval: 60)
        request.httpMethod = "GET"
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("bench", forHTTPHeaderField: "X-Client")
        request.setValue("1", forHTTPHeaderField: "X-Trace")
        let (data, response) = transport(request)
        guard let status = response?.statusCode, (200..<300).contains(status) else {
            throw URLError(.badServerResponse)
        }
        return try decoder.decode(Page.self, from: data)
    }
}
