import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Everything needed to build one HTTP request against a ``/StrataConfiguration/NetworkConfigurable`` API.
///
/// ``Endpoint`` is the concrete type to use; conform your own types when an endpoint is better
/// described by computed properties. Every requirement but ``path`` and ``method`` has a default.
public protocol Requestable: Sendable {
    /// The path, resolved against the configuration's base URL; or, with ``isFullPath``, the whole URL.
    /// It may carry a query (`search?sort=new`), which is kept.
    var path: String { get }
    /// Whether ``path`` is a whole URL rather than a path under the base URL.
    var isFullPath: Bool { get }
    /// The HTTP method.
    var method: HTTPMethod { get }
    /// Headers for this endpoint. They override configuration headers with the same name.
    var headerParameters: HTTPHeaders { get }
    /// Query parameters. They override configuration query parameters with the same key.
    var queryParameters: [String: ParameterValue] { get }
    /// An `Encodable` value whose members are added to the query, overriding ``queryParameters``
    /// with the same key.
    var queryParametersEncodable: (any Encodable & Sendable)? { get }
    /// How query parameters are written (array and Boolean style). Always to the query string.
    var queryEncoding: URLEncoding { get }
    /// Body parameters, written by ``bodyEncoding``. Ignored when ``bodyParametersEncodable`` is set.
    var bodyParameters: [String: ParameterValue] { get }
    /// An `Encodable` body, written by ``bodyEncoding``.
    var bodyParametersEncodable: (any Encodable & Sendable)? { get }
    /// How the body parameters are written.
    var bodyEncoding: any ParameterEncoding { get }
    /// The timeout in seconds; `nil` uses the configuration's.
    var timeoutInterval: TimeInterval? { get }
    /// How the request is sent: acceptable status codes, progress, an interceptor and redirect
    /// policy of its own, a download destination. By default the session manager's settings.
    var options: RequestOptions { get }

    /// Builds the request for `configuration`.
    /// - Throws: ``RequestGenerationError`` when the URL cannot be formed or a parameter cannot be encoded.
    func urlRequest(with configuration: any NetworkConfigurable) throws(RequestGenerationError) -> URLRequest
}

extension Requestable {
    /// `false`: the path is resolved against the base URL.
    public var isFullPath: Bool { false }
    /// No endpoint headers.
    public var headerParameters: HTTPHeaders { [:] }
    /// No query parameters.
    public var queryParameters: [String: ParameterValue] { [:] }
    /// No `Encodable` query.
    public var queryParametersEncodable: (any Encodable & Sendable)? { nil }
    /// ``URLEncoding/queryString``.
    public var queryEncoding: URLEncoding { .queryString }
    /// No body parameters.
    public var bodyParameters: [String: ParameterValue] { [:] }
    /// No `Encodable` body.
    public var bodyParametersEncodable: (any Encodable & Sendable)? { nil }
    /// ``JSONEncoding/default``.
    public var bodyEncoding: any ParameterEncoding { JSONEncoding.default }
    /// The configuration's timeout.
    public var timeoutInterval: TimeInterval? { nil }
    /// The session manager's settings, the body received in memory.
    public var options: RequestOptions { RequestOptions() }

    /// Builds the request: the URL from the base URL and path with the merged query, the merged
    /// headers, the timeout, and the body from ``bodyEncoding``.
    ///
    /// - The path is joined to the base URL with exactly one `/` between them; characters that
    ///   cannot stand in a path (a space, non-ASCII letters) are percent-encoded, `%XX` escapes kept.
    /// - `.` and `..` segments (also written `%2E`) are resolved as RFC 3986 §5.2.4 says, so every
    ///   transport sends the same path; one whose `..` would climb above the base URL's path is
    ///   ``RequestGenerationError/pathLeavesBaseURL(_:)``. A full path's `..` stops at its root.
    /// - A query in the base URL or the path is kept first, as written; the merged parameters follow,
    ///   sorted by key.
    /// - For a full-path URL whose origin (scheme, host, port) differs from the base URL's, the
    ///   configuration's headers and query parameters are not added: they may hold credentials for
    ///   the API, and must not leak to another host.
    /// - The method and every header are checked against HTTP's grammar first (a CR LF in a value
    ///   would split the request; on Linux, `URLRequest` would drop such a value without a word):
    ///   a violation is ``RequestGenerationError/invalidRequest(_:)``.
    public func urlRequest(with configuration: any NetworkConfigurable) throws(RequestGenerationError) -> URLRequest {
        let fullTarget = isFullPath ? try URLBuilder.target(fullPath: path) : nil
        let sharesOrigin = fullTarget.map { URLBuilder.sameOrigin($0, configuration.baseURL) } ?? true

        var parameters = queryParameters
        if sharesOrigin, case let shared = configuration.queryParameters, !shared.isEmpty {
            parameters = shared.merging(parameters) { _, endpoint in endpoint }
        }
        let query: String
        do {
            if let queryParametersEncodable {
                let encoder = ParameterValueEncoder(maximumDepth: queryEncoding.formEncoder.maximumDepth)
                parameters.merge(try encoder.encodeMembers(queryParametersEncodable)) { _, value in value }
            }
            query = try queryEncoding.query(from: parameters)
        } catch {
            throw .encoding(error)
        }
        let url =
            if let fullTarget {
                try URLBuilder.url(fullTarget, appendingQuery: query)
            } else {
                try URLBuilder.url(path: path, under: configuration.baseURL, appendingQuery: query)
            }

        // The configuration's headers, but for those the endpoint sets, then the endpoint's.
        let endpointHeaders = headerParameters
        let sharedHeaders = sharesOrigin ? configuration.headers : [:]
        do {
            try method.validate()
            for header in sharedHeaders { try header.validate() }
            for header in endpointHeaders { try header.validate() }
        } catch {
            throw .invalidRequest(error)
        }

        var request = URLRequest(url: url)
        // Assigned, not passed to the initializer: FoundationNetworking takes a timeout given at
        // creation for unset, and uses its session's instead.
        request.timeoutInterval = timeoutInterval ?? configuration.timeoutInterval
        // A new request's method is already GET; setting it again costs a normalization on Linux.
        if method != .get {
            request.httpMethod = method.rawValue
        }
        // Set at once: on Linux each `setValue(_:forHTTPHeaderField:)` copies every field set before
        // and capitalizes the name, which made a request of 30,000 fields take a minute.
        let fields = sharedHeaders.merging(endpointHeaders).dictionary
        if !fields.isEmpty {
            request.allHTTPHeaderFields = fields
        }

        do {
            if let bodyParametersEncodable {
                request = try bodyEncoding.encode(request, withEncodable: bodyParametersEncodable)
            } else if !bodyParameters.isEmpty || bodyEncoding.writesBodyWithoutParameters {
                request = try bodyEncoding.encode(request, with: bodyParameters)
            }
        } catch {
            throw .encoding(error)
        }
        return request
    }
}
