import Foundation
import Strata

extension NetworkEnvironment {
    /// The embedded demo API on loopback: the default, and the only one that works offline.
    public static let local = NetworkEnvironment("local")
}

/// The shop's environments, each with its own base URL and headers.
public enum ShopEnvironments {
    /// The environments this app knows. `localBaseURL` is where the embedded demo API listens,
    /// known only once it has started.
    public static func all(localBaseURL: String) -> NetworkEnvironments {
        NetworkEnvironments(
            [
                .local: .init(
                    baseURL: localBaseURL,
                    headers: ["X-Client": "strata-example", "X-Environment": "local"],
                    timeoutInterval: 10
                ),
                .staging: .init(
                    baseURL: "https://staging.api.strata-shop.example",
                    headers: ["X-Client": "strata-example", "X-Environment": "staging"],
                    timeoutInterval: 15
                ),
                .production: .init(
                    baseURL: "https://api.strata-shop.example",
                    headers: ["X-Client": "strata-example"],
                    timeoutInterval: 30
                ),
            ],
            defaultEnvironment: .local
        )
    }
}

/// What the command line asks for.
public struct LaunchOptions: Hashable, Sendable {
    /// The environment to talk to.
    public var environment: NetworkEnvironment
    /// Whether to log each request and response.
    public var verbose: Bool
    /// Whether to print the usage and stop.
    public var help: Bool

    /// The usage text.
    public static let usage = """
        Usage: swift run --package-path Example StrataExample [--env local|staging|production] [--verbose]

          --env NAME   the environment to talk to (default: local, an embedded demo API on loopback);
                       STRATA_ENVIRONMENT=NAME does the same, the flag wins
          --verbose    log every request and response, credentials redacted
        """

    /// Reads the flags, falling back to `STRATA_ENVIRONMENT` and then to `local`.
    /// - Throws: ``LaunchError`` for an unknown flag or environment, or a flag without its value.
    public init(arguments: [String], processEnvironment: [String: String]) throws(LaunchError) {
        let environments = ShopEnvironments.all(localBaseURL: "http://127.0.0.1")
        environment = environments.selectedEnvironment(processEnvironment: processEnvironment)
        verbose = false
        help = false
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--env":
                guard let name = remaining.popFirst() else { throw .missingValue("--env") }
                environment = NetworkEnvironment(name)
            case _ where argument.hasPrefix("--env="):
                environment = NetworkEnvironment(String(argument.dropFirst("--env=".count)))
            case "--verbose", "-v":
                verbose = true
            case "--help", "-h":
                help = true
            default:
                throw .unknownArgument(argument)
            }
        }
        guard environments.settings[environment] != nil else {
            throw .unknownEnvironment(environment.rawValue)
        }
    }
}

/// A command line the app cannot run with.
public enum LaunchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A flag the app does not know.
    case unknownArgument(String)
    /// A flag given without its value.
    case missingValue(String)
    /// An environment the app does not know.
    case unknownEnvironment(String)

    /// What is wrong, and what would be right.
    public var description: String {
        switch self {
        case .unknownArgument(let argument): return "Unknown argument '\(argument)'."
        case .missingValue(let flag): return "\(flag) needs a value."
        case .unknownEnvironment(let name):
            return "Unknown environment '\(name)'; choose local, staging or production."
        }
    }
}
