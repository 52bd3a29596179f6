import Foundation

/// Why a URL cannot be sent over HTTP, though Foundation's `URL` accepted it.
///
/// `URL` takes much that no HTTP client can connect to — a port of 99999, an empty host, an IPv6
/// literal with a zone, a host holding a space or a NUL once decoded — and the layers below Strata
/// react badly to some of it: SwiftNIO traps on a port above 65535, and a NUL cuts a host name short
/// in the resolver. Strata checks every URL before a transport sees it (``HTTPURLCheck``).
public enum UnsupportedURLReason: Error, Hashable, Sendable, CustomStringConvertible {
    /// The scheme is not `http` or `https` (it is shown lowercased; empty when there is none).
    case unsupportedScheme(String)
    /// The URL has no host, or an empty one (`http:///path`, `http://:80/`, `http://[]/`).
    case missingHost
    /// The port is not a number from 1 to 65535 (`99999`, `0`, one too large for an integer, which
    /// `URL.port` reads as no port at all); shown as written.
    case invalidPort(String)
    /// The host holds a character no host name has (a name is ASCII letters, digits, `-`, `.` and
    /// `_`, at most 253 of them); the host is shown escaped, at most 64 characters of it.
    case invalidHost(String)
    /// A bracketed host that is not an IPv6 address (`[v1.x]`, `[::1::2]`).
    case invalidIPv6Address(String)
    /// An IPv6 address with a zone (`[fe80::1%25eth0]`): a zone names an interface of one machine,
    /// and the transports cannot connect through one.
    case ipv6ZoneIdentifier(String)
    /// A URL the check lets through that this transport cannot send (say, an IPv6 address to
    /// FoundationNetworking on Linux); the text says what.
    case unsupportedByTransport(String)

    /// What is wrong, in words.
    public var description: String {
        switch self {
        case .unsupportedScheme(let scheme):
            return scheme.isEmpty
                ? "it has no scheme (only http and https are sent)"
                : "its scheme \(Self.shown(scheme)) is not http or https"
        case .missingHost: return "it has no host"
        case .invalidPort(let port): return "its port \(Self.shown(port)) is not a number from 1 to 65535"
        case .invalidHost(let host):
            return "its host \(Self.shown(host)) is not a host name (ASCII letters, digits, '-', '.' and '_', "
                + "at most 253 of them)"
        case .invalidIPv6Address(let host): return "its host [\(Self.shown(host))] is not an IPv6 address"
        case .ipv6ZoneIdentifier(let host):
            return "its host [\(Self.shown(host))] is an IPv6 address with a zone, which cannot be connected to"
        case .unsupportedByTransport(let what): return what
        }
    }

    /// `text` escaped, at most 64 characters of it.
    static func shown(_ text: String) -> String {
        let escaped = String(text.prefix(64).debugDescription.dropFirst().dropLast())
        return text.count > 64 ? escaped + "…" : escaped
    }
}

/// The check every URL passes before Strata hands it to a transport: an `http` or `https` URL with
/// a host that can be connected to and a port in range.
///
/// The pipeline checks each request it sends — the caller's, one built from a configuration's base
/// URL, one an adapter changed, and every redirect's `Location` — with its transport's
/// `validate(_:)`, whose default is this check.
///
/// ```swift
/// if let url = URL(string: "http://127.0.0.1:99999/x") {
///     try HTTPURLCheck.validate(url)  // throws UnsupportedURLReason.invalidPort("99999")
/// }
/// ```
public enum HTTPURLCheck {
    /// The schemes an HTTP transport sends, lowercased.
    public static let schemes: Set<String> = ["http", "https"]

