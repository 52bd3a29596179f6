/// An HTTP request method, as defined by RFC 9110 §9.
///
/// Methods are values with static members for the standard ones, so a project can add its own:
///
/// ```swift
/// extension HTTPMethod {
///     static let purge = HTTPMethod("PURGE")
/// }
/// ```
///
/// Method names are case-sensitive (RFC 9110 §9.1); Strata sends the name exactly as given.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method name as sent on the request line, for example `"GET"`.
    public let rawValue: String

    /// Creates a method from its name, sent exactly as given.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a method from its name, sent exactly as given.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a method from a string literal.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// The method name.
    public var description: String { rawValue }

    /// `CONNECT`, which Strata does not send: it asks a proxy for a tunnel, not for a response
    /// (``RequestValidationError/tunnelMethod(_:)``).
    public static let connect = HTTPMethod("CONNECT")
    /// `DELETE`
    public static let delete = HTTPMethod("DELETE")
    /// `GET`
    public static let get = HTTPMethod("GET")
    /// `HEAD`
    public static let head = HTTPMethod("HEAD")
    /// `OPTIONS`
    public static let options = HTTPMethod("OPTIONS")
    /// `PATCH`
    public static let patch = HTTPMethod("PATCH")
    /// `POST`
    public static let post = HTTPMethod("POST")
    /// `PUT`
    public static let put = HTTPMethod("PUT")
    /// `QUERY`
    public static let query = HTTPMethod("QUERY")
    /// `TRACE`
    public static let trace = HTTPMethod("TRACE")
}
