import Foundation
import Strata
import StrataTestServer
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes a prepared body with its content type, for routes whose encodings come in later layers.
struct RawBodyEncoding: ParameterEncoding {
    let body: Data
    let contentType: String

    func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError) -> URLRequest {
        var request = request
        request.httpBody = body
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        return request
    }
}

/// The standard routes behave as documented, through Strata.
@Suite struct TestServerTests {
    @Test(arguments: [301, 302, 303, 307, 308])
    func redirectsWithRelativeAndAbsoluteLocationsArriveAtTheTarget(code: Int) async throws {
        try await Harness.with { (harness) async throws in
            for target in ["/echo/relative", harness.server.baseURL.absoluteString + "/echo/absolute"] {
                let echo = try await harness.transfer.request(
                    Endpoint<EchoReply>(path: "redirect/\(code)", queryParameters: ["to": .string(target)])
                )
                #expect(echo.path.hasPrefix("/echo/"))
                #expect(echo.origin == harness.server.baseURL.absoluteString)
            }
        }
    }

    @Test func aRedirectToTheOtherListenerCrossesToADifferentOrigin() async throws {
        try await Harness.with { (harness) async throws in
            let echo = try await harness.transfer.request(
                Endpoint<EchoReply>(path: "redirect-other-origin/302", queryParameters: ["path": "/echo/elsewhere"])
            )
            #expect(echo.origin == harness.server.otherOriginURL.absoluteString)
            #expect(harness.server.otherOriginURL.port != harness.server.baseURL.port)
            #expect(echo.path == "/echo/elsewhere")
        }
    }

    @Test func theTokenFlowIssuesRefreshesAndRejectsExpiredTokens() async throws {
        struct Tokens: Decodable, Sendable {
            let access_token: String
            let refresh_token: String
        }
        try await Harness.with { (harness) async throws in
            let issued = try await harness.transfer.request(
                Endpoint<Tokens>(
                    path: "auth/token", method: .post, bodyParameters: ["grant_type": "password"],
                    bodyEncoding: URLEncoding.httpBody)
            )
            let protected = { (token: String) in
                Endpoint<Void>(path: "auth/protected", headerParameters: ["Authorization": "Bearer \(token)"])
            }
            try await harness.transfer.request(protected(issued.access_token))

            harness.server.state.expireAccessTokens()
            let rejected = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(protected(issued.access_token))
            }
            guard case .networkFailure(.unacceptableStatusCode(let response)) = rejected else {
                Issue.record("expected a 401, got \(String(describing: rejected))")
                return
            }
            #expect(response.statusCode == 401)
            #expect(response.headers["www-authenticate"]?.contains("invalid_token") == true)

            let refreshed = try await harness.transfer.request(
                Endpoint<Tokens>(
                    path: "auth/token",
                    method: .post,
                    bodyParameters: ["grant_type": "refresh_token", "refresh_token": .string(issued.refresh_token)],
                    bodyEncoding: URLEncoding.httpBody
                )
            )
            try await harness.transfer.request(protected(refreshed.access_token))
            #expect(harness.server.state.issuedTokenCount == 1)
            #expect(harness.server.state.refreshCount == 1)
        }
    }

    @Test(arguments: [(429, false), (503, false), (503, true)])
    func retryAfterIsSentInSecondsOrAsAnHTTPDateThenTheRouteSucceeds(status: Int, asDate: Bool) async throws {
        try await Harness.with { (harness) async throws in
            let endpoint = Endpoint<Void>(
                path: "retry-after/\(status)",
                queryParameters: [
                    "key": .string("k\(status)\(asDate)"), "failures": 1, "seconds": 2, "date": asDate ? "1" : "0",
                ]
            )
            let first = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(endpoint)
            }
            guard case .networkFailure(.unacceptableStatusCode(let response)) = first else {
                Issue.record("expected \(status), got \(String(describing: first))")
                return
            }
            #expect(response.statusCode == status)
            let retryAfter = try #require(response.headers["Retry-After"])
            if asDate {
                #expect(retryAfter.hasSuffix(" GMT"))
            } else {
                #expect(retryAfter == "2")
            }
            try await harness.transfer.request(endpoint)
            #expect(harness.server.state.attemptCount(for: "k\(status)\(asDate)") == 2)
        }
    }

    @Test func multipartBodiesAreParsedByAnIndependentParser() async throws {
        let boundary = "strata-boundary-42"
        let body = [
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello, wörld\r\n",
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a %22quoted%22 name.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n\u{0}\u{1}\u{2}\r\n",
            "--\(boundary)--\r\n",
        ].joined()
        try await Harness.with { (harness) async throws in
            let echo = try await harness.transfer.request(
                Endpoint<MultipartEcho>(
                    path: "multipart",
                    method: .post,
                    bodyParameters: ["unused": true],
                    bodyEncoding: RawBodyEncoding(
                        body: Data(body.utf8), contentType: "multipart/form-data; boundary=\(boundary)")
                )
            )
            #expect(echo.parts.count == 2)
            #expect(echo.parts.first?.name == "title")
            #expect(echo.parts.first?.text == "Hello, wörld")
            #expect(echo.parts.last?.filename == "a %22quoted%22 name.bin")
            #expect(echo.parts.last?.contentType == "application/octet-stream")
            #expect(echo.parts.last?.base64 == Data([0, 1, 2]).base64EncodedString())
        }
    }

    @Test func xmlIsEchoedWithAnXMLContentType() async throws {
        let xml = #"<?xml version="1.0" encoding="UTF-8"?><note lang="nb"><to>Åse &amp; Bo</to></note>"#
        try await Harness.with { (harness) async throws in
            let response = try await harness.network.request(
                endpoint: Endpoint<Void>(
                    path: "xml",
                    method: .post,
                    bodyParameters: ["unused": true],
                    bodyEncoding: RawBodyEncoding(body: Data(xml.utf8), contentType: "application/xml")
                )
            )
            #expect(response.headers["content-type"] == "application/xml; charset=utf-8")
            #expect(response.bodyText == xml)
        }
    }

    @Test func randomBytesHaveTheRequestedLengthAndVary() async throws {
        try await Harness.with { (harness) async throws in
            let first = try await harness.transfer.request(Endpoint<Data>(path: "bytes/4096"))
            let second = try await harness.transfer.request(Endpoint<Data>(path: "bytes/4096"))
            #expect(first.count == 4096)
            #expect(first != second)
        }
    }

    @Test func callersCanAddAndOverrideRoutes() async throws {
        try await Harness.with { (harness) async throws in
            harness.server.router.add("GET", "/echo") { _ in .json(#"{"overridden": true}"#) }
            harness.server.router.add("GET", "/items/{id}") { request in
                .json(#"{"id": "\#(request.parameters["id"] ?? "")"}"#)
            }
            struct Overridden: Decodable { let overridden: Bool }
            struct Item: Decodable { let id: String }
            #expect(try await harness.transfer.request(Endpoint<Overridden>(path: "echo")).overridden)
            #expect(try await harness.transfer.request(Endpoint<Item>(path: "items/42")).id == "42")
        }
    }
}
