import Foundation
import StrataCore
import StrataEncoding
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLEncodingTests {
    private func request(_ method: HTTPMethod, _ url: String = "https://api.example.com/items") throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method.rawValue
        return request
    }

    @Test(arguments: [HTTPMethod.get, .head, .delete])
    func methodDependentPutsParametersInTheQueryFor(method: HTTPMethod) throws {
        let encoded = try URLEncoding.default.encode(request(method), with: ["q": "swift"])
        #expect(encoded.url?.query == "q=swift")
        #expect(encoded.httpBody == nil)
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch])
    func methodDependentPutsParametersInAFormBodyFor(method: HTTPMethod) throws {
        let encoded = try URLEncoding.default.encode(request(method), with: ["q": "swift", "page": 2])
        #expect(encoded.url?.query == nil)
        #expect(encoded.httpBody == Data("page=2&q=swift".utf8))
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func queryStringAndHTTPBodyDestinationsIgnoreTheMethod() throws {
        #expect(try URLEncoding.queryString.encode(request(.post), with: ["a": 1]).url?.query == "a=1")
        #expect(try URLEncoding.httpBody.encode(request(.get), with: ["a": 1]).httpBody == Data("a=1".utf8))
    }

    /// A number that is not finite has no text a server reads as a number (`nan`, `inf`): it is
    /// refused, in a query and in a form body, at any depth, as the JSON and XML encodings refuse it.
    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func aNumberThatIsNotFiniteIsRefused(number: Double) throws {
        let refusal = ParameterEncodingError.encodingFailed(type: "Double", reason: "\(number) is not a finite number")
        for parameters: [String: ParameterValue] in [["n": .double(number)], ["a": [["n": .double(number)]]]] {
            #expect(throws: refusal) { try URLEncoding.queryString.encode(request(.get), with: parameters) }
            #expect(throws: refusal) { try URLEncoding.httpBody.encode(request(.post), with: parameters) }
        }
        #expect(throws: refusal) {
            try URLEncoding(arrayEncoding: .commaSeparated).encode(request(.get), with: ["n": [1.5, .double(number)]])
        }
    }

    @Test func anExistingContentTypeIsKept() throws {
        var original = try request(.post)
        original.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        let encoded = try URLEncoding.httpBody.encode(original, with: ["a": 1])
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func anExistingQueryIsKeptAndParametersAppended() throws {
        let encoded = try URLEncoding.queryString.encode(
            request(.get, "https://api.example.com/items?sort=new"), with: ["page": 2])
        #expect(encoded.url?.absoluteString == "https://api.example.com/items?sort=new&page=2")
    }

    @Test func emptyParametersLeaveTheURLAsItIs() throws {
        let encoded = try URLEncoding.queryString.encode(request(.get, "https://api.example.com/items"), with: [:])
        #expect(encoded.url?.absoluteString == "https://api.example.com/items")
    }

    @Test func keysAreWrittenInSortedOrder() throws {
        let parameters: [String: ParameterValue] = ["zeta": 1, "alpha": 2, "mid": 3, "Beta": 4]
        for _ in 0..<20 {
            #expect(try URLEncoding.queryString.query(from: parameters) == "Beta=4&alpha=2&mid=3&zeta=1")
        }
    }

    @Test func reservedCharactersInValuesArePercentEncodedPerRFC3986() throws {
        let query = try URLEncoding.queryString.query(from: ["v": "a+b&c=d;e f/g?h#i%j@k:l!m'n(o)p*q,r$s[t]u~v.w_x-y"])
        #expect(query == "v=a%2Bb%26c%3Dd%3Be%20f/g?h%23i%25j%40k%3Al%21m%27n%28o%29p%2Aq%2Cr%24s%5Bt%5Du~v.w_x-y")
    }

    @Test func nonASCIITextIsEncodedAsUTF8Bytes() throws {
        #expect(try URLEncoding.queryString.query(from: ["name": "José 🚀"]) == "name=Jos%C3%A9%20%F0%9F%9A%80")
        #expect(try URLEncoding.queryString.query(from: ["ключ": "x"]) == "%D0%BA%D0%BB%D1%8E%D1%87=x")
    }

    @Test func arraysUseBracketsByDefault() throws {
        #expect(try URLEncoding.queryString.query(from: ["tags": ["a", "b"]]) == "tags%5B%5D=a&tags%5B%5D=b")
    }

    @Test(
        arguments: [
            (URLEncoding.ArrayEncoding.brackets, "ids%5B%5D=1&ids%5B%5D=2&ids%5B%5D=a%2Cb"),
            (.noBrackets, "ids=1&ids=2&ids=a%2Cb"),
            (.indexInBrackets, "ids%5B0%5D=1&ids%5B1%5D=2&ids%5B2%5D=a%2Cb"),
            (.commaSeparated, "ids=1,2,a%2Cb"),
        ]
    )
    func arrayEncodingOptions(encoding: URLEncoding.ArrayEncoding, expected: String) throws {
        let query = try URLEncoding(destination: .queryString, arrayEncoding: encoding).query(from: [
            "ids": [1, 2, "a,b"]
        ])
        #expect(query == expected)
    }

    @Test func boolEncodingOptions() throws {
        #expect(try URLEncoding.queryString.query(from: ["on": true, "off": false]) == "off=0&on=1")
        let literal = URLEncoding(destination: .queryString, boolEncoding: .literal)
        #expect(try literal.query(from: ["on": true, "off": false]) == "off=false&on=true")
    }

    @Test func nestedObjectsUseBracketKeysInSortedOrder() throws {
        let query = try URLEncoding.queryString.query(from: [
            "user": ["name": "Ann", "address": ["city": "Oslo"], "roles": ["admin"]]
        ])
        #expect(query == "user%5Baddress%5D%5Bcity%5D=Oslo&user%5Bname%5D=Ann&user%5Broles%5D%5B%5D=admin")
    }

    @Test func nullValuesAreLeftOutAndNumbersWrittenPlainly() throws {
        #expect(try URLEncoding.queryString.query(from: ["a": nil, "b": 1.5, "c": -3]) == "b=1.5&c=-3")
    }

    @Test func encodableParametersGoThroughTheParameterValueEncoder() throws {
        struct Filter: Encodable, Sendable {
            let query: String
            let tags: [String]
            let limit: Int?
        }
        let encoded = try URLEncoding.queryString.encode(
            request(.get), withEncodable: Filter(query: "a&b", tags: ["x"], limit: nil))
        #expect(encoded.url?.query == "query=a%26b&tags%5B%5D=x")
    }

    @Test func anEncodableThatIsNotKeyedIsATypedErrorThatDoesNotShowTheValue() throws {
        #expect(throws: ParameterEncodingError.membersRequired(type: "Array<Int>", found: "an array of 2 elements")) {
            try URLEncoding.queryString.encode(request(.get), withEncodable: [1, 2])
        }
    }

    @Test func randomUnicodeKeysAndValuesRoundTripThroughURLComponents() throws {
        var generator = SeededGenerator(seed: 0x5EED)
        for _ in 0..<300 {
            var parameters: [String: ParameterValue] = [:]
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                parameters[randomText(using: &generator, allowEmpty: false)] = .string(
                    randomText(using: &generator, allowEmpty: true))
            }
            let query = try URLEncoding.queryString.query(from: parameters)
            var components = URLComponents()
            components.percentEncodedQuery = query
            let items = try #require(components.queryItems)
            let parsed = Dictionary(
                items.map { ($0.name, ParameterValue.string($0.value ?? "")) }, uniquingKeysWith: { $1 })
            #expect(parsed == parameters, "query: \(query)")
        }
    }
}

