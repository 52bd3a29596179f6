import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Cookies as a transport sends and keeps them, the same over every transport: each attempt
/// carries the cookies `storage` holds for its URL (with the host a `Host` field of its own names)
/// after a `Cookie` field of the request's own, and
/// every response's `Set-Cookie` fields — a redirect's included — are stored as its head arrives,
/// before the pipeline sees it. A request whose `httpShouldHandleCookies` is off neither gets nor
/// keeps any; its own field goes as it is.
///
/// Cookies are read, kept and sent as RFC 6265 says, with its revision's stricter rules for
/// `Secure` cookies: a `Secure` cookie goes only over `https` and is set only by a response over
/// `https`, `Path` scopes a cookie, `Max-Age` wins over `Expires` and `Max-Age=0` removes the
/// cookie, and a `Domain` the responding host is not within, or of one label, is refused.
///
/// `AsyncHTTPClientTransport` keeps cookies through one. So does ``URLSessionTransport`` on Linux,
/// in place of FoundationNetworking, which ignores `httpShouldHandleCookies`, replaces a `Cookie`
/// field of the request's own with the stored cookies, ignores `Max-Age` and `Path`, and sends
/// `Secure` cookies over `http`.
public struct CookieJar: @unchecked Sendable {  // Sendable: the storage locks each call itself; `created` is `Locked`.
    /// Where the cookies are kept.
    public let storage: HTTPCookieStorage

    /// The most cookies kept for one host: once it has as many, a response's new ones are
    /// ignored (replacing one it has still works), so a server cannot grow the jar, or the
    /// `Cookie` field it gets back, without bound.
    public static let maximumCookiesPerHost = 180

    /// The most cookies kept in all (RFC 6265 §6.1 has a user agent keep at least 3,000): once the
    /// storage holds as many, and none of them has expired, a response's new ones are ignored
    /// (replacing one it has still works). Ignored rather than making room by evicting others, so
    /// that a server with a host name for every request can neither grow the jar without bound —
    /// every request and response reads all of it — nor push out another site's session.
    public static let maximumCookies = 3_000

    /// The order the jar first stored each cookie in, by identity: RFC 6265 §5.4 sends cookies of
    /// equal path length in order of creation, and `HTTPCookie` keeps no creation time (on Linux the
    /// storage returns its cookies in its dictionary's order, another every run). Shared by copies
    /// of the jar; a cookie put into the storage by other code has no place here and goes after
    /// the others, by name.
    private let created = Locked(CreationOrder())

    private struct CreationOrder: Sendable {
        var next = 0
        var places: [SetCookie.Identity: Int] = [:]
    }

    /// A jar over `storage`.
    public init(storage: HTTPCookieStorage) {
        self.storage = storage
    }

    /// The `Cookie` field `request` goes with, if it changes: the request's own field, then the
    /// stored cookies for its target URI (RFC 6265 §5.4) — those whose domain and path it is
    /// within, unexpired, `Secure` ones only over `https`, longer paths first, and of equal paths
    /// the one the jar stored first first; `nil` when there are none to add. The target URI is the
    /// URL, with the host a `Host` field of the request's own names (as curl matches cookies):
    /// virtual hosts behind one address keep theirs apart, and a field that names no host gets none.
    public func field(for request: URLRequest) -> String? {
        guard request.httpShouldHandleCookies, let url = request.targetURL, let cookies = storage.cookies(for: url),
            !cookies.isEmpty
        else { return nil }
        let places = created.withLock { $0.places }
        let stored = Self.value(of: cookies, sentTo: url, at: Date(), placed: places)
        guard !stored.isEmpty else { return nil }
        guard let own = request.headerField("Cookie"), !own.isEmpty else { return stored }
        return own + "; " + stored
    }

    /// The `Cookie` value of those of `cookies` a request to `url` carries at `now`, longer paths
    /// first, then in the order of their `places` (those without one last, by name). The
    /// storage's own matching is not enough: on Linux it returns `Secure` cookies for `http` and
    /// ignores `Path`. A cookie the field could not carry as it is (a control character, or a `;`
    /// that would start another cookie, put into the storage by other code) is left out.
    static func value(
        of cookies: [HTTPCookie], sentTo url: URL, at now: Date, placed places: [SetCookie.Identity: Int] = [:]
    ) -> String {
        let isSecure = ["https", "wss"].contains(url.scheme?.lowercased() ?? "")
        let encodedPath = url.path(percentEncoded: true)
        let path = encodedPath.isEmpty ? "/" : encodedPath
        return
            cookies
            .filter { cookie in
                (isSecure || !cookie.isSecure) && SetCookie.pathMatches(path, cookie.path)
                    && cookie.expiresDate.map { $0 > now } ?? true
                    && Self.isSendable(cookie.name, orValue: false) && Self.isSendable(cookie.value, orValue: true)
            }
            .map { (cookie: $0, place: places[SetCookie.Identity($0)] ?? .max) }
            .sorted { one, other in
                let (first, second) = (one.cookie.path.utf8.count, other.cookie.path.utf8.count)
                if first != second { return first > second }
                if one.place != other.place { return one.place < other.place }
                return one.cookie.name < other.cookie.name
            }
            .map { "\($0.cookie.name)=\($0.cookie.value)" }
            .joined(separator: "; ")
    }

