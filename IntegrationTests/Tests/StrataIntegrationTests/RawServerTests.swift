import Foundation
import StrataTestServer
import Testing

#if canImport(Glibc)
    import Glibc
    private let connectSocket = Glibc.connect
#elseif canImport(Darwin)
    import Darwin
    private let connectSocket = Darwin.connect
#endif

/// The raw server keeps to its own connections.
@Suite struct RawServerTests {
    /// Opens a TCP connection to `server` and leaves it to the server; `false` if it was refused.
    static func connect(to server: RawServer) -> Bool {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(server.baseURL.port ?? 0).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connectSocket(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }

    /// A server shut down takes none of the connections of a server started after it. Its
    /// accepting thread, between two connections as `shutdown()` ran, went on to wait on the
    /// descriptor's number, which by then could be the next server's listener: the old script
    /// answered the next server's requests (a test saw its requests answered and none arrive).
    @Test func aServerShutDownTakesNoConnectionOfTheServerStartedAfterIt() async throws {
        for round in 0..<200 {
            let old = try RawServer { _ in }
            // The accepting thread wakes for this connection, starts its script, then waits again.
            #expect(Self.connect(to: old))
            old.shutdown()
            let new = try RawServer { _ in }
            #expect(Self.connect(to: new))
            let giveUpAt = ContinuousClock.now + .seconds(1)
            while new.connectionCount == 0, ContinuousClock.now < giveUpAt {
                try await Task.sleep(for: .milliseconds(1))
            }
            #expect(new.connectionCount == 1, "round \(round): the server started after one shut down accepted nothing")
            new.shutdown()
            if new.connectionCount != 1 { break }
        }
    }

    /// Once shut down, a server accepts nothing more: connecting to it is refused.
    @Test func aServerShutDownRefusesConnections() throws {
        let server = try RawServer { _ in }
        server.shutdown()
        #expect(!Self.connect(to: server))
    }
}
