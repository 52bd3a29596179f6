import Foundation
import StrataCore
import StrataEndpoint
import StrataSession

/// Runs an endpoint's request and reports the raw outcome: a ``NetworkResponse`` or a ``NetworkError``.
///
/// ``DefaultNetworkService`` builds the request from the endpoint and a configuration and sends it
/// through a `NetworkSessionManager`. Use `MockNetworkService` (from `StrataTesting`) in tests of
/// the layer above.
public protocol NetworkService: Sendable {
    /// The result a request completes with.
    typealias CompletionHandler = @Sendable (Result<NetworkResponse, NetworkError>) -> Void

    /// Sends the request `endpoint` describes and calls `completion` exactly once.
    /// - Returns: a handle that cancels the request; the completion then receives ``NetworkError/cancelled``.
    @discardableResult
    func request(endpoint: any Requestable, completion: @escaping CompletionHandler) -> any NetworkCancellable

    /// Sends the request `endpoint` describes and hands its accepted response to `receiver` as it
    /// comes: the head, one body part per ``/StrataSession/ResponseExchange/demand()``, then the
    /// end exactly once — `nil` when the body is complete, else a ``NetworkError``. The decoded
    /// forms, ``stream(endpoint:decoding:receive:completion:)`` and
    /// ``stream(endpoint:decoding:)``, are built on it.
    func stream(endpoint: any Requestable, to receiver: any ResponseReceiver) -> any ResponseExchange

    /// Sends the request `endpoint` describes; cancelling the Swift task cancels the request. By
    /// default built on ``request(endpoint:completion:)``.
    /// - Throws: ``NetworkError``.
    func request(endpoint: any Requestable) async throws(NetworkError) -> NetworkResponse

    /// `context` with what the service's session manager keeps of the calling task, for requests
    /// it sends later from elsewhere (an ``EventSource``'s reconnections, from a queue of its own),
    /// which then carry it in their options (see
    /// ``/StrataSession/NetworkSessionManager/captureContext(_:)``). By default, `context` as it is.
    func captureContext(_ context: RequestContext) -> RequestContext
}

extension NetworkService {
    /// Returns `context` as it is.
    public func captureContext(_ context: RequestContext) -> RequestContext {
        context
    }

    /// For a service that answers only whole (a test double): the whole response, played to
    /// `receiver` once it has arrived.
    public func stream(endpoint: any Requestable, to receiver: any ResponseReceiver) -> any ResponseExchange {
        bufferedStream(endpoint: endpoint, to: receiver)
    }

    /// Sends the request `endpoint` describes through ``request(endpoint:completion:)``;
    /// cancelling the Swift task completes at once with ``NetworkError/cancelled`` and cancels the
    /// request.
    /// - Throws: ``NetworkError``.
    public func request(endpoint: any Requestable) async throws(NetworkError) -> NetworkResponse {
        try await withCancellableCallback(cancelledWith: .failure(.cancelled)) { completion in
            request(endpoint: endpoint, completion: completion)
        }.get()
    }
}
