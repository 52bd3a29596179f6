import Dispatch
import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataSession
import StrataTransfer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``/StrataTransfer/DataTransferService`` that records the request each endpoint builds and
/// answers with stubbed values, for testing repositories without a network.
///
/// ```swift
/// let transfer = MockDataTransferService()
/// transfer.enqueue(.value(User(id: 1, name: "Ann")))
/// let repository = UserRepository(transfer: transfer)
/// let user = try await repository.user(id: 1)
/// #expect(transfer.requests.first?.url?.path == "/users/1")
/// ```
///
/// Stubs are used in order. A request with no stub left fails with
/// ``/StrataTransfer/DataTransferError/resolvedNetworkFailure(_:)`` carrying ``MissingStub``, so a test never
/// passes by accident. A request whose options are out of range fails as over a real service, with
/// ``/StrataTransfer/DataTransferError/networkFailure(_:)`` of
/// ``/StrataService/NetworkError/invalidRequest(_:)``; it is recorded, and no stub is used.
public final class MockDataTransferService: DataTransferService {
    /// A stubbed answer.
    public enum Stub: Sendable {
        /// This value, if it is the endpoint's `Response` type (any value answers a `Void` endpoint).
        case value(any Sendable)
        /// This response, validated and decoded as the real service would, with the endpoint's decoder.
        case response(NetworkResponse)
        /// This failure.
        case failure(DataTransferError)
        /// No answer until the request is cancelled.
        case pending
        /// This streamed response, decoded part by part as the stream asks (for
        /// ``/StrataTransfer/DataTransferService/stream(_:decoding:on:receive:completion:)``); an
        /// array of elements in `.value` is handed on as it is.
        case stream(StreamScript)
    }

    /// The error of a request for which no stub was left.
    public struct MissingStub: Error, Hashable, Sendable {
        /// The URL of the request that had no stub.
        public let url: String
    }

    /// The error of a `.value` stub whose type is not the endpoint's `Response`.
    public struct TypeMismatch: Error, Hashable, Sendable {
        /// The type the endpoint expects.
        public let expected: String
        /// The type of the stubbed value.
        public let found: String
    }

    private struct State: Sendable {
        var stubs: [Stub] = []
        var requests: [URLRequest] = []
    }

    /// The configuration requests are built against; by default `https://api.strata.test`.
    public let configuration: any NetworkConfigurable
    private let completionQueue: DispatchQueue?
    private let state = Locked(State())

    /// Creates a mock.
    /// - Parameters:
    ///   - configuration: The configuration requests are built against.
    ///   - stubs: Answers used in order.
    ///   - completionQueue: Where completions run, a cancellation's too (after `cancel()` returns,
    ///     as the real layers complete one); `nil` runs them before `request` or `cancel()` returns.
    public init(
        configuration: any NetworkConfigurable = NetworkConfiguration(baseURL: MockDefaults.baseURL),
        stubs: [Stub] = [],
        completionQueue: DispatchQueue? = .global()
    ) {
        self.configuration = configuration
        self.completionQueue = completionQueue
        state.withLock { $0.stubs = stubs }
    }

    /// Adds an answer after those already enqueued.
    public func enqueue(_ stub: Stub) {
        state.withLock { $0.stubs.append(stub) }
    }

    /// Every request built, in order.
    public var requests: [URLRequest] { state.value.requests }

