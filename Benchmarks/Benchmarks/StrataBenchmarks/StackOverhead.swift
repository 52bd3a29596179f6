import Benchmark
import Foundation
import Strata

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Strata's whole stack without a network — a typed endpoint through `DefaultDataTransferService`,
/// `DefaultNetworkService` and an in-memory session manager — against hand-written code that builds
/// the same `URLRequest` and decodes the same 1 KiB of JSON with `JSONDecoder`. Both get their bytes
/// from the same in-memory transport.
enum StackOverhead {
    struct Item: Codable, Sendable {
        let id: Int
        let name: String
        let priceCents: Int
        let tags: [String]
        let inStock: Bool
    }

    struct Page: Codable, Sendable {
        let page: Int
        let total: Int
        let items: [Item]
    }

    static let baseURL = URL(string: "https://api.example.com/v1") ?? URL(fileURLWithPath: "/")

    /// About 1 KiB of JSON.
    static let body: Data = {
        let items = (1...9).map { index in
            Item(
                id: index, name: "Product number \(index)", priceCents: 1_000 + index,
                tags: ["swift", "linux", "tag-\(index)"], inStock: index % 2 == 0)
        }
        return (try? JSONEncoder().encode(Page(page: 1, total: 90, items: items))) ?? Data()
    }()

    /// The transport both sides share: a `200` with the JSON body, at once.
    static func transport(_ request: URLRequest) -> (Data, HTTPURLResponse?) {
        let response = HTTPURLResponse(
            url: request.url ?? baseURL, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": "application/json"])
        return (body, response)
    }

    /// A session manager that answers through ``transport(_:)`` before it returns.
    struct InMemorySessionManager: NetworkSessionManager {
        func request(
            _ request: URLRequest, options: SessionRequestOptions, completion: @escaping CompletionHandler
        ) -> any NetworkCancellable {
            let (data, response) = StackOverhead.transport(request)
            completion(data, response, nil)
            return CancellationToken()
        }
    }

    static let configuration = NetworkConfiguration(
        baseURL: baseURL, headers: ["Accept": "application/json", "X-Client": "bench"])

    static let endpoint = Endpoint<Page>(
        path: "items", headerParameters: ["X-Trace": "1"], queryParameters: ["page": 1, "q": "swift"])

    /// What a hand-written client does for the same call.
    static func baseline(decoder: JSONDecoder) throws -> Page {
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

    /// Requests per iteration: issued back to back, so a completion's hop to its queue overlaps
    /// the next request, as it does in an app; the per-request figure is the iteration's / 100.
    static let batch = 100

    static func register() {
        let configuration = Settings.configuration()
        Benchmark("Stack overhead — baseline: hand-written URLRequest + JSONDecoder", configuration: configuration) {
            benchmark in
            let decoder = JSONDecoder()
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                blackHole(try baseline(decoder: decoder))
            }
        }
        Benchmark("Stack overhead — Strata: DataTransferService, in-memory session", configuration: configuration) {
            benchmark in
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: StackOverhead.configuration, sessionManager: InMemorySessionManager()),
                completionQueue: completionQueue
            )
            let group = DispatchGroup()
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                group.enter()
                transfer.request(with: endpoint) { result in
                    blackHole(result)
                    group.leave()
                }
            }
            group.wait()
        }
        Benchmark("Layer — Endpoint.urlRequest", configuration: configuration) { benchmark in
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                blackHole(try endpoint.urlRequest(with: StackOverhead.configuration))
            }
        }
        Benchmark("Layer — NetworkService, in-memory session", configuration: configuration) { benchmark in
            let service = DefaultNetworkService(
                configuration: StackOverhead.configuration, sessionManager: InMemorySessionManager())
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                service.request(endpoint: endpoint) { blackHole($0) }
            }
        }
        Benchmark("Layer — JSON decode only", configuration: configuration) { benchmark in
            let decoder = JSONDecoder()
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                blackHole(try decoder.decode(Page.self, from: body))
            }
        }
        Benchmark("Layer — async request, one at a time", configuration: configuration) { benchmark in
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: StackOverhead.configuration, sessionManager: InMemorySessionManager())
            )
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                blackHole(try await transfer.request(endpoint))
            }
        }
    }

    /// Where the Strata side's completions run: a serial queue, as an app's main queue is.
    static let completionQueue = DispatchQueue(label: "Strata.Benchmarks.completion")
}
