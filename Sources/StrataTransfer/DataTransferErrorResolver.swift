import Foundation
import StrataCore
import StrataEncoding
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

/// A resolver that turns a SOAP fault in an error body into a ``/StrataEncoding/SOAPFault``, whatever
/// the envelope's version and prefix: SOAP 1.1 services answer faults with status 500, SOAP 1.2
/// services with 400 or 500.
///
/// ```swift
/// let service = DefaultDataTransferService(networkService: networkService, errorResolver: SOAPFaultResolver())
/// // A 500 with a SOAP fault fails with .resolvedNetworkFailure(SOAPFault(code: "Server", reason: "…"))
/// ```
///
/// Errors without a response, or whose body is not a SOAP envelope holding a fault (or nests deeper
/// than `maximumDepth`), are left as they are.
public struct SOAPFaultResolver: DataTransferErrorResolver {
    /// The most levels elements may nest in an error body.
    public let maximumDepth: Int

    /// Creates the resolver.
    public init(maximumDepth: Int = ParameterValue.defaultMaximumDepth) {
        self.maximumDepth = maximumDepth
    }

    /// The fault in the error's body, or `error` when there is none.
    public func resolve(error: NetworkError) -> any Error {
        guard let body = error.response?.body, !body.isEmpty,
            let fault = SOAPFault(from: body, maximumDepth: maximumDepth)
        else { return error }
        return fault
    }
}
