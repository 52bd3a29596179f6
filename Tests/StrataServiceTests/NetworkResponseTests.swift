import Foundation
import StrataCore
import StrataService
import StrataSession
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct NetworkResponseTests {
    private static let url = URL(string: "https://api.example.com/items") ?? URL(fileURLWithPath: "/")

    private static func urlResponse() throws -> HTTPURLResponse {
        try #require(
            HTTPURLResponse(
                url: url, statusCode: 201, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Type": "application/json", "ETag": "\"v1\"", "x-trace": "abc"]))
    }

    @Test func aResponseFromURLSessionHasItsFieldsSortedByName() throws {
        let response = NetworkResponse(try Self.urlResponse(), body: Data("{}".utf8))
        #expect(response.statusCode == 201)
        #expect(response.url == Self.url)
        #expect(response.body == Data("{}".utf8))
        // FoundationNetworking may recase a name ("Etag"); the order is by name, without case.
        #expect(response.headers.map { $0.name.lowercased() } == ["content-type", "etag", "x-trace"])
        #expect(response.headers["etag"] == "\"v1\"")
    }

    /// A field read alone is the value ``NetworkResponse/headers`` gives, whatever the response
    /// was made from, read before the conversion and after it.
    @Test func aFieldReadAloneIsTheValueTheHeadersGive() throws {
        let head = ResponseHead(
            url: Self.url, statusCode: 200, httpVersion: "HTTP/1.1",
            headers: HTTPHeaders([
                HTTPHeader(name: "content-type", value: "text/plain; charset=latin1"),
                HTTPHeader(name: "Vary", value: "Accept"), HTTPHeader(name: "vary", value: "Cookie"),
            ]))
        let responses = [
            NetworkResponse(head, body: Data()), NetworkResponse(try Self.urlResponse(), body: nil),
            NetworkResponse(statusCode: 200, headers: ["Content-Type": "text/html", "Vary": "Accept"]),
        ]
        for response in responses {
            for name in ["Content-Type", "CONTENT-TYPE", "Vary", "Missing"] {
                let alone = response.headerValue(name)
                #expect(alone == response.headers[name], "\(name) of \(response.headers)")
                #expect(response.headerValue(name) == alone)
            }
        }
        #expect(responses[0].headerValue("vary") == "Accept, Cookie")
    }

    @Test func itEqualsAndHashesAsTheSameResponseMadeFromItsFields() throws {
        let fromSession = NetworkResponse(try Self.urlResponse(), body: Data("{}".utf8))
        let made = NetworkResponse(
            statusCode: 201,
            headers: ["Content-Type": "application/json", "ETag": "\"v1\"", "x-trace": "abc"],
            body: Data("{}".utf8), url: Self.url)
        #expect(fromSession == made)
        #expect(fromSession.hashValue == made.hashValue)
        var other = made
        other.headers["ETag"] = "\"v2\""
        #expect(fromSession != other)
    }

    @Test func settingTheHeadersOfACopyLeavesTheOriginalAsItWas() throws {
        let original = NetworkResponse(try Self.urlResponse(), body: nil)
        var copy = original
        copy.headers["X-Added"] = "1"
        #expect(copy.headers["X-Added"] == "1")
        #expect(original.headers["X-Added"] == nil)
        #expect(original.headers.count == 3)
    }

    @Test func concurrentReadersOfOneResponseSeeTheSameFields() async throws {
        let response = NetworkResponse(try Self.urlResponse(), body: nil)
        let names = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<16 {
                group.addTask { response.headers.map { $0.name.lowercased() } }
            }
            return await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        #expect(names.count == 16)
        #expect(names.allSatisfy { $0 == ["content-type", "etag", "x-trace"] })
    }
}
