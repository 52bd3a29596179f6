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
    /// What sends the requests.
    public var transport: TransportChoice

    /// The usage text.
    public static let usage = """
        Usage: swift run --package-path Example StrataExample [--env local|staging|production]
                 [--transport urlsession|asynchttpclient] [--verbose]

          --env NAME         the environment to talk to (default: local, an embedded demo API on
                             loopback); STRATA_ENVIRONMENT=NAME does the same, the flag wins
          --transport NAME   what sends the requests: urlsession (the default) or asynchttpclient
          --verbose          log every request and response, credentials redacted
        """

    /// Reads the flags, falling back to `STRATA_ENVIRONMENT` and then to `local`.
    /// - Throws: ``LaunchError`` for an unknown flag or environment, or a flag without its value.
    public init(arguments: [String], processEnvironment: [String: String]) throws(LaunchError) {
        let environments = ShopEnvironments.all(localBaseURL: "http://127.0.0.1")
        environment = environments.selectedEnvironment(processEnvironment: processEnvironment)
        verbose = false
        help = false
        transport = .urlSession
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--env":
                guard let name = remaining.popFirst() else { throw .missingValue("--env") }
                environment = NetworkEnvironment(name)
            case _ where argument.hasPrefix("--env="):
                environment = NetworkEnvironment(String(argument.dropFirst("--env=".count)))
            case "--transport":
                guard let name = remaining.popFirst() else { throw .missingValue("--transport") }
                transport = try TransportChoice(name: name)
            case _ where argument.hasPrefix("--transport="):
                transport = try TransportChoice(name: String(argument.dropFirst("--transport=".count)))
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
    /// A transport the app does not know.
    case unknownTransport(String)

    /// What is wrong, and what would be right.
    public var description: String {
        switch self {
        case .unknownArgument(let argument): return "Unknown argument '\(argument)'."
        case .missingValue(let flag): return "\(flag) needs a value."
        case .unknownEnvironment(let name):
            return "Unknown environment '\(name)'; choose local, staging or production."
        case .unknownTransport(let name):
            return "Unknown transport '\(name)'; choose urlsession or asynchttpclient."
        }
    }
}

/// What sends the app's requests: the same layers above either.
public enum TransportChoice: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// `URLSession` (FoundationNetworking on Linux).
    case urlSession = "urlsession"
    /// AsyncHTTPClient, on SwiftNIO.
    case asyncHTTPClient = "asynchttpclient"

    /// The choice named `name` on the command line.
    /// - Throws: ``LaunchError/unknownTransport(_:)`` for any other name.
    init(name: String) throws(LaunchError) {
        guard let choice = TransportChoice(rawValue: name.lowercased()) else { throw .unknownTransport(name) }
        self = choice
    }

    /// The name, as the command line spells it.
    public var description: String { rawValue }
}
