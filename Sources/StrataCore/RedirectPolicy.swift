import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a session manager does when a server redirects (`301`, `302`, `303`, `307`, `308`
/// with a `Location`).
///
/// Strata follows redirects itself, not the loading system, and makes each next request safe before
/// the policy sees it:
///
/// - **Method and body.** `307` and `308` keep the method and the body (a body on disk is uploaded
///   again from its file); `303` turns any method but `HEAD` into `GET`, and `301` and `302` turn
///   `POST` into `GET`, as browsers do; a request that becomes a `GET` loses its body and the
///   headers that describe it.
/// - **Origins.** The next request is built from the request as the caller made it, before any
///   adapter ran, and the adapters and interceptors run again for it. When the redirect changes
///   origin (scheme, host or port), every header ``/StrataCore/Redaction`` calls a credential
///   (`Authorization`, `Proxy-Authorization`, `Cookie`, and the manager's own names) and every
///   header of the configuration (``RequestOptions/originBoundHeaderNames``) is removed: only
///   what the caller set for this one request goes on, and a credential is applied again only by an
///   adapter that knows the new origin (StrataSession's `AuthenticationInterceptor` does).
/// - **Schemes.** A redirect from `https` to `http` fails with ``RedirectError/insecureRedirect(from:to:)``
///   unless ``allowsInsecureRedirects``, and one to a scheme outside ``allowedSchemes`` (`file:`,
///   `ftp:`) with ``RedirectError/unsupportedScheme(_:)``.
/// - **Loops and chains.** A redirect back to a request already made (the same method and URL),
///   or one more than ``maximumRedirects``, fails with ``RedirectError``; so does a `Location` that
///   is not a URL.
///
/// ```swift
/// URLSessionManager(redirectPolicy: .follow)                       // the default
/// URLSessionManager(redirectPolicy: .doNotFollow)                  // the 3xx is the response
/// URLSessionManager(redirectPolicy: .custom { next, response in    // decide each time
///     next.url?.host == "api.example.com" ? next : nil
/// })
/// ```
///
/// A decision runs after Strata has released its own locks, so it may start other requests.
public struct RedirectPolicy: Sendable {
    /// Decides on the next request (already made safe): return it, a changed one, or `nil` to stop
    /// and take the redirect response as the final one. Whatever it returns is made safe again when
    /// it goes to another origin than the request redirected — a credential header it adds is removed
    /// too (add one for the new origin with an adapter, which runs next) — and a changed URL is held
    /// to the same scheme rules.
    public typealias Decision = @Sendable (_ next: URLRequest, _ response: HTTPURLResponse) -> URLRequest?

    /// The most redirects one request follows.
    public var maximumRedirects: Int
    /// Whether a redirect may lead from `https` to `http`. `false` by default.
    public var allowsInsecureRedirects: Bool
    /// The schemes (lowercased) a redirect may lead to. `http` and `https` by default.
    public var allowedSchemes: Set<String>
    /// The decision, or `nil` for a policy that follows nothing.
    package let decide: Decision?

    /// A policy with its own decision.
    public init(
        maximumRedirects: Int = 10,
        allowsInsecureRedirects: Bool = false,
        allowedSchemes: Set<String> = ["http", "https"],
        decide: @escaping Decision
    ) {
        self.init(
            maximumRedirects: maximumRedirects, allowsInsecureRedirects: allowsInsecureRedirects,
            allowedSchemes: allowedSchemes, decision: decide)
    }

    private init(
        maximumRedirects: Int, allowsInsecureRedirects: Bool, allowedSchemes: Set<String>, decision: Decision?
    ) {
        self.maximumRedirects = maximumRedirects
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.allowedSchemes = Set(allowedSchemes.map { $0.lowercased() })
        self.decide = decision
    }

    /// Follows every redirect (made safe), up to 10.
    public static let follow = RedirectPolicy { next, _ in next }
    /// Follows no redirect: the 3xx response is the result, whatever its `Location`.
    public static let doNotFollow = RedirectPolicy(
        maximumRedirects: 0, allowsInsecureRedirects: false, allowedSchemes: [], decision: nil)

    /// Follows redirects as `decide` says, up to `maximumRedirects`.
    public static func custom(
        maximumRedirects: Int = 10, allowsInsecureRedirects: Bool = false, _ decide: @escaping Decision
    ) -> RedirectPolicy {
        RedirectPolicy(
            maximumRedirects: maximumRedirects, allowsInsecureRedirects: allowsInsecureRedirects, decide: decide)
    }

    /// Throws unless a redirect may lead from `previous` to `next` by scheme.
    package func check(from previous: URL?, to next: URL) throws(RedirectError) {
        let scheme = next.scheme?.lowercased() ?? ""
        guard allowedSchemes.contains(scheme) else { throw .unsupportedScheme(next) }
        if previous?.scheme?.lowercased() == "https", scheme == "http", !allowsInsecureRedirects {
            throw .insecureRedirect(from: previous ?? next, to: next)
        }
    }
}

/// Why a redirect was not followed.
public enum RedirectError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// More redirects than the policy allows.
    case tooManyRedirects(maximum: Int)
    /// A redirect back to a request this one already made (the same method and URL) with nothing
    /// changed on the way: no response since then set a cookie.
    case loop(URL)
    /// A redirect from `https` to `http`, which the policy does not allow.
    case insecureRedirect(from: URL, to: URL)
    /// A redirect to a scheme the policy does not allow (`file:`, `ftp:`, …).
    case unsupportedScheme(URL)
    /// A `Location` that is not a URL with a host.
    case invalidLocation(String)
    /// A `Location` that is a URL, but one the transport cannot send to (see
    /// ``HTTPURLCheck``): a port out of range, a host that is no host name. Shown redacted.
    case unsupportedLocation(String, reason: UnsupportedURLReason)
    /// A `307` or `308` asks for the body again, but it was a stream that cannot be read twice.
    case bodyNotReplayable

    /// A sentence saying what happened; URLs are shown with secret query values redacted.
    public var errorDescription: String? {
        let redaction = Redaction.standard
        switch self {
        case .tooManyRedirects(let maximum):
            return "The server redirected more than \(maximum) times."
        case .loop(let url):
            return "The server redirected in a loop, back to \(redaction.redact(url))."
        case .insecureRedirect(let from, let to):
            return "The server redirected from \(redaction.redact(from)) to \(redaction.redact(to)), "
                + "from https down to http, which the redirect policy does not allow."
        case .unsupportedScheme(let url):
            return "The server redirected to \(redaction.redact(url)), whose scheme the redirect policy does not allow."
        case .invalidLocation(let location):
            let shown = redaction.redact(urlText: String(location.prefix(200))).debugDescription
            return "The server redirected to \(shown)\(location.count > 200 ? "…" : ""), which is not a URL."
        case .unsupportedLocation(let location, let reason):
            return
                "The server redirected to \(RequestValidationError.shown(location, limit: 200)), which cannot be sent: \(reason)."
        case .bodyNotReplayable:
            return "The server asked for the request body again on a redirect, but the body was a stream that "
                + "cannot be read twice."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}
