import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLBuildingTests {
    private func configuration(
        _ base: String, headers: HTTPHeaders = [:], query: [String: ParameterValue] = [:]
    ) throws
        -> NetworkConfiguration
    {
        NetworkConfiguration(baseURL: try #require(URL(string: base)), headers: headers, queryParameters: query)
    }

    @Test(
        arguments: [
            ("https://api.example.com", "users"), ("https://api.example.com/", "users"),
            ("https://api.example.com", "/users"), ("https://api.example.com/", "/users"),
            ("https://api.example.com//", "//users"),
        ]
    )
    func exactlyOneSlashJoinsBaseAndPath(base: String, path: String) throws {
        let request = try Endpoint<Void>(path: path).urlRequest(with: configuration(base))
        #expect(request.url?.absoluteString == "https://api.example.com/users")
    }

    @Test func aBasePathPrefixIsKept() throws {
        let request = try Endpoint<Void>(path: "users/1").urlRequest(with: configuration("https://api.example.com/v2/"))
        #expect(request.url?.absoluteString == "https://api.example.com/v2/users/1")
    }

    @Test(
        arguments: [
            ("https://api.example.com/v1?key=k#top", "items?x=1", "https://api.example.com/v1/items?key=k&x=1"),
            ("https://api.example.com/v1?", "items", "https://api.example.com/v1/items"),
            ("http://user:pw@[::1]:8080/api/", "a%2Fb/c", "http://user:pw@[::1]:8080/api/a%2Fb/c"),
            ("HTTPS://api.example.com:8443", "x#part", "HTTPS://api.example.com:8443/x"),
            ("file:///srv/data/", "report.json", "file:///srv/data/report.json"),
            ("https://api.example.com/v2/", "?x=1", "https://api.example.com/v2/?x=1"),
            ("https://api.example.com/v2", "/", "https://api.example.com/v2/"),
            ("https://api.example.com/v2?a=1", "?#", "https://api.example.com/v2?a=1"),
        ]
    )
    func aBaseURLKeepsItsSchemeAuthorityPathAndQuery(base: String, path: String, expected: String) throws {
        let request = try Endpoint<Void>(path: path).urlRequest(with: configuration(base))
        #expect(request.url?.absoluteString == expected)
    }

    @Test func aRelativeBaseURLIsResolvedFirst() throws {
        let base = try #require(URL(string: "v2/", relativeTo: URL(string: "https://api.example.com/api/")))
        let request = try Endpoint<Void>(path: "users").urlRequest(with: NetworkConfiguration(baseURL: base))
        #expect(request.url?.absoluteString == "https://api.example.com/api/v2/users")
    }

    @Test(arguments: ["mailto:someone@example.com", "/only/a/path", "urn:isbn:0451450523"])
    func aBaseURLWithoutAHostIsATypedError(base: String) throws {
        #expect(throws: RequestGenerationError.invalidURL(base)) {
            try Endpoint<Void>(path: "users").urlRequest(with: configuration(base))
        }
    }

    @Test func anEmptyPathTargetsTheBaseURL() throws {
        let request = try Endpoint<Void>(path: "").urlRequest(with: configuration("https://api.example.com/v2"))
        #expect(request.url?.absoluteString == "https://api.example.com/v2")
    }

    @Test func aQueryInThePathIsKeptAndMergedParametersFollowSorted() throws {
        let endpoint = Endpoint<Void>(path: "search?sort=new&x=1", queryParameters: ["q": "swift", "page": 2])
        let request = try endpoint.urlRequest(with: configuration("https://api.example.com", query: ["locale": "en"]))
        #expect(request.url?.absoluteString == "https://api.example.com/search?sort=new&x=1&locale=en&page=2&q=swift")
    }

    @Test func endpointQueryOverridesTheConfigurationsAndEncodableOverridesBoth() throws {
        struct Paging: Encodable, Sendable { let page: Int }
        let endpoint = Endpoint<Void>(
            path: "items", queryParameters: ["locale": "fr", "page": 1], queryParametersEncodable: Paging(page: 3))
        let request = try endpoint.urlRequest(
            with: configuration("https://api.example.com", query: ["locale": "en", "key": "k"]))
        #expect(request.url?.query == "key=k&locale=fr&page=3")
    }

    @Test func queryValuesArePercentEncodedPerRFC3986() throws {
        let endpoint = Endpoint<Void>(path: "search", queryParameters: ["q": "a+b&c=d;e f"])
        let request = try endpoint.urlRequest(with: configuration("https://api.example.com"))
        #expect(request.url?.absoluteString == "https://api.example.com/search?q=a%2Bb%26c%3Dd%3Be%20f")
    }

    @Test func queryEncodingOptionsApplyToTheQuery() throws {
        let endpoint = Endpoint<Void>(
            path: "items",
            queryParameters: ["ids": [1, 2], "on": true],
            queryEncoding: URLEncoding(
                destination: .queryString, arrayEncoding: .commaSeparated, boolEncoding: .literal)
        )
        #expect(try endpoint.urlRequest(with: configuration("https://api.example.com")).url?.query == "ids=1,2&on=true")
    }

    @Test func pathCharactersThatCannotStandInAURLArePercentEncodedAndEscapesKept() throws {
        let request = try Endpoint<Void>(path: "files/my report é.pdf/a%2Fb").urlRequest(
            with: configuration("https://api.example.com"))
        #expect(request.url?.absoluteString == "https://api.example.com/files/my%20report%20%C3%A9.pdf/a%2Fb")
    }

    /// Every ASCII character in a path: RFC 3986 `pchar` and `/` stay, every other is its `%XX`
    /// (`?` and `#` end the path, so they are not in it). A `%` is kept as the start of an escape
    /// already made; alone, as here, it is escaped too.
    @Test func everyASCIICharacterOfAPathIsKeptOrEscapedAsTheRFCSays() throws {
        let kept = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/".utf8)
        for byte in UInt8(0)...127 where byte != UInt8(ascii: "?") && byte != UInt8(ascii: "#") {
            let character = String(UnicodeScalar(byte))
            let request = try Endpoint<Void>(path: "a\(character)b").urlRequest(
                with: configuration("https://api.example.com"))
            let expected = kept.contains(byte) ? character : String(format: "%%%02X", byte)
            #expect(request.url?.absoluteString == "https://api.example.com/a\(expected)b", "byte \(byte)")
        }
    }

    /// Every byte escaped fills the text exactly as long as it was sized: the checked buffer of a
    /// debug build traps on one byte more.
    @Test(arguments: [1, 2, 1_000])
    func aPathOrQueryValueWhoseEveryByteIsEscapedIsEncodedWhole(repeats: Int) throws {
        let path = String(repeating: " é😀\u{7F}<", count: repeats)
        let value = String(repeating: " é😀\u{7F}<#&=", count: repeats)
        let endpoint = Endpoint<Void>(path: path, queryParameters: ["q": .string(value)])
        let url = try #require(try endpoint.urlRequest(with: configuration("https://api.example.com")).url)
        let escapedPath = String(repeating: "%20%C3%A9%F0%9F%98%80%7F%3C", count: repeats)
        let escapedValue = String(repeating: "%20%C3%A9%F0%9F%98%80%7F%3C%23%26%3D", count: repeats)
        #expect(url.absoluteString == "https://api.example.com/\(escapedPath)?q=\(escapedValue)")
    }

    @Test func aFullPathIsUsedAsTheWholeURL() throws {
        let endpoint = Endpoint<Void>(
            path: "https://api.example.com/other?x=1", isFullPath: true, queryParameters: ["y": 2])
        let request = try endpoint.urlRequest(
            with: configuration("https://api.example.com/v1", headers: ["X-Key": "k"], query: ["key": "k"]))
        #expect(request.url?.absoluteString == "https://api.example.com/other?x=1&key=k&y=2")
        #expect(request.value(forHTTPHeaderField: "X-Key") == "k")
    }

    @Test func aFullPathToAnotherOriginGetsNoConfigurationHeadersOrQuery() throws {
        let configuration = try configuration(
            "https://api.example.com", headers: ["Authorization": "Bearer t"], query: ["api_key": "secret"])
        for other in [
            "https://cdn.example.net/file", "http://api.example.com/file", "https://api.example.com:8443/file",
        ] {
            let endpoint = Endpoint<Void>(path: other, isFullPath: true, headerParameters: ["Accept": "*/*"])
            let request = try endpoint.urlRequest(with: configuration)
            #expect(request.value(forHTTPHeaderField: "Authorization") == nil, "\(other)")
            #expect(request.url?.query == nil, "\(other)")
            #expect(request.value(forHTTPHeaderField: "Accept") == "*/*")
        }
    }

    /// Dot segments are resolved as RFC 3986 §5.2.4 says before the request is sent, so that every
    /// transport sends the same path (libcurl, under `URLSession` on Linux, resolves them; SwiftNIO
    /// sends them as written) and a server that does not resolve them sees what one that does would.
    /// `%2E` is a dot (§2.3). The query is left as it is.
    @Test(
        arguments: [
            ("a/./b", "/v1/a/b"), ("a/../b", "/v1/b"), ("a/b/..", "/v1/a/"), ("a/.", "/v1/a/"), ("./a", "/v1/a"),
            (".", "/v1/"), ("a/..", "/v1/"), ("/./a", "/v1/a"), ("a//../b", "/v1/a/b"), ("a/%2e%2E/b", "/v1/b"),
            ("a/%2E/b", "/v1/a/b"), ("a/.%2e/b", "/v1/b"), ("a/../b?x=../y", "/v1/b?x=../y"), ("a/..#f", "/v1/"),
            ("..a/b.", "/v1/..a/b."), ("a../...", "/v1/a../..."), ("a%2F..%2Fb", "/v1/a%2F..%2Fb"),
            ("a/..;x", "/v1/a/..;x"), ("files/report.v2.json", "/v1/files/report.v2.json"),
        ]
    )
    func dotSegmentsInAPathAreResolvedUnderTheBaseURL(path: String, expected: String) throws {
        let request = try Endpoint<Void>(path: path).urlRequest(with: configuration("https://api.example.com/v1/"))
        #expect(request.url?.absoluteString == "https://api.example.com" + expected)
    }

    /// A path is built under the base URL's path: one whose `..` segments would climb above it (a
    /// user's input put into a path, say) is refused, not sent somewhere else on the server.
    @Test(arguments: [
        "..", "../admin", "a/../../admin", "./../admin", "%2e%2e/admin", ".%2E/x", "a/b/../../..", "/../x",
    ])
    func aPathClimbingAboveTheBaseURLIsRefused(path: String) throws {
        #expect(throws: RequestGenerationError.pathLeavesBaseURL(path)) {
            try Endpoint<Void>(path: path).urlRequest(with: configuration("https://api.example.com/v1/"))
        }
        #expect(throws: RequestGenerationError.pathLeavesBaseURL(path)) {
            try Endpoint<Void>(path: path).urlRequest(with: configuration("https://api.example.com"))
        }
    }

    /// The base URL's own dot segments are resolved too, at its root at most, so that every
    /// transport sends the same path (libcurl resolves them, SwiftNIO would not); an endpoint's
    /// path is then resolved under the resolved base.
    @Test(arguments: [
        ("https://api.example.com/v1/../v2/", "items", "/v2/items"),
        ("https://api.example.com/a/./b/", "items", "/a/b/items"),
        ("https://api.example.com/../v1", "items", "/v1/items"),
        ("https://api.example.com/v1/%2E%2E/v2/?k=1", "items", "/v2/items?k=1"),
        ("https://api.example.com/v1/x/..", "items", "/v1/items"),
        ("https://api.example.com/v1.2/..v/", "items", "/v1.2/..v/items"),
        ("https://api.example.com/v1/../v2/", "a/../b", "/v2/b"),
    ])
    func theBaseURLsDotSegmentsAreResolved(base: String, path: String, expected: String) throws {
        let request = try Endpoint<Void>(path: path).urlRequest(with: configuration(base))
        #expect(request.url?.absoluteString == "https://api.example.com" + expected)
    }

    /// The refusal says which path, with a secret in its query hidden, as every URL Strata prints.
    @Test func theRefusalNamesThePathWithItsSecretsHidden() throws {
        let path = "../admin?api_key=s3cret&page=2"
        let configuration = try configuration("https://api.example.com/v1/")
        do throws(RequestGenerationError) {
            _ = try Endpoint<Void>(path: path).urlRequest(with: configuration)
            Issue.record("\(path) was built")
        } catch {
            #expect(error == .pathLeavesBaseURL(path))
            #expect(error.description.contains("../admin"))
            #expect(error.description.contains("page=2"))
            #expect(!error.description.contains("s3cret"), "\(error.description)")
        }
    }

    /// A whole URL's path is resolved too, `..` stopping at its root as RFC 3986 says.
    @Test(
        arguments: [
            ("https://cdn.example.net/a/../b/./c?x=../y", "https://cdn.example.net/b/c?x=../y"),
            ("https://cdn.example.net/../../b", "https://cdn.example.net/b"),
            ("https://cdn.example.net/a/%2E%2E/", "https://cdn.example.net/"),
            ("https://cdn.example.net/a.b/c..d", "https://cdn.example.net/a.b/c..d"),
        ]
    )
    func dotSegmentsInAFullPathAreResolved(path: String, expected: String) throws {
        let request = try Endpoint<Void>(path: path, isFullPath: true).urlRequest(
            with: configuration("https://api.example.com"))
        #expect(request.url?.absoluteString == expected)
    }

    @Test(arguments: ["not a url", "/relative/only", "mailto:someone"])
    func anInvalidFullPathIsATypedError(path: String) throws {
        #expect(throws: RequestGenerationError.invalidURL(path)) {
            try Endpoint<Void>(path: path, isFullPath: true).urlRequest(with: configuration("https://api.example.com"))
        }
    }
}

