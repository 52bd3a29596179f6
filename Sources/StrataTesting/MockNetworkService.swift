import Dispatch
import Foundation
import StrataConfiguration
import StrataCore
import StrataEndpoint
import StrataService

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``/StrataService/NetworkService`` that records the request each endpoint builds and answers
/// with stubbed results, for testing the data-transfer layer without a session.
///
/// Requests are built against ``configuration`` exactly as the real service builds them, so a
/// test can check URLs, headers and bodies, and an endpoint that cannot be built fails the same way.
///
/// ```swift
/// let network = MockNetworkService()
/// network.enqueue(.success(NetworkResponse(statusCode: 200, body: Data(#"{"id": 1}"#.utf8))))
/// let transfer = DefaultDataTransferService(networkService: network, completionQueue: .global())
/// ```
public final class MockNetworkService: NetworkService {
    private struct State: Sendable {
        var queue: [Result<NetworkResponse, NetworkError>] = []
        var requests: [URLRequest] = []
    }

    /// The configuration requests are built against; by default `https://api.strata.test`.
    public let configuration: any NetworkConfigurable
    /// The result once the enqueued ones are used up: by default an empty `200`.
    public let fallback: Result<NetworkResponse, NetworkError>
    private let completionQueue: DispatchQueue?
    private let state = Locked(State())

    /// Creates a mock.
    /// - Parameters:
    ///   - configuration: The configuration requests are built against.
    ///   - results: Results used in order.
    ///   - fallback: The result once they are used up.
    ///   - completionQueue: Where completions run; `nil` runs them before `request` returns.
    public init(
        configuration: any NetworkConfigurable = NetworkConfiguration(baseURL: MockDefaults.baseURL),
        results: [Result<NetworkResponse, NetworkError>] = [],
        fallback: Result<NetworkResponse, NetworkError> = .success(NetworkResponse(statusCode: 200)),
        completionQueue: DispatchQueue? = .global()
    ) {
        self.configuration = configuration
        self.fallback = fallback
        self.completionQueue = completionQueue
        state.withLock { $0.queue = results }
    }

    /// Adds a result after those already enqueued.
    public func enqueue(_ result: Result<NetworkResponse, NetworkError>) {
        state.withLock { $0.queue.append(result) }
    }

    /// Every request built, in order.
    public var requests: [URLRequest] { state.value.requests }

    /// Builds and records the endpoint's request and answers with the next stubbed result.
    @discardableResult
    public func request(endpoint: any Requestable, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        let call = CancellableCompletion(cancelledWith: .failure(.cancelled), completion)
        let result: Result<NetworkResponse, NetworkError>
        do {
            let request = try endpoint.urlRequest(with: configuration)
            result = state.withLock { state in
                state.requests.append(request)
                return state.queue.isEmpty ? fallback : state.queue.removeFirst()
            }
        } catch {
            result = .failure(NetworkError(error))
        }
        if let completionQueue {
            completionQueue.async { call.complete(result) }
        } else {
            call.complete(result)
        }
        return call
    }
}

/// Defaults shared by the mocks.
public enum MockDefaults {
    /// `https://api.strata.test`, the base URL mocks build requests against by default.
    public static let baseURL: URL = URL(string: "https://api.strata.test") ?? URL(fileURLWithPath: "/")
}
