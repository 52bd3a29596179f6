import Foundation

/// The dot segments of a URL's path (`.` and `..`, also written with `%2E`, RFC 3986 §2.3),
/// resolved as RFC 3986 §5.2.4 resolves them.
///
/// libcurl, under `URLSession` on Linux, resolves them before it sends a request, and SwiftNIO
/// sends them as written: a server that resolves none would get another path over each. Strata
/// resolves them before any transport sees the request — an endpoint's path, a whole URL, a
/// redirect's target — so that every transport sends the same path.
package enum DotSegments {
    /// `path` (a path, or one relative to another, its leading `/`s dropped) with its dot segments
    /// resolved, its query and fragment (after `?` or `#`) as they were, and whether a `..` found
    /// nothing left to remove (and was dropped); `nil` when it has no dot segment, as most have not.
    package static func resolve(_ path: String) -> (path: String, climbed: Bool)? {
        // Most paths hold no `.` or `%` at all: one look at their bytes, nothing made.
        guard path.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "%") }) else { return nil }
        let end = path.firstIndex { $0 == "?" || $0 == "#" } ?? path.endIndex
        let segments = path[..<end].drop { $0 == "/" }.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.contains(where: { kind(of: $0) != nil }) else { return nil }
        var kept: [Substring] = []
        var climbed = false
        // Whether the path ends in a dot segment, so names a directory: `a/b/..` is `a/`.
        var endsInDirectory = false
        for segment in segments {
            switch kind(of: segment) {
            case .current?:
                endsInDirectory = true
            case .parent?:
                if kept.popLast() == nil { climbed = true }
                endsInDirectory = true
            case nil:
                kept.append(segment)
                endsInDirectory = false
            }
        }
        return (kept.joined(separator: "/") + (endsInDirectory ? "/" : "") + path[end...], climbed)
    }

    /// Resolves the dot segments of `components`' path, a `..` at its root dropped.
    package static func resolve(_ components: inout URLComponents) {
        guard let (resolved, _) = resolve(components.percentEncodedPath) else { return }
        components.percentEncodedPath = "/" + resolved
    }

    /// `url` with the dot segments of its path resolved, a `..` at its root dropped; `url` itself
    /// when it has none.
    package static func resolving(_ url: URL) -> URL {
        // One look at the path's bytes: a path without a `.` or a `%` has no dot segment.
        guard
            url.path(percentEncoded: true).utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "%") }),
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url }
        let written = components.percentEncodedPath
        resolve(&components)
        guard components.percentEncodedPath != written else { return url }
        return components.url ?? url
    }

    private enum Kind {
        case current
        case parent
    }

    /// Whether `segment` is `.` or `..`, each dot written as itself or as `%2E`.
    private static func kind(of segment: Substring) -> Kind? {
        guard (1...6).contains(segment.utf8.count),
            segment.utf8.first == UInt8(ascii: ".") || segment.utf8.first == UInt8(ascii: "%")
        else {
            return nil
        }
        switch segment.lowercased() {
        case ".", "%2e": return .current
        case "..", ".%2e", "%2e.", "%2e%2e": return .parent
        default: return nil
        }
    }
}
