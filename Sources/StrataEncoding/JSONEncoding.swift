import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes parameters, or an `Encodable` value, as a JSON body.
///
/// `Content-Type: application/json` is set only when the request has no `Content-Type`. The
/// `JSONEncoder` is yours to configure (date and key strategies, output formatting); the default
/// one sorts keys, so the same parameters always give the same bytes.
///
/// ```swift
/// let encoding = JSONEncoding(encoder: {
///     let encoder = JSONEncoder()
///     encoder.keyEncodingStrategy = .convertToSnakeCase
///     return encoder
/// }())
/// ```
public struct JSONEncoding: ParameterEncoding {
    /// A JSON encoding with sorted keys.
    public static let `default` = JSONEncoding()

    /// The encoder used for parameters and `Encodable` values.
    public let encoder: JSONEncoder

    /// Creates an encoding with `encoder`; by default one that sorts keys.
    public init(encoder: JSONEncoder = JSONEncoding.makeDefaultEncoder()) {
        self.encoder = encoder
    }

    /// A `JSONEncoder` that sorts keys.
    public static func makeDefaultEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// Returns `request` with `parameters` as its JSON body.
    public func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError)
        -> URLRequest
    {
        try encode(request, withEncodable: parameters)
    }

    /// Returns `request` with `value` as its JSON body.
    /// - Throws: ``ParameterEncodingError/encodingFailed(type:reason:)`` when `JSONEncoder` fails,
    ///   for example on a non-finite number.
    public func encode(
        _ request: URLRequest, withEncodable value: any Encodable & Sendable
    )
        throws(ParameterEncodingError) -> URLRequest
    {
        var request = request
        do {
            request.httpBody = try encoder.encode(value)
        } catch {
            throw .encodingFailed(type: String(describing: type(of: value)), reason: String(describing: error))
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}
