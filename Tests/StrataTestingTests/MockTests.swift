import Foundation
import StrataConfiguration
import StrataCore
import StrataEndpoint
import StrataService
import StrataSession
import StrataTesting
import StrataTransfer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Item: Codable, Equatable, Sendable {
    let id: Int
}

@Suite struct MockNetworkSessionManagerTests {
    @Test func answersInOrderThenWithTheFallbackAndRecordsEveryRequest() async throws {
        let manager = MockNetworkSessionManager(
            responses: [.success(statusCode: 201, body: Data("first".utf8)), .failure(URLError(.timedOut))],
            fallback: .success(statusCode: 202),
            completionQueue: nil
        )
        let recorded = Locked<[(Data?, URLResponse?, (any Error)?)]>([])
        for path in ["a", "b", "c"] {
            manager.request(URLRequest(url: MockDefaults.baseURL.appendingPathComponent(path))) {
                data, response, error in
                recorded.withLock { $0.append((data, response, error)) }
            }
        }
        let outcomes = recorded.value
        #expect(outcomes.count == 3)
        #expect(outcomes[0].0 == Data("first".utf8))
        #expect((outcomes[0].1 as? HTTPURLResponse)?.statusCode == 201)
        #expect((outcomes[1].2 as? URLError)?.code == .timedOut)
        #expect((outcomes[2].1 as? HTTPURLResponse)?.statusCode == 202)
        #expect(manager.requests.map { $0.url?.lastPathComponent } == ["a", "b", "c"])
    }

    @Test func validatesStatusCodesLikeARealManager() {
        let manager = MockNetworkSessionManager(
            responses: [.success(statusCode: 500), .success(statusCode: 500)], completionQueue: nil)
        let errors = Locked<[SessionError?]>([])
        manager.request(URLRequest(url: MockDefaults.baseURL)) { _, _, error in
            errors.withLock { $0.append(error as? SessionError) }
        }
        manager.request(
            URLRequest(url: MockDefaults.baseURL), options: RequestOptions(acceptableStatusCodes: [500])
        ) { _, _, error in
            errors.withLock { $0.append(error as? SessionError) }
        }
        #expect(errors.value == [.unacceptableStatusCode(500), nil])
    }

    @Test func aPendingRequestCompletesOnlyWhenCancelled() async throws {
        let manager = MockNetworkSessionManager(responses: [.pending])
        let recorder = CompletionRecorder<Bool>()
        let cancellable = manager.request(URLRequest(url: MockDefaults.baseURL)) { _, _, error in
            recorder.record((error as? URLError)?.code == .cancelled)
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.callCount == 0)
        cancellable.cancel()
        #expect(await recorder.first() == true)
    }
}

