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

    private func redactQuery(_ query: String) -> String {
        guard !queryKeys.isEmpty else { return query }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let decoded = String(name).removingPercentEncoding ?? String(name)
            return queryKeys.contains(decoded.lowercased()) ? "\(name)=\(placeholder)" : String(pair)
        }.joined(separator: "&")
    }
}
