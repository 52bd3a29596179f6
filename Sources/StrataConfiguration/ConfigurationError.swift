import Foundation
import StrataCore

/// Why a configuration could not be made for an environment.
public enum ConfigurationError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// No settings exist for the environment that was chosen.
    case undefinedEnvironment(NetworkEnvironment, available: [NetworkEnvironment])
    /// The environment's base URL is not an absolute `http` or `https` URL with a host.
    case invalidBaseURL(environment: NetworkEnvironment, value: String)
    /// The configuration file could not be read.
    case unreadableFile(path: String, reason: String)
    /// The configuration file is not in the expected JSON form.
    case malformedFile(path: String, reason: String)

    /// A sentence saying what is wrong and how to fix it.
    public var errorDescription: String? {
        switch self {
        case .undefinedEnvironment(let environment, let available):
            let names = available.map(\.rawValue).sorted().joined(separator: ", ")
            return
                "No network settings exist for the environment '\(environment)'. Defined: \(names.isEmpty ? "none" : names)."
        case .invalidBaseURL(let environment, let value):
            let shown = Redaction.standard.redact(urlText: value)
            return "The base URL of the environment '\(environment)' is not a valid absolute http(s) URL: '\(shown)'."
        case .unreadableFile(let path, let reason):
            return "The network configuration file at \(path) could not be read: \(reason)"
        case .malformedFile(let path, let reason):
            return "The network configuration file at \(path) is malformed: \(reason)"
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}