@Suite struct MockNetworkServiceTests {
    @Test func buildsRequestsAgainstItsConfigurationAndRecordsThem() async throws {
        let network = MockNetworkService(
            configuration: NetworkConfiguration(
                baseURL: try #require(URL(string: "https://example.test/api")), headers: ["X-App": "1"]),
            results: [.success(NetworkResponse(statusCode: 200, body: Data("x".utf8)))]
        )
        let response = try await network.request(endpoint: Endpoint<Void>(path: "items", queryParameters: ["page": 2]))
        #expect(response.body == Data("x".utf8))
        let request = try #require(network.requests.first)
        #expect(request.url?.absoluteString == "https://example.test/api/items?page=2")
        #expect(request.value(forHTTPHeaderField: "X-App") == "1")
    }

    @Test func anEndpointThatCannotBeBuiltFailsAsTheRealServiceWould() async throws {
        let network = MockNetworkService()
        do {
            _ = try await network.request(endpoint: Endpoint<Void>(path: "no scheme", isFullPath: true))
            Issue.record("expected an error")
        } catch {
            guard case .urlGeneration = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        #expect(network.requests.isEmpty)
    }
}

@Suite struct MockDataTransferServiceTests {
    @Test func answersWithStubbedValuesInOrderAndRecordsRequests() async throws {
        let transfer = MockDataTransferService(stubs: [.value(Item(id: 1)), .value([Item(id: 2)])])
        #expect(try await transfer.request(Endpoint<Item>(path: "items/1")) == Item(id: 1))
        #expect(try await transfer.request(Endpoint<[Item]>(path: "items")) == [Item(id: 2)])
        #expect(transfer.requests.map { $0.url?.path } == ["/items/1", "/items"])
    }

    @Test func aResponseStubIsValidatedAndDecodedWithTheEndpointsDecoder() async throws {
        let transfer = MockDataTransferService(stubs: [
            .response(NetworkResponse(statusCode: 200, body: Data(#"{"id": 7}"#.utf8))),
            .response(NetworkResponse(statusCode: 404, body: Data("missing".utf8))),
        ])
        #expect(try await transfer.requestResponse(Endpoint<Item>(path: "x")).value == Item(id: 7))
        do {
            _ = try await transfer.request(Endpoint<Item>(path: "y"))
            Issue.record("expected an error")
        } catch {
            #expect(error.localizedDescription.contains("404"))
        }
    }

    @Test func aMissingStubOrAWrongTypeIsAFailureNeverASilentPass() async throws {
        let transfer = MockDataTransferService(stubs: [.value("not an item")])
        do {
            _ = try await transfer.request(Endpoint<Item>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .parsing(let mismatch as MockDataTransferService.TypeMismatch, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(mismatch.expected == "Item")
        }
        do {
            try await transfer.request(Endpoint<Void>(path: "nothing-left"))
            Issue.record("expected an error")
        } catch {
            guard case .resolvedNetworkFailure(let missing as MockDataTransferService.MissingStub) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(missing.url.hasSuffix("/nothing-left"))
        }
    }

    @Test func failureStubsAndPendingStubsBehaveAsRequestsWould() async throws {
        let transfer = MockDataTransferService(stubs: [.failure(.networkFailure(.notConnected)), .pending])
        do {
            try await transfer.request(Endpoint<Void>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .networkFailure(.notConnected) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        let recorder = CompletionRecorder<Result<Void, DataTransferError>>()
        let cancellable = transfer.request(with: Endpoint<Void>(path: "y"), completion: recorder.record)
        try await Task.sleep(for: .milliseconds(30))
        #expect(recorder.callCount == 0)
        cancellable.cancel()
        let result = try #require(await recorder.first())
        #expect((try? result.get()) == nil)
    }
}

@Suite struct URLProtocolStubTests {
    @Test func recordsRequestsWithTheirBodiesAndAnswersOnlyItsOwnHost() async throws {
        let stub = URLProtocolStub { request in .response(statusCode: 200, body: request.httpBody ?? Data()) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var request = URLRequest(url: stub.baseURL.appendingPathComponent("echo"))
        request.httpMethod = "POST"
        request.httpBody = Data("ping".utf8)
        let echoed = CompletionRecorder<Data?>()
        manager.request(request) { data, _, _ in echoed.record(data) }
        #expect(await echoed.first() == Data("ping".utf8))
        #expect(stub.requests.first?.httpBody == Data("ping".utf8))

        let unknown = CompletionRecorder<URLError.Code?>()
        let elsewhere = try #require(URL(string: "https://nobody.strata.test/x"))
        manager.request(URLRequest(url: elsewhere)) { _, _, error in unknown.record((error as? URLError)?.code) }
        #expect(await unknown.first() == .cannotFindHost)
    }

    @Test func theCompletionRecorderTimesOutWithNil() async {
        let recorder = CompletionRecorder<Int>()
        #expect(await recorder.first(timeout: 0.05) == nil)
        recorder.record(1)
        recorder.record(2)
        #expect(await recorder.first() == 1)
        #expect(recorder.values == [1, 2])
    }
}
