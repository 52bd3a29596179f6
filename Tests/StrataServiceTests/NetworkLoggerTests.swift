import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct NetworkLoggerTests {
    /// The logger is a monitor of the session manager: it logs the request the adapters made — the
    /// credential and `User-Agent` they add, redacted — each retry, and the outcome the caller got.
    @Test func theRequestIsLoggedAsItWentOnTheWireWithCredentialsRedacted() async throws {
        let lines = CompletionRecorder<String>()
        let logger = ConsoleNetworkLogger(
            level: .verbose, redaction: Redaction(extraHeaderNames: ["X-Api-Key"], queryKeys: ["token"]),
            output: lines.record)
        let attempts = Locked(0)
        let stub = URLProtocolStub { _ in
            attempts.withLock {
                $0 += 1; return $0
            } == 1
                ? .response(statusCode: 503)
                : .response(
                    statusCode: 401, headers: ["Set-Cookie": "session=topsecret", "WWW-Authenticate": "Bearer"])
        }
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(),
            adapters: [HeadersAdapter(["Authorization": "Bearer abc123", "User-Agent": "Shop/2.1"])],
            retriers: [RetryPolicy(maximumAttempts: 2, initialDelay: 0, jitter: 0)],
            monitors: [logger]
        )
        var base = try #require(URLComponents(url: stub.baseURL, resolvingAgainstBaseURL: false))
        (base.user, base.password) = ("user", "hunter2")
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: base.url ?? stub.baseURL), sessionManager: manager)
        let endpoint = Endpoint<Void>(
            path: "me",
            headerParameters: ["Cookie": "c=cookievalue", "X-Api-Key": "key42", "Accept": "text/plain"],
            queryParameters: ["token": "querysecret", "page": 2]
        )
        _ = try? await service.request(endpoint: endpoint)
        // Sent, retrying, sent again, finished.
        var logged: [String] = []
        for _ in 0..<100 where logged.count < 4 {
            try await Task.sleep(for: .milliseconds(20))
            logged = lines.values
        }
        let text = logged.joined(separator: "\n")
        for secret in ["abc123", "cookievalue", "key42", "querysecret", "topsecret", "hunter2"] {
            #expect(!text.contains(secret), "\(secret) leaked into: \(text)")
        }
        #expect(logged.count == 4)
        #expect(logged.filter { $0.hasPrefix("→ GET") }.count == 2)
        #expect(text.contains("Authorization: <redacted>"))
        #expect(text.contains("User-Agent: Shop/2.1"))
        #expect(text.contains("Accept: text/plain"))
        #expect(text.contains("page=2"))
        #expect(logged.contains { $0.hasPrefix("↻ retrying GET") })
        #expect(logged.last?.hasPrefix("← failed") == true)
    }

    @Test func anAnswerFromTheCacheIsLoggedAsSuch() throws {
        let lines = Locked<[String]>([])
        let logger = ConsoleNetworkLogger(level: .info) { line in lines.withLock { $0.append(line) } }
        let url = try #require(URL(string: "https://api.example.com/items"))
        let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
        let metrics = RequestMetrics(exchanges: [], attempts: 1, duration: .milliseconds(1))
        for isFromCache in [false, true] {
            logger.requestFinished(
                TransportOutcome(response: response, isFromCache: isFromCache), for: URLRequest(url: url),
                id: RequestID(rawValue: 1), metrics: metrics)
        }
        #expect(lines.value.map { $0.contains("from cache") } == [false, true])
    }

    @Test func levelsDecideWhatIsWritten() throws {
        var request = URLRequest(url: MockDefaults.baseURL)
        request.httpMethod = "POST"
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("hello".utf8)
        let success: Result<NetworkResponse, NetworkError> = .success(
            NetworkResponse(statusCode: 200, body: Data("ok".utf8)))
        let failure: Result<NetworkResponse, NetworkError> = .failure(.timedOut)
        func lines(_ level: NetworkLogLevel) -> String {
            let captured = Locked<[String]>([])
            let logger = ConsoleNetworkLogger(level: level) { line in captured.withLock { $0.append(line) } }
            logger.log(request: request)
            logger.log(result: success, for: request, duration: .milliseconds(1))
            logger.log(result: failure, for: request, duration: .milliseconds(1))
            return captured.value.joined(separator: "\n")
        }
        #expect(
            lines(.error) == "← failed POST https://api.strata.test (1.0 ms): The request timed out [URLError -1001].")
        #expect(lines(.info).components(separatedBy: "\n").count == 3)
        #expect(!lines(.info).contains("Content-Type"))
        #expect(lines(.debug).contains("Content-Type: text/plain"))
        #expect(!lines(.debug).contains("hello"))
        // Plain text cannot be told from a secret: verbose logging shows its type and size only.
        #expect(lines(.verbose).contains("<text/plain, 5 bytes>"))
        #expect(!lines(.verbose).contains("hello"))
        #expect(lines(.verbose).contains("curl -X POST 'https://api.strata.test'"))
    }

    @Test func jsonAndFormBodyFieldsWithSecretNamesAreRedacted() throws {
        let redaction = Redaction(bodyFields: ["pin"])
        let json = Data(
            #"{"user":"ann","password":"p4ss","nested":{"access_token":"t0ken-value","list":[{"PIN":"1234"}]},"authorization":"Bearer x"}"#
                .utf8)
        let redacted = redaction.redact(body: json, contentType: "application/json")
        for secret in ["p4ss", "t0ken-value", "1234", "Bearer x"] {
            #expect(!redacted.contains(secret), "\(redacted)")
        }
        #expect(redacted.contains(#""user":"ann""#))
        let form = redaction.redact(
            body: Data("user=ann&password=p4ss&token=t&pin=9".utf8), contentType: "application/x-www-form-urlencoded")
        #expect(form == "user=ann&password=<redacted>&token=<redacted>&pin=<redacted>")
        #expect(redaction.redact(body: Data([0xFF, 0xFE]), contentType: nil) == "<2 bytes>")
    }

    /// Fields are named as their API spells them: a Swift `Codable` model's properties come as
    /// `accessToken`, a JavaScript API's as `refreshToken`, a Rails form's as `user[new_password]`.
    /// A field named as a credential is hidden whatever the spelling, as a header is.
    @Test func bodyFieldsNamedAsACredentialAreRedactedInEverySpelling() throws {
        let secrets = [
            "accessToken": "s1", "refreshToken": "s2", "clientSecret": "s3", "newPassword": "s4", "apiKey": "s5",
            "sessionToken": "s6", "IDToken": "s7", "x-amz-security-token": "s8", "user.password": "s9",
            "password_confirmation": "s10",
        ]
        let shown = ["tokens_used": "7", "author": "ann", "keyword": "swift", "passwordless": "yes"]
        let json = try JSONSerialization.data(withJSONObject: secrets.merging(shown) { $1 })
        let redacted = Redaction().redact(body: json, contentType: "application/json")
        for (name, secret) in secrets {
            #expect(!redacted.contains("\"\(secret)\""), "\(name): \(redacted)")
        }
        for (name, value) in shown {
            #expect(redacted.contains("\"\(value)\""), "\(name): \(redacted)")
        }
        let form = Redaction().redact(
            body: Data("user[newPassword]=p&user[name]=ann&accessToken=t".utf8),
            contentType: "application/x-www-form-urlencoded")
        #expect(form == "user[newPassword]=<redacted>&user[name]=ann&accessToken=<redacted>")
    }

    @Test func theCURLCommandRepeatsTheRequestWithSecretsRedactedAndQuotesEscaped() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/login?token=t0k&page=1")))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer abc", forHTTPHeaderField: "Authorization")
        request.httpBody = Data(#"{"user":"O'Brien","password":"hunter2"}"#.utf8)
        let curl = ConsoleNetworkLogger(level: .verbose) { _ in }.cURL(request)
        #expect(curl.hasPrefix("curl -X POST 'https://api.example.com/login?token=<redacted>&page=1'"))
        #expect(curl.contains("-H 'Authorization: <redacted>'"))
        #expect(curl.contains("-H 'Content-Type: application/json'"))
        #expect(curl.contains(#"--data-binary '{"password":"<redacted>","user":"O'\''Brien"}'"#))
        #expect(!curl.contains("hunter2") && !curl.contains("abc") && !curl.contains("t0k"))
    }

    /// What a server sends is written with its control characters escaped: a header cannot clear
    /// the terminal, recolour it, reverse the text, or start a line that reads as the logger's.
    @Test func aServersControlCharactersAreWrittenEscaped() throws {
        let captured = Locked<[String]>([])
        let logger = ConsoleNetworkLogger(level: .verbose) { line in captured.withLock { $0.append(line) } }
        let request = URLRequest(url: MockDefaults.baseURL)
        let headers: HTTPHeaders = [
            "X-Clear": "\u{1B}[2J\u{1B}]0;title\u{07}",
            "X-Lines": "a\rb\nc\u{0}d\u{7F}e\u{85}f",
            "X-Reversed": "\u{202E}gnp.exe\u{2066}",
            "X-Tab": "a\tb ü ✓",
        ]
        logger.log(result: .success(NetworkResponse(statusCode: 200, headers: headers)), for: request, duration: .zero)
        let failure = NetworkError.transport(
            URLError(
                .badServerResponse,
                userInfo: [
                    NSLocalizedDescriptionKey: "server said \u{1B}[31mhello\n← 200 GET https://bank.example"
                ]))
        logger.log(result: .failure(failure), for: request, duration: .zero)
        let written = captured.value.joined(separator: "\n")
        #expect(written.contains(#"X-Clear: \u{1B}[2J\u{1B}]0;title\u{7}"#))
        #expect(written.contains(#"X-Lines: a\u{D}b\u{A}c\u{0}d\u{7F}e\u{85}f"#))
        #expect(written.contains(#"X-Reversed: \u{202E}gnp.exe\u{2066}"#))
        #expect(written.contains("X-Tab: a\tb ü ✓"))
        #expect(written.contains(#"server said \u{1B}[31mhello\u{A}← 200 GET https://bank.example"#))
        // Every line the logger wrote starts as one of its own entries, or indented under one.
        let lines = written.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("← ") || $0.hasPrefix("  ") })
        #expect(!written.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" })
    }

    /// A body written as text (a form's fields) keeps its line breaks, each line indented under
    /// the entry, and has its other control characters escaped.
    @Test func everyLineOfABodyIsIndentedUnderItsEntry() throws {
        let captured = Locked<[String]>([])
        let logger = ConsoleNetworkLogger(level: .verbose) { line in captured.withLock { $0.append(line) } }
        let body = Data("a=1\r\n← 200 GET https://bank.example\nb=\u{1B}[2J".utf8)
        let form: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"]
        logger.log(
            result: .success(NetworkResponse(statusCode: 200, headers: form, body: body)),
            for: URLRequest(url: MockDefaults.baseURL), duration: .zero)
        let written = try #require(captured.value.last)
        #expect(written.hasSuffix("\n  a=1\n  ← 200 GET https://bank.example\n  b=\\u{1B}[2J"))
    }

    @Test func binaryBodiesAreWrittenAsTheirSizeAndLongTextIsCut() {
        let json: HTTPHeaders = ["Content-Type": "application/json"]
        let captured = Locked<[String]>([])
        let logger = ConsoleNetworkLogger(level: .verbose, maximumBodyLength: 8) { line in
            captured.withLock { $0.append(line) }
        }
        let request = URLRequest(url: MockDefaults.baseURL)
        logger.log(
            result: .success(NetworkResponse(statusCode: 200, body: Data([0xFF, 0xD8, 0xFF]))), for: request,
            duration: .zero)
        #expect(captured.value.last?.contains("<3 bytes>") == true)
        logger.log(
            result: .success(NetworkResponse(statusCode: 200, headers: json, body: Data(#"["hello world"]"#.utf8))),
            for: request, duration: .zero)
        #expect(captured.value.last?.contains(#"["hello … (15 bytes)"#) == true)
        logger.log(
            result: .success(NetworkResponse(statusCode: 200, headers: json, body: Data(#"["ééééé"]"#.utf8))),
            for: request, duration: .zero)
        #expect(captured.value.last?.contains(#"["ééé… (14 bytes)"#) == true)
    }

    @Test func multipartFieldsWithSecretNamesAreRedactedAndFilesSummarized() throws {
        var form = MultipartFormData(boundary: "b0und4ry")
        form.append(["title": "Holiday", "password": "hunter2", "user": ["token": "t0ken"]])
        form.append(Data([0xFF, 0xD8]), name: "photo", fileName: "a.jpg")
        let body = try form.encoded()
        let text = Redaction().redact(body: body, contentType: form.contentType)
        #expect(
            text == #"multipart/form-data: "password": <redacted>, "title": "Holiday", "user[token]": <redacted>, "#
                + #""photo" ("a.jpg", image/jpeg): 2 bytes"#)
        var request = URLRequest(url: MockDefaults.baseURL)
        request.httpMethod = "POST"
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        let curl = ConsoleNetworkLogger(level: .verbose) { _ in }.cURL(request)
        #expect(curl.contains(#"--data-binary @body  # multipart/form-data: "password": <redacted>"#))
        #expect(!curl.contains("hunter2") && !curl.contains("t0ken"))
    }

    /// A hostile server's multipart body can stop anywhere: each cut is a summary, never a trap.
    @Test(arguments: [
        "", "--b", "--b\r\n", "--b\r\nContent-Disposition: form-data; name=\"x\"", "--b\r\n\r\nvalue",
        "--b\r\n\r\nvalue\r\n--b", "--bX\r\n\r\nv\r\n--b--", "no delimiter at all", "--b--\r\n",
    ])
    func aMultipartBodyCutAnywhereIsSummarizedOrShown(body: String) {
        let text = Redaction().redact(body: Data(body.utf8), contentType: "multipart/form-data; boundary=b")
        #expect(text.hasPrefix("<multipart/form-data") || text.hasPrefix("multipart/form-data:"), "\(text)")
    }

    @Test func xmlElementsAndAttributesWithSecretNamesAreRedactedByLocalName() throws {
        let xml = Data(
            #"<login xmlns:a="urn:a"><user>ann</user><a:password>hunter2</a:password><token kind="x"><v>t0ken</v></token><item secret="s3cret">ok</item></login>"#
                .utf8)
        let text = Redaction().redact(body: xml, contentType: "application/soap+xml; charset=utf-8")
        for secret in ["hunter2", "t0ken", "s3cret"] {
            #expect(!text.contains(secret), "\(text)")
        }
        #expect(text.contains("<user>ann</user>"))
        #expect(text.contains("<item secret=\"&lt;redacted&gt;\">ok</item>"))
    }

    @Test(arguments: [
        ("text/plain", "password=hunter2", "<text/plain, 16 bytes>"),
        ("text/html", "<p>hunter2</p>", "<text/html, 14 bytes>"),
        ("application/json", #"{"password": "hunter2""#, "<application/json, 22 bytes, not valid JSON>"),
        ("application/xml", "<a>hunter2</b>", "<application/xml, 14 bytes, not well-formed XML>"),
        ("multipart/form-data; boundary=x", "hunter2", "<multipart/form-data, 7 bytes, not valid multipart>"),
        ("application/x-www-form-urlencoded", "password=hunter2&a=1", "password=<redacted>&a=1"),
    ])
    func bodiesThatCannotBeParsedAreSummarizedNotPrinted(type: String, body: String, expected: String) {
        #expect(Redaction().redact(body: Data(body.utf8), contentType: type) == expected)
    }

    @Test func deepJSONAndXMLBodiesAreSummarizedWithoutRecursingIntoThem() async {
        let json = Data((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        let xml = Data((String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)).utf8)
        let shallowEnough = Data((String(repeating: "[", count: 300) + String(repeating: "]", count: 300)).utf8)
        let rendered = await runOnThread(stackSize: 512 * 1024) {
            [
                Redaction().redact(body: json, contentType: "application/json"),
                Redaction().redact(body: xml, contentType: "text/xml"),
                Redaction().redact(body: shallowEnough, contentType: "application/json"),
            ]
        }
        #expect(rendered[0] == "<application/json, 200000 bytes, nested too deep to show>")
        #expect(rendered[1] == "<text/xml, 700000 bytes, not well-formed XML>")
        #expect(rendered[2] == "<application/json, 600 bytes, nested too deep to show>")
    }

    @Test func aRequestWithoutAURLIsLoggedWithoutCrashing() {
        let lines = Locked<[String]>([])
        var request = URLRequest(url: MockDefaults.baseURL)
        request.url = nil
        request.httpMethod = nil
        ConsoleNetworkLogger { line in lines.withLock { $0.append(line) } }.log(request: request)
        #expect(lines.value.first?.contains("<no URL>") == true)
    }
}
