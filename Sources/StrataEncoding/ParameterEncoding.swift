import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a set of parameters is applied to a `URLRequest`: as a query string, a form body, JSON, XML
/// or multipart.
///
/// An encoding receives the request built so far and returns it with the parameters applied. It
/// must not change what is not its business (the method, headers it does not own) and sets
/// `Content-Type` only when the request has none. Encodings are values, so an endpoint holds one
/// and it can be shared across threads. Write your own by conforming a struct:
///
/// ```swift
/// struct PlainTextEncoding: ParameterEncoding {
///     func encode(_ request: URLRequest, with parameters: [String: ParameterValue]) throws(ParameterEncodingError) -> URLRequest {
///         var request = request
///         request.httpBody = Data(parameters.description.utf8)
///         return request
///     }
/// }
/// ```
public protocol ParameterEncoding: Sendable {
    /// Returns `request` with `parameters` applied.
    /// - Throws: ``ParameterEncodingError`` when the parameters cannot be written this way.
    func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError)
        -> URLRequest

    /// Returns `request` with an `Encodable` value applied.
    ///
    /// The default implementation turns the value into a ``/StrataCore/ParameterValue`` with
    /// ``ParameterValueEncoder`` and applies its members with ``encode(_:with:)``.
    /// - Throws: ``ParameterEncodingError`` when the value cannot be encoded or written this way.
    func encode(
        _ request: URLRequest, withEncodable value: any Encodable & Sendable
    ) throws(ParameterEncodingError)
        -> URLRequest

    /// Whether the encoding writes a body even when there are no parameters (a multipart form with
    /// only file parts, say). By default `false`: without parameters, the request has no body.
    var writesBodyWithoutParameters: Bool { get }

    /// Whether encoding may take long enough to hold up the caller's thread (a multipart form that
    /// copies files into a temporary file, say). By default `false`. The network service encodes
    /// such a body on a background queue, never on the thread that asked for the request.
    var isSlowToEncode: Bool { get }
}

extension ParameterEncoding {
    /// `false`.
    public var writesBodyWithoutParameters: Bool { false }

    /// `false`.
    public var isSlowToEncode: Bool { false }

    /// Encodes `value` with ``ParameterValueEncoder`` and applies its members with ``encode(_:with:)``.
    /// The value must encode as keyed members (a struct, class or dictionary).
    public func encode(
        _ request: URLRequest, withEncodable value: any Encodable & Sendable
    )
        throws(ParameterEncodingError) -> URLRequest
    {
        try encode(request, with: ParameterValueEncoder().encodeMembers(value))
    }
}
