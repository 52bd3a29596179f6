import Foundation
import StrataCore

/// Turns a response body into the value an endpoint promises.
///
/// Strata ships decoders for JSON (``JSONResponseDecoder``), raw bytes (``RawDataResponseDecoder``)
/// and text (``StringResponseDecoder``); write your own for other formats.
public protocol ResponseDecoder: Sendable {
    /// Decodes `data` as a `T`.
    /// - Throws: any error that says why the body is not a `T`.
    func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T
}

/// Decodes JSON bodies with a `JSONDecoder` you can configure.
///
/// ```swift
/// let decoder = JSONDecoder()
/// decoder.dateDecodingStrategy = .iso8601
/// let endpoint = Endpoint<User>(path: "me", responseDecoder: JSONResponseDecoder(decoder: decoder))
/// ```
///
/// A body nesting arrays and objects deeper than ``maximumDepth`` is refused before `JSONDecoder`
/// sees it: decoding recurses once per level (through your types too), and a few hundred levels
/// exhaust a 512 KiB stack, which is what a secondary thread gets on Apple platforms.
public struct JSONResponseDecoder: ResponseDecoder {
    /// The decoder used.
    public let decoder: JSONDecoder
    /// The most levels of arrays and objects a body may nest. Defaults to
    /// ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public let maximumDepth: Int

    /// Creates a JSON response decoder.
    public init(decoder: JSONDecoder = JSONDecoder(), maximumDepth: Int = ParameterValue.defaultMaximumDepth) {
        self.decoder = decoder
        self.maximumDepth = maximumDepth
    }

    /// Decodes `data` as JSON.
    /// - Throws: ``ResponseDecodingError/nestingTooDeep(maximum:)``, or the `JSONDecoder`'s error.
    public func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
        guard !JSONNesting.exceeds(maximumDepth, in: data) else {
            throw ResponseDecodingError.nestingTooDeep(maximum: maximumDepth)
        }
        return try decoder.decode(type, from: data)
    }
}

/// Returns the body's bytes as they are; the response type must be `Data`.
public struct RawDataResponseDecoder: ResponseDecoder {
    /// Creates the decoder.
    public init() {}

    /// Returns `data` itself.
    /// - Throws: ``ResponseDecodingError/unsupportedType(_:decoder:)`` unless `T` is `Data`.
    public func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
        guard let value = data as? T else {
            throw ResponseDecodingError.unsupportedType(String(describing: type), decoder: "RawDataResponseDecoder")
        }
        return value
    }
}

/// Returns the body as text in a given encoding; the response type must be `String`.
public struct StringResponseDecoder: ResponseDecoder {
    /// The text encoding of the body. Defaults to UTF-8.
    public let encoding: String.Encoding

    /// Creates the decoder.
    public init(encoding: String.Encoding = .utf8) {
        self.encoding = encoding
    }

    /// Returns the body as text.
    /// - Throws: ``ResponseDecodingError/invalidText(encoding:)`` when the bytes are not valid in
    ///   ``encoding``, ``ResponseDecodingError/unsupportedType(_:decoder:)`` unless `T` is `String`.
    public func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
        guard type == String.self else {
            throw ResponseDecodingError.unsupportedType(String(describing: type), decoder: "StringResponseDecoder")
        }
        guard let text = String(data: data, encoding: encoding), let value = text as? T else {
            throw ResponseDecodingError.invalidText(encoding: String(describing: encoding))
        }
        return value
    }
}

/// Why a response decoder could not produce a value.
public enum ResponseDecodingError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// The decoder cannot produce the requested type.
    case unsupportedType(String, decoder: String)
    /// The body is not valid text in the given encoding.
    case invalidText(encoding: String)
    /// The body nests more than `maximum` levels deep, more than the decoder accepts.
    case nestingTooDeep(maximum: Int)

    /// A sentence saying what was wrong.
    public var errorDescription: String? {
        switch self {
        case .unsupportedType(let type, let decoder):
            return "\(decoder) cannot produce a value of type \(type)."
        case .invalidText(let encoding):
            return "The response body is not valid \(encoding) text."
        case .nestingTooDeep(let maximum):
            return "The response body nests more than \(maximum) levels deep, more than the decoder accepts."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}