    private static func isSendable(_ text: String, orValue isValue: Bool) -> Bool {
        !text.contains(";") && (isValue || (!text.isEmpty && !text.contains("="))) && SetCookie.isCookieText(text)
    }

    /// Stores what `fields` (the values of a response's `Set-Cookie` fields, each on its own: an
    /// `Expires` date holds a comma) set, for a response to `request`, as RFC 6265 §5.3 says: a
    /// cookie whose expiry has passed (`Max-Age=0`, an `Expires` in the past) removes the one it
    /// names; a `Domain` the host is not within, or of one label, is ignored; so is `Secure` over
    /// `http`, and a cookie over `http` that would replace a `Secure` one (RFC 6265bis). The
    /// storage's `cookieAcceptPolicy` is obeyed. The host is the one the request's target URI
    /// names, as for ``field(for:)``.
    public func store<Fields: Sequence>(_ fields: Fields, from request: URLRequest)
    where Fields.Element: StringProtocol {
        guard request.httpShouldHandleCookies, let url = request.targetURL, storage.cookieAcceptPolicy != .never else {
            return
        }
        let effects = SetCookie.lastEffects(of: fields, forResponseFrom: url, at: Date())
        guard !effects.isEmpty else { return }
        let isSecure = ["https", "wss"].contains(url.scheme?.lowercased() ?? "")
        // The storage is read once for the response, however many fields it has: on Linux every
        // read copies and walks each cookie the storage holds.
        var everyCookie = storage.cookies ?? []
        var present = Set((storage.cookies(for: url) ?? []).map(SetCookie.Identity.init))
        var total = everyCookie.count
        var expiredRemoved = false
        for effect in effects {
            switch effect {
            case .store(let cookie):
                let replaces = present.contains(effect.cookie)
                guard replaces || present.count < Self.maximumCookiesPerHost else { continue }
                if !replaces, total >= Self.maximumCookies {
                    guard !expiredRemoved else { continue }
                    expiredRemoved = true
                    everyCookie = removingExpired(at: Date())
                    total = everyCookie.count
                    guard total < Self.maximumCookies else { continue }
                }
                if !isSecure, everyCookie.contains(where: { Self.isShadowed(cookie, by: $0) }) { continue }
                storage.setCookies([cookie], for: url, mainDocumentURL: request.mainDocumentURL ?? url)
                present.insert(effect.cookie)
                total += replaces ? 0 : 1
                // A cookie that replaces one keeps its creation time (§5.3 step 11.3).
                if !replaces { place(effect.cookie, among: total) }
            case .remove:
                for stored in everyCookie where SetCookie.Identity(stored) == effect.cookie {
                    storage.deleteCookie(stored)
                    total -= 1
                }
                present.remove(effect.cookie)
                _ = created.withLock { $0.places.removeValue(forKey: effect.cookie) }
            }
        }
    }

    /// Gives `cookie`, just stored, the next place, a storage of `total` cookies holding it. Places
    /// of cookies gone otherwise (expired, deleted by other code) are dropped once there are twice
    /// as many places as cookies.
    private func place(_ cookie: SetCookie.Identity, among total: Int) {
        created.withLock { order in
            order.places[cookie] = order.next
            order.next += 1
            guard order.places.count > 2 * max(total, 64) else { return }
            let kept = Set((storage.cookies ?? []).map(SetCookie.Identity.init))
            order.places = order.places.filter { kept.contains($0.key) }
        }
    }

    /// Deletes from the storage the cookies that have expired at `now`; returns the others.
    private func removingExpired(at now: Date) -> [HTTPCookie] {
        (storage.cookies ?? []).filter { cookie in
            guard let expiry = cookie.expiresDate, expiry <= now else { return true }
            storage.deleteCookie(cookie)
            return false
        }
    }

    /// Whether `secure`, a `Secure` cookie, keeps `cookie`, set over `http`, out: they share a
    /// name, one's domain is within the other's, and `cookie`'s path is within `secure`'s
    /// (RFC 6265bis §5.7 step 16).
    private static func isShadowed(_ cookie: HTTPCookie, by secure: HTTPCookie) -> Bool {
        guard secure.isSecure, secure.name == cookie.name, SetCookie.pathMatches(cookie.path, secure.path) else {
            return false
        }
        let (one, other) = (Self.bare(cookie.domain), Self.bare(secure.domain))
        return SetCookie.isWithin(one, domain: other) || SetCookie.isWithin(other, domain: one)
    }

    private static func bare(_ domain: String) -> String {
        (domain.hasPrefix(".") ? String(domain.dropFirst()) : domain).lowercased()
    }
}