/// Text drawn from ASCII, the reserved set, Latin, Cyrillic, CJK and emoji.
func randomText(using generator: inout SeededGenerator, allowEmpty: Bool) -> String {
    let pools: [[Character]] = [
        Array("abcXYZ019"), Array("+&=;/?#%@:!$'()*,[] ~._-\""), Array("éüßñ"), Array("жщыЯ"), Array("漢字かな"),
        Array("🚀👩‍💻🇳🇴"),
    ]
    let length = Int.random(in: (allowEmpty ? 0 : 1)...8, using: &generator)
    return String(
        (0..<length).map { _ in pools.randomElement(using: &generator)?.randomElement(using: &generator) ?? "a" })
}

@Suite struct RFC3986Tests {
    /// Examples from RFC 3986: unreserved characters stay (§2.3), `%` itself is encoded (§2.4), and
    /// non-ASCII text is encoded as its UTF-8 bytes (§2.5: "À" is "%C3%80").
    @Test func percentEncodingFollowsTheRFCExamples() throws {
        func encode(_ parameters: [String: ParameterValue]) throws -> String {
            try URLEncodedFormEncoder().encode(parameters)
        }
        #expect(try encode(["v": "ABCXYZabcxyz0189-._~"]) == "v=ABCXYZabcxyz0189-._~")
        #expect(try encode(["v": "100%"]) == "v=100%25")
        #expect(try encode(["v": "À"]) == "v=%C3%80")
        #expect(try encode(["v": "a b"]) == "v=a%20b")
        #expect(try encode(["gen-delims": ":/?#[]@"]) == "gen-delims=%3A/?%23%5B%5D%40")
        #expect(try encode(["sub-delims": "!$&'()*+,;="]) == "sub-delims=%21%24%26%27%28%29%2A%2B%2C%3B%3D")
    }

    /// Every ASCII character in a query value: the unreserved ones, `/` and `?` stay, every other
    /// is its `%XX`.
    @Test func everyASCIICharacterOfAQueryValueIsKeptOrEscapedAsTheRFCSays() throws {
        let kept = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?".utf8)
        for byte in UInt8(0)...127 {
            let encoded = try URLEncodedFormEncoder().encode(["v": .string(String(UnicodeScalar(byte)))])
            let expected = kept.contains(byte) ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
            #expect(encoded == "v=\(expected)", "byte \(byte)")
        }
    }
}
