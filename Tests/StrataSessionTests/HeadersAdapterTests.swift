import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct HeadersAdapterTests {
    private func adapt(_ request: URLRequest, with adapter: HeadersAdapter) async throws -> URLRequest {
        let recorder = CompletionRecorder<Result<URLRequest, any Error>>()
        adapter.adapt(request, completion: recorder.record)
        return try #require(await recorder.first()).get()
    }

    private var request: URLRequest {
        var request = URLRequest(url: URL(fileURLWithPath: "/"))
        request.setValue("Endpoint/1", forHTTPHeaderField: "User-Agent")
        return request
    }

    @Test func addsMissingFieldsAndKeepsTheRequestsOwnByDefault() async throws {
        let adapted = try await adapt(
            request, with: HeadersAdapter(["user-agent": "Strata/1", "X-API-Version": "2024-01"]))
        #expect(adapted.value(forHTTPHeaderField: "User-Agent") == "Endpoint/1")
        #expect(adapted.value(forHTTPHeaderField: "X-API-Version") == "2024-01")
    }

    @Test func replacingExistingAlwaysSendsTheAdaptersValue() async throws {
        let adapted = try await adapt(
            request, with: HeadersAdapter(["User-Agent": "Strata/1"], replacingExisting: true))
        #expect(adapted.value(forHTTPHeaderField: "User-Agent") == "Strata/1")
    }

    @Test func aRepeatedNameIsSentWithEveryValue() async throws {
        let adapted = try await adapt(
            request,
            with: HeadersAdapter(
                HTTPHeaders([.init(name: "Accept", value: "a/b"), .init(name: "accept", value: "c/d")])))
        #expect(adapted.value(forHTTPHeaderField: "Accept") == "a/b,c/d")
    }

    @Test func reachesTheWireThroughTheManager() async throws {
        let stub = URLProtocolStub { _ in .response() }
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), adapters: [HeadersAdapter(["X-Client": "strata"])])
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        _ = await recorder.first()
        #expect(stub.requests.first?.value(forHTTPHeaderField: "X-Client") == "strata")
    }
}
