import Foundation
import StrataConfiguration
import StrataCore
import StrataEndpoint
import StrataService
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct NetworkLoggerTests {
    @Test func loggingIsOffByDefault() throws {
        let service = DefaultNetworkService(configuration: NetworkConfiguration(baseURL: MockDefaults.baseURL))
        #expect(service.logger == nil)
    }

    @Test func credentialsInHeadersURLAndQueryAreRedacted() async throws {
        let lines = Locked<[String]>([])
        let logger = ConsoleNetworkLogger(
            level: .verbose, redaction: Redaction(extraHeaderNames: ["X-Api-Key"], queryKeys: ["token"])
        ) {
            line in
            lines.withLock { $0.append(line) }
        }
        let manager = MockNetworkSessionManager(responses: [
            .success(statusCode: 401, headers: ["Set-Cookie": "session=topsecret", "WWW-Authenticate": "Bearer"])
        ])
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(
                baseURL: try #require(URL(string: "https://user:hunter2@api.example.com"))),
            sessionManager: manager,
            logger: logger
        )
        let endpoint = Endpoint<Void>(
            path: "me",
            headerParameters: [
                "Authorization": "Bearer abc123", "Cookie": "c=cookievalue", "X-Api-Key": "key42",
                "Accept": "text/plain",
            ],
            queryParameters: ["token": "querysecret", "page": 2]
        )
        _ = try? await service.request(endpoint: endpoint)
        let text = lines.value.joined(separator: "\n")
        for secret in ["abc123", "cookievalue", "key42", "querysecret", "topsecret", "hunter2"] {
            #expect(!text.contains(secret), "\(secret) leaked into: \(text)")
        }
        #expect(text.contains("Accept: text/plain"))
        #expect(text.contains("page=2"))
        #expect(text.contains("← failed"))
        #expect(lines.value.count == 2)
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
        #expect(lines(.error) == "← failed POST https://api.strata.test (1.0 ms): The request timed out.")
        #expect(lines(.info).components(separatedBy: "\n").count == 3)
        #expect(!lines(.info).contains("Content-Type"))
        #expect(lines(.debug).contains("Content-Type: text/plain"))
        #expect(!lines(.debug).contains("hello"))
        #expect(lines(.verbose).contains("hello"))
        #expect(lines(.verbose).contains("curl -X POST 'https://api.strata.test'"))
    }

    @Test func jsonAndFormBodyFieldsWithSecretNamesAreRedacted() throws {
        let redaction = Redaction(bodyFields: ["pin"])
        let json = Data(
            #"{"user":"ann","password":"p4ss","nested":{"access_token":"t0ken-value","list":[{"PIN":"1234"}]},"authorization":"Bearer x"}"#
                .utf8)
        let redacted = try #require(redaction.redact(body: json, contentType: "application/json"))
        for secret in ["p4ss", "t0ken-value", "1234", "Bearer x"] {
            #expect(!redacted.contains(secret), "\(redacted)")
        }
        #expect(redacted.contains(#""user":"ann""#))
        let form = try #require(
            redaction.redact(
                body: Data("user=ann&password=p4ss&token=t&pin=9".utf8),
                contentType: "application/x-www-form-urlencoded"))
        #expect(form == "user=ann&password=<redacted>&token=<redacted>&pin=<redacted>")
        #expect(redaction.redact(body: Data([0xFF, 0xFE]), contentType: nil) == nil)
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

    @Test func binaryBodiesAreWrittenAsTheirSizeAndLongTextIsCut() {
        let captured = Locked<[String]>([])
        let logger = ConsoleNetworkLogger(level: .verbose, maximumBodyLength: 8) { line in
            captured.withLock { $0.append(line) }
        }
        let request = URLRequest(url: MockDefaults.baseURL)
        logger.log(
            result: .success(NetworkResponse(statusCode: 200, body: Data([0xFF, 0xD8, 0xFF]))), for: request,
            duration: .zero)
        #expect(captured.value.last?.contains("<body: 3 bytes>") == true)
        logger.log(
            result: .success(NetworkResponse(statusCode: 200, body: Data("hello world".utf8))), for: request,
            duration: .zero)
        #expect(captured.value.last?.contains("hello wo… (11 bytes)") == true)
        logger.log(
            result: .success(NetworkResponse(statusCode: 200, body: Data("ééééé".utf8))), for: request, duration: .zero)
        #expect(captured.value.last?.contains("éééé… (10 bytes)") == true)
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
