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
            let flags = Int32(entry.pointee.ifa_flags)
            let family = entry.pointee.ifa_addr?.pointee.sa_family
            let hasAddress = family == UInt16(AF_INET) || family == UInt16(AF_INET6)
            let name = String(cString: entry.pointee.ifa_name)
            let interface = Interface(
                name: name,
                isActive: flags & Int32(IFF_UP) != 0 && flags & Int32(IFF_RUNNING) != 0,
                isLoopback: flags & Int32(IFF_LOOPBACK) != 0,
                hasAddress: hasAddress
            )
            if hasAddress || found[name] == nil {
                found[name] = interface
            }
        }
        return found.values.sorted { $0.name < $1.name }
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
