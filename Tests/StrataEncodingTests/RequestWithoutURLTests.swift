import Foundation
import StrataCore
import StrataEncoding
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request without a URL cannot be changed on Linux (FoundationNetworking traps on changing a
/// copy of one), so every encoding refuses it with a typed error instead of writing into it.
@Suite struct RequestWithoutURLTests {
    private static let encodings: [(String, any ParameterEncoding)] = [
        ("JSON", JSONEncoding.default),
        ("URL, query", URLEncoding.queryString),
        ("URL, body", URLEncoding.httpBody),
        ("XML document", XMLEncoding()),
        ("XML, SOAP 1.1", XMLEncoding.soap(.v1_1, operation: "Get", action: "urn:get")),
        ("property list", XMLEncoding.propertyList),
        ("multipart", MultipartEncoding()),
        ("upload", UploadEncoding.data(Data("x".utf8))),
    ]

    private struct Item: Encodable, Sendable {
        let name = "a"
    }

    @Test(arguments: encodings.indices)
    func everyEncodingRefusesARequestWithoutAURL(index: Int) throws {
        let (name, encoding) = Self.encodings[index]
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/items")))
        request.httpMethod = "POST"
        request.url = nil
        // A copy, as the request is when a caller keeps it: changing one without a URL traps on Linux.
        let kept = request
        #expect(throws: ParameterEncodingError.missingURL, "\(name)") {
            try encoding.encode(request, with: ["name": "a"])
        }
        #expect(throws: ParameterEncodingError.missingURL, "\(name)") {
            try encoding.encode(request, withEncodable: Item())
        }
        #expect(kept.url == nil)
    }
}
