import Foundation
import NIOCore
import Strata
import StrataAsyncHTTPClient
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Load, races and memory through real sockets. Each test stops by itself: request counts are
/// fixed and every wait has a timeout.
@Suite(.serialized) struct LoadTests {
    @Test func aThousandRequestsInFlightAllCompleteExactlyOnceWithTheirOwnBody() async throws {
        try await Harness.with(timeout: 60) { (harness) async throws in
            let count = 1_000
            let recorders = (0..<count).map { _ in CompletionRecorder<Result<EchoReply, DataTransferError>>() }
            let started = ContinuousClock.now
            for (index, recorder) in recorders.enumerated() {
                harness.transfer.request(
                    with: Endpoint<EchoReply>(path: "echo", queryParameters: ["i": .int(index)]),
                    completion: recorder.record)
            }
            var mismatches = 0
            for (index, recorder) in recorders.enumerated() {
                let echo = try #require(await recorder.first(timeout: 60)).get()
                if echo.queryValue("i") != String(index) { mismatches += 1 }
            }
            let elapsed = ContinuousClock.now - started
            try await Task.sleep(for: .milliseconds(200))
            #expect(mismatches == 0)
            #expect(recorders.allSatisfy { $0.callCount == 1 })
            print("load: \(count) concurrent requests completed in \(elapsed)")
        }
    }

