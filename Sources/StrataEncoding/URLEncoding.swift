import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes parameters as `key=value` pairs: into the URL's query string, or into a
/// `application/x-www-form-urlencoded` body.
///
/// Keys are written in sorted order so the same parameters always give the same request. Keys and
/// values are percent-encoded per RFC 3986 (see ``PercentEncoding``): `+`, `&`, `=` and `;` in a
/// value are always escaped. Nested objects use bracket keys (`user[name]=Ann`), arrays and Booleans
/// follow ``arrayEncoding`` and ``boolEncoding``, and `.null` values are left out.
///
/// ```swift
/// URLEncoding.queryString   // ?q=swift&page=2
/// URLEncoding.httpBody      // q=swift&page=2 as a form body
/// URLEncoding.default       // query for GET, HEAD and DELETE; form body otherwise
/// ```
public struct URLEncoding: ParameterEncoding, Hashable {
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
    public enum ArrayEncoding: Hashable, Sendable {
        /// `tags[]=a&tags[]=b` (the default).
        case brackets
        /// `tags=a&tags=b`
        case noBrackets
        /// `tags[0]=a&tags[1]=b`
        case indexInBrackets
        /// `tags=a,b`: scalar elements joined by a literal comma (commas inside an element are
        /// escaped); nested arrays and objects are written with brackets.
        case commaSeparated
    }

    /// How Booleans are written.
    public enum BoolEncoding: Hashable, Sendable {
        /// `1` and `0` (the default).
        case numeric
        /// `true` and `false`.
        case literal
    }

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
    /// How arrays are keyed.
    public var arrayEncoding: ArrayEncoding
    /// How Booleans are written.
    public var boolEncoding: BoolEncoding

    /// Creates an encoding.
    public init(
        destination: Destination = .methodDependent, arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Returns `request` with `parameters` in its query string or form body.
    public func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError)
        -> URLRequest
    {
        var request = request
        let encoded = query(from: parameters)
        let method = HTTPMethod(rawValue: request.httpMethod ?? HTTPMethod.get.rawValue)
        if writesToQuery(for: method) {
            guard let url = request.url else { throw .missingURL }
            guard !encoded.isEmpty else { return request }
            request.url = try Self.appendingQuery(encoded, to: url)
        } else {
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
            request.httpBody = Data(encoded.utf8)
        }
        return request
    }

    /// The percent-encoded query text for `parameters`, keys in sorted order, without a leading `?`.
    public func query(from parameters: [String: ParameterValue]) -> String {
        var pairs: [String] = []
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            append(value, key: PercentEncoding.encodeQueryComponent(key), to: &pairs)
        }
        return pairs.joined(separator: "&")
    }

    private func writesToQuery(for method: HTTPMethod) -> Bool {
        switch destination {
        case .methodDependent: return Self.queryStringMethods.contains(method)
        case .queryString: return true
        case .httpBody: return false
        }
    }

    /// Appends the pairs for `value` under an already-encoded `key`.
    private func append(_ value: ParameterValue, key: String, to pairs: inout [String]) {
        switch value {
        case .null:
            return
        case .object(let members):
            for (member, value) in members.sorted(by: { $0.key < $1.key }) {
                append(value, key: "\(key)%5B\(PercentEncoding.encodeQueryComponent(member))%5D", to: &pairs)
            }
        case .array(let elements):
            appendArray(elements, key: key, to: &pairs)
        default:
            pairs.append("\(key)=\(scalarText(value))")
        }
    }

    private func appendArray(_ elements: [ParameterValue], key: String, to pairs: inout [String]) {
        switch arrayEncoding {
        case .brackets:
            for element in elements { append(element, key: "\(key)%5B%5D", to: &pairs) }
        case .noBrackets:
            for element in elements { append(element, key: key, to: &pairs) }
        case .indexInBrackets:
            for (index, element) in elements.enumerated() { append(element, key: "\(key)%5B\(index)%5D", to: &pairs) }
        case .commaSeparated:
            let scalars = elements.filter(\.isScalar)
            if !scalars.isEmpty {
                pairs.append("\(key)=\(scalars.map(scalarText).joined(separator: ","))")
            }
            for element in elements where !element.isScalar && element != .null {
                append(element, key: "\(key)%5B%5D", to: &pairs)
            }
        }
    }

    /// The encoded text of a string, number or Boolean.
    private func scalarText(_ value: ParameterValue) -> String {
        switch value {
        case .string(let text): return PercentEncoding.encodeQueryComponent(text)
        case .int(let number): return String(number)
        case .double(let number): return PercentEncoding.encodeQueryComponent(String(number))
        case .bool(let flag):
            switch boolEncoding {
            case .numeric: return flag ? "1" : "0"
            case .literal: return flag ? "true" : "false"
            }
        case .null, .array, .object: return ""
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

extension ParameterValue {
    fileprivate var isScalar: Bool {
        switch self {
        case .string, .int, .double, .bool: return true
        case .null, .array, .object: return false
        }
    }
}
