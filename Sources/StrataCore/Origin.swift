import Foundation

/// Where a URL's content comes from (RFC 6454): scheme, host and port. Credentials, configuration
/// headers and cookies belong to an origin, and Strata never lets them cross to another.
///
/// Scheme and host compare without case; a missing port is the scheme's default (80 for `http`,
/// 443 for `https`), so `https://api.example.com` and `https://API.example.com:443/v1` are one
/// origin, while `http://api.example.com` and `https://api.example.com:8443` are two others.
///
/// ```swift
/// let api = Origin(scheme: "https", host: "api.example.com")
/// api.contains(URL(string: "https://API.example.com:443/v1/users"))  // true
/// api.contains(URL(string: "http://api.example.com/v1/users"))       // false
/// ```
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// The scheme, lowercased.
    public let scheme: String
    /// The host, lowercased.
    public let host: String
    /// The port: the one given, else the scheme's default; `nil` for a scheme without one.
    public let port: Int?

    /// The origin of `scheme://host:port`; without a port, the scheme's default.
    public init(scheme: String, host: String, port: Int? = nil) {
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.port = port ?? Self.defaultPort(of: self.scheme)
    }

    /// The origin of `url`, or `nil` when it has no scheme or no host.
    public init?(_ url: URL) {
        guard let scheme = url.scheme, let host = url.host, !host.isEmpty else { return nil }
        self.init(scheme: scheme, host: host, port: url.port)
    }

    /// Whether `url` belongs to this origin.
    public func contains(_ url: URL?) -> Bool {
        url.flatMap(Origin.init) == self
    }

    /// `scheme://host:port`
    public var description: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)" + (port.map { ":\($0)" } ?? "")
    }

    /// 80 for `http`, 443 for `https`.
    private static func defaultPort(of scheme: String) -> Int? {
        switch scheme {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }
}
