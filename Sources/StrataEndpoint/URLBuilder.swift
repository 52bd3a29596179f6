import Foundation
import StrataCore
import StrataEncoding

/// Joins base URLs, paths and queries.
enum URLBuilder {
    /// The URL of `path` under `baseURL`, with `query` (already encoded) after any query of theirs.
    ///
    /// Built as text from the base URL's own absolute string and parsed once: a relative path is
    /// the common case, and going through `URLComponents` would parse and serialize it twice more.
    static func url(
        path: String, under baseURL: URL, appendingQuery query: String
    ) throws(RequestGenerationError) -> URL {
        guard let base = Parts(baseURL.absoluteString) else {
            throw .invalidURL(baseURL.absoluteString)
        }
        let (pathPart, pathQuery) = split(path)
        var text = String(base.beforePath)
        text += join(base.path, PercentEncoding.encodePath(String(pathPart)))
        if let query = joinQueries(joinQueries(base.query, pathQuery), query[...]) {
            text += "?" + query
        }
        guard let url = URL(string: text) else {
            throw .invalidURL(text)
        }
        return url
    }

    /// The URL components of a full-path endpoint, before the merged query is added.
    static func target(fullPath path: String) throws(RequestGenerationError) -> URLComponents {
        let (pathPart, pathQuery) = split(path)
        guard
            var components = URLComponents(string: String(pathPart))
                ?? URLComponents(string: PercentEncoding.encodePath(String(pathPart))),
            components.scheme != nil, components.host != nil
        else {
            throw .invalidURL(path)
        }
        components.percentEncodedQuery = joinQueries(components.percentEncodedQuery?[...], pathQuery).map(String.init)
        return components
    }

    /// The final URL: `components` with `query` (already encoded) appended to its query.
    static func url(_ components: URLComponents, appendingQuery query: String) throws(RequestGenerationError) -> URL {
        var components = components
        if !query.isEmpty {
            components.percentEncodedQuery = joinQueries(components.percentEncodedQuery?[...], query[...])
                .map(String.init)
        }
        guard let url = components.url else {
            throw .invalidURL(components.string ?? components.description)
        }
        return url
    }

    /// Whether `components` has the same origin (scheme, host and port) as `url`.
    static func sameOrigin(_ components: URLComponents, _ url: URL) -> Bool {
        guard let scheme = components.scheme, let host = components.host else { return false }
        return Origin(scheme: scheme, host: host, port: components.port).contains(url)
    }

    /// The path and the query of `path`, split at the first `?`; a fragment is dropped.
    private static func split(_ path: String) -> (path: Substring, query: Substring?) {
        let (path, query) = path[...].cut(at: "#").before.cut(at: "?")
        return (path, query)
    }

    /// Two queries joined with `&`; `nil` when both are absent or empty.
    private static func joinQueries(_ first: Substring?, _ second: Substring?) -> Substring? {
        switch (first ?? "", second ?? "") {
        case ("", ""): return nil
        case (let first, ""): return first
        case ("", let second): return second
        case (let first, let second): return Substring(first + "&" + second)
        }
    }

    /// `base` and `path` with exactly one `/` between them.
    private static func join(_ base: Substring, _ path: String) -> String {
        guard !path.isEmpty else { return String(base) }
        let slash = UInt8(ascii: "/")
        let baseEnd = base.utf8.lastIndex { $0 != slash }.map(base.utf8.index(after:)) ?? base.startIndex
        let pathStart = path.utf8.firstIndex { $0 != slash } ?? path.endIndex
        return base[..<baseEnd] + "/" + path[pathStart...]
    }

    /// An absolute URL's text cut where RFC 3986 §3 cuts it: what comes before the path (scheme
    /// and authority), the path, and the query; a fragment is dropped.
    private struct Parts {
        var beforePath: Substring
        var path: Substring
        var query: Substring?

        /// `nil` when `text` has no authority (`//`), so no host: `mailto:`, a bare path.
        init?(_ text: String) {
            let (rest, query) = text[...].cut(at: "#").before.cut(at: "?")
            self.query = query
            // The authority follows the scheme's `:` (or starts the text), introduced by `//`.
            var authority = rest
            if case (let scheme, let afterColon?) = rest.cut(at: ":"), Self.isScheme(scheme) {
                authority = afterColon
            }
            guard authority.utf8.starts(with: "//".utf8) else { return nil }
            let afterSlashes = authority.utf8.index(authority.startIndex, offsetBy: 2)
            let pathStart = authority[afterSlashes...].utf8.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            beforePath = rest[..<pathStart]
            path = rest[pathStart...]
        }

        /// RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` and `.`.
        private static func isScheme(_ text: Substring) -> Bool {
            guard let first = text.utf8.first, first.isASCIILetter else { return false }
            return text.utf8.allSatisfy {
                $0.isASCIILetter || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "+")
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            }
        }
    }
}

extension Substring {
    /// The text before the first `separator` (an ASCII character), and the text after it, or `nil`
    /// when there is none. Searched as UTF-8, without the cost of telling characters apart.
    fileprivate func cut(at separator: Unicode.Scalar) -> (before: Substring, after: Substring?) {
        guard let index = utf8.firstIndex(of: UInt8(ascii: separator)) else { return (self, nil) }
        return (self[..<index], self[utf8.index(after: index)...])
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self | 0x20)
    }
}
