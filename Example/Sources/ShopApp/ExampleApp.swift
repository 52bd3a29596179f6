import Foundation
import ShopDemoAPI
import Strata
import StrataAsyncHTTPClient

/// The command-line app: reads the options, starts the demo API for `local`, wires the app for the
/// chosen environment, and takes the tour.
public enum ExampleApp {
    /// Runs the app and returns its exit code: 0 when every step went as expected.
    public static func main(arguments: [String], processEnvironment: [String: String]) async -> Int32 {
        let options: LaunchOptions
        do {
            options = try LaunchOptions(arguments: arguments, processEnvironment: processEnvironment)
        } catch {
            print("\(error)\n\n\(LaunchOptions.usage)")
            return 2
        }
        if options.help {
            print(LaunchOptions.usage)
            return 0
        }

        var demo: DemoAPI?
        if options.environment == .local {
            do {
                demo = try await DemoAPI.start()
            } catch {
                print("Could not start the demo API on loopback: \(error)")
                return 1
            }
        }
        let environments = ShopEnvironments.all(localBaseURL: demo?.baseURL.absoluteString ?? "http://127.0.0.1")
        let configuration: NetworkConfiguration
        do {
            configuration = try environments.configuration(for: options.environment)
        } catch {
            print(error.localizedDescription)
            return 1
        }

        // One transport for the app; over AsyncHTTPClient it owns a client, shut down at the end.
        let client = options.transport == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let transport: any Transport
        if let client {
            transport = client
        } else {
            transport = URLSessionTransport()
        }
        let refreshes = Counter()
        let root = CompositionRoot(
            configuration: configuration,
            transport: transport,
            monitors: options.verbose ? [ConsoleNetworkLogger(level: .debug)] : [],
            didRefreshToken: { refreshes.increment() }
        )
        print(
            "Strata example — environment \(options.environment), \(configuration.baseURL.absoluteString), "
                + "over \(options.transport)")
        if demo != nil {
            print("(the demo API runs in this process on loopback; no network needed)")
        }
        var expireSessions: (@Sendable () -> Void)?
        if let demo {
            expireSessions = { demo.expireSessions() }
        }
        let tour = Tour(root: root, refreshes: refreshes, expireSessions: expireSessions) { print($0) }
        let failures = await tour.run()
        try? await client?.shutdown()
        try? await demo?.shutdown()
        let steps = tour.stepCount
        print(
            failures == 0
                ? "\nAll \(steps) steps went as expected." : "\n\(failures) of \(steps) steps did not go as expected.")
        return failures == 0 ? 0 : 1
    }
}
