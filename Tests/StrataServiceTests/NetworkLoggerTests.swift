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
        let logger = ConsoleNetworkLogger(redaction: Redaction(extraHeaderNames: ["X-Api-Key"], queryKeys: ["token"])) {
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

    @Test func bodiesAreHiddenByDefaultAndBinaryBodiesShowTheirSize() throws {
        let lines = Locked<[String]>([])
        var request = URLRequest(url: MockDefaults.baseURL)
        request.httpBody = Data("password=swordfish".utf8)
        ConsoleNetworkLogger { line in lines.withLock { $0.append(line) } }.log(request: request)
        #expect(lines.value.last?.contains("swordfish") == false)
        #expect(lines.value.last?.contains("<body: 18 bytes>") == true)

        let verbose = ConsoleNetworkLogger(logsBodies: true, maximumBodyLength: 8) { line in
            lines.withLock { $0.append(line) }
        }
        verbose.log(
            result: .success(NetworkResponse(statusCode: 200, body: Data([0xFF, 0xD8, 0xFF]))), for: request,
            duration: .milliseconds(3))
        #expect(lines.value.last?.contains("<body: 3 bytes>") == true)
        verbose.log(
            result: .success(NetworkResponse(statusCode: 200, body: Data("hello world".utf8))), for: request,
            duration: .zero)
        #expect(lines.value.last?.contains("hello wo… (11 bytes)") == true)
        verbose.log(
            result: .success(NetworkResponse(statusCode: 200, body: Data("ééééé".utf8))), for: request, duration: .zero)
        #expect(lines.value.last?.contains("éééé… (10 bytes)") == true)
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
