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
        // One pass over the URL as written, on its UTF-8 bytes (it runs for every request, and a
        // transport may check again): `URL.port` is nil for one too large for an `Int`, and a
        // transport would then connect to the scheme's default port. Text is made only to say what
        // is wrong, or for the rare host that is percent-encoded or bracketed.
        var text = url.absoluteString
        let verdict = text.withUTF8 { bytes in Verdict(Parts(bytes), of: bytes) }
        let host: String
        switch verdict {
        case .valid: return
        case .refused(let reason): throw reason
        case .judgeHost(let written, let isBracketed):
            if written.utf8.contains(UInt8(ascii: "%")) {
                // Percent-encoded: judged as it decodes, as the transports read it.
                var decoded = url.host ?? ""
                if decoded.hasPrefix("["), decoded.hasSuffix("]") {
                    decoded = String(decoded.dropFirst().dropLast())
                }
                host = decoded
            } else {
                host = written
            }
            guard !host.isEmpty else { throw .missingHost }
            if isBracketed {
                if host.utf8.contains(UInt8(ascii: "%")) { throw .ipv6ZoneIdentifier(host) }
                guard isIPv6Address(host) else { throw .invalidIPv6Address(host) }
                return
            }
            guard host.utf8.count <= 253, host.utf8.allSatisfy(isHostNameByte) else { throw .invalidHost(host) }
        }
    }

    /// What the bytes of a URL alone say about it.
    private enum Verdict {
        /// An `http` or `https` URL with a port in range, if any, and a plain host name.
        case valid
        case refused(UnsupportedURLReason)
        /// The scheme and port pass; the host, as written, is judged as text: it is bracketed or
        /// percent-encoded, or it fails and the reason needs it.
        case judgeHost(String, isBracketed: Bool)

        init(_ parts: Parts, of bytes: UnsafeBufferPointer<UInt8>) {
            func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
            guard Self.isHTTPScheme(bytes[parts.scheme]) else {
                self = .refused(.unsupportedScheme(text(parts.scheme).lowercased()))
                return
            }
            if let port = parts.port, !port.isEmpty {
                var number = 0
                for byte in bytes[port] {
                    guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), number <= 65_535 else {
                        number = 0
                        break
                    }
                    number = number * 10 + Int(byte - UInt8(ascii: "0"))
                }
                guard (1...65_535).contains(number) else {
                    self = .refused(.invalidPort(text(port)))
                    return
                }
            }
            let host = parts.host ?? 0..<0
            guard
                parts.isBracketed || host.isEmpty || host.count > 253
                    || !bytes[host].allSatisfy(isHostNameByte)
            else {
                self = .valid
                return
            }
            self = .judgeHost(text(host), isBracketed: parts.isBracketed)
        }

        /// Whether `scheme` is `http` or `https`, in any case (`| 0x20` lowercases an ASCII letter,
        /// and no other byte becomes one of these).
        private static func isHTTPScheme(_ scheme: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            let start = scheme.startIndex
            return (scheme.count == 4 || (scheme.count == 5 && scheme[start + 4] | 0x20 == UInt8(ascii: "s")))
                && scheme[start] | 0x20 == UInt8(ascii: "h") && scheme[start + 1] | 0x20 == UInt8(ascii: "t")
                && scheme[start + 2] | 0x20 == UInt8(ascii: "t") && scheme[start + 3] | 0x20 == UInt8(ascii: "p")
        }
    }

    /// Where a URL's scheme, host and port are in its text as written, by UTF-8 offset.
    private struct Parts {
        /// The scheme; empty without one.
        var scheme = 0..<0
        /// The host without brackets, percent-encoding left as written; `nil` without an authority.
        var host: Range<Int>?
        /// The port's text after the colon (empty for `host:`); `nil` without one.
        var port: Range<Int>?
        /// Whether the host is an IP literal in brackets.
        var isBracketed = false

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
            scheme = 0..<colon
            let slash = UInt8(ascii: "/")
            guard colon + 2 < bytes.count, bytes[colon + 1] == slash, bytes[colon + 2] == slash else { return }
            let start = colon + 3
            let end =
                bytes[start...].firstIndex {
                    $0 == slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
                } ?? bytes.count
            var from = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")).map { $0 + 1 } ?? start
            if from < end, bytes[from] == UInt8(ascii: "[") {
                isBracketed = true
                guard let close = bytes[from..<end].firstIndex(of: UInt8(ascii: "]")) else {
                    host = from + 1..<end
                    return
                }
                host = from + 1..<close
                from = close + 1
                if from < end, bytes[from] == UInt8(ascii: ":") { port = from + 1..<end }
                return
            }
            if let portColon = bytes[from..<end].firstIndex(of: UInt8(ascii: ":")) {
                host = from..<portColon
                port = portColon + 1..<end
            } else {
                host = from..<end
            }
        }
    }

    /// Whether the authority of `url` holds a bracketed (IP-literal) host.
    package static func isBracketed(_ url: URL) -> Bool {
        var text = url.absoluteString
        return text.withUTF8 { Parts($0).isBracketed }
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
