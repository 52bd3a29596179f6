/// The name of a deployment an app talks to: development, staging, production, or one of your own.
///
/// ```swift
/// extension NetworkEnvironment {
///     static let qa = NetworkEnvironment("qa")
/// }
/// ```
public struct NetworkEnvironment: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The environment's name, as written in configuration files and environment variables.
    public let rawValue: String

    /// Creates an environment from its name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates an environment from its name.
    public init(_ name: String) {
        self.rawValue = name
    }

    /// Creates an environment from a string literal.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// A custom environment with the given name.
    public static func custom(_ name: String) -> NetworkEnvironment {
        NetworkEnvironment(name)
    }

    /// The name.
    public var description: String { rawValue }

    /// `development`
    public static let development = NetworkEnvironment("development")
    /// `staging`
    public static let staging = NetworkEnvironment("staging")
    /// `production`
    public static let production = NetworkEnvironment("production")
}
