import Dispatch
import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataSession
import StrataTesting
import StrataTransfer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct User: Codable, Equatable, Sendable {
    let id: Int
    let name: String
}

struct APIError: Decodable, Error, Equatable {
    let code: String
    let message: String
}

func json(
    _ text: String, status: Int = 200, headers: HTTPHeaders = ["Content-Type": "application/json"]
) -> NetworkResponse {
    NetworkResponse(statusCode: status, headers: headers, body: Data(text.utf8))
}

/// A transfer service over a mock network that answers with `results`, completing on a private queue.
func makeService(
    _ results: [Result<NetworkResponse, NetworkError>],
    resolver: any DataTransferErrorResolver = DefaultDataTransferErrorResolver()
) -> (DefaultDataTransferService, MockNetworkService) {
    let network = MockNetworkService(results: results)
    let queue = DispatchQueue(label: "test.completion")
    return (
        DefaultDataTransferService(networkService: network, errorResolver: resolver, completionQueue: queue), network
    )
}

@Suite struct DecodingTests {
    @Test func decodesTheEndpointsResponseType() async throws {
        let (service, network) = makeService([.success(json(#"{"id": 1, "name": "Ann"}"#))])
        let user = try await service.request(Endpoint<User>(path: "users/1"))
        #expect(user == User(id: 1, name: "Ann"))
        #expect(network.requests.first?.url?.path == "/users/1")
    }

    @Test func aVoidEndpointSucceedsWithAnyBody() async throws {
        let (service, _) = makeService([.success(json("ignored")), .success(NetworkResponse(statusCode: 204))])
        try await service.request(Endpoint<Void>(path: "a", method: .delete))
        try await service.request(Endpoint<Void>(path: "b", method: .delete))
    }

    @Test(arguments: [204, 205, 200])
    func anEmptyBodyDecodesToEmpty(status: Int) async throws {
        let (service, _) = makeService([.success(NetworkResponse(statusCode: status))])
        #expect(try await service.request(Endpoint<Empty>(path: "x", method: .head)) == Empty())
    }

    @Test func anEmptyBodyWhereAValueWasExpectedIsNoResponse() async throws {
        let (service, _) = makeService([.success(NetworkResponse(statusCode: 200))])
        do {
            _ = try await service.request(Endpoint<User>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .noResponse = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func rawDataAndStringEndpointsTakeTheBodyAsItIs() async throws {
        let (service, _) = makeService([
            .success(json("plain text")), .success(NetworkResponse(statusCode: 200, body: Data([0, 1]))),
            .success(NetworkResponse(statusCode: 200)),
        ])
        #expect(try await service.request(Endpoint<String>(path: "text")) == "plain text")
        #expect(try await service.request(Endpoint<Data>(path: "bytes")) == Data([0, 1]))
        #expect(try await service.request(Endpoint<Data>(path: "empty")) == Data())
    }

    /// The data-transfer layer hands the decoder the response's media type: a `String` endpoint
    /// reads the charset it names.
    @Test func aStringEndpointReadsTheCharsetItsResponseNames() async throws {
        let latin1 = NetworkResponse(
            statusCode: 200, headers: ["Content-Type": "text/plain; charset=ISO-8859-1"],
            body: Data([0x63, 0x61, 0x66, 0xE9]))
        let (service, _) = makeService([.success(latin1)])
        #expect(try await service.request(Endpoint<String>(path: "text")) == "café")
    }

    @Test func aBodyThatDoesNotDecodeIsAParsingErrorKeepingTheRawBody() async throws {
        let (service, _) = makeService([.success(json(#"{"id": "one"}"#))])
        do {
            _ = try await service.request(Endpoint<User>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .parsing(let underlying, let body) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(underlying is DecodingError)
            #expect(body == Data(#"{"id": "one"}"#.utf8))
        }
    }

    @Test func requestResponseDeliversTheValueWithStatusAndHeaders() async throws {
        let (service, _) = makeService([
            .success(json(#"{"id": 2, "name": "Bo"}"#, status: 201, headers: ["Location": "/users/2"]))
        ])
        let response = try await service.requestResponse(Endpoint<User>(path: "users", method: .post))
        #expect(response.value == User(id: 2, name: "Bo"))
        #expect(response.statusCode == 201)
        #expect(response.response.headers["location"] == "/users/2")
    }
}

@Suite struct ErrorResolutionTests {
    @Test func networkErrorsPassThroughTheDefaultResolverUnchanged() async throws {
        let (service, _) = makeService([.failure(.notConnected)])
        do {
            _ = try await service.request(Endpoint<User>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .networkFailure(.notConnected) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func aJSONErrorBodyResolverTurnsTheServersErrorIntoADomainError() async throws {
        let body = json(#"{"code": "taken", "message": "Name is taken"}"#, status: 422)
        let (service, _) = makeService(
            [.failure(.unacceptableStatusCode(body))], resolver: JSONErrorBodyResolver<APIError>())
        do {
            _ = try await service.request(Endpoint<User>(path: "users", method: .post))
            Issue.record("expected an error")
        } catch {
            guard case .resolvedNetworkFailure(let resolved) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(resolved as? APIError == APIError(code: "taken", message: "Name is taken"))
        }
    }

    @Test func aBodyTheResolverCannotReadStaysANetworkFailure() async throws {
        let body = json("<html>Bad gateway</html>", status: 502)
        let (service, _) = makeService(
            [.failure(.unacceptableStatusCode(body))], resolver: JSONErrorBodyResolver<APIError>())
        do {
            try await service.request(Endpoint<Void>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .networkFailure(.unacceptableStatusCode(let response)) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(response.statusCode == 502)
        }
    }

    @Test func anErrorBodyNestedTooDeepIsNotDecodedAndStaysANetworkFailure() async throws {
        let depth = 100_000
        let body = json(
            String(repeating: #"{"code":"#, count: depth) + "0" + String(repeating: "}", count: depth), status: 400)
        let resolved = await runOnThread(stackSize: 512 * 1024) {
            JSONErrorBodyResolver<APIError>().resolve(error: .unacceptableStatusCode(body)) is NetworkError
        }
        #expect(resolved)
    }

    @Test func aSOAPFaultResolverTurnsAFaultIntoATypedError() async throws {
        let envelope = """
            <e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body><e:Fault>
            <faultcode>e:Server</faultcode><faultstring>Database unavailable</faultstring>
            </e:Fault></e:Body></e:Envelope>
            """
        let body = NetworkResponse(statusCode: 500, headers: ["Content-Type": "text/xml"], body: Data(envelope.utf8))
        let (service, _) = makeService([.failure(.unacceptableStatusCode(body))], resolver: SOAPFaultResolver())
        do {
            _ = try await service.request(Endpoint<User>(path: "soap", method: .post))
            Issue.record("expected an error")
        } catch {
            guard case .resolvedNetworkFailure(let resolved) = error, let fault = resolved as? SOAPFault else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(fault == SOAPFault(version: .v1_1, code: "Server", reason: "Database unavailable"))
        }
        let other = NetworkError.unacceptableStatusCode(json("<html>Bad gateway</html>", status: 502))
        #expect(SOAPFaultResolver().resolve(error: other) is NetworkError)
        let deep = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        let tooDeep = NetworkError.unacceptableStatusCode(json(deep, status: 500))
        #expect(SOAPFaultResolver().resolve(error: tooDeep) is NetworkError)
    }

    @Test func cancellationIsNeverOfferedToTheResolver() async throws {
        struct Counting: DataTransferErrorResolver {
            let calls: Locked<Int>
            func resolve(error: NetworkError) -> any Error {
                calls.withLock { $0 += 1 }
                return APIError(code: "x", message: "y")
            }
        }
        let calls = Locked(0)
        let (service, _) = makeService([.failure(.cancelled)], resolver: Counting(calls: calls))
        do {
            _ = try await service.request(Endpoint<User>(path: "x"))
        } catch {
            #expect(error.isCancelled)
        }
        #expect(calls.value == 0)
    }
}

@Suite struct CompletionContractTests {
    private static let queueKey = DispatchSpecificKey<String>()

    @Test func completionsRunOnTheConfiguredQueueAndDecodingDoesNot() async throws {
        let completionQueue = DispatchQueue(label: "strata.test.completion")
        completionQueue.setSpecific(key: Self.queueKey, value: "completion")
        struct RecordingDecoder: ResponseDecoder {
            let decodedOnCompletionQueue: Locked<Bool?>
            func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
                decodedOnCompletionQueue.withLock {
                    $0 = DispatchQueue.getSpecific(key: CompletionContractTests.queueKey) != nil
                }
                return try JSONDecoder().decode(type, from: data)
            }
        }
        let decodedOnCompletionQueue = Locked<Bool?>(nil)
        let service = DefaultDataTransferService(
            networkService: MockNetworkService(results: [.success(json(#"{"id": 1, "name": "A"}"#))]),
            completionQueue: completionQueue
        )
        let recorder = CompletionRecorder<Bool>()
        service.request(
            with: Endpoint<User>(
                path: "x", responseDecoder: RecordingDecoder(decodedOnCompletionQueue: decodedOnCompletionQueue))
        ) {
            (_: Result<User, DataTransferError>) in
            recorder.record(DispatchQueue.getSpecific(key: Self.queueKey) == "completion")
        }
        #expect(await recorder.first() == true)
        #expect(decodedOnCompletionQueue.value == false)
    }

    /// A service over a `SessionManager` whose answers come from `stub`, completing on a queue
    /// marked with ``queueKey``.
    private static func serviceOverASessionManager(answering stub: URLProtocolStub) -> DefaultDataTransferService {
        let completionQueue = DispatchQueue(label: "strata.test.completion")
        completionQueue.setSpecific(key: queueKey, value: "completion")
        return DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: stub.baseURL),
                sessionManager: SessionManager(
                    transport: URLSessionTransport(configuration: stub.makeSessionConfiguration()))),
            completionQueue: completionQueue)
    }

    /// Completions of successes from a session manager run on the completion queue, one at a time,
    /// whether handed over in place (`HandOver`) or queued: 40 at once, each holding the queue a while.
    @Test func successesFromASessionManagerRunOnTheConfiguredQueueOneAtATime() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 200, body: Data(#"{"id": 1, "name": "A"}"#.utf8)) }
        let service = Self.serviceOverASessionManager(answering: stub)
        let running = Locked(0)
        let recorder = CompletionRecorder<Bool>()
        let count = 40
        for _ in 0..<count {
            service.request(with: Endpoint<User>(path: "x")) { (result: Result<User, DataTransferError>) in
                let alone = running.withLock { running in
                    running += 1
                    return running == 1
                }
                // Long enough for other answers to arrive meanwhile.
                Thread.sleep(forTimeInterval: 0.002)
                running.withLock { $0 -= 1 }
                recorder.record(
                    alone && (try? result.get()) != nil && DispatchQueue.getSpecific(key: Self.queueKey) == "completion"
                )
            }
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while recorder.callCount < count, .now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(recorder.values == Array(repeating: true, count: count))
    }

    /// A success that is the service's only request under way runs on the thread that decoded it,
    /// as the completion queue's own work: no thread is woken for it.
    @Test func aLoneSuccessRunsOnTheThreadThatDecodedItAsTheQueuesWork() async throws {
        let stub = URLProtocolStub { _ in .response(statusCode: 200, body: Data(#"{"id": 1, "name": "A"}"#.utf8)) }
        struct ThreadRecordingDecoder: ResponseDecoder {
            let decodedOn: Locked<pthread_t?>
            func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
                decodedOn.withLock { $0 = pthread_self() }
                return try JSONDecoder().decode(type, from: data)
            }
        }
        let service = Self.serviceOverASessionManager(answering: stub)
        for _ in 0..<3 {
            let decodedOn = Locked<pthread_t?>(nil)
            let recorder = CompletionRecorder<Bool>()
            service.request(
                with: Endpoint<User>(path: "x", responseDecoder: ThreadRecordingDecoder(decodedOn: decodedOn))
            ) {
                (result: Result<User, DataTransferError>) in
                let sameThread = decodedOn.value.map { pthread_equal($0, pthread_self()) != 0 } ?? false
                recorder.record(
                    sameThread && (try? result.get()) != nil
                        && DispatchQueue.getSpecific(key: Self.queueKey) == "completion")
            }
            #expect(await recorder.first() == true)
        }
    }

    @Test func failuresAndCancellationsAlsoRunOnTheConfiguredQueue() async throws {
        let completionQueue = DispatchQueue(label: "strata.test.completion")
        completionQueue.setSpecific(key: Self.queueKey, value: "completion")
        let service = DefaultDataTransferService(
            networkService: MockNetworkService(
                results: [.failure(.timedOut), .success(json("{}"))], completionQueue: nil),
            completionQueue: completionQueue
        )
        let failed = CompletionRecorder<Bool>()
        service.request(with: Endpoint<Void>(path: "x")) { _ in
            failed.record(DispatchQueue.getSpecific(key: Self.queueKey) != nil)
        }
        #expect(await failed.first() == true)
        let cancelled = CompletionRecorder<Bool>()
        let pending = DefaultDataTransferService(networkService: Silent(), completionQueue: completionQueue)
        let cancellable = pending.request(with: Endpoint<Void>(path: "x")) { result in
            cancelled.record(DispatchQueue.getSpecific(key: Self.queueKey) != nil && (try? result.get()) == nil)
        }
        cancellable.cancel()
        #expect(await cancelled.first() == true)
    }

    @Test func cancelBeforeTheNetworkAnswersCompletesOnceWithCancelled() async throws {
        let service = DefaultDataTransferService(networkService: Silent(), completionQueue: .global())
        let recorder = CompletionRecorder<Result<User, DataTransferError>>()
        let cancellable = service.request(with: Endpoint<User>(path: "x"), completion: recorder.record)
        cancellable.cancel()
        let result = try #require(await recorder.first())
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.isCancelled)
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.callCount == 1)
    }

    @Test func thousandsOfCancelsRacingCompletionsEachCompleteExactlyOnce() async throws {
        let network = MockNetworkService(fallback: .success(json(#"{"id": 1, "name": "A"}"#)))
        let service = DefaultDataTransferService(
            networkService: network, completionQueue: DispatchQueue(label: "race", attributes: .concurrent))
        var recorders: [CompletionRecorder<Result<User, DataTransferError>>] = []
        for iteration in 0..<5_000 {
            let recorder = CompletionRecorder<Result<User, DataTransferError>>()
            let cancellable = service.request(with: Endpoint<User>(path: "x"), completion: recorder.record)
            if !iteration.isMultiple(of: 3) {
                DispatchQueue.global().async { cancellable.cancel() }
            }
            recorders.append(recorder)
        }
        var succeeded = 0
        var cancelled = 0
        for recorder in recorders {
            switch try #require(await recorder.first()) {
            case .success: succeeded += 1
            case .failure(let error):
                #expect(error.isCancelled)
                cancelled += 1
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorders.allSatisfy { $0.callCount == 1 })
        #expect(succeeded + cancelled == 5_000)
        #expect(succeeded >= 1_667)
    }
}

@Suite struct AsyncBridgeTests {
    @Test func asyncCallsDoNotGoThroughTheCompletionQueue() async throws {
        // A suspended completion queue never runs anything: the async API must return regardless,
        // as it must on Linux when the completion queue is a main queue nobody drains.
        let suspended = DispatchQueue(label: "strata.test.suspended")
        suspended.suspend()
        defer { suspended.resume() }
        let results: [Result<NetworkResponse, NetworkError>] = [
            .success(json(#"{"id": 3, "name": "C"}"#)), .success(json("{}")),
            .success(json(#"{"id": 4, "name": "D"}"#)),
        ]
        // Called through the existential, as a repository holds it.
        let service: any DataTransferService = DefaultDataTransferService(
            networkService: MockNetworkService(results: results),
            completionQueue: suspended
        )
        #expect(try await service.request(Endpoint<User>(path: "x")).id == 3)
        try await service.request(Endpoint<Void>(path: "y"))
        #expect(try await service.requestResponse(Endpoint<User>(path: "z")).value.id == 4)
    }

    @Test func asyncCallsDecodeInTheirTaskNotWhereTheResponseArrives() async throws {
        // The network service answers on a queue of its own, as URLSessionManager does on its
        // delegate queue: a decode there would hold up every other request's callbacks.
        let key = DispatchSpecificKey<Bool>()
        let arrival = DispatchQueue(label: "strata.test.arrival")
        arrival.setSpecific(key: key, value: true)
        struct RecordingDecoder: ResponseDecoder {
            let key: DispatchSpecificKey<Bool>
            let decodedWhereTheResponseArrived: Locked<Bool?>
            func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
                decodedWhereTheResponseArrived.withLock { $0 = DispatchQueue.getSpecific(key: key) ?? false }
                return try JSONDecoder().decode(type, from: data)
            }
        }
        let recorded = Locked<Bool?>(nil)
        let service = DefaultDataTransferService(
            networkService: MockNetworkService(
                results: [.success(json(#"{"id": 5, "name": "E"}"#))], completionQueue: arrival)
        )
        let endpoint = Endpoint<User>(
            path: "x", responseDecoder: RecordingDecoder(key: key, decodedWhereTheResponseArrived: recorded))
        #expect(try await service.request(endpoint).id == 5)
        #expect(recorded.value == false)
    }

    @Test func throwsTheTypedError() async {
        let (service, _) = makeService([.failure(.timedOut)])
        do {
            try await service.request(Endpoint<Void>(path: "x"))
            Issue.record("expected an error")
        } catch {
            guard case .networkFailure(.timedOut) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func cancellingTheSwiftTaskCancelsTheRequest() async throws {
        let cancelled = Locked(false)
        let service = DefaultDataTransferService(
            networkService: Silent(cancelled: cancelled), completionQueue: .global())
        let task = Task { try await service.request(Endpoint<User>(path: "slow")) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let result = await task.result
        #expect((result.failure as? DataTransferError)?.isCancelled == true)
        #expect(cancelled.value)
    }
}

/// A network service that never answers on its own: only cancellation ends its requests, so a test
/// that cancels never races an answer.
private struct Silent: NetworkService {
    var cancelled = Locked(false)
    func request(endpoint: any Requestable, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        CancellableCompletion(cancelledWith: ()) { cancelled.withLock { $0 = true } }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
