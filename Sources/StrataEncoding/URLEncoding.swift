import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes parameters as `key=value` pairs: into the URL's query string, or into a
/// `application/x-www-form-urlencoded` body.
///
/// How keys and values are written (sorted keys, RFC 3986 percent-encoding, arrays, Booleans, dates,
/// nested objects) is the ``formEncoder``'s business; see ``URLEncodedFormEncoder``. `Encodable`
/// parameters go through the same encoder.
///
/// ```swift
/// URLEncoding.queryString   // ?q=swift&page=2
/// URLEncoding.httpBody      // q=swift&page=2 as a form body
/// URLEncoding.default       // query for GET, HEAD and DELETE; form body otherwise
/// ```
public struct URLEncoding: ParameterEncoding {
    /// Where the encoded parameters go.
    public enum Destination: Hashable, Sendable {
        /// The query string for `GET`, `HEAD` and `DELETE`; the body for any other method.
        case methodDependent
        /// The query string, whatever the method.
        case queryString
        /// The body, whatever the method.
        case httpBody
    }

    /// How array elements are keyed.
    public typealias ArrayEncoding = URLEncodedFormEncoder.ArrayEncoding
    /// How Booleans are written.
    public typealias BoolEncoding = URLEncodedFormEncoder.BoolEncoding
    /// How dates are written.
    public typealias DateEncoding = URLEncodedFormEncoder.DateEncoding

    /// The methods whose parameters go in the query string for ``Destination/methodDependent``.
    public static let queryStringMethods: Set<HTTPMethod> = [.get, .head, .delete]

    /// Query for `GET`, `HEAD` and `DELETE`, form body otherwise.
    public static let `default` = URLEncoding()
    /// Always the query string.
    public static let queryString = URLEncoding(destination: .queryString)
    /// Always a form body.
    public static let httpBody = URLEncoding(destination: .httpBody)

    /// Where the parameters go.
    public var destination: Destination
    /// How parameters are written.
    public var formEncoder: URLEncodedFormEncoder

    /// Creates an encoding.
    public init(
        destination: Destination = .methodDependent,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        dateEncoding: DateEncoding = .iso8601,
        maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) {
        self.destination = destination
        self.formEncoder = URLEncodedFormEncoder(
            arrayEncoding: arrayEncoding, boolEncoding: boolEncoding, dateEncoding: dateEncoding,
            maximumDepth: maximumDepth)
    }

    /// Returns `request` with `parameters` in its query string or form body.
    public func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError)
        -> URLRequest
    {
        try apply(formEncoder.encode(parameters), to: request)
    }

    /// Returns `request` with `value`'s members, written by ``formEncoder``, in its query or body.
    public func encode(
        _ request: URLRequest, withEncodable value: any Encodable & Sendable
    )
        throws(ParameterEncodingError) -> URLRequest
    {
        try apply(formEncoder.encode(value), to: request)
    }

    /// The percent-encoded query text for `parameters`, keys in sorted order, without a leading `?`.
    /// - Throws: ``ParameterEncodingError/nestingTooDeep(maximum:)`` when they nest too deep.
    public func query(from parameters: [String: ParameterValue]) throws(ParameterEncodingError) -> String {
        try formEncoder.encode(parameters)
    }

    private func apply(_ encoded: String, to request: URLRequest) throws(ParameterEncodingError) -> URLRequest {
        var request = try request.encodable()
        let method = HTTPMethod(rawValue: request.httpMethod ?? HTTPMethod.get.rawValue)
        if writesToQuery(for: method) {
            guard let url = request.url else { throw .missingURL }
            guard !encoded.isEmpty else { return request }
            request.url = try Self.appendingQuery(encoded, to: url)
        } else {
            request.setHeaderField(
                "Content-Type", "application/x-www-form-urlencoded; charset=utf-8", keepingExisting: true)
            request.httpBody = Data(encoded.utf8)
        }
        return request
    }

    private func writesToQuery(for method: HTTPMethod) -> Bool {
        switch destination {
        case .methodDependent: return Self.queryStringMethods.contains(method)
        case .queryString: return true
        case .httpBody: return false
        }
    }

    /// `url` with `query` appended to any query it already has.
    package static func appendingQuery(_ query: String, to url: URL) throws(ParameterEncodingError) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw .invalidURL(url.absoluteString)
        }
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + query
        } else {
            components.percentEncodedQuery = query
        }
        guard let result = components.url else { throw .invalidURL(url.absoluteString) }
        return result
    }
}
