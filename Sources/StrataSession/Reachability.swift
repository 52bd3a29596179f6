import Foundation
import StrataCore

#if canImport(Network)
    import Network
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells whether a request can be attempted at all. A ``URLSessionManager`` with a gate asks it
/// before every attempt and fails at once with `URLError(.notConnectedToInternet)` (mapped to
/// `NetworkError.notConnected`) when the answer is no, instead of waiting for a timeout.
///
/// ``InterfaceReachability`` works everywhere; on Apple platforms `PathMonitorReachability`
/// follows the system's own view of the network.
public protocol ReachabilityGate: Sendable {
    /// Whether a request to `url` can be attempted now.
    func isReachable(_ url: URL?) -> Bool
}

/// Reachability from the machine's network interfaces (`getifaddrs`): a loopback host is reachable
/// while a loopback interface is up; any other host while some other interface is up, running and
/// has an address.
public struct InterfaceReachability: ReachabilityGate {
    /// What the gate needs to know about one network interface.
    public struct Interface: Hashable, Sendable {
        /// The interface name, such as `eth0`.
        public var name: String
        /// Whether it is up and running.
        public var isActive: Bool
        /// Whether it is a loopback interface.
        public var isLoopback: Bool
        /// Whether it has an IPv4 or IPv6 address.
        public var hasAddress: Bool

        /// Describes an interface.
        public init(name: String, isActive: Bool, isLoopback: Bool, hasAddress: Bool) {
            self.name = name
            self.isActive = isActive
            self.isLoopback = isLoopback
            self.hasAddress = hasAddress
        }
    }

    /// Creates the gate.
    public init() {}

    /// Whether `url`'s host is reachable through the machine's interfaces now.
    public func isReachable(_ url: URL?) -> Bool {
        Self.isReachable(host: url?.host, through: Self.interfaces())
    }

    /// The decision for `host` given `interfaces`.
    public static func isReachable(host: String?, through interfaces: [Interface]) -> Bool {
        let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        let wantsLoopback = host.map { loopbackHosts.contains($0.lowercased()) || $0.hasPrefix("127.") } ?? false
        return interfaces.contains { $0.isActive && $0.hasAddress && $0.isLoopback == wantsLoopback }
    }

    /// The machine's interfaces with an IPv4 or IPv6 address, one entry per name.
    public static func interfaces() -> [Interface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [String: Interface] = [:]
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = entry.pointee.ifa_flags
            let hasAddress = entry.pointee.ifa_addr.map { hasInternetAddress(family: $0.pointee.sa_family) } ?? false
            let name = String(cString: entry.pointee.ifa_name)
            let interface = Interface(
                name: name,
                isActive: has(IFF_UP, in: flags) && has(IFF_RUNNING, in: flags),
                isLoopback: has(IFF_LOOPBACK, in: flags),
                hasAddress: hasAddress
            )
            if hasAddress || found[name] == nil {
                found[name] = interface
            }
        }
        return found.values.sorted { $0.name < $1.name }
    }

    // The C types differ by platform: `sa_family` is a `UInt8` on Apple platforms and a `UInt16`
    // on Linux; the `IFF_` flags are `Int32` on Apple platforms and `Int` on Linux. Generic over
    // the integer type, these type-check on both, and the tests run them with each type.

    /// Whether an address of `family` is an IPv4 or IPv6 address.
    package static func hasInternetAddress(family: some BinaryInteger) -> Bool {
        let family = Int64(truncatingIfNeeded: family)
        return family == Int64(AF_INET) || family == Int64(AF_INET6)
    }

    /// Whether `flag` is set in an interface's `flags`.
    package static func has(_ flag: some BinaryInteger, in flags: some BinaryInteger) -> Bool {
        UInt64(truncatingIfNeeded: flags) & UInt64(truncatingIfNeeded: flag) != 0
    }
}

#if canImport(Network)
    /// Reachability from `NWPathMonitor`: reachable while the system's current path is satisfied.
    /// The monitor runs for the gate's lifetime.
    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    public final class PathMonitorReachability: ReachabilityGate {
        private let monitor = NWPathMonitor()
        private let satisfied = Locked(true)

        /// Starts monitoring.
        public init() {
            monitor.pathUpdateHandler = { [satisfied] path in
                satisfied.withLock { $0 = path.status == .satisfied }
            }
            monitor.start(queue: DispatchQueue(label: "Strata.PathMonitorReachability"))
        }

        deinit {
            monitor.cancel()
        }

        /// Whether the current path is satisfied.
        public func isReachable(_ url: URL?) -> Bool {
            satisfied.value
        }
    }
#endif
