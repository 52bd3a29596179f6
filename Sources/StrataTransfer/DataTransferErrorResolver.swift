import Foundation
import StrataEndpoint
import StrataService

/// Turns a ``/StrataService/NetworkError`` into the error your app works with.
///
/// The resolved error reaches the caller as ``DataTransferError/resolvedNetworkFailure(_:)``; a
/// resolver that returns the `NetworkError` unchanged leaves it as
/// ``DataTransferError/networkFailure(_:)``. Cancellation is never offered to a resolver.
public protocol DataTransferErrorResolver: Sendable {
    /// The error `error` stands for in your app.
    func resolve(error: NetworkError) -> any Error
}

/// The resolver that leaves every error as it is.
public struct DefaultDataTransferErrorResolver: DataTransferErrorResolver {
    /// Creates the resolver.
    public init() {}

    /// Returns `error` unchanged.
    public func resolve(error: NetworkError) -> any Error {
        error
    }
}

/// A resolver that decodes a server's JSON error body into your error type.
///
/// ```swift
/// struct APIError: Decodable, Error { let code: String; let message: String }
/// let service = DefaultDataTransferService(
///     networkService: networkService,
///     errorResolver: JSONErrorBodyResolver<APIError>()
/// )
/// // A 422 with {"code": "taken", "message": "…"} fails with .resolvedNetworkFailure(APIError(...))
/// ```
///
/// Errors without a response, or whose body is not a `Body` (or nests deeper than a
/// ``/StrataEndpoint/JSONResponseDecoder`` accepts), are left as they are.
public struct JSONErrorBodyResolver<Body: Decodable & Error>: DataTransferErrorResolver {
    /// The decoder used for error bodies.
    public let decoder: JSONDecoder

    /// Creates the resolver.
    public init(decoder: JSONDecoder = JSONDecoder()) {
        self.decoder = decoder
    }

    /// The decoded `Body`, or `error` when the body is missing or not a `Body`.
    public func resolve(error: NetworkError) -> any Error {
        guard let body = error.response?.body, !body.isEmpty,
            let decoded = try? JSONResponseDecoder(decoder: decoder).decode(body, as: Body.self)
        else { return error }
        return decoded
    }
}