    /// Requests that wait for one of the pool's connections (one per host here, each answer taking
    /// 0.9 s) wait within their own deadline (30 s), however long: the thirteenth waits some 11 s
    /// and succeeds. AsyncHTTPClient fails a request that waits for a connection longer than its
    /// connect timeout (10 s by default): a busy pool failed requests long before their deadline.
    @Test func requestsQueuedForABusyPoolWaitUntilTheirOwnDeadline() async throws {
        let server = try RawServer { connection in
            while connection.readHead() != nil {
                Thread.sleep(forTimeInterval: 0.9)
                guard connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") else { return }
            }
        }
        defer { server.shutdown() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 1
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 30),
                sessionManager: SessionManager.underTest(configuration: configuration)),
            completionQueue: DispatchQueue(label: "LoadTests"))
        let recorders = (0..<13).map { _ in CompletionRecorder<Result<Data, DataTransferError>>() }
        for (index, recorder) in recorders.enumerated() {
            transfer.request(with: Endpoint<Data>(path: "items/\(index)"), completion: recorder.record)
        }
        for (index, recorder) in recorders.enumerated() {
            let result = try #require(await recorder.first(timeout: 40))
            #expect(throws: Never.self, "request \(index): \(result)") { try result.get() }
        }
        #expect(server.connectionCount == 1)
    }

    /// A host stops answering (its `SYN`s lost): a request times out while its connection attempt
    /// waits. The host answers again between two of the system's `SYN`s (sent after 1, 3 and 7 s),
    /// and a request sent then connects at once over `URLSession`. AsyncHTTPClient's pool gives it
    /// to the attempt still under way, which ends at the client's connect timeout (4 s here; 10 s
    /// in `strataConfiguration()`, where it was a year): the client fails the request unsent, and
    /// the transport sends it again on a new connection, answered half a second after it was
    /// sent. Before, it failed then; with a year, it waited for the next `SYN`, at 7 s.
    @Test func aRequestSentAfterAnUnreachableHostCameBackConnects() async throws {
        let server = try RawServer.unreachable { connection in
            while connection.readHead() != nil {
                guard connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") else { return }
            }
        }
        defer { server.shutdown() }
        let transport = TestTransport.current.makeTransport(connectTimeout: .seconds(4))
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: server.baseURL),
            sessionManager: SessionManager(transport: transport))
        let started = ContinuousClock.now
        let during = await timed(Endpoint<Data>(path: "during", timeoutInterval: 0.5), through: service)
        guard case .failure(.timedOut) = during.result else {
            Issue.record("expected the request to time out while the host does not answer, got \(during.result)")
            return
        }
        try await Task.sleep(until: started + .seconds(3.5))
        server.startAccepting()
        let after = await timed(Endpoint<Data>(path: "after", timeoutInterval: 3), through: service)
        #expect((try? after.result.get().body) == Data("ok".utf8), "\(after.result)")
        #expect(after.elapsed < .seconds(1.5), "answered \(after.elapsed) after it was sent")
        if let transport = transport as? AsyncHTTPClientTransport { try await transport.shutdown() }
    }

    /// A client of the caller's whose connect timeout is too short for any connection (1 ms, to a
    /// host that does not answer) fails each try at once: the request goes out again a bounded
    /// number of times (``AsyncHTTPClientTransport/mostUnsentResends``) and then fails `.timedOut`,
    /// long before its 10 s deadline, rather than try again until it.
    @Test(.enabled(if: TestTransport.current == .asyncHTTPClient))
    func aConnectTimeoutTooShortForAnyConnectionEndsARequestAfterBoundedResends() async throws {
        let server = try RawServer.unreachable { _ in }
        defer { server.shutdown() }
        let transport = TestTransport.current.makeTransport(connectTimeout: .milliseconds(1))
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: server.baseURL),
            sessionManager: SessionManager(transport: transport))
        let outcome = await timed(Endpoint<Data>(path: "x", timeoutInterval: 10), through: service)
        guard case .failure(.timedOut) = outcome.result else {
            Issue.record("expected the client's connect timeout, got \(outcome.result)")
            return
        }
        #expect(outcome.elapsed < .seconds(8), "ended after \(outcome.elapsed)")
        if let transport = transport as? AsyncHTTPClientTransport { try await transport.shutdown() }
    }

    @Test func cancelsRacingRealResponsesEachCompleteExactlyOnce() async throws {
        try await Harness.with(timeout: 60) { (harness) async throws in
            let recorders = (0..<600).map { _ in CompletionRecorder<Result<EchoReply, DataTransferError>>() }
            for (index, recorder) in recorders.enumerated() {
                let endpoint = Endpoint<EchoReply>(path: "delay/\(index % 20)")
                let cancellable = harness.transfer.request(with: endpoint, completion: recorder.record)
                if index.isMultiple(of: 2) {
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(index % 25)) {
                        cancellable.cancel()
                    }
                }
            }
            var succeeded = 0
            for recorder in recorders {
                switch try #require(await recorder.first(timeout: 60)) {
                case .success: succeeded += 1
                case .failure(let error): #expect(error.isCancelled, "\(error)")
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(recorders.allSatisfy { $0.callCount == 1 })
            #expect(succeeded >= 300)
        }
    }

    @Test func nothingARequestCapturesOutlivesIt() async throws {
        final class Sentinel: Sendable {}
        try await Harness.with { (harness) async throws in
            var sentinels: [WeakBox] = []
            var recorders: [CompletionRecorder<Bool>] = []
            for index in 0..<300 {
                let sentinel = Sentinel()
                sentinels.append(WeakBox(sentinel))
                let recorder = CompletionRecorder<Bool>()
                recorders.append(recorder)
                let endpoint = Endpoint<EchoReply>(path: index.isMultiple(of: 3) ? "status/500" : "echo")
                let cancellable = harness.transfer.request(with: endpoint) { result in
                    withExtendedLifetime(sentinel) { recorder.record((try? result.get()) != nil) }
                }
                if index.isMultiple(of: 5) { cancellable.cancel() }
            }
            for recorder in recorders {
                let completed = await recorder.first(timeout: 30)
                #expect(completed != nil)
            }
            try await Task.sleep(for: .milliseconds(500))
            #expect(sentinels.filter { $0.value != nil }.count == 0)
        }
    }

    @Test func residentMemoryDoesNotGrowOverALongRun() async throws {
        guard residentMemory() != nil else { return }  // measured where /proc exists (Linux)
        try await Harness.with(timeout: 60) { (harness) async throws in
            func round(_ count: Int) async throws {
                let recorders = (0..<count).map { _ in CompletionRecorder<Result<EchoReply, DataTransferError>>() }
                for (index, recorder) in recorders.enumerated() {
                    let cancellable = harness.transfer.request(
                        with: Endpoint<EchoReply>(path: "echo"), completion: recorder.record)
                    if index.isMultiple(of: 10) { cancellable.cancel() }
                }
                for recorder in recorders {
                    _ = try #require(await recorder.first(timeout: 60))
                }
            }
            // Warm-up: connection pools, caches, and the allocator's arenas, which grow in steps of
            // megabytes over the first rounds as each thread of the event loops and of Strata's
            // queues comes to allocate (in the whole suite, after the other tests, one round left
            // them still growing).
            try await round(2_000)
            try await round(2_000)
            let baseline = try #require(residentMemory())
            var samples: [Int] = []
            for _ in 0..<5 {
                try await round(2_000)
                samples.append(try #require(residentMemory()))
            }
            let growth = (samples.last ?? baseline) - baseline
            print("memory: baseline \(baseline / 1024) KiB, after each 2,000 requests \(samples.map { $0 / 1024 }) KiB")
            #expect(growth < 16 * 1_048_576, "resident memory grew by \(growth / 1024) KiB over 10,000 requests")
        }
    }
}

/// A weak reference, to see whether an object was released.
struct WeakBox: @unchecked Sendable {  // Sendable: written once at creation; weak loads are atomic.
    weak var value: AnyObject?
    init(_ value: AnyObject) { self.value = value }
}

/// The process's resident set size in bytes, from /proc/self/status; `nil` where there is none.
func residentMemory() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return nil }
    return kilobytes * 1024
}
