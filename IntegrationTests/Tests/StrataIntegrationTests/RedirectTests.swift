import Foundation
import Strata
import StrataTestServer
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
                sessionManager: URLSessionManager(redirectPolicy: policy)
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
                Endpoint<Empty>(path: "redirect/302", queryParameters: ["to": "/echo"], acceptableStatusCodes: [302])
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
                    path: "redirect-other-origin/302", queryParameters: ["path": "/echo"], acceptableStatusCodes: [302])
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
                    path: "redirect/302", queryParameters: ["to": "/echo"], acceptableStatusCodes: [302],
                    redirectPolicy: .doNotFollow)
            )
            #expect(own.statusCode == 302)
            let managers = try await service.request(
                Endpoint<EchoReply>(path: "redirect/302", queryParameters: ["to": "/echo"]))
            #expect(managers.path == "/echo")
        }
    }
}
