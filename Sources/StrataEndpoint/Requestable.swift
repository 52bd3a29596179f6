import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataSession

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
    /// The status codes that count as success; `nil` uses the session manager's (by default `200..<300`).
    var acceptableStatusCodes: Set<Int>? { get }
    /// Called as the body is sent, with a `Progress` counting bytes (a new one for each attempt).
    var uploadProgress: (@Sendable (Progress) -> Void)? { get }
    /// An interceptor for this endpoint's requests, run after the session manager's own.
    var interceptor: (any RequestInterceptor)? { get }
    /// How this endpoint's requests follow redirects; `nil` for the session manager's policy.
    var redirectPolicy: RedirectPolicy? { get }
    /// Where to save the response body (streamed to disk, never held in memory); `nil` to receive it.
    var downloadDestination: URL? { get }
    /// Called as a download's body is written, with a `Progress` counting bytes (a new one for each attempt).
    var downloadProgress: (@Sendable (Progress) -> Void)? { get }

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
    /// The session manager's acceptable status codes.
    public var acceptableStatusCodes: Set<Int>? { nil }
    /// No upload progress.
    public var uploadProgress: (@Sendable (Progress) -> Void)? { nil }
    /// No interceptor of its own.
    public var interceptor: (any RequestInterceptor)? { nil }
    /// The session manager's redirect policy.
    public var redirectPolicy: RedirectPolicy? { nil }
    /// No download: the body is received.
    public var downloadDestination: URL? { nil }
    /// No download progress.
    public var downloadProgress: (@Sendable (Progress) -> Void)? { nil }

    /// Builds the request: the URL from the base URL and path with the merged query, the merged
    /// headers, the timeout, and the body from ``bodyEncoding``.
    ///
    /// - The path is joined to the base URL with exactly one `/` between them; characters that
    ///   cannot stand in a path (a space, non-ASCII letters) are percent-encoded, `%XX` escapes kept.
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
        guard method.isValid else { throw .invalidRequest(.invalidMethod(method.rawValue)) }
        do {
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
        for header in sharedHeaders where !endpointHeaders.contains(name: header.name) {
            request.add(header)
        }
        for header in endpointHeaders {
            request.add(header)
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

extension URLRequest {
    /// Adds `header`; a repeated name is joined into one field with ", " (RFC 9110 §5.3).
    fileprivate mutating func add(_ header: HTTPHeader) {
        let joined = value(forHTTPHeaderField: header.name).map { $0 + ", " + header.value }
        setValue(joined ?? header.value, forHTTPHeaderField: header.name)
    }
}
