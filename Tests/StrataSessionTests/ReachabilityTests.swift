import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A gate whose answer the test sets.
final class SwitchGate: ReachabilityGate {
    private let reachable: Locked<Bool>
    private let asked = Locked(0)
    init(_ reachable: Bool) { self.reachable = Locked(reachable) }
    func set(_ value: Bool) { reachable.withLock { $0 = value } }
    var questions: Int { asked.value }
    func isReachable(_ url: URL?) -> Bool {
        asked.withLock { $0 += 1 }
        return reachable.value
    }
}

@Suite struct ReachabilityTests {
    @Test func anUnreachableTargetFailsAtOnceWithNotConnectedAndNothingIsSent() async throws {
        let stub = URLProtocolStub { _ in .response(delay: 5) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), reachability: SwitchGate(false))
        let started = ContinuousClock.now
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let outcome = try #require(await recorder.first())
        #expect((outcome.error as? URLError)?.code == .notConnectedToInternet)
        // The stub would answer after 5 s; the gate answers well before, however busy the machine.
        #expect(try #require(recorder.instants.first) - started < .seconds(2))
        #expect(stub.requests.isEmpty)
    }

    @Test func theGateIsAskedBeforeEveryAttempt() async throws {
        let gate = SwitchGate(true)
        let stub = URLProtocolStub { _ in
            gate.set(false)
            return .response(statusCode: 503)
        }
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(),
            retriers: [CountingRetrier(decision: .retry)],
            reachability: gate
        )
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager)
        let outcome = try #require(await recorder.first())
        #expect((outcome.error as? URLError)?.code == .notConnectedToInternet)
        #expect(stub.requests.count == 1)
        #expect(gate.questions == 2)
    }

    @Test func interfaceReachabilityDecidesByLoopbackAndActiveInterfaces() {
        let loopback = InterfaceReachability.Interface(name: "lo", isActive: true, isLoopback: true, hasAddress: true)
        let ethernet = InterfaceReachability.Interface(
            name: "eth0", isActive: true, isLoopback: false, hasAddress: true)
        let down = InterfaceReachability.Interface(name: "eth1", isActive: false, isLoopback: false, hasAddress: true)
        #expect(InterfaceReachability.isReachable(host: "127.0.0.1", through: [loopback]))
        #expect(InterfaceReachability.isReachable(host: "localhost", through: [loopback, down]))
        #expect(!InterfaceReachability.isReachable(host: "api.example.com", through: [loopback, down]))
        #expect(InterfaceReachability.isReachable(host: "api.example.com", through: [loopback, ethernet]))
        #expect(!InterfaceReachability.isReachable(host: "::1", through: [ethernet]))
    }

    /// `sa_family` is a `UInt8` on Apple platforms and a `UInt16` on Linux, the `IFF_` flags an
    /// `Int32` or an `Int`: the checks are run with each, so both platforms' types are known to work.
    @Test func addressFamiliesAndFlagsAreReadWhateverTheirCTypes() {
        #expect(InterfaceReachability.hasInternetAddress(family: UInt8(AF_INET)))
        #expect(InterfaceReachability.hasInternetAddress(family: UInt16(AF_INET6)))
        #expect(!InterfaceReachability.hasInternetAddress(family: UInt8(AF_UNIX)))
        #expect(!InterfaceReachability.hasInternetAddress(family: UInt16(AF_UNIX)))
        #expect(!InterfaceReachability.hasInternetAddress(family: UInt16(AF_INET) | 0x100))
        #expect(InterfaceReachability.has(Int32(0x1), in: UInt32(0x41)))
        #expect(InterfaceReachability.has(Int(0x40), in: UInt32(0x41)))
        #expect(!InterfaceReachability.has(Int(0x8), in: UInt32(0x41)))
    }

    @Test func thisMachinesLoopbackIsReachable() throws {
        let interfaces = InterfaceReachability.interfaces()
        #expect(interfaces.contains { $0.isLoopback && $0.isActive })
        #expect(InterfaceReachability().isReachable(URL(string: "http://127.0.0.1:8080")))
    }
}
