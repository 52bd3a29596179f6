import Foundation
import StrataCore

/// The settings every request to one API shares: where it lives, and the headers, query
/// parameters and timeout that go on each request unless an endpoint overrides them.
public protocol NetworkConfigurable: Sendable {
    /// The URL that endpoint paths are resolved against, for example `https://api.example.com/v1`.
    var baseURL: URL { get }
    /// Headers added to every request. An endpoint's header with the same name wins.
    var headers: HTTPHeaders { get }
    /// Query parameters added to every request. An endpoint's parameter with the same key wins.
    var queryParameters: [String: ParameterValue] { get }
    /// The request timeout in seconds, unless the endpoint sets its own.
    var timeoutInterval: TimeInterval { get }
}

/// The standard ``NetworkConfigurable``: a value holding each setting.
///
/// ```swift
/// guard let baseURL = URL(string: "https://api.example.com/v1") else { return }
/// let configuration = NetworkConfiguration(
///     baseURL: baseURL,
///     headers: ["Accept": "application/json"],
///     queryParameters: ["locale": "en"]
/// )
/// ```
public struct NetworkConfiguration: NetworkConfigurable, Hashable {
    /// The timeout used when none is given: 60 seconds, as `URLRequest`'s.
    public static let defaultTimeoutInterval: TimeInterval = 60

    /// The URL that endpoint paths are resolved against.
    public var baseURL: URL
    /// Headers added to every request.
    public var headers: HTTPHeaders
    /// Query parameters added to every request.
    public var queryParameters: [String: ParameterValue]
    /// The request timeout in seconds.
    public var timeoutInterval: TimeInterval

    /// Creates a configuration.
    public init(
        baseURL: URL,
        headers: HTTPHeaders = [:],
        queryParameters: [String: ParameterValue] = [:],
        timeoutInterval: TimeInterval = NetworkConfiguration.defaultTimeoutInterval
    ) {
        self.baseURL = baseURL
        self.headers = headers
        self.queryParameters = queryParameters
        self.timeoutInterval = timeoutInterval
    }
}