@Suite struct RequestContentTests {
    private let configuration = NetworkConfiguration(
        baseURL: URL(string: "https://api.example.com") ?? URL(fileURLWithPath: "/"),
        headers: ["Accept": "application/json", "X-Client": "strata", "authorization": "Bearer config"],
        timeoutInterval: 30
    )

    @Test func endpointHeadersOverrideConfigurationHeadersWhateverTheCase() throws {
        let endpoint = Endpoint<Void>(
            path: "x", headerParameters: ["ACCEPT": "text/plain", "Authorization": "Bearer endpoint"])
        let request = try endpoint.urlRequest(with: configuration)
        #expect(request.value(forHTTPHeaderField: "Accept") == "text/plain")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer endpoint")
        #expect(request.value(forHTTPHeaderField: "X-Client") == "strata")
    }

    /// Fields are set at once, each name once: a repeated one joined with ", " under its first
    /// spelling, the endpoint's replacing the configuration's, however many there are (on Linux,
    /// setting 30,000 one at a time took a minute).
    @Test func fieldsAreSetOnceEachRepeatedOnesJoinedHoweverMany() throws {
        var own = HTTPHeaders((0..<5_000).map { HTTPHeader(name: "X-Field-\($0)", value: "v\($0)") })
        own.add(name: "x-field-7", value: "again")
        own.add(name: "x-client", value: "mine")
        let request = try Endpoint<Void>(path: "x", headerParameters: own).urlRequest(with: configuration)
        let fields = try #require(request.allHTTPHeaderFields)
        // 5,000 numbered and X-Client of the endpoint's, the configuration's Accept and Authorization.
        #expect(fields.count == 5_003)
        #expect(fields["X-Field-7"] == "v7, again")
        #expect(fields["X-Field-4999"] == "v4999")
        #expect(request.value(forHTTPHeaderField: "X-Client") == "mine")
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
    }

