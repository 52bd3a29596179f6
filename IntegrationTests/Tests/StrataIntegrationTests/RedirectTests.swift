import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// RedirectPolicy against two listeners of different origins.
@Suite struct RedirectTests {
    private func transfer(_ server: TestServer, policy: RedirectPolicy = .follow) -> DefaultDataTransferService {
        DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
                sessionManager: SessionManager.underTest(redirectPolicy: policy)
            ),
            completionQueue: .global()
        )
    }

    private let credentials: HTTPHeaders = [
        "Authorization": "Bearer secret-token", "Cookie": "session=secret-cookie",
        "Proxy-Authorization": "Basic cHJveHk=",
        "X-Trace": "kept",
    ]

    @Test(arguments: [301, 302, 303, 307, 308])
    func aCrossOriginRedirectArrivesWithoutCredentials(code: Int) async throws {
        try await Harness.with { (harness) async throws in
            let echo = try await transfer(harness.server).request(
                Endpoint<EchoReply>(
                    path: "redirect-other-origin/\(code)",
                    headerParameters: credentials,
                    queryParameters: ["path": "/echo"]
                )
            )
            #expect(echo.origin == harness.server.otherOriginURL.absoluteString)
            #expect(echo.headers["authorization"] == nil)
            #expect(echo.headers["cookie"] == nil)
            #expect(echo.headers["proxy-authorization"] == nil)
            #expect(echo.headers["x-trace"] == "kept")
        }
    }

    /// Across origins only what the caller set for this one request goes on: not the
    /// configuration's headers, not a header the redaction registers as secret, not what an
    /// adapter bound to the first origin adds; adapters run again for the new origin.
    @Test(arguments: [302, 307])
    func aCrossOriginRedirectKeepsOnlyWhatTheCallerSetForThisRequest(code: Int) async throws {
        try await Harness.with { (harness) async throws in
            let server = harness.server
            let manager = SessionManager.underTest(
                adapters: [
                    HeadersAdapter(["X-Adapter-Key": "bound"], origins: [try #require(Origin(server.baseURL))]),
                    HeadersAdapter(["X-Everywhere": "yes"]),
                ],
                redaction: Redaction(extraHeaderNames: ["X-Api-Key"])
            )
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(
                        baseURL: server.baseURL, headers: ["X-Config": "shared", "Accept": "application/json"]),
                    sessionManager: manager),
                completionQueue: .global())
            let echo = try await transfer.request(
                Endpoint<EchoReply>(
                    path: "redirect-other-origin/\(code)",
                    headerParameters: ["X-Api-Key": "k3y", "X-Trace": "kept", "Accept": "application/json"],
                    queryParameters: ["path": "/echo"]
                )
            )
            #expect(echo.origin == server.otherOriginURL.absoluteString)
            for name in ["x-config", "x-api-key", "x-adapter-key"] {
                #expect(echo.headers[name] == nil, "\(name) crossed to another origin")
            }
            #expect(echo.headers["x-trace"] == "kept")
            #expect(echo.headers["accept"] == "application/json")
            #expect(echo.headers["x-everywhere"] == "yes")
        }
    }

    /// The policy decides with no lock of Strata's held: a decision that starts a request on the
    /// same manager finishes, and so does the request it started.
    @Test func aRedirectDecisionThatStartsARequestOnTheSameManagerFinishes() async throws {
        try await Harness.with { (harness) async throws in
            let inner = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
            let service = harness.network
            let policy = RedirectPolicy.custom { next, _ in
                service.request(endpoint: Endpoint<Void>(path: "echo"), completion: inner.record)
                return next
            }
            let echo = try await harness.transfer.request(
                Endpoint<EchoReply>(
                    path: "redirect/302", queryParameters: ["to": "/echo/landed"],
                    options: RequestOptions(redirectPolicy: policy)))
            #expect(echo.path == "/echo/landed")
            #expect(try #require(await inner.first(timeout: 10)).failureStatus == nil)
        }
    }

    @Test(arguments: [302, 307])
    func aSameOriginRedirectKeepsThem(code: Int) async throws {
        try await Harness.with { (harness) async throws in
            let echo = try await transfer(harness.server).request(
                Endpoint<EchoReply>(
                    path: "redirect/\(code)", headerParameters: credentials, queryParameters: ["to": "/echo"])
            )
            #expect(echo.origin == harness.server.baseURL.absoluteString)
            #expect(echo.headers["authorization"] == "Bearer secret-token")
            #expect(echo.headers["cookie"] == "session=secret-cookie")
        }
    }

    @Test(arguments: [307, 308])
    func a307Or308KeepsMethodAndBody(code: Int) async throws {
        try await Harness.with { (harness) async throws in
            for method in [HTTPMethod.post, .put, .patch] {
                let echo = try await transfer(harness.server).request(
                    Endpoint<EchoReply>(
                        path: "redirect/\(code)",
                        method: method,
                        queryParameters: ["to": "/echo/landed"],
                        bodyParameters: ["payload": "kept intact ✓"]
                    )
                )
                #expect(echo.path == "/echo/landed")
                #expect(echo.method == method.rawValue)
                #expect(echo.body == #"{"payload":"kept intact ✓"}"#)
                #expect(echo.headers["content-type"] == "application/json")
            }
        }
    }

    @Test func aLoopFailsWithTheTypedError() async throws {
        try await Harness.with { (harness) async throws in
            let started = ContinuousClock.now
            let error = await failure { () async throws(DataTransferError) in
                try await transfer(harness.server).request(Endpoint<Void>(path: "redirect-loop"))
            }
            guard case .networkFailure(.redirect(.loop(let url)))? = error else {
                Issue.record("expected a redirect loop, got \(String(describing: error))")
                return
            }
            #expect(url.path == "/redirect-loop")
            #expect(ContinuousClock.now - started < .seconds(2))
        }
    }

    /// A redirect back to where the chain has been is no loop once a response on the way set a
    /// cookie, which changes the request: a cookie check that redirects to itself, a sign-in that
    /// redirects back to the page that sent it there, as browsers, curl and Apple's `URLSession`
    /// follow them. Before, both failed with `.loop`. A chain that sets a cookie at every hop ends
    /// at the policy's most redirects.
    @Test func aRedirectBackAfterACookieWasSetIsFollowedAndOneThatSetsACookieEachTimeEndsAtTheLimit()
        async throws
    {
        try await Harness.with { (harness) async throws in
            harness.server.router.add("GET", "/cookie-check") { request in
                request.header("Cookie")?.contains("checked=1") == true
                    ? .json(#"{"checked": true}"#)
                    : .response(
                        status: 302, headers: [("Location", "/cookie-check"), ("Set-Cookie", "checked=1; Path=/")])
            }
            harness.server.router.add("GET", "/account") { request in
                request.header("Cookie")?.contains("signed-in=1") == true
                    ? .json(#"{"checked": true}"#) : .response(status: 302, headers: [("Location", "/sign-in")])
            }
            harness.server.router.add("GET", "/sign-in") { _ in
                .response(status: 302, headers: [("Location", "/account"), ("Set-Cookie", "signed-in=1; Path=/")])
            }
            harness.server.router.add("GET", "/every-time") { request in
                .response(
                    status: 302,
                    headers: [("Location", "/every-time"), ("Set-Cookie", "n=\(UUID().uuidString); Path=/")])
            }
            struct Checked: Decodable, Sendable { let checked: Bool }
            #expect(try await transfer(harness.server).request(Endpoint<Checked>(path: "cookie-check")).checked)
            #expect(try await transfer(harness.server).request(Endpoint<Checked>(path: "account")).checked)
            let error = await failure { () async throws(DataTransferError) in
                try await transfer(harness.server).request(Endpoint<Void>(path: "every-time"))
            }
            guard case .networkFailure(.redirect(.tooManyRedirects(let maximum)))? = error else {
                Issue.record("expected too many redirects, got \(String(describing: error))")
                return
            }
            #expect(maximum == RedirectPolicy.follow.maximumRedirects)
        }
    }

    /// A `Location` repeated with one value, as a server whose two layers each add it sends it, is
    /// followed to that value (before, to the two joined: `/landed,%20/landed`). Repeated with two
    /// values it names no one target: over AsyncHTTPClient, which keeps the fields apart, it fails
    /// as an invalid location; over URLSession, which joins them into one with ", ", the joined
    /// text is followed as one URL, as FoundationNetworking shows no more.
    @Test func aLocationRepeatedWithOneValueIsFollowedAndWithTwoNamesNoTarget() async throws {
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                let answer: String
                if head.hasPrefix("GET /same ") {
                    answer = "HTTP/1.1 302 Found\r\nLocation: /landed\r\nLocation: /landed\r\nContent-Length: 0\r\n\r\n"
                } else if head.hasPrefix("GET /two ") {
                    answer = "HTTP/1.1 302 Found\r\nLocation: /landed\r\nLocation: /other\r\nContent-Length: 0\r\n\r\n"
                } else {
                    let path = head.split(separator: " ").dropFirst().first ?? ""
                    answer = "HTTP/1.1 200 OK\r\nContent-Length: \(path.utf8.count)\r\n\r\n\(path)"
                }
                guard connection.write(answer) else { return }
            }
        }
        defer { server.shutdown() }
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
            sessionManager: SessionManager.underTest())
        let same = try await service.request(endpoint: Endpoint<Data>(path: "same"))
        #expect(String(decoding: same.body, as: UTF8.self) == "/landed")
        do {
            let two = try await service.request(endpoint: Endpoint<Data>(path: "two"))
            #expect(TestTransport.current == .urlSession, "followed to \(String(decoding: two.body, as: UTF8.self))")
            #expect(String(decoding: two.body, as: UTF8.self) == "/landed,%20/other")
        } catch {
            guard case .redirect(.invalidLocation(let location)) = error else {
                Issue.record("expected an invalid location, got \(error)")
                return
            }
            #expect(TestTransport.current == .asyncHTTPClient)
            #expect(location == "/landed, /other")
        }
    }

    /// A `Location` written with whitespace after it (or before it), as a server that builds the
    /// field from a padded string sends it, names the target without it: a field value excludes
    /// the whitespace around it (RFC 9110, 5.5), and curl and browsers follow the trimmed value.
    /// Neither client's parser takes trailing whitespace off, and the spaces went out encoded
    /// (`/landed%20%20`), to a path the server did not name.
    @Test(arguments: ["/landed  ", "/landed\t", " \t/landed \t ", "http://HOST/landed "])
    func aLocationIsFollowedWithoutTheWhitespaceAroundIt(location: String) async throws {
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                let path = head.split(separator: " ").dropFirst().first ?? ""
                let host = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("host:") }?
                    .dropFirst("host:".count).trimmingCharacters(in: .whitespaces)
                let answer =
                    path == "/start"
                    ? "HTTP/1.1 302 Found\r\nLocation: \(location.replacingOccurrences(of: "HOST", with: host ?? ""))"
                        + "\r\nContent-Length: 0\r\n\r\n"
                    : "HTTP/1.1 200 OK\r\nContent-Length: \(path.utf8.count)\r\n\r\n\(path)"
                guard connection.write(answer) else { return }
            }
        }
        defer { server.shutdown() }
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
            sessionManager: SessionManager.underTest())
        let landed = try await service.request(endpoint: Endpoint<Data>(path: "start"))
        #expect(String(decoding: landed.body, as: UTF8.self) == "/landed")
    }

    @Test func moreRedirectsThanAllowedFailWithTheTypedError() async throws {
        try await Harness.with { (harness) async throws in
            let error = await failure { () async throws(DataTransferError) in
                try await transfer(harness.server, policy: .custom(maximumRedirects: 3) { next, _ in next })
                    .request(Endpoint<Void>(path: "redirect-chain/5"))
            }
            guard case .networkFailure(.redirect(.tooManyRedirects(let maximum)))? = error else {
                Issue.record("expected too many redirects, got \(String(describing: error))")
                return
            }
            #expect(maximum == 3)
            try await transfer(harness.server, policy: .custom(maximumRedirects: 3) { next, _ in next })
                .request(Endpoint<Void>(path: "redirect-chain/3"))
        }
    }

    @Test func doNotFollowDeliversTheRedirectItself() async throws {
        try await Harness.with { (harness) async throws in
            let response = try await transfer(harness.server, policy: .doNotFollow).requestResponse(
                Endpoint<Empty>(
                    path: "redirect/302", queryParameters: ["to": "/echo"],
                    options: RequestOptions(acceptableStatusCodes: [302]))
            )
            #expect(response.statusCode == 302)
            #expect(response.response.headers["Location"] == "/echo")
        }
    }

    @Test func aCustomPolicyDecidesEachRedirect() async throws {
        try await Harness.with { (harness) async throws in
            let otherPort = harness.server.otherOriginURL.port
            let sameOriginOnly = RedirectPolicy.custom { next, _ in next.url?.port == otherPort ? nil : next }
            let blocked = try await transfer(harness.server, policy: sameOriginOnly).requestResponse(
                Endpoint<Empty>(
                    path: "redirect-other-origin/302", queryParameters: ["path": "/echo"],
                    options: RequestOptions(acceptableStatusCodes: [302]))
            )
            #expect(blocked.statusCode == 302)
            let followed = try await transfer(harness.server, policy: sameOriginOnly).request(
                Endpoint<EchoReply>(path: "redirect/302", queryParameters: ["to": "/echo"])
            )
            #expect(followed.origin == harness.server.baseURL.absoluteString)
        }
    }

    @Test func anEndpointsPolicyOverridesTheManagersForItsRequestsOnly() async throws {
        try await Harness.with { (harness) async throws in
            let service = transfer(harness.server, policy: .follow)
            let own = try await service.requestResponse(
                Endpoint<Empty>(
                    path: "redirect/302", queryParameters: ["to": "/echo"],
                    options: RequestOptions(acceptableStatusCodes: [302], redirectPolicy: .doNotFollow))
            )
            #expect(own.statusCode == 302)
            let managers = try await service.request(
                Endpoint<EchoReply>(path: "redirect/302", queryParameters: ["to": "/echo"]))
            #expect(managers.path == "/echo")
        }
    }
}
