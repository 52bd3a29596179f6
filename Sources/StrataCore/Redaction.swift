import Foundation

/// What logs must never show: header values and query values that carry credentials.
///
/// Header names and query keys compare without case. The defaults cover `Authorization`,
/// `Proxy-Authorization`, `Cookie` and `Set-Cookie`; add the names your API uses for secrets:
///
/// ```swift
/// let redaction = Redaction(extraHeaderNames: ["X-Api-Key"], queryKeys: ["token"])
/// ```
public struct Redaction: Hashable, Sendable {
    /// Header names whose values are always replaced.
    public static let credentialHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie",
    ]

    /// Names of query keys and body fields that usually hold secrets: `password`, `secret`,
    /// `client_secret`, `token`, `access_token`, `refresh_token`, `id_token`, `api_key`, `apikey`.
    public static let secretFieldNames: Set<String> = [
        "password", "passwd", "secret", "client_secret", "token", "access_token", "refresh_token", "id_token",
        "api_key", "apikey",
    ]

    /// Header names (lowercased) whose values are replaced.
    public let headerNames: Set<String>
    /// Query keys (lowercased) whose values are replaced.
    public let queryKeys: Set<String>
    /// JSON and form body fields (lowercased) whose values are replaced, at any depth. Fields named
    /// like a covered header are replaced too (an echoed `authorization`, say).
    public let bodyFields: Set<String>
    /// What a redacted value is replaced by.
    public let placeholder: String

    /// Creates a redaction policy that covers the credential headers, the usual secret field names in
    /// queries and bodies, and the given names, keys and fields.
    public init(
        extraHeaderNames: Set<String> = [],
        queryKeys: Set<String> = [],
        bodyFields: Set<String> = [],
        placeholder: String = "<redacted>"
    ) {
        self.headerNames = Self.credentialHeaderNames.union(extraHeaderNames.map { $0.lowercased() })
        self.queryKeys = Self.secretFieldNames.union(queryKeys.map { $0.lowercased() })
        self.bodyFields = Self.secretFieldNames.union(bodyFields.map { $0.lowercased() })
        self.placeholder = placeholder
    }

    /// Whether the value of header `name` is hidden.
    public func hidesHeader(named name: String) -> Bool {
        headerNames.contains(name.lowercased())
    }

    /// `headers` with every covered value replaced by the placeholder.
    public func redact(_ headers: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(
            headers.map { field in
                hidesHeader(named: field.name) ? HTTPHeader(name: field.name, value: placeholder) : field
            }
        )
    }

    /// The text of `url` with the values of covered query keys, and any user and password in the
    /// authority, replaced by the placeholder.
    ///
    /// The result is text for a log, not a URL: the placeholder is inserted as it is, never through
    /// a percent-encoded `URLComponents` setter (which traps on characters such as `<`).
    public func redact(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        let query = components.percentEncodedQuery
        let fragment = components.percentEncodedFragment
        let hasCredentials = components.user != nil || components.password != nil
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        components.user = nil
        components.password = nil
        var text = components.string ?? url.absoluteString
        if hasCredentials, let authority = text.range(of: "//") {
            text.insert(contentsOf: placeholder + "@", at: authority.upperBound)
        }
        if let query {
            text += "?" + redactQuery(query)
        }
        if let fragment {
            text += "#" + fragment
        }
        return text
    }

    private func redactQuery(_ query: String, keys: Set<String>? = nil) -> String {
        let keys = keys ?? queryKeys
        guard !keys.isEmpty else { return query }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let decoded = (String(name).removingPercentEncoding ?? String(name)).lowercased()
            let base = decoded.split(separator: "[").first.map(String.init) ?? decoded
            return keys.contains(decoded) || keys.contains(base) ? "\(name)=\(placeholder)" : String(pair)
        }.joined(separator: "&")
    }

    /// A body as log text with covered fields replaced: JSON objects at any depth and form bodies
    /// are redacted; other text is returned as it is; `nil` when the body is not UTF-8 text.
    public func redact(body: Data, contentType: String?) -> String? {
        let type = contentType?.lowercased() ?? ""
        let fields = bodyFields.union(headerNames)
        if type.contains("json") || body.first.map({ $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[") }) == true,
            let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let redacted = try? JSONSerialization.data(
                withJSONObject: redactJSON(object, fields: fields),
                options: [.sortedKeys, .fragmentsAllowed]
            )
        {
            return String(decoding: redacted, as: UTF8.self)
        }
        guard let text = String(data: body, encoding: .utf8) else { return nil }
        if type.hasPrefix("application/x-www-form-urlencoded") {
            return redactQuery(text, keys: fields)
        }
        return text
    }

    private func redactJSON(_ value: Any, fields: Set<String>) -> Any {
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, member) in object {
                result[key] = fields.contains(key.lowercased()) ? placeholder : redactJSON(member, fields: fields)
            }
            return result
        }
        if let array = value as? [Any] {
            return array.map { redactJSON($0, fields: fields) }
        }
        return value
    }
}
