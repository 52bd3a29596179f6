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
/// A value nesting more than ``maximumDepth`` levels fails with
/// ``ParameterEncodingError/nestingTooDeep(maximum:)`` before `JSONEncoder` sees it: the encoder
/// recurses once per level and would exhaust the stack on a deep enough value.
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
    /// The most levels of arrays and objects a value may nest. Defaults to
    /// ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public var maximumDepth: Int

    /// Creates an encoding with `encoder`; by default one that sorts keys.
    public init(
        encoder: JSONEncoder = JSONEncoding.makeDefaultEncoder(),
        maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) {
        self.encoder = encoder
        self.maximumDepth = maximumDepth
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
        guard !ParameterValue.object(parameters).nests(deeperThan: maximumDepth) else {
            throw .nestingTooDeep(maximum: maximumDepth)
        }
        return try body(parameters, on: request)
    }

    /// Returns `request` with `value` as its JSON body.
    /// - Throws: ``ParameterEncodingError/encodingFailed(type:reason:)`` when `JSONEncoder` fails,
    ///   for example on a non-finite number; ``ParameterEncodingError/nestingTooDeep(maximum:)``.
    public func encode(
        _ request: URLRequest, withEncodable value: any Encodable & Sendable
    )
        throws(ParameterEncodingError) -> URLRequest
    {
        try NestingProbe.check(value, maximumDepth: maximumDepth)
        return try body(value, on: request)
    }

    /// `request` with `value`, already known not to nest too deep, as its body.
    private func body(_ value: some Encodable, on request: URLRequest) throws(ParameterEncodingError) -> URLRequest {
        var request = try request.encodable()
        do {
            request.httpBody = try encoder.encode(value)
        } catch {
            throw .encodingFailed(type: String(describing: type(of: value)), reason: String(describing: error))
        }
        request.setHeaderField("Content-Type", "application/json", keepingExisting: true)
        return request
    }
}
