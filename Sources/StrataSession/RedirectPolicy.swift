import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a ``URLSessionManager`` does when a server redirects.
///
/// Whatever the policy, Strata first makes the next request safe: when the redirect changes
/// scheme, host or port, `Authorization`, `Proxy-Authorization` and `Cookie` are removed (Linux
/// would copy them to any host), and a `307` or `308` keeps the method and body (Linux drops the
/// body). A redirect to a URL already visited, or one more than ``maximumRedirects``, fails the
/// request with a ``RedirectError``.
///
/// ```swift
/// URLSessionManager(redirectPolicy: .follow)                       // the default
/// URLSessionManager(redirectPolicy: .doNotFollow)                  // the 3xx is the response
/// URLSessionManager(redirectPolicy: .custom { next, response in    // decide each time
///     next.url?.host == "api.example.com" ? next : nil
/// })
/// ```
public struct RedirectPolicy: Sendable {
    /// Decides on the next request (already made safe): return it, a changed one, or `nil` to stop
    /// and take the redirect response as the final one.
    public typealias Decision = @Sendable (_ next: URLRequest, _ response: HTTPURLResponse) -> URLRequest?

    /// The most redirects one request follows.
    public var maximumRedirects: Int
    private let decide: Decision

    /// A policy with its own decision.
    public init(maximumRedirects: Int = 10, decide: @escaping Decision) {
        self.maximumRedirects = maximumRedirects
        self.decide = decide
    }

    /// Follows every redirect (made safe), up to 10.
    public static let follow = RedirectPolicy { next, _ in next }
    /// Follows no redirect: the 3xx response is the result.
    public static let doNotFollow = RedirectPolicy { _, _ in nil }

    /// Follows redirects as `decide` says, up to `maximumRedirects`.
    public static func custom(maximumRedirects: Int = 10, _ decide: @escaping Decision) -> RedirectPolicy {
        RedirectPolicy(maximumRedirects: maximumRedirects, decide: decide)
    }

    /// The header fields removed from a redirect that changes origin.
    public static let credentialHeaderNames = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// The request to send for a redirect from `previous`, given what the loading system proposes:
    /// credentials removed across origins, method and body kept for `307` and `308`; then the
    /// policy's decision.
    func nextRequest(after previous: URLRequest, response: HTTPURLResponse, proposed: URLRequest) -> URLRequest? {
        var next = proposed
        if [307, 308].contains(response.statusCode) {
            next.httpMethod = previous.httpMethod
            if let body = previous.httpBody {
                next.httpBody = body
            }
            for name in ["Content-Type", "Content-Length"] where next.value(forHTTPHeaderField: name) == nil {
                next.setValue(previous.value(forHTTPHeaderField: name), forHTTPHeaderField: name)
            }
        }
        if !Self.sameOrigin(previous.url, next.url) {
            for name in Self.credentialHeaderNames {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return decide(next, response)
    }

    static func sameOrigin(_ lhs: URL?, _ rhs: URL?) -> Bool {
        func origin(_ url: URL?) -> (String, String, Int)? {
            guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            return (scheme, host, url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1))
        }
        guard let left = origin(lhs), let right = origin(rhs) else { return false }
        return left == right
    }
}

/// Why a redirect was not followed.
public enum RedirectError: Error, Hashable, Sendable, LocalizedError {
    /// More redirects than the policy allows.
    case tooManyRedirects(maximum: Int)
    /// A redirect to a URL this request already visited.
    case loop(URL)

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .tooManyRedirects(let maximum): return "The server redirected more than \(maximum) times."
        case .loop(let url): return "The server redirected in a loop, back to \(url.absoluteString)."
        }
    }
}
