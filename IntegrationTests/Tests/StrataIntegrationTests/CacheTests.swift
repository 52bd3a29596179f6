import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pipeline's HTTP cache against the loopback server, which counts the requests that reach it.
@Suite struct CacheTests {
    private struct Reply: Decodable, Sendable {
        let key: String
        let count: Int
        let language: String
    }

    private func transfer(_ server: TestServer, cache: HTTPCache) -> DefaultDataTransferService {
        DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL),
                sessionManager: SessionManager.underTest(cache: cache)),
            completionQueue: .global())
    }

    private func endpoint(_ key: String, _ query: [String: ParameterValue], language: String? = nil) -> Endpoint<Reply>
    {
        Endpoint(
            path: "cache/\(key)", headerParameters: language.map { ["Accept-Language": $0] } ?? [:],
            queryParameters: query)
    }

    @Test func aFreshResponseIsServedWithoutReachingTheServer() async throws {
        try await Harness.with { (harness) async throws in
            let service = transfer(harness.server, cache: HTTPCache())
            let query: [String: ParameterValue] = ["cache-control": "max-age=60"]
            for _ in 0..<5 {
                #expect(try await service.request(endpoint("fresh", query)).count == 1)
            }
            #expect(harness.server.state.attemptCount(for: "cache-fresh") == 1)
            // RFC 9111 §4: an answer from the cache carries its current age; the server's had none.
            let cached = try await service.requestResponse(endpoint("fresh", query))
            #expect(cached.response.headers["Age"] == "0")
            #expect(harness.server.state.attemptCount(for: "cache-fresh") == 1)
        }
    }

    @Test func aResponseWithoutFreshnessIsRevalidatedWithItsETagAndThe304ServedFromTheCache() async throws {
        try await Harness.with { (harness) async throws in
            let service = transfer(harness.server, cache: HTTPCache())
            let query: [String: ParameterValue] = ["cache-control": "no-cache", "etag": #""v1""#]
            for _ in 0..<3 {
                // The body is the one stored with the first response: the server sent 304s since.
                #expect(try await service.request(endpoint("etag", query)).count == 1)
            }
            #expect(harness.server.state.attemptCount(for: "cache-etag") == 3)
        }
    }

    @Test func noStoreAndVaryAreHonouredAgainstTheServer() async throws {
        try await Harness.with { (harness) async throws in
            let service = transfer(harness.server, cache: HTTPCache())
            for _ in 0..<2 {
                _ = try await service.request(endpoint("no-store", ["cache-control": "no-store, max-age=60"]))
            }
            #expect(harness.server.state.attemptCount(for: "cache-no-store") == 2)
            let vary: [String: ParameterValue] = ["cache-control": "max-age=60", "vary": "Accept-Language"]
            for language in ["fr", "de", "fr", "de"] {
                #expect(try await service.request(endpoint("vary", vary, language: language)).language == language)
            }
            #expect(harness.server.state.attemptCount(for: "cache-vary") == 2)
        }
    }

    @Test func aCacheOnDiskServesAnotherManager() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cache-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Harness.with { (harness) async throws in
            let query: [String: ParameterValue] = ["cache-control": "max-age=60"]
            let first = HTTPCache(directory: directory)
            _ = try await transfer(harness.server, cache: first).request(endpoint("disk", query))
            first.flush()
            let later = transfer(harness.server, cache: HTTPCache(directory: directory))
            #expect(try await later.request(endpoint("disk", query)).count == 1)
            #expect(harness.server.state.attemptCount(for: "cache-disk") == 1)
        }
    }
}
