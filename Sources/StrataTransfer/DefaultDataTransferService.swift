import Dispatch
import Foundation
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService

/// The standard ``DataTransferService``: runs endpoints through a ``/StrataService/NetworkService``,
/// decodes off the completion queue, resolves errors, and completes exactly once on its completion
/// queue.
///
/// ```swift
/// let transfer = DefaultDataTransferService(
///     networkService: DefaultNetworkService(configuration: configuration),
///     errorResolver: JSONErrorBodyResolver<APIError>(),
///     completionQueue: .main
/// )
/// ```
///
/// The completion queue defaults to `.main`, as an app expects. A command-line program or a server
/// on Linux, whose main queue may never run, passes its own queue or uses the async methods, which
/// do not go through the completion queue at all.
///
/// A decoded success goes to the completion queue from the thread of Strata's that decoded it:
/// unless the queue is `.main`, or other requests of this service's are under way, that thread
/// runs the completion as the queue's own work (`sync`) rather than waking another for it. For the
/// completion nothing changes — it runs on the queue, after what was queued before it, never
/// beside the queue's other work — but a request costs one thread wake-up less. Failures and
/// cancellations are queued (`async`), as they may come from the caller's own code.
public struct DefaultDataTransferService: DataTransferService {
    /// The service requests go through.
    public let networkService: any NetworkService
    /// The resolver network errors go through.
    public let errorResolver: any DataTransferErrorResolver
    /// The queue completions run on.
    public let completionQueue: DispatchQueue
    /// How completions get to the completion queue.
    private let handOver: HandOver

    /// The callback methods decode bodies up to this size where the response arrives (for a
    /// `SessionManager`, a queue of the request's own, never the transport's delegate queue): that
    /// takes a few tens of microseconds, less than a hand-off to another thread. Larger bodies are
    /// decoded on a queue of their own, so a long decode never holds up other requests'
    /// callbacks. (The async methods decode in their own task.)
    static let inlineDecodingLimit = 16_384

    /// Creates a service.
    /// - Parameters:
    ///   - networkService: The service requests go through.
    ///   - errorResolver: Maps network errors to your errors; by default leaves them as they are.
    ///   - completionQueue: Where completions run; by default `.main`.
    public init(
        networkService: any NetworkService,
        errorResolver: any DataTransferErrorResolver = DefaultDataTransferErrorResolver(),
        completionQueue: DispatchQueue = .main
    ) {
        self.networkService = networkService
        self.errorResolver = errorResolver
        self.completionQueue = completionQueue
        self.handOver = HandOver(to: completionQueue)
    }

