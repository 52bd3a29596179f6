import Foundation
import StrataCore
import StrataEncoding

/// Turns a response body into the value an endpoint promises.
///
/// Strata ships decoders for JSON (``JSONResponseDecoder``), raw bytes (``RawDataResponseDecoder``)
/// and text (``StringResponseDecoder``); write your own for other formats.
public protocol ResponseDecoder: Sendable {
    /// Decodes `data` as a `T`.
    /// - Throws: any error that says why the body is not a `T`.
    func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T

    /// Decodes `data`, which came with the media type `contentType` (the response's
    /// `Content-Type` field, if it had one), as a `T`: what the data-transfer layer calls. A
    /// decoder whose format says its text encoding there reads it (``StringResponseDecoder``); by
    /// default the media type is ignored and ``decode(_:as:)`` decodes.
    func decode<T: Decodable>(_ data: Data, contentType: String?, as type: T.Type) throws -> T
}

extension ResponseDecoder {
    /// ``decode(_:as:)``, the media type ignored.
    public func decode<T: Decodable>(_ data: Data, contentType: String?, as type: T.Type) throws -> T {
        try decode(data, as: type)
    }
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

    /// Decodes `data` as JSON; when it is no JSON at all and its `Content-Type` names another
    /// format (an HTML page: a proxy's or a Wi-Fi sign-in page's, a server's error page), the
    /// `DecodingError` says so.
    public func decode<T: Decodable>(_ data: Data, contentType: String?, as type: T.Type) throws -> T {
        do {
            return try decode(data, as: type)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            guard let essence = MIMEType.essence(of: contentType), !essence.contains("json") else {
                throw DecodingError.dataCorrupted(context)
            }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: [],
                    debugDescription: "The body is \(essence.prefix(100)), not JSON. \(context.debugDescription)",
                    underlyingError: context.underlyingError))
        }
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

/// Returns the body as text; the response type must be `String`.
///
/// The text encoding is the one given, else the one the response's `Content-Type` names
/// (`text/plain; charset=iso-8859-1`), else UTF-8, as Alamofire's `responseString` reads it. The
/// charsets named are those of ``encoding(forCharset:)``; another is read as UTF-8.
public struct StringResponseDecoder: ResponseDecoder {
    /// The text encoding of every body, whatever its response says; `nil` (the default) for the
    /// charset its `Content-Type` names, else UTF-8.
    public let encoding: String.Encoding?

    /// Creates the decoder.
    public init(encoding: String.Encoding? = nil) {
        self.encoding = encoding
    }

    /// Returns the body as text, in ``encoding`` or UTF-8.
    /// - Throws: ``ResponseDecodingError/invalidText(encoding:)`` when the bytes are not valid in
    ///   that encoding, ``ResponseDecodingError/unsupportedType(_:decoder:)`` unless `T` is `String`.
    public func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
        try decode(data, contentType: nil, as: type)
    }

    /// Returns the body as text, in ``encoding``, else the charset `contentType` names, else UTF-8.
    /// - Throws: ``ResponseDecodingError/invalidText(encoding:)`` when the bytes are not valid in
    ///   that encoding, ``ResponseDecodingError/unsupportedType(_:decoder:)`` unless `T` is `String`.
    public func decode<T: Decodable>(_ data: Data, contentType: String?, as type: T.Type) throws -> T {
        guard type == String.self else {
            throw ResponseDecodingError.unsupportedType(String(describing: type), decoder: "StringResponseDecoder")
        }
        let encoding = encoding ?? contentType.flatMap(Self.charset).flatMap(Self.encoding(forCharset:)) ?? .utf8
        guard let text = String(data: data, encoding: encoding), let value = text as? T else {
            throw ResponseDecodingError.invalidText(encoding: String(describing: encoding))
        }
        return value
    }

    /// The `charset` parameter of a media type (`text/html; charset="UTF-8"` gives `UTF-8`).
    static func charset(of mediaType: String) -> String? {
        for parameter in mediaType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                continue
            }
            return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    /// The text encoding a `charset` names, in any case (IANA's names and their common aliases):
    /// UTF-8, UTF-16 and UTF-32 (and their `LE` and `BE` forms), US-ASCII, ISO-8859-1 and -2,
    /// windows-1250 to -1254, Shift_JIS, EUC-JP, ISO-2022-JP and macintosh; `nil` for another.
    public static func encoding(forCharset charset: String) -> String.Encoding? {
        switch charset.lowercased() {
        case "utf-8", "utf8": .utf8
        case "utf-16": .utf16
        case "utf-16le": .utf16LittleEndian
        case "utf-16be": .utf16BigEndian
        case "utf-32": .utf32
        case "utf-32le": .utf32LittleEndian
        case "utf-32be": .utf32BigEndian
        case "us-ascii", "ascii": .ascii
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1": .isoLatin1
        case "iso-8859-2", "iso8859-2", "iso_8859-2", "latin2", "l2": .isoLatin2
        case "windows-1250", "cp1250": .windowsCP1250
        case "windows-1251", "cp1251": .windowsCP1251
        case "windows-1252", "cp1252": .windowsCP1252
        case "windows-1253", "cp1253": .windowsCP1253
        case "windows-1254", "cp1254": .windowsCP1254
        case "shift_jis", "shift-jis", "sjis": .shiftJIS
        case "euc-jp": .japaneseEUC
        case "iso-2022-jp": .iso2022JP
        case "macintosh", "mac", "x-mac-roman": .macOSRoman
        default: nil
        }
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
