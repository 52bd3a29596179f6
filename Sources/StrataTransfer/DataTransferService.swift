import Dispatch
import Foundation
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService

/// Runs typed endpoints: sends the request, decodes the response into the endpoint's `Response`,
/// and resolves errors. The layer repositories depend on.
///
/// ```swift
/// final class UserRepository {
///     private let transfer: any DataTransferService
///     init(transfer: any DataTransferService) { self.transfer = transfer }
///
///     func user(id: Int, completion: @escaping @Sendable (Result<User, DataTransferError>) -> Void) {
///         transfer.request(with: Endpoint<User>(path: "users/\(id)"), completion: completion)
///     }
///
///     func user(id: Int) async throws(DataTransferError) -> User {
///         try await transfer.request(Endpoint<User>(path: "users/\(id)"))
///     }
/// }
/// ```
///
/// Every completion runs exactly once, on the service's completion queue. Conformers implement the
/// `Void` request and ``requestResponse(with:completion:)``; the rest have defaults built on them.
public protocol DataTransferService: Sendable {
    /// The result a request completes with.
    typealias CompletionHandler<T> = @Sendable (Result<T, DataTransferError>) -> Void

    /// Runs `endpoint` and decodes its response.
    @discardableResult
    func request<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<T>
    ) -> any NetworkCancellable where E.Response == T

    /// Runs `endpoint`, which yields no value: any acceptable status, with or without a body, succeeds.
    @discardableResult
    func request<E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<Void>
    ) -> any NetworkCancellable where E.Response == Void

    /// Runs `endpoint` and decodes its response, delivering the value with its status, headers and body.
    @discardableResult
    func requestResponse<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<DataTransferResponse<T>>
    ) -> any NetworkCancellable where E.Response == T

    /// Runs `endpoint` and hands each element of its body to `receive` as it arrives, as `decoder`
    /// makes them, then calls `completion` exactly once: with success when the body ended, or with
    /// the error that ended it (network errors through the error resolver; a body that cannot be
    /// decoded as ``DataTransferError/parsing(_:body:)``).
    ///
    /// Both run on `queue` — `nil` for the service's choice (``DefaultDataTransferService``: its
    /// completion queue) — in order; the next part of the body is read only once the elements of
    /// the last have been handed on.
    @discardableResult
    func stream<Decoder: StreamDecoder>(
        _ endpoint: any Requestable,
        decoding decoder: Decoder,
        on queue: DispatchQueue?,
        receive: @escaping @Sendable (Decoder.Element) -> Void,
        completion: @escaping CompletionHandler<Void>
    ) -> any NetworkCancellable

    /// The elements of `endpoint`'s body as `decoder` makes them, as they arrive: the request
    /// starts when iteration does; leaving the loop or cancelling the task cancels it. The next
    /// part of the body is read once the loop has taken the elements of the last (a conformer
    /// without its own gets a default built on ``stream(_:decoding:on:receive:completion:)``,
    /// which reads on as elements are handed on).
    func stream<Decoder: StreamDecoder>(
        _ endpoint: any Requestable, decoding decoder: Decoder
    ) -> ResponseStream<Decoder.Element, DataTransferError>

    /// Runs `endpoint` and returns its decoded response; cancelling the Swift task cancels the request.
    func request<E: ResponseRequestable>(_ endpoint: E) async throws(DataTransferError) -> E.Response
    where E.Response: Decodable & Sendable

    /// Runs `endpoint`, which yields no value; cancelling the Swift task cancels the request.
    func request<E: ResponseRequestable>(_ endpoint: E) async throws(DataTransferError) where E.Response == Void

    /// Runs `endpoint` and returns its value with its response; cancelling the Swift task cancels it.
    func requestResponse<E: ResponseRequestable>(
        _ endpoint: E
    ) async throws(DataTransferError)
        -> DataTransferResponse<E.Response> where E.Response: Decodable & Sendable
}

extension DataTransferService {
    /// Runs ``requestResponse(with:completion:)`` and delivers the value alone.
    @discardableResult
    public func request<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping CompletionHandler<T>
    ) -> any NetworkCancellable where E.Response == T {
        // A closure, not `\.value`: a key path whose root is generic is made anew at run time on
        // every call, which cost more than the rest of the layer.
        requestResponse(with: endpoint) { result in completion(result.map { $0.value }) }
    }

    /// Bridges ``request(with:completion:)-1ph6e`` to async.
    public func request<E: ResponseRequestable>(_ endpoint: E) async throws(DataTransferError) -> E.Response
    where E.Response: Decodable & Sendable {
        try await withCancellableCallback { completion in
            request(with: endpoint, completion: completion)
        }.get()
    }

    /// Bridges the `Void` ``request(with:completion:)-8xq3c`` to async.
    public func request<E: ResponseRequestable>(_ endpoint: E) async throws(DataTransferError)
    where E.Response == Void {
        try await withCancellableCallback { (completion: @escaping CompletionHandler<Void>) in
            request(with: endpoint, completion: completion)
        }.get()
    }

    /// Bridges ``requestResponse(with:completion:)`` to async.
    public func requestResponse<E: ResponseRequestable>(
        _ endpoint: E
    ) async throws(DataTransferError)
        -> DataTransferResponse<E.Response> where E.Response: Decodable & Sendable
    {
        try await withCancellableCallback { completion in
            requestResponse(with: endpoint, completion: completion)
        }.get()
    }
}