    /// Records the endpoint's request and answers with the next stub.
    @discardableResult
    public func request<E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<Void>
    ) -> any NetworkCancellable where E.Response == Void {
        answer(endpoint, completion: completion) { stub, _ in
            switch stub {
            case .value: return .success(())
            case .response(let response): return Self.validate(response, for: endpoint).map { _ in () }
            case .failure(let error): return .failure(error)
            case .pending: return nil
            case .stream:
                return .failure(.parsing(TypeMismatch(expected: "a whole response", found: "a stream"), body: Data()))
            }
        }
    }

    /// Records the endpoint's request and answers with the next stub, with its response.
    @discardableResult
    public func requestResponse<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<DataTransferResponse<T>>
    ) -> any NetworkCancellable where E.Response == T {
        answer(endpoint, completion: completion) { stub, url in
            switch stub {
            case .value(let value):
                guard let typed = value as? T else {
                    let mismatch = TypeMismatch(
                        expected: String(describing: T.self), found: String(describing: type(of: value)))
                    return .failure(.parsing(mismatch, body: Data()))
                }
                return .success(
                    DataTransferResponse(value: typed, response: NetworkResponse(statusCode: 200, url: url)))
            case .response(let response):
                let decode = DefaultDataTransferService.decoder(for: endpoint)
                return Self.validate(response, for: endpoint).flatMap { response in
                    Result { () throws(DataTransferError) in
                        DataTransferResponse(value: try decode(response), response: response)
                    }
                }
            case .failure(let error):
                return .failure(error)
            case .pending:
                return nil
            case .stream:
                let mismatch = TypeMismatch(expected: String(describing: T.self), found: "a stream")
                return .failure(.parsing(mismatch, body: Data()))
            }
        }
    }

    /// Records the endpoint's request and plays the next stub through `decoder`: a
    /// ``Stub/stream(_:)`` part by part, a ``Stub/response(_:)`` as one part, a ``Stub/value(_:)``
    /// holding an array of elements (or one) as they are.
    @discardableResult
    public func stream<Decoder: StreamDecoder>(
        _ endpoint: any Requestable,
        decoding decoder: Decoder,
        on queue: DispatchQueue?,
        receive: @escaping @Sendable (Decoder.Element) -> Void,
        completion: @escaping CompletionHandler<Void>
    ) -> any NetworkCancellable {
        let consumer = DecodingConsumer(
            decoder, delivery: queue ?? completionQueue, receive: receive, mapError: Self.streamError,
            completion: { completion($0.map { _ in () }) })
        let url: URL
        let stub: Stub?
        do {
            let request = try endpoint.urlRequest(with: configuration)
            url = request.url ?? MockDefaults.baseURL
            stub = try take(request, checking: endpoint.options)
        } catch {
            consumer.start(ResponsePlayback.start(head: nil, steps: [.fail(NetworkError(error))], to: consumer))
            return consumer
        }
        let acceptable = endpoint.options.acceptableStatusCodes ?? RequestOptions.defaultAcceptableStatusCodes
        let unacceptable: @Sendable (TransportOutcome) -> any Error = { outcome in
            guard let head = outcome.head else { return outcome.error ?? URLError(.badServerResponse) }
            return DataTransferError.networkFailure(.unacceptableStatusCode(NetworkResponse(head, body: outcome.body)))
        }
        switch stub {
        case nil:
            let missing = DataTransferError.resolvedNetworkFailure(MissingStub(url: url.absoluteString))
            consumer.start(ResponsePlayback.start(head: nil, steps: [.fail(missing)], to: consumer))
        case .failure(let error):
            consumer.start(ResponsePlayback.start(head: nil, steps: [.fail(error)], to: consumer))
        case .pending:
            consumer.start(ResponseRelay(to: consumer))
        case .stream(let script):
            consumer.start(script.play(url: url, acceptable: acceptable, to: consumer, failure: unacceptable))
        case .response(let response):
            let script = StreamScript(
                statusCode: response.statusCode, headers: response.headers.dictionary, steps: [.part(response.body)])
            consumer.start(script.play(url: url, acceptable: acceptable, to: consumer, failure: unacceptable))
        case .value(let value):
            let elements = (value as? [Decoder.Element]) ?? (value as? Decoder.Element).map { [$0] }
            guard let elements else {
                let mismatch = TypeMismatch(
                    expected: "[\(Decoder.Element.self)]", found: String(describing: type(of: value)))
                let error = DataTransferError.parsing(mismatch, body: Data())
                consumer.start(ResponsePlayback.start(head: nil, steps: [.fail(error)], to: consumer))
                return consumer
            }
            let call = CancellableCompletion(
                cancelledWith: .failure(.networkFailure(.cancelled)), on: queue ?? completionQueue, completion)
            let deliver: @Sendable () -> Void = {
                for element in elements where !call.isCompleted { receive(element) }
                call.complete(.success(()))
            }
            if let queue = queue ?? completionQueue { queue.async(execute: deliver) } else { deliver() }
            return call
        }
        return consumer
    }

    /// What ends a played stream, as the data-transfer layer says it (with no resolver of its own).
    private static func streamError(_ error: any Error) -> DataTransferError {
        DefaultDataTransferService.streamError(error, with: DefaultDataTransferErrorResolver())
    }

    /// Builds and records the request, takes the next stub, and completes with what `resolve` makes
    /// of it (`nil` leaves the request pending until cancelled).
    private func answer<Value: Sendable>(
        _ endpoint: some Requestable,
        completion: @escaping CompletionHandler<Value>,
        resolve: (Stub, URL?) -> Result<Value, DataTransferError>?
    ) -> any NetworkCancellable {
        let call = CancellableCompletion(
            cancelledWith: .failure(.networkFailure(.cancelled)), on: completionQueue, completion)
        let result: Result<Value, DataTransferError>?
        do {
            let request = try endpoint.urlRequest(with: configuration)
            if let stub = try take(request, checking: endpoint.options) {
                result = resolve(stub, request.url)
            } else {
                result = .failure(.resolvedNetworkFailure(MissingStub(url: request.url?.absoluteString ?? "")))
            }
        } catch {
            result = .failure(.networkFailure(NetworkError(error)))
        }
        guard let result else { return call }
        if let completionQueue {
            completionQueue.async { call.complete(result) }
        } else {
            call.complete(result)
        }
        return call
    }

    /// Records `request` and takes the next stub, if any; throws, taking none, when `options` are
    /// out of range, as a real session manager refuses such a request unsent.
    private func take(
        _ request: URLRequest, checking options: RequestOptions
    ) throws(RequestGenerationError) -> Stub? {
        let checked = Result { () throws(RequestValidationError) in try options.validate() }
            .mapError(RequestGenerationError.invalidRequest)
        let stub = state.withLock { state -> Stub? in
            state.requests.append(request)
            guard case .success = checked, !state.stubs.isEmpty else { return nil }
            return state.stubs.removeFirst()
        }
        try checked.get()
        return stub
    }

    private static func validate(
        _ response: NetworkResponse, for endpoint: some Requestable
    )
        -> Result<NetworkResponse, DataTransferError>
    {
        let acceptable = endpoint.options.acceptableStatusCodes ?? RequestOptions.defaultAcceptableStatusCodes
        guard acceptable.contains(response.statusCode) else {
            return .failure(.networkFailure(.unacceptableStatusCode(response)))
        }
        return .success(response)
    }
}
