import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A started test server and a Strata stack pointed at it, torn down after `body`.
struct Harness: Sendable {
    let server: TestServer
    let manager: SessionManager
    let network: DefaultNetworkService
    let transfer: DefaultDataTransferService

    /// Runs `body` with a fresh server and stack.
    static func with<Result: Sendable>(
        timeout: TimeInterval = 10,
        headers: HTTPHeaders = ["X-Client": "strata-integration"],
        adapters: [any RequestAdapter] = [],
        retriers: [any RequestRetrier] = [],
        errorResolver: any DataTransferErrorResolver = DefaultDataTransferErrorResolver(),
        _ body: (Harness) async throws -> Result
    ) async throws -> Result {
        let server = try await TestServer.start()
        let session = URLSessionConfiguration.ephemeral
        session.timeoutIntervalForRequest = timeout
        let manager = SessionManager.underTest(configuration: session, adapters: adapters, retriers: retriers)
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: server.baseURL, headers: headers, timeoutInterval: timeout),
            sessionManager: manager
        )
        let transfer = DefaultDataTransferService(
            networkService: network, errorResolver: errorResolver, completionQueue: .global())
        let harness = Harness(server: server, manager: manager, network: network, transfer: transfer)
        do {
            let result = try await body(harness)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }
}

/// Adapts each request as `change` says, as an app's adapter would.
struct Changing: RequestAdapter {
    let change: @Sendable (inout URLRequest) -> Void
    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        var request = request
        change(&request)
        completion(.success(request))
    }
}

/// What the `/status/{code}` route answers with, as a domain error.
struct ServerStatus: Decodable, Error, Equatable {
    let status: Int
}

/// Runs `endpoint` through the network service and returns its result and how long it took.
func timed(
    _ endpoint: any Requestable,
    through service: any NetworkService
) async -> (result: Result<NetworkResponse, NetworkError>, elapsed: Duration, calls: Int) {
    let recorder = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
    let start = ContinuousClock.now
    service.request(endpoint: endpoint, completion: recorder.record)
    guard let result = await recorder.first(timeout: 30) else {
        return (.failure(.underlying(TimedOutWaiting())), ContinuousClock.now - start, recorder.callCount)
    }
    let elapsed = ContinuousClock.now - start
    try? await Task.sleep(for: .milliseconds(100))
    return (result, elapsed, recorder.callCount)
}

struct TimedOutWaiting: Error {}

extension EchoReply {
    /// The value of query item `name`.
    func queryValue(_ name: String) -> String? {
        query.first { $0.first == name }?.last
    }
}

/// The error `operation` fails with, or `nil` (and a recorded issue) if it succeeds.
func failure<Value>(
    of operation: () async throws(DataTransferError) -> Value,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> DataTransferError? {
    do {
        _ = try await operation()
        Issue.record("expected a failure", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// Starts `endpoint`, cancels it after `delay`, and checks that it completes with a cancellation
/// within `bound` of starting, and — after `settle`, long enough for the server to have answered —
/// that it completed exactly once.
func expectCancellation(
    of endpoint: Endpoint<Void>,
    through transfer: any DataTransferService,
    after delay: Duration = .milliseconds(400),
    within bound: Duration = .seconds(1),
    settle: Duration,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let recorder = CompletionRecorder<Result<Void, DataTransferError>>()
    let started = ContinuousClock.now
    let cancellable = transfer.request(with: endpoint, completion: recorder.record)
    try await Task.sleep(for: delay)
    cancellable.cancel()
    let result = try #require(await recorder.first(timeout: 5), sourceLocation: sourceLocation)
    #expect(ContinuousClock.now - started < bound, sourceLocation: sourceLocation)
    guard case .failure(let error) = result, error.isCancelled else {
        Issue.record("expected cancellation, got \(result)", sourceLocation: sourceLocation)
        return
    }
    try await Task.sleep(for: settle)
    #expect(recorder.callCount == 1, sourceLocation: sourceLocation)
}

/// The process's threads, from `/proc/self/status`; `nil` where there is none (Apple platforms).
func processThreadCount() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
    return line.flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) }
}