    @Test func methodAndTimeoutComeFromTheEndpointOrTheConfiguration() throws {
        let plain = try Endpoint<Void>(path: "x").urlRequest(with: configuration)
        #expect(plain.httpMethod == "GET")
        #expect(plain.timeoutInterval == 30)
        let custom = try Endpoint<Void>(path: "x", method: .patch, timeoutInterval: 5).urlRequest(with: configuration)
        #expect(custom.httpMethod == "PATCH")
        #expect(custom.timeoutInterval == 5)
    }

    @Test func bodyParametersAreWrittenByTheBodyEncoding() throws {
        let json = try Endpoint<Void>(path: "x", method: .post, bodyParameters: ["b": 1, "a": "z"]).urlRequest(
            with: configuration)
        #expect(json.httpBody == Data(#"{"a":"z","b":1}"#.utf8))
        #expect(json.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let form = try Endpoint<Void>(
            path: "x", method: .post, bodyParameters: ["a": "1 2"], bodyEncoding: URLEncoding.httpBody
        )
        .urlRequest(with: configuration)
        #expect(form.httpBody == Data("a=1%202".utf8))
    }

    @Test func anEncodableBodyTakesPrecedenceOverBodyParameters() throws {
        struct Login: Encodable, Sendable { let user: String }
        let endpoint = Endpoint<Void>(
            path: "x", method: .post, bodyParameters: ["ignored": true], bodyParametersEncodable: Login(user: "ann"))
        #expect(try endpoint.urlRequest(with: configuration).httpBody == Data(#"{"user":"ann"}"#.utf8))
    }

    @Test func anEncodingThatWritesWithoutParametersGetsToWriteItsBody() throws {
        var form = MultipartFormData(boundary: "B")
        form.append(Data("x".utf8), name: "f", fileName: "f.txt")
        let request = try Endpoint<Void>(path: "upload", method: .post, bodyEncoding: MultipartEncoding(form: form))
            .urlRequest(with: configuration)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=B")
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self).contains("filename=\"f.txt\""))
    }

    @Test func noBodyParametersMeansNoBody() throws {
        #expect(try Endpoint<Void>(path: "x", method: .post).urlRequest(with: configuration).httpBody == nil)
    }

    /// A value with CR, LF or NUL would split the request; on Linux `URLRequest` drops it without a
    /// word. Either way the caller hears of it, before anything is built.
    @Test(arguments: ["a\r\nX-Injected: 1", "a\nb", "nul\u{0}", "bell\u{7}"])
    func aHeaderValueThatBreaksTheGrammarIsATypedError(value: String) {
        #expect(throws: RequestGenerationError.invalidRequest(.invalidHeaderValue(name: "X-Value"))) {
            try Endpoint<Void>(path: "x", headerParameters: ["X-Value": value]).urlRequest(with: configuration)
        }
        let shared = NetworkConfiguration(baseURL: configuration.baseURL, headers: ["X-Shared": value])
        #expect(throws: RequestGenerationError.invalidRequest(.invalidHeaderValue(name: "X-Shared"))) {
            try Endpoint<Void>(path: "x").urlRequest(with: shared)
        }
    }

    @Test func aHeaderNameOrMethodThatIsNotATokenIsATypedError() {
        #expect(throws: RequestGenerationError.invalidRequest(.invalidHeaderName("X-Evil\r\nHost"))) {
            try Endpoint<Void>(path: "x", headerParameters: ["X-Evil\r\nHost": "v"]).urlRequest(with: configuration)
        }
        #expect(throws: RequestGenerationError.invalidRequest(.invalidMethod("GET /admin HTTP/1.1\r\nX: y"))) {
            try Endpoint<Void>(path: "x", method: HTTPMethod(rawValue: "GET /admin HTTP/1.1\r\nX: y"))
                .urlRequest(with: configuration)
        }
        for method in ["CONNECT", "connect", "cOnNeCt"] {
            #expect(throws: RequestGenerationError.invalidRequest(.tunnelMethod(method))) {
                try Endpoint<Void>(path: "x", method: HTTPMethod(method)).urlRequest(with: configuration)
            }
        }
        #expect(throws: Never.self) {
            try Endpoint<Void>(path: "x", method: "CONNECTS").urlRequest(with: configuration)
        }
    }

    @Test func anEncodingFailureIsATypedError() {
        struct Bad: Encodable, Sendable { let value = Double.nan }
        #expect(throws: RequestGenerationError.self) {
            try Endpoint<Void>(path: "x", method: .post, bodyParametersEncodable: Bad()).urlRequest(with: configuration)
        }
        do {
            _ = try Endpoint<Void>(path: "x", queryParametersEncodable: ["a", "b"]).urlRequest(with: configuration)
            Issue.record("expected an error")
        } catch {
            guard case .encoding(.membersRequired) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func customRequestablesGetDefaultsForEverythingButPathAndMethod() throws {
        struct Health: Requestable {
            var path: String { "health" }
            var method: HTTPMethod { .head }
        }
        let request = try Health().urlRequest(with: configuration)
        #expect(request.url?.absoluteString == "https://api.example.com/health")
        #expect(request.httpMethod == "HEAD")
        #expect(Health().options.acceptableStatusCodes == nil)
        #expect(Health().timeoutInterval == nil)
    }
}

