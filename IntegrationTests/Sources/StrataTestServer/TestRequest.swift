import Foundation

/// A request as a route sees it: method, target, headers and the whole body.
public struct TestRequest: Sendable {
    /// The method, as sent.
    public let method: String
    /// The request target, as sent (path and query).
    public let uri: String
    /// The path, percent-decoded.
    public let path: String
    /// The query items in order, percent-decoded (`+` is not a space).
    public let query: [(name: String, value: String)]
    /// The header fields in order.
    public let headers: [(name: String, value: String)]
    /// The body bytes.
    public let body: [UInt8]
    /// Values captured by `{name}` segments of the route pattern.
    public internal(set) var parameters: [String: String] = [:]
    /// The listener this request arrived on and its sibling.
    public let server: ServerAddresses

    init(method: String, uri: String, headers: [(String, String)], body: [UInt8], server: ServerAddresses) {
        self.method = method
        self.uri = uri
        let components = URLComponents(string: "http://localhost" + uri)
        self.path = components?.path ?? uri
        self.query = (components?.percentEncodedQueryItems ?? []).map { item in
            (item.name.removingPercentEncoding ?? item.name, item.value?.removingPercentEncoding ?? "")
        }
        self.headers = headers.map { (name: $0.0, value: $0.1) }
        self.body = body
        self.server = server
    }

    /// The first value of header `name`, compared without case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The first value of query item `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The body as UTF-8 text, or `nil` when it is not valid UTF-8.
    ///
    /// Not the repairing `String(decoding:as:)`: it throws internally once per invalid byte, and
    /// under Swift Testing every throw captures a backtrace, so repairing a binary body of a few
    /// hundred kilobytes took seconds in a debug build.
    public var bodyText: String? {
        String(validating: body, as: UTF8.self)
    }
}

/// Where the server listens: the listener a request arrived on, and the other one (a different
/// origin, for cross-origin redirects).
public struct ServerAddresses: Sendable {
    /// `http://127.0.0.1:<port>` of the listener that received the request.
    public let current: URL
    /// `http://127.0.0.1:<port>` of the other listener.
    public let other: URL
}
