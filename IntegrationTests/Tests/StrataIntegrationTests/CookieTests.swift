import Foundation
import Strata
import StrataAsyncHTTPClient
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
        server.router.add(nil, "/admin/me") { request in
            .json(#"{"cookie": "\#(request.header("Cookie") ?? "none")"}"#)
        }
        // How a server ends a session: the cookie's expiry set in the past.
        server.router.add(nil, "/logout") { _ in
            .json("{}", headers: [("Set-Cookie", "session=; Max-Age=0; Path=/")])
        }
        server.router.add(nil, "/login-admin") { _ in
            .json("{}", headers: [("Set-Cookie", "admin=1; Path=/admin")])
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

    /// Virtual hosts behind one address keep their cookies apart: a `Host` field of the request's
    /// own names the host its response's cookies are kept for and its cookies are looked up by.
    @Test func aHostFieldOfTheRequestsOwnNamesTheHostItsCookiesAreKeptForAndSentTo() async throws {
        try await Harness.with { harness in
            Self.addRoutes(to: harness.server)
            let port = try #require(harness.server.baseURL.port)
            func me(_ host: String?) async throws -> String {
                let headers: HTTPHeaders = host.map { ["Host": "\($0):\(port)"] } ?? [:]
                return try await harness.transfer.request(Endpoint<Me>(path: "me", headerParameters: headers)).cookie
            }
            _ = try await harness.network.request(
                endpoint: Endpoint<Void>(path: "login", headerParameters: ["Host": "a.example:\(port)"]))
            #expect(try await me("b.example") == "none")
            #expect(try await me(nil) == "none")
            #expect(try await me("a.example") == "session=abc123")
        }
    }

    @Test func aLogoutThatExpiresTheCookieEndsTheSession() async throws {
        try await Harness.with { harness in
            Self.addRoutes(to: harness.server)
            _ = try await harness.network.request(endpoint: Endpoint<Void>(path: "login"))
            #expect(try await harness.transfer.request(Endpoint<Me>(path: "me")).cookie == "session=abc123")
            _ = try await harness.network.request(endpoint: Endpoint<Void>(path: "logout"))
            #expect(try await harness.transfer.request(Endpoint<Me>(path: "me")).cookie == "none")
        }
    }

    @Test func aCookieWithAPathGoesOnlyToThatPath() async throws {
        try await Harness.with { harness in
            Self.addRoutes(to: harness.server)
            _ = try await harness.network.request(endpoint: Endpoint<Void>(path: "login-admin"))
            #expect(try await harness.transfer.request(Endpoint<Me>(path: "admin/me")).cookie == "admin=1")
            #expect(try await harness.transfer.request(Endpoint<Me>(path: "me")).cookie == "none")
        }
    }

    /// A `Secure` cookie set over `https` does not go to the same host over `http` (cookies do not
    /// tell ports apart): over AsyncHTTPClient, which trusts the test authority, on every run.
    @Test func aSecureCookieGoesOnlyOverHTTPS() async throws {
        let secure = try await TestServer.start(tls: try TestServer.tlsConfiguration(rogue: false))
        let plain = try await TestServer.start()
        for server in [secure, plain] {
            server.router.add(nil, "/login") { _ in
                .json("{}", headers: [("Set-Cookie", "token=s3cr3t; Secure; Path=/")])
            }
            server.router.add(nil, "/me") { request in
                .json(#"{"cookie": "\#(request.header("Cookie") ?? "none")"}"#)
            }
        }
        let transport = AsyncHTTPClientTransport(
            configuration: try TLSTests.trustingTestAuthority(),
            cookieStorage: URLSessionConfiguration.ephemeral.httpCookieStorage)
        let manager = SessionManager(transport: transport)
        func me(at server: TestServer) async throws -> String {
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL), sessionManager: manager),
                completionQueue: .global())
            return try await transfer.request(Endpoint<Me>(path: "me")).cookie
        }
        let login = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: plain.baseURL), sessionManager: manager)
        // Set over http, a Secure cookie is refused.
        _ = try await login.request(endpoint: Endpoint<Void>(path: "login"))
        #expect(try await me(at: plain) == "none")
        _ = try await DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: secure.baseURL), sessionManager: manager
        ).request(endpoint: Endpoint<Void>(path: "login"))
        #expect(try await me(at: secure) == "token=s3cr3t")
        #expect(try await me(at: plain) == "none")
        try await transport.shutdown()
        try await secure.shutdown()
        try await plain.shutdown()
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

    /// A page cached by a manager with an ``HTTPCache``: each user's page is their own (`Vary`,
    /// naming `Cookie`), with an `ETag` that names the cookie it was made for; `Cache-Control` is
    /// the query's `cache-control`. `/vary-cookie` answers `304` to a request whose
    /// `If-None-Match` is that tag.
    private struct CachedPage: Decodable, Sendable {
        let cookie: String
        let made: Int
    }

    /// The `Cookie` fields `/vary-cookie` got, in turn, and how many pages it made.
    private final class Arrivals: @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
        private let lock = NSLock()
        private var cookies: [String] = []
        private var made = 0
        func arrived(_ cookie: String, makes: Bool) -> Int {
            lock.withLock {
                cookies.append(cookie)
                if makes { made += 1 }
                return made
            }
        }
        var seen: [String] { lock.withLock { cookies } }
    }

    private static func addCachedPage(to server: TestServer, varying vary: String, recording arrivals: Arrivals) {
        server.router.add(nil, "/vary-cookie") { request in
            let cookie = request.header("Cookie") ?? "none"
            let tag = "\"\(cookie)\""
            let headers = [("Cache-Control", request.queryValue("cache-control") ?? ""), ("Vary", vary), ("ETag", tag)]
            guard request.header("If-None-Match") != tag else {
                _ = arrivals.arrived(cookie, makes: false)
                return .response(status: 304, headers: headers)
            }
            let made = arrivals.arrived(cookie, makes: true)
            return .json(#"{"cookie": "\#(cookie)", "made": \#(made)}"#, headers: headers)
        }
    }

    /// A stack whose manager caches, and the page, cached as `cacheControl` says.
    private static func caching(
        _ harness: Harness, _ cacheControl: String
    ) -> (DefaultNetworkService, DefaultDataTransferService, Endpoint<CachedPage>) {
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: harness.server.baseURL),
            sessionManager: SessionManager.underTest(cache: HTTPCache()))
        let transfer = DefaultDataTransferService(networkService: network, completionQueue: .global())
        return (
            network, transfer, Endpoint(path: "vary-cookie", queryParameters: ["cache-control": .string(cacheControl)])
        )
    }

    /// A response that varies by `Cookie` is kept for the cookies the transport sent with it, which
    /// the request above the transport does not carry: after a login, the page stored for nobody
    /// is not the answer, however fresh.
    @Test(arguments: ["Cookie", "accept-encoding, COOKIE"])
    func aFreshResponseThatVariesByCookieAnswersOnlyTheSameCookies(vary: String) async throws {
        try await Harness.with { harness in
            Self.addRoutes(to: harness.server)
            let arrivals = Arrivals()
            Self.addCachedPage(to: harness.server, varying: vary, recording: arrivals)
            let (network, transfer, page) = Self.caching(harness, "max-age=60")
            for _ in 0..<2 {
                let anonymous = try await transfer.request(page)
                #expect(anonymous.cookie == "none" && anonymous.made == 1)
            }
            _ = try await network.request(endpoint: Endpoint<Void>(path: "login"))
            for _ in 0..<2 {
                let mine = try await transfer.request(page)
                #expect(mine.cookie == "session=abc123" && mine.made == 2)
            }
            #expect(arrivals.seen == ["none", "session=abc123"])
        }
    }

    /// A stored response that varies by `Cookie` is revalidated with the transport's cookies, sent
    /// once: the `304` keeps the page.
    @Test func aRevalidationOfAResponseThatVariesByCookieCarriesTheCookiesOnce() async throws {
        try await Harness.with { harness in
            Self.addRoutes(to: harness.server)
            let arrivals = Arrivals()
            Self.addCachedPage(to: harness.server, varying: "Cookie", recording: arrivals)
            let (network, transfer, page) = Self.caching(harness, "no-cache")
            _ = try await network.request(endpoint: Endpoint<Void>(path: "login"))
            for _ in 0..<3 {
                let mine = try await transfer.request(page)
                #expect(mine.cookie == "session=abc123" && mine.made == 1)
            }
            #expect(arrivals.seen == Array(repeating: "session=abc123", count: 3))
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
