import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Cookies work the same over both transports, from the transport's cookie storage (for
/// `URLSession`, its configuration's; for AsyncHTTPClient, the one it is given): a response's
/// `Set-Cookie` is sent back to its host, a redirect's reaches the redirect's target, and no cookie
/// goes to another host.
@Suite struct CookieTests {
    /// `/login` sets a session cookie; `/login-then-me` does too, redirecting to `/me`; `/me`
    /// answers with the `Cookie` field it got, or `none`.
    private static func addRoutes(to server: TestServer) {
        server.router.add(nil, "/login") { _ in
            .json("{}", headers: [("Set-Cookie", "session=abc123; Path=/; HttpOnly")])
        }
        server.router.add(nil, "/login-then-me") { _ in
            .response(
                status: 302,
                headers: [
                    ("Location", "/me"), ("Set-Cookie", "session=redirected; Path=/"),
                    ("Set-Cookie", "theme=dark; Path=/; Expires=Wed, 21 Oct 2099 07:28:00 GMT"),
                ])
        }
        server.router.add(nil, "/me") { request in
            .json(#"{"cookie": "\#(request.header("Cookie") ?? "none")"}"#)
        }
    }

    private struct Me: Decodable, Sendable {
        let cookie: String
    }

    @Test func aCookieAResponseSetsGoesWithTheNextRequestToItsHost() async throws {
        try await Harness.with { harness in
            Self.addRoutes(to: harness.server)
            #expect(try await harness.transfer.request(Endpoint<Me>(path: "me")).cookie == "none")
            _ = try await harness.network.request(endpoint: Endpoint<Void>(path: "login"))
            #expect(try await harness.transfer.request(Endpoint<Me>(path: "me")).cookie == "session=abc123")
        }
    }

    @Test func theCookiesARedirectSetsReachItsTarget() async throws {
        try await Harness.with { harness in
            Self.addRoutes(to: harness.server)
            let me = try await harness.transfer.request(Endpoint<Me>(path: "login-then-me"))
            let sent = Set(me.cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(sent == ["session=redirected", "theme=dark"], "\(me.cookie)")
        }
    }

    @Test func aCookieGoesToNoOtherHost() async throws {
        try await Harness.with { harness in
            Self.addRoutes(to: harness.server)
            _ = try await harness.network.request(endpoint: Endpoint<Void>(path: "login"))
            let port = try #require(harness.server.baseURL.port)
            let elsewhere = Endpoint<Me>(path: "http://localhost:\(port)/me", isFullPath: true)
            #expect(try await harness.transfer.request(elsewhere).cookie == "none")
            #expect(try await harness.transfer.request(Endpoint<Me>(path: "me")).cookie == "session=abc123")
        }
    }

    /// Adapts each request as `change` says, as an app's adapter would.
    private struct Changing: RequestAdapter {
        let change: @Sendable (inout URLRequest) -> Void
        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            var request = request
            change(&request)
            completion(.success(request))
        }
    }

    @Test func aCookieFieldOfTheRequestsOwnIsSentWithTheStoredOnes() async throws {
        let own = Changing { $0.setValue("own=1", forHTTPHeaderField: "Cookie") }
        try await Harness.with(adapters: [own]) { harness in
            Self.addRoutes(to: harness.server)
            _ = try await harness.network.request(endpoint: Endpoint<Void>(path: "login"))
            let me = try await harness.transfer.request(Endpoint<Me>(path: "me"))
            let sent = Set(
                me.cookie.split(whereSeparator: { $0 == ";" || $0 == "," }).map {
                    $0.trimmingCharacters(in: .whitespaces)
                })
            #expect(sent == ["own=1", "session=abc123"], "\(me.cookie)")
        }
    }

    @Test func aRequestThatHandlesNoCookiesGetsAndKeepsNone() async throws {
        let none = Changing { $0.httpShouldHandleCookies = false }
        try await Harness.with(adapters: [none]) { harness in
            Self.addRoutes(to: harness.server)
            _ = try await harness.network.request(endpoint: Endpoint<Void>(path: "login"))
            #expect(try await harness.transfer.request(Endpoint<Me>(path: "me")).cookie == "none")
        }
    }
}
