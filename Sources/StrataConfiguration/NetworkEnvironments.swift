import Foundation
import StrataCore

/// The settings of each environment an app can talk to, and the choice between them at run time.
///
/// Define the environments in code or load them from a JSON file, then pick one from a process
/// environment variable, falling back to the file's choice and then to a default:
///
/// ```swift
/// let environments = NetworkEnvironments([
///     .development: .init(baseURL: "http://localhost:8080"),
///     .staging: .init(baseURL: "https://staging.example.com", headers: ["X-Env": "staging"]),
///     .production: .init(baseURL: "https://api.example.com"),
/// ])
/// // STRATA_ENVIRONMENT=staging ./App
/// let configuration = try environments.selectedConfiguration()
/// ```
///
/// Base URLs are kept as text and checked when an environment is chosen, so a typo in one
/// environment is reported by name when that environment is used, as a ``ConfigurationError``.
public struct NetworkEnvironments: Hashable, Sendable {
    /// The settings of one environment.
    public struct Settings: Hashable, Sendable, Codable {
        /// The base URL, as text; checked when the environment is chosen.
        public var baseURL: String
        /// Headers added to every request in this environment.
        public var headers: [String: String]
        /// Query parameters added to every request in this environment.
        public var queryParameters: [String: ParameterValue]
        /// The request timeout in seconds; `nil` for ``NetworkConfiguration/defaultTimeoutInterval``.
        public var timeoutInterval: TimeInterval?

        /// Creates the settings of one environment.
        public init(
            baseURL: String,
            headers: [String: String] = [:],
            queryParameters: [String: ParameterValue] = [:],
            timeoutInterval: TimeInterval? = nil
        ) {
            self.baseURL = baseURL
            self.headers = headers
            self.queryParameters = queryParameters
            self.timeoutInterval = timeoutInterval
        }

        private enum CodingKeys: String, CodingKey {
            case baseURL, headers, queryParameters, timeoutInterval
        }

        /// Decodes settings; every member but `baseURL` may be left out.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            baseURL = try container.decode(String.self, forKey: .baseURL)
            headers = try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:]
            queryParameters =
                try container.decodeIfPresent([String: ParameterValue].self, forKey: .queryParameters) ?? [:]
            timeoutInterval = try container.decodeIfPresent(TimeInterval.self, forKey: .timeoutInterval)
        }
    }

    /// The name of the process environment variable read by default: `STRATA_ENVIRONMENT`.
    public static let defaultVariableName = "STRATA_ENVIRONMENT"

    /// The settings of each environment.
    public var settings: [NetworkEnvironment: Settings]
    /// The environment chosen when the process environment names none (a configuration file's
    /// `environment` member sets it).
    public var defaultEnvironment: NetworkEnvironment

    /// Creates the set of environments.
    /// - Parameters:
    ///   - settings: The settings of each environment.
    ///   - defaultEnvironment: The environment used when the process environment names none.
    public init(_ settings: [NetworkEnvironment: Settings], defaultEnvironment: NetworkEnvironment = .development) {
        self.settings = settings
        self.defaultEnvironment = defaultEnvironment
    }

    /// The configuration of `environment`.
    /// - Throws: ``ConfigurationError/undefinedEnvironment(_:available:)`` when it has no settings,
    ///   ``ConfigurationError/invalidBaseURL(environment:value:)`` when its base URL is not valid.
    public func configuration(for environment: NetworkEnvironment) throws(ConfigurationError) -> NetworkConfiguration {
        guard let settings = settings[environment] else {
            throw .undefinedEnvironment(environment, available: Array(self.settings.keys))
        }
        guard let url = Self.validBaseURL(settings.baseURL) else {
            throw .invalidBaseURL(environment: environment, value: settings.baseURL)
        }
        return NetworkConfiguration(
            baseURL: url,
            headers: HTTPHeaders(settings.headers),
            queryParameters: settings.queryParameters,
            timeoutInterval: settings.timeoutInterval ?? NetworkConfiguration.defaultTimeoutInterval
        )
    }

    /// The environment named by the process environment variable `variableName`, or
    /// ``defaultEnvironment`` when the variable is unset or empty.
    public func selectedEnvironment(
        variableName: String = NetworkEnvironments.defaultVariableName,
        processEnvironment: [String: String] = ProcessInfo.processInfo.environment
    ) -> NetworkEnvironment {
        let name = processEnvironment[variableName]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return name.isEmpty ? defaultEnvironment : NetworkEnvironment(name)
    }

    /// The configuration of the environment chosen by ``selectedEnvironment(variableName:processEnvironment:)``.
    /// - Throws: a ``ConfigurationError`` naming the environment when it is undefined or its base URL is invalid.
    public func selectedConfiguration(
        variableName: String = NetworkEnvironments.defaultVariableName,
        processEnvironment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> NetworkConfiguration {
        try configuration(for: selectedEnvironment(variableName: variableName, processEnvironment: processEnvironment))
    }

    /// Loads environments from a JSON file of this form (`environment`, `headers`,
    /// `queryParameters` and `timeoutInterval` may be left out):
    ///
    /// ```json
    /// {
    ///   "environment": "staging",
    ///   "environments": {
    ///     "development": { "baseURL": "http://localhost:8080" },
    ///     "staging": { "baseURL": "https://staging.example.com", "headers": { "X-Env": "staging" } }
    ///   }
    /// }
    /// ```
    /// - Parameters:
    ///   - fileURL: The JSON file.
    ///   - fallback: The default environment when the file names none.
    /// - Throws: ``ConfigurationError/unreadableFile(path:reason:)`` or ``ConfigurationError/malformedFile(path:reason:)``.
    public static func load(
        contentsOf fileURL: URL,
        fallback: NetworkEnvironment = .development
    ) throws(ConfigurationError) -> NetworkEnvironments {
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch {
            throw .unreadableFile(path: fileURL.path, reason: error.localizedDescription)
        }
        let file: FileContents
        do {
            file = try JSONDecoder().decode(FileContents.self, from: data)
        } catch {
            throw .malformedFile(path: fileURL.path, reason: String(describing: error))
        }
        let settings = Dictionary(
            file.environments.map { (NetworkEnvironment($0.key), $0.value) },
            uniquingKeysWith: { first, _ in first }
        )
        return NetworkEnvironments(
            settings, defaultEnvironment: file.environment.map { NetworkEnvironment($0) } ?? fallback)
    }

    private struct FileContents: Decodable {
        var environment: String?
        var environments: [String: Settings]
    }

    private static func validBaseURL(_ text: String) -> URL? {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else { return nil }
        return components.url
    }
}
