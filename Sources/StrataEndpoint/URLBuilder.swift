import Foundation
import StrataCore
import StrataEncoding

/// Joins base URLs, paths and queries.
package enum URLBuilder {
    /// The URL of `path` under `baseURL`, with `query` (already encoded) after any query of theirs.
    ///
    /// Built as text from the base URL's own absolute string and parsed once: a relative path is
    /// the common case, and going through `URLComponents` would parse and serialize it twice more.
    /// The texts are cut and joined as UTF-8 bytes, in one buffer. The URLs parsed are kept by
    /// their text (``parsed``): parsing is most of the work, and apps ask for the same URLs again
    /// and again.
    static func url(
        path: String, under baseURL: URL, appendingQuery query: String
    ) throws(RequestGenerationError) -> URL {
        // The base URL's own dot segments are resolved first (at its root at most), as a
        // redirect's are: every transport then sends the same path.
        var base = DotSegments.resolving(baseURL).absoluteString
        var path = path
        if let (resolved, climbed) = DotSegments.resolve(path) {
            // A path is built under the base URL's path, and stays there.
            guard !climbed else { throw .pathLeavesBaseURL(path) }
            path = resolved
        }
        var query = query
        let text = base.withUTF8 { base in
            path.withUTF8 { path in
                query.withUTF8 { query in compose(base: base, path: path, query: query) }
            }
        }
        guard let text else {
            throw .invalidURL(base)
        }
        guard let url = parsed(text) else {
            throw .invalidURL(text)
        }
        return url
    }

    /// URLs parsed from their texts, kept for the next request to the same: at most
    /// ``parsedLimit`` of them, each of at most ``parsedTextLimit`` bytes; once there are as many,
    /// they are dropped and kept anew.
    private static let parsedURLs = Locked([String: URL]())
    /// How many parsed URLs are kept.
    package static let parsedLimit = 64
    /// The longest URL text whose URL is kept, in bytes: the kept ones hold at most 64 of these.
    package static let parsedTextLimit = 4_096

    /// How many parsed URLs are kept now.
    package static var parsedCount: Int { parsedURLs.withLock { $0.count } }

    /// Whether the URL parsed from `text` is kept.
    package static func keeps(_ text: String) -> Bool { parsedURLs.withLock { $0[text] != nil } }

    /// `URL(string: text)`, parsed once for the texts that come again.
    package static func parsed(_ text: String) -> URL? {
        // A text too long to be kept is not hashed for a look-up either: it is parsed, once.
        guard text.utf8.count <= parsedTextLimit else { return URL(string: text) }
        if let url = parsedURLs.withLock({ $0[text] }) {
            return url
        }
        guard let url = URL(string: text) else { return nil }
        parsedURLs.withLock { kept in
            if kept.count >= parsedLimit { kept.removeAll(keepingCapacity: true) }
            kept[text] = url
        }
        return url
    }

    /// The text of ``url(path:under:appendingQuery:)``; `nil` when `base` has no authority.
    private static func compose(
        base: UnsafeBufferPointer<UInt8>, path: UnsafeBufferPointer<UInt8>, query: UnsafeBufferPointer<UInt8>
    ) -> String? {
        guard let parts = BaseParts(base) else { return nil }
        let (pathPart, pathQuery) = split(path)
        let capacity =
            parts.beforePath.count + parts.path.count + 1
            + PercentEncoding.encodedCount(pathPart, keeping: .path)
            + (parts.query?.count ?? 0) + (pathQuery?.count ?? 0) + query.count + 3
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var count = 0
            func write(_ bytes: UnsafeBufferPointer<UInt8>) {
                for byte in bytes {
                    buffer[count] = byte
                    count += 1
                }
            }
            let slash = UInt8(ascii: "/")
            write(parts.beforePath)
            // `base` and `path` with exactly one `/` between them.
            if pathPart.isEmpty {
                write(parts.path)
            } else {
                let baseEnd = parts.path.lastIndex { $0 != slash }.map { $0 + 1 } ?? 0
                write(parts.path.rebasedPrefix(baseEnd))
                buffer[count] = slash
                count += 1
                let pathStart = pathPart.firstIndex { $0 != slash } ?? pathPart.count
                PercentEncoding.write(
                    pathPart.rebasedSuffix(from: pathStart), keeping: .path, to: buffer, at: &count
                )
            }
            // The queries joined with `&`, the empty ones left out.
            var separator = UInt8(ascii: "?")
            func write(query: UnsafeBufferPointer<UInt8>?) {
                guard let query, !query.isEmpty else { return }
                buffer[count] = separator
                count += 1
                write(query)
                separator = UInt8(ascii: "&")
            }
            write(query: parts.query)
            write(query: pathQuery)
            write(query: query)
            return count
        }
    }

    /// The URL components of a full-path endpoint, before the merged query is added.
    static func target(fullPath path: String) throws(RequestGenerationError) -> URLComponents {
        var path = path
        let (pathPart, pathQuery) = path.withUTF8 { bytes in
            let (path, query) = split(bytes)
            return (String(decoding: path, as: UTF8.self), query.map { Substring(decoding: $0, as: UTF8.self) })
        }
        guard
            var components = URLComponents(string: pathPart)
                ?? URLComponents(string: PercentEncoding.encodePath(pathPart)),
            components.scheme != nil, components.host != nil
        else {
            throw .invalidURL(path)
        }
        DotSegments.resolve(&components)
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
    private static func split(
        _ path: UnsafeBufferPointer<UInt8>
    ) -> (path: UnsafeBufferPointer<UInt8>, query: UnsafeBufferPointer<UInt8>?) {
        let (path, query) = path.cut(at: "#").before.cut(at: "?")
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

    /// An absolute URL's text cut where RFC 3986 §3 cuts it: what comes before the path (scheme
    /// and authority), the path, and the query; a fragment is dropped.
    private struct BaseParts {
        var beforePath: UnsafeBufferPointer<UInt8>
        var path: UnsafeBufferPointer<UInt8>
        var query: UnsafeBufferPointer<UInt8>?

        /// `nil` when `text` has no authority (`//`), so no host: `mailto:`, a bare path.
        init?(_ text: UnsafeBufferPointer<UInt8>) {
            let (rest, query) = text.cut(at: "#").before.cut(at: "?")
            self.query = query
            // The authority follows the scheme's `:` (or starts the text), introduced by `//`.
            var authority = rest
            if case (let scheme, let afterColon?) = rest.cut(at: ":"), Self.isScheme(scheme) {
                authority = afterColon
            }
            let slash = UInt8(ascii: "/")
            guard authority.count >= 2, authority[0] == slash, authority[1] == slash else { return nil }
            // Where the path starts, counted in `rest`.
            let hostStart = rest.count - authority.count + 2
            let pathStart =
                rest.rebasedSuffix(from: hostStart).firstIndex(of: slash).map { hostStart + $0 } ?? rest.count
            beforePath = rest.rebasedPrefix(pathStart)
            path = rest.rebasedSuffix(from: pathStart)
        }

        /// RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` and `.`.
        private static func isScheme(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let first = text.first, first.isASCIILetter else { return false }
            return text.allSatisfy {
                $0.isASCIILetter || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "+")
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            }
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The bytes before the first `separator` (an ASCII character), and the bytes after it, or
    /// `nil` when there is none.
    fileprivate func cut(at separator: Unicode.Scalar) -> (before: Self, after: Self?) {
        guard let index = firstIndex(of: UInt8(ascii: separator)) else { return (self, nil) }
        return (rebasedPrefix(index), rebasedSuffix(from: index + 1))
    }

    /// The first `count` bytes.
    fileprivate func rebasedPrefix(_ count: Int) -> Self {
        Self(rebasing: self[..<count])
    }

    /// The bytes after the first `count`.
    fileprivate func rebasedSuffix(from count: Int) -> Self {
        Self(rebasing: self[count...])
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self | 0x20)
    }
}
