import Dispatch
import Foundation
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService

extension DataTransferService {
    /// Runs `endpoint`, whose body is JSON Lines, and hands each line to `receive` decoded as the
    /// endpoint's `Response` (with its response decoder) as it arrives; `completion` runs exactly
    /// once at the end. Both on the service's queue (see ``stream(_:decoding:on:receive:completion:)``).
    ///
    /// ```swift
    /// transfer.stream(with: Endpoint<Order>(path: "orders/export")) { order in
    ///     orders.append(order)
    /// } completion: { result in … }
    /// ```
    @discardableResult
    public func stream<E: ResponseRequestable>(
        with endpoint: E,
        receive: @escaping @Sendable (E.Response) -> Void,
        completion: @escaping CompletionHandler<Void>
    ) -> any NetworkCancellable where E.Response: Decodable & Sendable {
        stream(endpoint, decoding: Self.jsonLines(of: endpoint), on: nil, receive: receive, completion: completion)
    }

    /// Runs `endpoint`, whose body is a Server-Sent Events stream, and hands each event to
    /// `receive` as it arrives; `completion` runs exactly once at the end.
    @discardableResult
    public func events(
        with endpoint: any Requestable,
        receive: @escaping @Sendable (ServerSentEvent) -> Void,
        completion: @escaping CompletionHandler<Void>
    ) -> any NetworkCancellable {
        stream(endpoint, decoding: .serverSentEvents(), on: nil, receive: receive, completion: completion)
    }

    /// The elements of `endpoint`'s body as `decoder` makes them, as they arrive, handed to the
    /// loop through ``stream(_:decoding:on:receive:completion:)``.
    public func stream<Decoder: StreamDecoder>(
        _ endpoint: any Requestable, decoding decoder: Decoder
    ) -> ResponseStream<Decoder.Element, DataTransferError> {
        ResponseStream { buffer in
            stream(
                endpoint, decoding: decoder, on: StrataQueue.make("Strata.DataTransfer.stream"),
                receive: buffer.receive, completion: buffer.finish)
        }
    }

    /// `endpoint`'s JSON Lines body, each line decoded as the endpoint's `Response`, as it arrives.
    ///
    /// ```swift
    /// for try await order in transfer.stream(Endpoint<Order>(path: "orders/export")) { … }
    /// ```
    public func stream<E: ResponseRequestable>(_ endpoint: E) -> ResponseStream<E.Response, DataTransferError>
    where E.Response: Decodable & Sendable {
        stream(endpoint, decoding: Self.jsonLines(of: endpoint))
    }

    /// `endpoint`'s Server-Sent Events, as they arrive.
    public func events(_ endpoint: any Requestable) -> ResponseStream<ServerSentEvent, DataTransferError> {
        stream(endpoint, decoding: .serverSentEvents())
    }

    /// JSON Lines decoded with `endpoint`'s response decoder.
    private static func jsonLines<E: ResponseRequestable>(of endpoint: E) -> JSONLinesDecoder<E.Response>
    where E.Response: Decodable & Sendable {
        let decoder = endpoint.responseDecoder
        return JSONLinesDecoder { try decoder.decode($0, as: E.Response.self) }
    }
}
