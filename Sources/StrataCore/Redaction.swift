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

    /// Header names (lowercased) whose values are replaced.
    public let headerNames: Set<String>
    /// Query keys (lowercased) whose values are replaced.
    public let queryKeys: Set<String>
    /// What a redacted value is replaced by.
    public let placeholder: String

    /// Creates a redaction policy that covers the credential headers plus the given names and keys.
    public init(extraHeaderNames: Set<String> = [], queryKeys: Set<String> = [], placeholder: String = "<redacted>") {
        self.headerNames = Self.credentialHeaderNames.union(extraHeaderNames.map { $0.lowercased() })
        self.queryKeys = Set(queryKeys.map { $0.lowercased() })
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
    public func redact(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        if components.user != nil { components.user = placeholder }
        if components.password != nil { components.password = placeholder }
        if let items = components.percentEncodedQueryItems, !queryKeys.isEmpty {
            components.percentEncodedQueryItems = items.map { item in
                let name = item.name.removingPercentEncoding ?? item.name
                guard queryKeys.contains(name.lowercased()) else { return item }
                return URLQueryItem(name: item.name, value: placeholder)
            }
        }
        return components.string ?? url.absoluteString
    }
}