/// The URLs an endpoint's requests are built on are parsed once for the texts that come again,
/// and the kept ones stay bounded in number and size.
@Suite struct ParsedURLTests {
    @Test func aURLComesAgainAsItWasParsed() throws {
        let text = "https://api.example.com/parsed/\(UUID().uuidString)?q=1"
        let first = try #require(URLBuilder.parsed(text))
        #expect(URLBuilder.keeps(text))
        #expect(URLBuilder.parsed(text) == first)
        #expect(first == URL(string: text))
    }

    @Test func textThatIsNoURLIsNotKept() {
        let text = "http://[::1"
        #expect(URLBuilder.parsed(text) == nil)
        #expect(!URLBuilder.keeps(text))
    }

    @Test func aLongURLIsParsedButNotKept() throws {
        let text = "https://api.example.com/long?q=" + String(repeating: "a", count: URLBuilder.parsedTextLimit)
        let url = URLBuilder.parsed(text)
        #expect(url != nil)
        #expect(url == URL(string: text))
        #expect(!URLBuilder.keeps(text))
    }

    @Test func manyURLsKeepAtMostTheLimit() {
        for index in 0..<(URLBuilder.parsedLimit * 3) {
            _ = URLBuilder.parsed("https://api.example.com/many/\(index)")
            #expect(URLBuilder.parsedCount <= URLBuilder.parsedLimit)
        }
    }

    /// An endpoint's request comes out the same whether its URL was parsed or kept.
    @Test func anEndpointBuildsTheSameRequestTwice() throws {
        let configuration = NetworkConfiguration(baseURL: try #require(URL(string: "https://api.example.com/v1/")))
        let endpoint = Endpoint<Void>(path: "items/\(UUID().uuidString)", queryParameters: ["page": "2"])
        let first = try endpoint.urlRequest(with: configuration)
        let second = try endpoint.urlRequest(with: configuration)
        #expect(first.url == second.url)
        #expect(first.url?.absoluteString.hasPrefix("https://api.example.com/v1/items/") == true)
        #expect(first.url?.query == "page=2")
    }
}
