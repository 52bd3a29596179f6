import Foundation
import StrataTestServer

/// The shop API the `local` environment talks to: Strata's loopback test server with the shop's
/// routes added, running in this process, so the example needs no network.
///
/// | Route | Answer |
/// |---|---|
/// | `GET /products?category=&tags[]=&page=&per_page=` | a page of matching products |
/// | `POST /inventory/query` (XML) | the stock level, in XML |
/// | `POST /orders` (JSON) | `201` with the order; `409` `out_of_stock`; `422` for a bad quantity |
/// | `GET /reports/sales` | a report, after 5 seconds |
/// | `POST /newsletter/subscriptions` (form) | `201` with the subscription; `422` for a bad address |
/// | `POST /attachments` (multipart) | what arrived, part by part |
/// | `POST /auth/token` (form) | tokens for a password or refresh-token grant |
/// | `GET /account` | the account, with a valid bearer token; else `401` |
public final class DemoAPI: Sendable {
    /// Where the API listens, on 127.0.0.1.
    public var baseURL: URL { server.baseURL }
    private let server: TestServer

    private init(server: TestServer) {
        self.server = server
    }

    /// Starts the API on a free port.
    public static func start() async throws -> DemoAPI {
        let server = try await TestServer.start()
        DemoRoutes.install(on: server.router, state: server.state)
        return DemoAPI(server: server)
    }

    /// Expires every access token issued so far, as time would.
    public func expireSessions() {
        server.state.expireAccessTokens()
    }

    /// How many times a token was refreshed.
    public var refreshCount: Int { server.state.refreshCount }

    /// Stops the API.
    public func shutdown() async throws {
        try await server.shutdown()
    }
}
