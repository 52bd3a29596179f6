import Dispatch
import Foundation
import StrataConfiguration
import StrataCore
import StrataEndpoint
import StrataService
import StrataSession

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
    /// An enqueued answer: a whole result, or a streamed response.
    private enum Answer: Sendable {
        case result(Result<NetworkResponse, NetworkError>)
        case stream(StreamScript)
    }

    private struct State: Sendable {
        var queue: [Answer] = []
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
    ///   - completionQueue: Where completions run, a cancellation's too (after `cancel()` returns,
    ///     as the real layers complete one); `nil` runs them before `request` or `cancel()` returns.
    public init(
        configuration: any NetworkConfigurable = NetworkConfiguration(baseURL: MockDefaults.baseURL),
        results: [Result<NetworkResponse, NetworkError>] = [],
        fallback: Result<NetworkResponse, NetworkError> = .success(NetworkResponse(statusCode: 200)),
        completionQueue: DispatchQueue? = .global()
    ) {
        self.configuration = configuration
        self.fallback = fallback
        self.completionQueue = completionQueue
        state.withLock { $0.queue = results.map(Answer.result) }
    }

    /// Adds a result after those already enqueued.
    public func enqueue(_ result: Result<NetworkResponse, NetworkError>) {
        state.withLock { $0.queue.append(.result(result)) }
    }

    /// Adds a streamed response after those already enqueued: played part by part to a stream
    /// (``/StrataService/NetworkService/stream(endpoint:to:)``), collected whole for a request.
    public func enqueue(stream script: StreamScript) {
        state.withLock { $0.queue.append(.stream(script)) }
    }

    /// Every request built, in order.
    public var requests: [URLRequest] { state.value.requests }

    /// Builds and records the endpoint's request and answers with the next stubbed result.
    @discardableResult
    public func request(endpoint: any Requestable, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        let call = CancellableCompletion(cancelledWith: .failure(.cancelled), on: completionQueue, completion)
        let result: Result<NetworkResponse, NetworkError>
        switch next(endpoint) {
        case .result(let answer):
            result = answer
        case .stream(let script):
            // Collected whole, as a request that is not streamed is.
            let slot = ExchangeSlot()
            slot.set(stream(script, for: endpoint, to: CollectingReceiver(slot) { call.complete($0) }))
            call.attach(slot)
            return call
        }
        if let completionQueue {
            completionQueue.async { call.complete(result) }
        } else {
            call.complete(result)
        }
        return call
    }

    /// Builds and records the endpoint's request and plays the next stubbed answer to `receiver`:
    /// a streamed one part by part, a whole one as one part; a status the endpoint does not accept
    /// ends it with ``/StrataService/NetworkError/unacceptableStatusCode(_:)`` and its body.
    public func stream(endpoint: any Requestable, to receiver: any ResponseReceiver) -> any ResponseExchange {
        switch next(endpoint) {
        case .result(.failure(let error)):
            return ResponsePlayback.start(head: nil, steps: [.fail(error)], to: receiver)
        case .result(.success(let response)):
            let script = StreamScript(
                statusCode: response.statusCode, headers: response.headers.dictionary, steps: [.part(response.body)])
            return stream(script, for: endpoint, to: receiver)
        case .stream(let script):
            return stream(script, for: endpoint, to: receiver)
        }
    }

    private func stream(
        _ script: StreamScript, for endpoint: any Requestable, to receiver: any ResponseReceiver
    ) -> any ResponseExchange {
        let url = (try? endpoint.urlRequest(with: configuration))?.url ?? MockDefaults.baseURL
        let acceptable = endpoint.options.acceptableStatusCodes ?? RequestOptions.defaultAcceptableStatusCodes
        return script.play(url: url, acceptable: acceptable, to: NetworkFailures(receiver)) { outcome in
            NetworkFailures.error(outcome)
        }
    }

    /// Builds and records the endpoint's request and takes the next answer; a request that cannot
    /// be built is the failure, and one whose options are out of range is
    /// ``/StrataService/NetworkError/invalidRequest(_:)`` (recorded, no answer used), as a real
    /// session manager refuses it unsent.
    private func next(_ endpoint: any Requestable) -> Answer {
        do {
            let request = try endpoint.urlRequest(with: configuration)
            let checked = Result { () throws(RequestValidationError) in try endpoint.options.validate() }
            return state.withLock { state in
                state.requests.append(request)
                if case .failure(let refused) = checked { return .result(.failure(.invalidRequest(refused))) }
                return state.queue.isEmpty ? .result(fallback) : state.queue.removeFirst()
            }
        } catch {
            return .result(.failure(NetworkError(error)))
        }
    }

}

/// Defaults shared by the mocks.
public enum MockDefaults {
    /// `https://api.strata.test`, the base URL mocks build requests against by default.
    public static let baseURL: URL = URL(string: "https://api.strata.test") ?? URL(fileURLWithPath: "/")
}

/// Ends a played stream with a ``/StrataService/NetworkError``, as the real service does.
private final class NetworkFailures: ResponseReceiver {
    private let receiver: any ResponseReceiver

    init(_ receiver: any ResponseReceiver) {
        self.receiver = receiver
    }

    static func error(_ outcome: TransportOutcome) -> NetworkError {
        let error = outcome.error ?? SessionError.invalidResponse
        if let error = error as? NetworkError { return error }
        return NetworkError(
            error, response: outcome.head.map { NetworkResponse($0, body: outcome.body) }, data: outcome.body)
    }

    func receive(_ head: ResponseHead) { receiver.receive(head) }
    func receive(_ part: Data) { receiver.receive(part) }
    func finish(_ error: (any Error)?) {
        receiver.finish(error.map { Self.error(TransportOutcome(head: nil, error: $0)) })
    }
}

/// Collects a played stream whole, as a request's result.
private final class CollectingReceiver: ResponseReceiver, @unchecked Sendable {  // The relay's lock orders the calls.
    private var head: ResponseHead?
    private var body = Data()
    private let exchange: any ResponseExchange
    private let completion: @Sendable (Result<NetworkResponse, NetworkError>) -> Void

    init(
        _ exchange: any ResponseExchange,
        _ completion: @escaping @Sendable (Result<NetworkResponse, NetworkError>) -> Void
    ) {
        self.exchange = exchange
        self.completion = completion
    }

    func receive(_ head: ResponseHead) {
        self.head = head
        exchange.demand()
    }

    func receive(_ part: Data) {
        body.append(part)
        exchange.demand()
    }

    func finish(_ error: (any Error)?) {
        if let error = error as? NetworkError {
            completion(.failure(error))
        } else if let head {
            completion(.success(NetworkResponse(head, body: body)))
        } else {
            completion(.failure(.invalidResponse))
        }
    }
}
