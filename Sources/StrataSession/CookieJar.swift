import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Cookies as a transport sends and keeps them, the same over every transport: each attempt
/// carries the cookies `storage` holds for its URL after a `Cookie` field of the request's own, and
/// every response's `Set-Cookie` fields — a redirect's included — are stored as its head arrives,
/// before the pipeline sees it. A request whose `httpShouldHandleCookies` is off neither gets nor
/// keeps any; its own field goes as it is.
///
/// `AsyncHTTPClientTransport` keeps cookies through one. So does ``URLSessionTransport`` on Linux,
/// in place of FoundationNetworking, which ignores `httpShouldHandleCookies` and replaces a
/// `Cookie` field of the request's own with the stored cookies.
public struct CookieJar: @unchecked Sendable {  // Sendable: `HTTPCookieStorage` locks each call itself.
    /// Where the cookies are kept.
    public let storage: HTTPCookieStorage

    /// A jar over `storage`.
    public init(storage: HTTPCookieStorage) {
        self.storage = storage
    }

    /// The `Cookie` field `request` goes with, if it changes: the request's own field, then the
    /// stored cookies that match its URL (RFC 6265, 5.4); `nil` when there are none to add.
    public func field(for request: URLRequest) -> String? {
        guard request.httpShouldHandleCookies, let url = request.url, let cookies = storage.cookies(for: url),
            !cookies.isEmpty, let stored = HTTPCookie.requestHeaderFields(with: cookies)["Cookie"], !stored.isEmpty
        else { return nil }
        guard let own = request.value(forHTTPHeaderField: "Cookie"), !own.isEmpty else { return stored }
        return own + "; " + stored
    }

    /// Stores the cookies `fields` (the values of a response's `Set-Cookie` fields, each on its
    /// own: an `Expires` date holds a comma) set, for a response to `request`.
    public func store(_ fields: some Sequence<String>, from request: URLRequest) {
        guard request.httpShouldHandleCookies, let url = request.url else { return }
        let cookies = fields.flatMap { HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": $0], for: url) }
        guard !cookies.isEmpty else { return }
        storage.setCookies(cookies, for: url, mainDocumentURL: request.mainDocumentURL ?? url)
    }
}
