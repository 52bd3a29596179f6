import Foundation
import Strata
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A small users API, answered by a URLProtocol stub through a real URLSession.
private func usersAPI(_ request: URLRequest) -> URLProtocolStub.Reply {
    let json = ["Content-Type": "application/json"]
    switch (request.httpMethod ?? "GET", request.url?.path ?? "") {
    case ("GET", "/v1/users"):
        let query =
            URLComponents(url: request.url ?? URL(fileURLWithPath: "/"), resolvingAgainstBaseURL: false)?.queryItems
            ?? []
        let name = query.first { $0.name == "q" }?.value ?? ""
        return .response(statusCode: 200, headers: json, body: Data(#"[{"id": 1, "name": "\#(name)"}]"#.utf8))
    case ("POST", "/v1/users"):
        guard request.value(forHTTPHeaderField: "X-API-Key") == "secret" else {
            return .response(statusCode: 401, headers: json, body: Data(#"{"code": "auth", "message": "No key"}"#.utf8))
        }
        let body = request.httpBody ?? Data()
        if body == Data(#"{"name":"taken"}"#.utf8) {
            return .response(
                statusCode: 422, headers: json, body: Data(#"{"code": "taken", "message": "Name is taken"}"#.utf8))
        }
        return .response(
            statusCode: 201, headers: json.merging(["Location": "/v1/users/2"]) { $1 },
            body: Data(#"{"id": 2, "name": "Ann"}"#.utf8))
    case ("DELETE", _):
        return .response(statusCode: 204)
    case ("GET", "/v1/slow"):
        // A minute of transfer, so a cancel lands mid-way however late a loaded machine wakes the
        // test: with ThreadSanitizer on 2 cores, the shared pool has kept it waiting over 5 s.
        return .response(statusCode: 200, body: Data(repeating: 0x41, count: 4_000), chunks: 1_000, chunkInterval: 0.06)
    default:
        return .response(statusCode: 404)
    }
}

private struct Stack {
    let stub: URLProtocolStub
    let transfer: DefaultDataTransferService

    init(resolver: any DataTransferErrorResolver = DefaultDataTransferErrorResolver()) {
        stub = URLProtocolStub(handler: usersAPI)
        let configuration = NetworkConfiguration(
            baseURL: stub.baseURL.appendingPathComponent("v1"),
            headers: ["Accept": "application/json"]
        )
        let sessionManager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), adapters: [APIKeyAdapter(key: "secret")])
        let network = DefaultNetworkService(configuration: configuration, sessionManager: sessionManager)
        transfer = DefaultDataTransferService(
            networkService: network, errorResolver: resolver, completionQueue: .global())
    }
}

@Suite struct EndToEndTests {
    @Test func aTypedEndpointRunsThroughEveryLayerOverARealURLSession() async throws {
        let stack = Stack()
        let users = try await stack.transfer.request(UserEndpoints.search("ann lee", page: 1))
        #expect(users.map(\.name) == ["ann lee"])
        let request = try #require(stack.stub.requests.first)
        #expect(request.url?.path == "/v1/users")
        #expect(request.url?.query == "page=1&q=ann%20lee")
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "secret")
    }

    @Test func aJSONBodyIsSentAndTheResponseDecodedWithItsMetadata() async throws {
        let stack = Stack()
        let created = try await stack.transfer.requestResponse(UserEndpoints.create(NewUser(name: "Ann")))
        #expect(created.value.id == 2)
        #expect(created.statusCode == 201)
        #expect(created.response.headers["location"] == "/v1/users/2")
        #expect(stack.stub.requests.first?.httpBody == Data(#"{"name":"Ann"}"#.utf8))
        #expect(stack.stub.requests.first?.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func anErrorBodyReachesTheErrorResolverAsADomainError() async throws {
        let stack = Stack(resolver: JSONErrorBodyResolver<APIError>())
        do {
            _ = try await stack.transfer.request(UserEndpoints.create(NewUser(name: "taken")))
            Issue.record("expected an error")
        } catch {
            guard case .resolvedNetworkFailure(let resolved as APIError) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(resolved.code == "taken")
        }
    }

    @Test func anEmptyNoContentResponseSucceedsAsVoid() async throws {
        let stack = Stack()
        try await stack.transfer.request(UserEndpoints.delete(id: 3))
        #expect(stack.stub.requests.first?.httpMethod == "DELETE")
    }

    @Test func cancellingMidTransferCompletesOnceWithCancelled() async throws {
        let stack = Stack()
        let recorder = CompletionRecorder<Result<Data, DataTransferError>>()
        let cancellable = stack.transfer.request(with: Endpoint<Data>(path: "slow"), completion: recorder.record)
        try await Task.sleep(for: .milliseconds(300))
        cancellable.cancel()
        let result = try #require(await recorder.first())
        guard case .failure(let error) = result else {
            Issue.record("expected cancellation, got \(result)")
            return
        }
        #expect(error.isCancelled)
        try await Task.sleep(for: .milliseconds(1_200))
        #expect(recorder.callCount == 1)
    }

    @Test func releasingEveryServiceMidFlightStillCompletesOnce() async throws {
        let stub = URLProtocolStub { _ in
            .response(statusCode: 200, body: Data(#"[{"id": 5, "name": "late"}]"#.utf8), delay: 0.3)
        }
        let recorder = CompletionRecorder<Result<[User], DataTransferError>>()
        do {
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: stub.baseURL),
                    sessionManager: URLSessionManager(configuration: stub.makeSessionConfiguration())
                ),
                completionQueue: .global()
            )
            transfer.request(with: UserEndpoints.search("x", page: 1), completion: recorder.record)
        }
        let result = try #require(await recorder.first())
        #expect(try result.get().first?.name == "late")
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.callCount == 1)
    }

    @Test func cancelRacingCompletionThroughEveryLayerCompletesExactlyOnce() async throws {
        let stack = Stack()
        var recorders: [CompletionRecorder<Result<[User], DataTransferError>>] = []
        for iteration in 0..<1_000 {
            let recorder = CompletionRecorder<Result<[User], DataTransferError>>()
            let cancellable = stack.transfer.request(
                with: UserEndpoints.search("x", page: iteration), completion: recorder.record)
            if iteration.isMultiple(of: 2) {
                DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(iteration % 300)) {
                    cancellable.cancel()
                }
            }
            recorders.append(recorder)
        }
        for recorder in recorders {
            switch try #require(await recorder.first()) {
            case .success(let users): #expect(users.count == 1)
            case .failure(let error): #expect(error.isCancelled, "\(error)")
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorders.allSatisfy { $0.callCount == 1 })
    }
}
