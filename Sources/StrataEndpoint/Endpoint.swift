import Foundation
import StrataCore
import StrataEncoding
import StrataSession

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
    /// The status codes that count as success; `nil` for the session manager's.
    public var acceptableStatusCodes: Set<Int>?
    /// How the response body is decoded.
    public var responseDecoder: any ResponseDecoder
    /// Called as the body is sent, with a `Progress` counting bytes.
    public var uploadProgress: (@Sendable (Progress) -> Void)?
    /// An interceptor for this endpoint's requests, run after the session manager's own.
    public var interceptor: (any RequestInterceptor)?
    /// How this endpoint's requests follow redirects; `nil` for the session manager's policy.
    public var redirectPolicy: RedirectPolicy?
    /// Where to save the response body; `nil` to receive it.
    public var downloadDestination: URL?
    /// Called as a download's body is written, with a `Progress` counting bytes.
    public var downloadProgress: (@Sendable (Progress) -> Void)?

    /// Creates an endpoint. Only the path is required: a `GET` with no parameters, a JSON body
    /// encoding, and the decoder that fits `Response`.
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
        acceptableStatusCodes: Set<Int>? = nil,
        responseDecoder: (any ResponseDecoder)? = nil,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        redirectPolicy: RedirectPolicy? = nil,
        downloadDestination: URL? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil
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
        self.acceptableStatusCodes = acceptableStatusCodes
        self.responseDecoder = responseDecoder ?? Self.defaultDecoder
        self.uploadProgress = uploadProgress
        self.interceptor = interceptor
        self.redirectPolicy = redirectPolicy
        self.downloadDestination = downloadDestination
        self.downloadProgress = downloadProgress
    }

    /// The decoder that fits `Response`: raw bytes for `Data`, UTF-8 text for `String`, else JSON.
    private static var defaultDecoder: any ResponseDecoder {
        if Response.self == Data.self { return RawDataResponseDecoder() }
        if Response.self == String.self { return StringResponseDecoder() }
        return JSONResponseDecoder()
    }
}
