/// A response type that stands for "no body": an empty body decodes to ``emptyValue()`` instead of
/// failing, so endpoints that answer `204 No Content`, `205 Reset Content` or a `HEAD` request can
/// still have a `Decodable` response type.
public protocol EmptyResponse {
    /// The value that an empty body decodes to.
    static func emptyValue() -> Self
}

/// The response of an endpoint that returns no body.
///
/// Use `Endpoint<Void>` when you do not need a value at all; use `Endpoint<Empty>` when an API
/// requires a `Decodable` type.
public struct Empty: Codable, Hashable, Sendable, EmptyResponse {
    /// The empty value.
    public static let value = Empty()

    /// Creates the empty value.
    public init() {}

    /// ``value``.
    public static func emptyValue() -> Empty { value }
}
