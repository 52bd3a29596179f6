import Foundation
import StrataEncoding

/// Joins base URLs, paths and queries.
enum URLBuilder {
    /// The URL components an endpoint targets, before the merged query is added.
    static func target(path: String, isFullPath: Bool, baseURL: URL) throws(RequestGenerationError) -> URLComponents {
        let (pathPart, pathQuery) = split(path)
        var components: URLComponents
        if isFullPath {
            guard
                let full = URLComponents(string: pathPart)
                    ?? URLComponents(string: PercentEncoding.encodePath(pathPart)),
                full.scheme != nil, full.host != nil
            else {
                throw .invalidURL(path)
            }
            components = full
        } else {
            // `percentEncodedHost`, not `host`: the decoded host goes through IDNA, which is slow.
            guard let base = URLComponents(url: baseURL, resolvingAgainstBaseURL: true), base.percentEncodedHost != nil
            else {
                throw .invalidURL(baseURL.absoluteString)
            }
            components = base
            components.fragment = nil
            components.percentEncodedPath = join(base.percentEncodedPath, PercentEncoding.encodePath(pathPart))
        }
        components.percentEncodedQuery = joinQueries(components.percentEncodedQuery, pathQuery)
        return components
    }

    /// The final URL: `components` with `query` (already encoded) appended to its query.
    static func url(_ components: URLComponents, appendingQuery query: String) throws(RequestGenerationError) -> URL {
        var components = components
        if !query.isEmpty {
            components.percentEncodedQuery = joinQueries(components.percentEncodedQuery, query)
        }
        guard let url = components.url else {
            throw .invalidURL(components.string ?? components.description)
        }
        return url
    }

    /// Whether `components` has the same scheme, host and port as `url`.
    static func sameOrigin(_ components: URLComponents, _ url: URL) -> Bool {
        guard let other = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return false }
        return components.scheme?.lowercased() == other.scheme?.lowercased()
            && components.host?.lowercased() == other.host?.lowercased()
            && effectivePort(components) == effectivePort(other)
    }

    private static func effectivePort(_ components: URLComponents) -> Int? {
        if let port = components.port { return port }
        switch components.scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// The path and the query of `path`, split at the first `?`; a fragment is dropped.
    private static func split(_ path: String) -> (path: String, query: String?) {
        let withoutFragment = path.firstIndex(of: "#").map { path[..<$0] } ?? path[...]
        guard let mark = withoutFragment.firstIndex(of: "?") else { return (String(withoutFragment), nil) }
        return (String(withoutFragment[..<mark]), String(withoutFragment[withoutFragment.index(after: mark)...]))
    }

    /// Two queries joined with `&`; `nil` when both are absent or empty.
    private static func joinQueries(_ first: String?, _ second: String?) -> String? {
        switch (first ?? "", second ?? "") {
        case ("", ""): return nil
        case (let first, ""): return first
        case ("", let second): return second
        case (let first, let second): return first + "&" + second
        }
    }

    /// `base` and `path` with exactly one `/` between them.
    private static func join(_ base: String, _ path: String) -> String {
        guard !path.isEmpty else { return base }
        var trimmedBase = Substring(base)
        while trimmedBase.hasSuffix("/") { trimmedBase = trimmedBase.dropLast() }
        var trimmedPath = Substring(path)
        while trimmedPath.hasPrefix("/") { trimmedPath = trimmedPath.dropFirst() }
        return trimmedBase + "/" + trimmedPath
    }
}