    /// Throws unless `url` is an `http` or `https` URL with a host name or an IP address (IPv6 in
    /// brackets, without a zone) and, if it has one, a port from 1 to 65535. User information is
    /// not judged here: the pipeline moves it into an `Authorization` header before a URL is sent.
    public static func validate(_ url: URL) throws(UnsupportedURLReason) {
        // One pass over the URL as written (it runs for every request): `URL.port` is nil for one too
        // large for an `Int`, and a transport would then connect to the scheme's default port.
        let parts = Parts(url.absoluteString)
        guard schemes.contains(parts.scheme) else { throw .unsupportedScheme(parts.scheme) }
        if let port = parts.port, !port.isEmpty {
            guard port.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let number = Int(port), (1...65_535).contains(number)
            else { throw .invalidPort(String(port)) }
        }
        var host = String(parts.host ?? "")
        if host.utf8.contains(UInt8(ascii: "%")) {
            // Percent-encoded: judged as it decodes, as the transports read it.
            host = url.host ?? ""
            if host.hasPrefix("["), host.hasSuffix("]") {
                host = String(host.dropFirst().dropLast())
            }
        }
        guard !host.isEmpty else { throw .missingHost }
        if parts.isBracketed {
            if host.utf8.contains(UInt8(ascii: "%")) { throw .ipv6ZoneIdentifier(host) }
            guard isIPv6Address(host) else { throw .invalidIPv6Address(host) }
            return
        }
        guard host.utf8.count <= 253, host.utf8.allSatisfy(isHostNameByte) else { throw .invalidHost(host) }
    }

    /// A URL's scheme, host and port as written.
    private struct Parts {
        /// The scheme, lowercased; empty without one.
        var scheme = ""
        /// The host without brackets, percent-encoding left as written; `nil` without an authority.
        var host: Substring?
        /// The port's text after the colon (empty for `host:`); `nil` without one.
        var port: Substring?
        /// Whether the host is an IP literal in brackets.
        var isBracketed = false

        // Every delimiter is ASCII, so the text is cut on its UTF-8 bytes: String's own searches
        // walk grapheme clusters (and `contains` of a string goes through Foundation on Linux), a
        // few microseconds on every request.
        init(_ text: String) {
            let bytes = text.utf8
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
            scheme = text[..<colon].lowercased()
            let rest = bytes[bytes.index(after: colon)...]
            guard rest.starts(with: "//".utf8) else { return }
            let authority = rest.dropFirst(2).prefix {
                $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#")
            }
            var hostAndPort =
                authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] }
                ?? authority
            if hostAndPort.first == UInt8(ascii: "[") {
                isBracketed = true
                guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")) else {
                    host = Substring(hostAndPort.dropFirst())
                    return
                }
                host = Substring(hostAndPort[hostAndPort.index(after: hostAndPort.startIndex)..<close])
                hostAndPort = hostAndPort[hostAndPort.index(after: close)...]
                if hostAndPort.first == UInt8(ascii: ":") { port = Substring(hostAndPort.dropFirst()) }
                return
            }
            if let portColon = hostAndPort.firstIndex(of: UInt8(ascii: ":")) {
                host = Substring(hostAndPort[..<portColon])
                port = Substring(hostAndPort[hostAndPort.index(after: portColon)...])
            } else {
                host = Substring(hostAndPort)
            }
        }
    }

    /// Whether the authority of `url` holds a bracketed (IP-literal) host.
    package static func isBracketed(_ url: URL) -> Bool {
        Parts(url.absoluteString).isBracketed
    }

    /// An ASCII letter or digit, `-`, `.` or `_`.
    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// Whether `text` is an IPv6 address as RFC 3986 writes one (`IPv6address`): eight groups of
    /// one to four hex digits, one run of them shortened to `::`, the last two possibly an IPv4
    /// address.
    package static func isIPv6Address(_ text: String) -> Bool {
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return false }
        func groups(_ half: String) -> [Substring]? {
            half.isEmpty ? [] : half.split(separator: ":", omittingEmptySubsequences: false)
        }
        guard let head = groups(halves[0]), let tail = halves.count == 2 ? groups(halves[1]) : [] else { return false }
        var all = head + tail
        var count = all.count
        if let last = all.last, last.contains(".") {
            guard isIPv4Address(last) else { return false }
            all.removeLast()
            count += 1
        }
        guard all.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(\.isHexDigit) && $0.allSatisfy(\.isASCII) })
        else { return false }
        return halves.count == 2 ? count <= 7 : count == 8
    }

    /// Whether `text` is four decimal numbers from 0 to 255 with no leading zero, joined by dots.
    private static func isIPv4Address(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                (1...3).contains(part.count) && part.allSatisfy { $0.isASCII && $0.isNumber }
                    && (part.count == 1 || part.first != "0") && (Int(part) ?? 256) <= 255
            }
    }
}
