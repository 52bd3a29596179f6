import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adds the same header fields to every request: a `User-Agent`, an API version, a client id.
///
/// By default a field the request already has is kept, so an endpoint can still override it; pass
/// `replacingExisting: true` to always send the adapter's value. A name listed more than once is
/// sent with every value. Fields that are secrets (an API key) belong to an origin: give `origins`,
/// and requests elsewhere — a redirect to another host among them — do not get them. Without
/// `origins`, a credential field (`Authorization`, one named as a credential such as `X-Api-Key`,
/// and the names of the manager's ``/StrataCore/Redaction``) still goes only to the origin each request addressed, never to one
/// a server redirects to. A field that
/// breaks HTTP's grammar fails the request with a ``/StrataCore/RequestValidationError``.
///
/// ```swift
/// let manager = URLSessionManager(adapters: [
///     HeadersAdapter(["User-Agent": "Shop/2.1", "Accept-Language": "en"]),
///     HeadersAdapter(["X-Api-Key": apiKey], origins: [Origin(scheme: "https", host: "api.example.com")]),
/// ])
/// ```
public struct HeadersAdapter: RequestAdapter {
    /// The fields added to each request.
    public let headers: HTTPHeaders
    /// Whether the adapter's value replaces a field the request already has.
    public let replacingExisting: Bool
    /// The origins whose requests get the fields; `nil` for every request.
    public let origins: Set<Origin>?

    /// ``origins``: a credential field (`Authorization`, an API key the manager's redaction names)
    /// follows a redirect only to one of them. Without `origins`, it goes to the origin the
    /// caller's request addressed and no other.
    public var credentialOrigins: Set<Origin>? { origins }

    /// An adapter adding `headers` to requests to `origins` (by default, to every request).
    public init(_ headers: HTTPHeaders, replacingExisting: Bool = false, origins: Set<Origin>? = nil) {
        self.headers = headers
        self.replacingExisting = replacingExisting
        self.origins = origins
    }

    /// The request with the fields added, if it goes to one of ``origins``.
    public func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        // FoundationNetworking traps on changing a copy of a request without a URL.
        guard request.url != nil else { return completion(.failure(RequestValidationError.missingURL)) }
        if let origins, !(request.url.flatMap(Origin.init).map(origins.contains) ?? false) {
            return completion(.success(request))
        }
        // Gathered, then written at once; a repeated name's values joined as `addValue` joins them.
        var fields: [(String, String?)] = []
        var places: [String: Int] = [:]
        for field in headers {
            do {
                try field.validate()
            } catch {
                return completion(.failure(error))
            }
            let name = field.name.lowercased()
            if let place = places[name] {
                fields[place].1 = (fields[place].1 ?? "") + "," + field.value
            } else {
                places[name] = fields.count
                fields.append((field.name, field.value))
            }
        }
        var adapted = request
        adapted.setHeaderFields(fields, keepingExisting: !replacingExisting)
        completion(.success(adapted))
    }
}
