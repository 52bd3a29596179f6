import Foundation
import StackFixture
import StrataTestServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The server the loopback pairs send their GETs to: the in-process test server, whose event loops
/// the clients share; or, when `STRATA_BENCH_SERVER` names a base URL (as `scripts/bench-nginx.sh`
/// does), a server of another process that answers `GET /items` with ``StackOverhead/body``.
final class LoopbackServer: Sendable {
    /// The base URL the services are configured with.
    let baseURL: URL
    private let server: TestServer?

    private init(baseURL: URL, server: TestServer?) {
        self.baseURL = baseURL
        self.server = server
    }

    /// The URL of the JSON the pairs decode.
    var itemsURL: URL { baseURL.appendingPathComponent("items") }

    /// The server the environment names, checked to answer with the pairs' body, or a test server
    /// started in this process.
    static func start() async throws -> LoopbackServer {
        if let text = ProcessInfo.processInfo.environment["STRATA_BENCH_SERVER"], !text.isEmpty {
            guard let baseURL = URL(string: text) else { throw LoopbackServerError.invalidBaseURL(text) }
            let external = LoopbackServer(baseURL: baseURL, server: nil)
            let (body, _) = try await URLSession.shared.data(from: external.itemsURL)
            // The same JSON, whatever the order of its keys (which varies from one process to the next).
            let sorted = JSONEncoder()
            sorted.outputFormatting = .sortedKeys
            let page = { (data: Data) in try? sorted.encode(JSONDecoder().decode(StackOverhead.Page.self, from: data)) }
            guard body.count == StackOverhead.body.count, let served = page(body), served == page(StackOverhead.body)
            else { throw LoopbackServerError.unexpectedBody(external.itemsURL) }
            return external
        }
        let server = try await TestServer.start(standardRoutes: false)
        server.router.add("GET", "/items") { _ in
            .json(String(decoding: StackOverhead.body, as: UTF8.self))
        }
        return LoopbackServer(baseURL: server.baseURL, server: server)
    }

    /// Shuts the in-process server down; a server of another process is left running.
    func shutdown() async throws {
        try await server?.shutdown()
    }
}

enum LoopbackServerError: Error, CustomStringConvertible {
    case invalidBaseURL(String)
    case unexpectedBody(URL)

    var description: String {
        switch self {
        case .invalidBaseURL(let text): "STRATA_BENCH_SERVER is not a URL: \(text)"
        case .unexpectedBody(let url): "\(url) does not answer with the loopback pairs' body (LoopbackBody writes it)"
        }
    }
}
