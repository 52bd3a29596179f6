import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adds the same header fields to every request: a `User-Agent`, an API version, a client id.
///
/// By default a field the request already has is kept, so an endpoint can still override it; pass
/// `replacingExisting: true` to always send the adapter's value. A name listed more than once is
/// sent with every value.
///
/// ```swift
/// let manager = URLSessionManager(adapters: [
///     HeadersAdapter(["User-Agent": "Shop/2.1", "Accept-Language": "en"])
/// ])
/// ```
public struct HeadersAdapter: RequestAdapter {
    /// The fields added to each request.
    public let headers: HTTPHeaders
    /// Whether the adapter's value replaces a field the request already has.
    public let replacingExisting: Bool

    /// An adapter adding `headers`.
    public init(_ headers: HTTPHeaders, replacingExisting: Bool = false) {
        self.headers = headers
        self.replacingExisting = replacingExisting
    }

    /// The request with the fields added.
    public func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        var adapted = request
        var written = Set<String>()
        for field in headers {
            let name = field.name.lowercased()
            if written.contains(name) {
                adapted.addValue(field.value, forHTTPHeaderField: field.name)
            } else if replacingExisting || request.value(forHTTPHeaderField: field.name) == nil {
                adapted.setValue(field.value, forHTTPHeaderField: field.name)
                written.insert(name)
            }
        }
        completion(.success(adapted))
    }
}
