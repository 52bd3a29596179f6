import Foundation
import StrataCore
import StrataEncoding

/// A typed description of one API call: the request to send and the `Response` it yields.
///
/// Endpoints are values; group them per API area in functions that take the call's inputs:
///
/// ```swift
/// enum UserEndpoints {
///     static func search(_ query: String, page: Int) -> Endpoint<[User]> {
///         Endpoint(path: "users/search", queryParameters: ["q": .string(query), "page": .int(page)])
///     }
///     static func create(_ user: NewUser) -> Endpoint<User> {
///         Endpoint(path: "users", method: .post, bodyParametersEncodable: user)
///     }
///     static func delete(id: Int) -> Endpoint<Void> {
///         Endpoint(path: "users/\(id)", method: .delete)
///     }
/// }
/// ```
///
/// The decoder defaults by response type: raw bytes for `Data`, UTF-8 text for `String`, JSON for
/// anything else.
public struct Endpoint<Response>: ResponseRequestable {
    /// The path under the base URL, or the whole URL with ``isFullPath``.
    public var path: String
    /// Whether ``path`` is a whole URL.
    public var isFullPath: Bool
    /// The HTTP method.
    public var method: HTTPMethod
    /// Headers that override the configuration's.
    public var headerParameters: HTTPHeaders
    /// Query parameters that override the configuration's.
    public var queryParameters: [String: ParameterValue]
    /// An `Encodable` whose members are added to the query.
    public var queryParametersEncodable: (any Encodable & Sendable)?
    /// How query parameters are written.
    public var queryEncoding: URLEncoding
    /// Body parameters.
    public var bodyParameters: [String: ParameterValue]
    /// An `Encodable` body; takes precedence over ``bodyParameters``.
    public var bodyParametersEncodable: (any Encodable & Sendable)?
    /// How the body is written.
    public var bodyEncoding: any ParameterEncoding
    /// The timeout in seconds; `nil` for the configuration's.
    public var timeoutInterval: TimeInterval?
    /// How the response body is decoded.
    public var responseDecoder: any ResponseDecoder
    /// How the request is sent: acceptable status codes, progress, interceptor, redirects, download.
    public var options: RequestOptions

    /// Creates an endpoint. Only the path is required: a `GET` with no parameters, a JSON body
    /// encoding, the decoder that fits `Response`, and the session manager's settings.
    public init(
        path: String,
        isFullPath: Bool = false,
        method: HTTPMethod = .get,
        headerParameters: HTTPHeaders = [:],
        queryParameters: [String: ParameterValue] = [:],
        queryParametersEncodable: (any Encodable & Sendable)? = nil,
        queryEncoding: URLEncoding = .queryString,
        bodyParameters: [String: ParameterValue] = [:],
        bodyParametersEncodable: (any Encodable & Sendable)? = nil,
        bodyEncoding: any ParameterEncoding = JSONEncoding.default,
        timeoutInterval: TimeInterval? = nil,
        responseDecoder: (any ResponseDecoder)? = nil,
        options: RequestOptions = RequestOptions()
    ) {
        self.path = path
        self.isFullPath = isFullPath
        self.method = method
        self.headerParameters = headerParameters
        self.queryParameters = queryParameters
        self.queryParametersEncodable = queryParametersEncodable
        self.queryEncoding = queryEncoding
        self.bodyParameters = bodyParameters
        self.bodyParametersEncodable = bodyParametersEncodable
        self.bodyEncoding = bodyEncoding
        self.timeoutInterval = timeoutInterval
        self.responseDecoder = responseDecoder ?? Self.defaultDecoder
        self.options = options
    }

    /// The decoder that fits `Response`: raw bytes for `Data`, UTF-8 text for `String`, else JSON.
    private static var defaultDecoder: any ResponseDecoder {
        if Response.self == Data.self { return RawDataResponseDecoder() }
        if Response.self == String.self { return StringResponseDecoder() }
        return JSONResponseDecoder()
    }
}