    /// Runs `endpoint`; any acceptable status succeeds, whatever the body.
    @discardableResult
    public func request<E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<Void>
    ) -> any NetworkCancellable where E.Response == Void {
        run(endpoint, decode: { _ in { completion(.success(())) } }, fail: { completion(.failure($0)) })
    }

    /// Runs `endpoint` and decodes its response with the endpoint's decoder.
    @discardableResult
    public func request<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<T>
    ) -> any NetworkCancellable where E.Response == T {
        decoding(endpoint, failing: completion) { value, _ in completion(.success(value)) }
    }

    /// Runs `endpoint` and decodes its response with the endpoint's decoder, delivering the value
    /// with its response.
    @discardableResult
    public func requestResponse<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<DataTransferResponse<T>>
    ) -> any NetworkCancellable where E.Response == T {
        decoding(endpoint, failing: completion) { value, response in
            completion(.success(DataTransferResponse(value: value, response: response)))
        }
    }

    /// ``run(_:decode:fail:)`` with the endpoint's decoder: `deliver` gets the value and its
    /// response, `completion` a failure.
    private func decoding<E: ResponseRequestable, Delivered>(
        _ endpoint: E,
        failing completion: @escaping CompletionHandler<Delivered>,
        deliver: @escaping @Sendable (E.Response, NetworkResponse) -> Void
    ) -> any NetworkCancellable where E.Response: Decodable & Sendable {
        let decodeValue = Self.decoder(for: endpoint)
        return run(
            endpoint,
            decode: { response throws(DataTransferError) in
                let value = try decodeValue(response)
                return { deliver(value, response) }
            },
            fail: { completion(.failure($0)) })
    }

    /// Runs `endpoint` and returns its decoded response, without going through the completion queue.
    public func request<E: ResponseRequestable>(_ endpoint: E) async throws(DataTransferError) -> E.Response
    where E.Response: Decodable & Sendable {
        try await reporting { () async throws(DataTransferError) in
            try Self.decode(try await response(for: endpoint), for: endpoint)
        }
    }

    /// Runs `endpoint`, which yields no value, without going through the completion queue.
    public func request<E: ResponseRequestable>(_ endpoint: E) async throws(DataTransferError)
    where E.Response == Void {
        try await reporting { () async throws(DataTransferError) in
            _ = try await response(for: endpoint)
        }
    }

    /// Runs `endpoint` and returns its value with its response, without going through the completion queue.
    ///
    /// The body is decoded in this task once the response has arrived: on the global concurrent
    /// executor, never on the caller's actor or the session's delegate queue, so several requests'
    /// bodies decode in parallel.
    public func requestResponse<E: ResponseRequestable>(
        _ endpoint: E
    ) async throws(DataTransferError)
        -> DataTransferResponse<E.Response> where E.Response: Decodable & Sendable
    {
        try await reporting { () async throws(DataTransferError) in
            let response = try await response(for: endpoint)
            return DataTransferResponse(value: try Self.decode(response, for: endpoint), response: response)
        }
    }

    /// Runs `body`, which sends one request and makes the caller's result of it, and tells the
    /// request's monitors what became of it (see ``DataTransferError/reported``).
    private func reporting<Value>(
        _ body: () async throws(DataTransferError) -> Value, isolation: isolated (any Actor)? = #isolation
    ) async throws(DataTransferError) -> Value {
        let handling = ResponseHandling()
        let result = await handling.run { () async -> Result<Value, DataTransferError> in
            do throws(DataTransferError) {
                let value = try await body()
                handling.handled(nil)
                return .success(value)
            } catch {
                handling.handled(error.reported)
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The response to `endpoint`, its failure resolved.
    private func response(for endpoint: any Requestable) async throws(DataTransferError) -> NetworkResponse {
        do {
            return try await networkService.request(endpoint: endpoint)
        } catch {
            throw Self.resolve(error, with: errorResolver)
        }
    }

    /// What a request came to, in a shape that names no type of the caller's: the callback layer's
    /// own work — the call, its cancellation, the queues — is then done once for every type of
    /// value, not looked up at run time for each (a generic function called from another module
    /// runs unspecialized, and every `Result` of a generic value it makes asks the runtime for that
    /// type's metadata).
    private enum Settled: Sendable {
        /// The value was decoded: calling this hands it to the caller.
        case decoded(@Sendable () -> Void)
        case failed(DataTransferError)
    }

    /// Sends `endpoint`, decodes a success with `decode` (inline or on the decoding queue, by size)
    /// into the call that hands the caller its value, resolves a failure, and completes once on the
    /// completion queue: a value through the call `decode` made, a failure through `fail`.
    private func run(
        _ endpoint: any Requestable,
        decode: @escaping @Sendable (NetworkResponse) throws(DataTransferError) -> @Sendable () -> Void,
        fail: @escaping @Sendable (DataTransferError) -> Void
    ) -> any NetworkCancellable {
        let call = CancellableCompletion(cancelledWith: Settled.failed(.networkFailure(.cancelled))) {
            [handOver] settled in
            // A success comes up from the response, with nothing of the caller's on the stack: it
            // may be handed over from the thread it was decoded on. A failure may come from a
            // retrier's decision, a cancellation from anywhere: queued.
            switch settled {
            case .decoded(let deliver): handOver.run(deliver)
            case .failed(let error): handOver.queue { fail(error) }
            }
        }
        handOver.begin()
        // Told what the caller gets where it is known; a request cancelled first lets it go unsaid.
        let handling = ResponseHandling()
        let resolver = errorResolver
        call.attach(
            handling.run {
                networkService.request(endpoint: endpoint) { result in
                    switch result {
                    case .success(let response) where response.body.count <= Self.inlineDecodingLimit:
                        Self.decode(response, with: decode, completing: call, reporting: handling)
                    case .success(let response):
                        StrataQueue.async(ending: true) {
                            Self.decode(response, with: decode, completing: call, reporting: handling)
                        }
                    case .failure(let error):
                        let resolved = Self.resolve(error, with: resolver)
                        handling.handled(resolved.reported)
                        call.complete(.failed(resolved))
                    }
                }
            }
        )
        return call
    }

    private static func decode(
        _ response: NetworkResponse,
        with decode: @Sendable (NetworkResponse) throws(DataTransferError) -> @Sendable () -> Void,
        completing call: CancellableCompletion<Settled>,
        reporting handling: ResponseHandling
    ) {
        // A request cancelled while it waited for the decoding queue is not decoded at all.
        guard !call.isCompleted else { return }
        // The monitors are told after the caller, from this thread: nothing of the caller's is below.
        do throws(DataTransferError) {
            call.complete(.decoded(try decode(response)))
            handling.handled(nil, onTheWayUp: true)
        } catch {
            call.complete(.failed(error))
            handling.handled(error.reported, onTheWayUp: true)
        }
    }

    /// Runs `endpoint` through the network service's stream, decoding its parts with `decoder`;
    /// elements and the end on `queue`, or the completion queue.
    @discardableResult
    public func stream<Decoder: StreamDecoder>(
        _ endpoint: any Requestable,
        decoding decoder: Decoder,
        on queue: DispatchQueue?,
        receive: @escaping @Sendable (Decoder.Element) -> Void,
        completion: @escaping CompletionHandler<Void>
    ) -> any NetworkCancellable {
        let resolver = errorResolver
        let consumer = DecodingConsumer(
            decoder, delivery: queue ?? completionQueue, receive: receive,
            mapError: { error -> DataTransferError in Self.streamError(error, with: resolver) },
            completion: { completion($0.map { _ in () }) })
        consumer.start(networkService.stream(endpoint: endpoint, to: consumer))
        return consumer
    }

    /// The elements of `endpoint`'s body as `decoder` makes them: the next part is read once the
    /// loop has taken the elements of the last.
    public func stream<Decoder: StreamDecoder>(
        _ endpoint: any Requestable, decoding decoder: Decoder
    ) -> ResponseStream<Decoder.Element, DataTransferError> {
        let resolver = errorResolver
        return ResponseStream { buffer in
            let consumer = DecodingConsumer(
                decoder, into: buffer,
                mapError: { error -> DataTransferError in Self.streamError(error, with: resolver) }
            )
            consumer.start(networkService.stream(endpoint: endpoint, to: consumer))
            return consumer
        }
    }

    /// What ends a stream, as this layer says it: a network failure (a transport error, a stream
    /// deadline or limit) resolved; a line or body that could not be decoded, a parsing error.
    package static func streamError(
        _ error: any Error, with resolver: any DataTransferErrorResolver
    ) -> DataTransferError {
        switch error {
        case let error as DataTransferError: return error
        case let error as JSONLinesError: return .parsing(error.underlying, body: error.line)
        case is NetworkError, is StreamError, is URLError:
            return resolve(NetworkError(error, response: nil, data: nil), with: resolver)
        default: return .parsing(error, body: Data())
        }
    }

    package static func resolve(
        _ error: NetworkError, with resolver: any DataTransferErrorResolver
    ) -> DataTransferError {
        guard !error.isCancelled else { return .networkFailure(error) }
        let resolved = resolver.resolve(error: error)
        if let networkError = resolved as? NetworkError {
            return .networkFailure(networkError)
        }
        return .resolvedNetworkFailure(resolved)
    }

    /// Decodes a body with the endpoint's decoder. An empty body gives an ``EmptyResponse``'s
    /// empty value, or ``DataTransferError/noResponse`` when the decoder cannot read it.
    package static func decoder<E: ResponseRequestable>(
        for endpoint: E
    )
        -> @Sendable (NetworkResponse) throws(DataTransferError) -> E.Response
    where E.Response: Decodable & Sendable {
        // The closure keeps the endpoint's decoder, not the endpoint (a few hundred bytes, copied).
        let decoder = endpoint.responseDecoder
        return { response throws(DataTransferError) in try decode(response, with: decoder, as: E.Response.self) }
    }

    /// ``decoder(for:)``, applied at once.
    private static func decode<E: ResponseRequestable>(
        _ response: NetworkResponse, for endpoint: E
    ) throws(DataTransferError) -> E.Response where E.Response: Decodable & Sendable {
        try decode(response, with: endpoint.responseDecoder, as: E.Response.self)
    }

    /// ``decode(_:for:)`` with the endpoint's decoder and response type.
    private static func decode<Value: Decodable>(
        _ response: NetworkResponse, with decoder: any ResponseDecoder, as type: Value.Type
    ) throws(DataTransferError) -> Value {
        if response.body.isEmpty, let empty = Value.self as? any EmptyResponse.Type,
            let value = empty.emptyValue() as? Value
        {
            return value
        }
        do {
            return try decoder.decode(response.body, contentType: response.headerValue("Content-Type"), as: Value.self)
        } catch {
            throw response.body.isEmpty ? .noResponse : .parsing(error, body: response.body)
        }
    }
}

extension DataTransferError {
    /// What a request's monitors are told the caller got (`ResponseHandling`), where
    /// it is not what the manager delivered: a body that did not decode, an error the resolver
    /// turned into another. A network failure left as it was is the manager's own: `nil`.
    fileprivate var reported: (any Error)? {
        if case .networkFailure = self { return nil }
        return self
    }
}
