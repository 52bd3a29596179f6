import Benchmark
import Foundation
import StackFixture
import Strata

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// GETs of 1 KiB of JSON from the loopback test server (or the server `STRATA_BENCH_SERVER` names):
/// one at a time, and 64 at once, through Strata and through a `URLSession` with the same
/// configuration. Both decode the body into the same type with `JSONDecoder`.
///
/// Two baselines: `URLSession.data(for:)`, and the same session with a session delegate, as any
/// client needs for a redirect policy, authentication challenges or progress (Strata has one for
/// all three). FoundationNetworking delivers a delegate's callbacks through the session's delegate
/// queue; `data(for:)` completes without it.
enum Loopback {
    /// The requests a concurrent iteration runs at once.
    static let concurrency = 64

    /// The server, the raw session and the Strata service of this process (each benchmark runs in
    /// a process of its own), made in a benchmark's setup.
    final class Fixture: Sendable {
        let server: LoopbackServer
        let session: URLSession
        let delegateSession: URLSession
        let collector = Collector()
        let transfer: DefaultDataTransferService
        let request: URLRequest

        init() async throws {
            server = try await LoopbackServer.start()
            // One configuration for both sides; URLSessionManager drops the URL cache on Linux,
            // so the raw session goes without one too.
            let configuration = URLSessionConfiguration.default
            configuration.urlCache = nil
            configuration.httpMaximumConnectionsPerHost = concurrency
            session = URLSession(configuration: configuration)
            delegateSession = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
            transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL),
                    sessionManager: URLSessionManager(configuration: configuration)
                )
            )
            request = URLRequest(url: server.itemsURL)
        }

        /// What a hand-written client does: send, check the status, decode.
        func raw() async throws -> StackOverhead.Page {
            try Self.decode(try await session.data(for: request))
        }

        /// The same, through the session with a delegate.
        func rawWithDelegate() async throws -> StackOverhead.Page {
            try Self.decode(try await collector.data(for: request, in: delegateSession))
        }

        static func decode(_ reply: (Data, URLResponse)) throws -> StackOverhead.Page {
            let (data, response) = reply
            guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
                throw URLError(.badServerResponse)
            }
            return try JSONDecoder().decode(StackOverhead.Page.self, from: data)
        }

        func strata() async throws -> StackOverhead.Page {
            try await transfer.request(Endpoint<StackOverhead.Page>(path: "items"))
        }
    }

    private static let fixture = Shared<Fixture>()

    static func register() {
        let setup: Benchmark.BenchmarkSetupHook = { fixture.value = try await Fixture() }
        let teardown: Benchmark.BenchmarkTeardownHook = { try await fixture.value?.server.shutdown() }
        registerPairs(
            named: "Loopback GET", fixture: fixture, setup: setup, teardown: teardown,
            baselines: [
                ("URLSession", { try await $0.raw() }),
                ("URLSession with a session delegate", { try await $0.rawWithDelegate() }),
            ],
            strata: { try await $0.strata() }
        )
    }

    /// Registers, for each baseline, a side-by-side pair of GETs one at a time and, unless
    /// `sequentialOnly`, one of ``concurrency`` GETs at once: Strata's call on one side, the
    /// baseline's on the other, both over the fixture `setup` makes.
    static func registerPairs<Fixture: Sendable>(
        named prefix: String,
        fixture: Shared<Fixture>,
        setup: @escaping Benchmark.BenchmarkSetupHook,
        teardown: @escaping Benchmark.BenchmarkTeardownHook,
        baselines: [(name: String, call: @Sendable (Fixture) async throws -> StackOverhead.Page)],
        strata: @escaping @Sendable (Fixture) async throws -> StackOverhead.Page,
        sequentialOnly: Bool = false,
        iterations: Int = 20_000
    ) {
        for (name, call) in baselines {
            SideBySide.register(
                "\(prefix), sequential, vs \(name)", operations: 1, iterations: iterations,
                setup: setup, teardown: teardown,
                baseline: { if let fixture = fixture.value { blackHole(try await call(fixture)) } },
                strata: { if let fixture = fixture.value { blackHole(try await strata(fixture)) } }
            )
            guard !sequentialOnly else { continue }
            SideBySide.register(
                "\(prefix), \(concurrency) at once, vs \(name)", operations: concurrency, iterations: iterations,
                setup: setup, teardown: teardown,
                baseline: { try await batch(call, on: fixture) },
                strata: { try await batch(strata, on: fixture) }
            )
        }
    }

    /// Runs `call` ``concurrency`` times at once.
    private static func batch<Fixture: Sendable>(
        _ call: @escaping @Sendable (Fixture) async throws -> StackOverhead.Page, on fixture: Shared<Fixture>
    ) async throws {
        guard let fixture = fixture.value else { return }
        try await withThrowingTaskGroup(of: StackOverhead.Page.self) { group in
            for _ in 0..<concurrency {
                group.addTask { try await call(fixture) }
            }
            for try await page in group {
                blackHole(page)
            }
        }
    }
}

/// A session delegate that collects each task's body and hands it to its caller when the task
/// completes, on the session's delegate queue: the least a client with a session delegate does.
final class Collector: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // Sendable: `lock` guards `transfers`.
    typealias Completion = @Sendable (Result<(Data, URLResponse), any Error>) -> Void

    private let lock = NSLock()
    private var transfers: [Int: (body: Data, completion: Completion)] = [:]

    func data(for request: URLRequest, in session: URLSession, completion: @escaping Completion) {
        let task = session.dataTask(with: request)
        lock.withLock { transfers[task.taskIdentifier] = (Data(), completion) }
        task.resume()
    }

    func data(for request: URLRequest, in session: URLSession) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            data(for: request, in: session) { continuation.resume(with: $0) }
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { transfers[dataTask.taskIdentifier]?.body.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = lock.withLock({ transfers.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let response = task.response, error == nil {
            transfer.completion(.success((transfer.body, response)))
        } else {
            transfer.completion(.failure(error ?? URLError(.badServerResponse)))
        }
    }
}

/// A value set once in a benchmark's setup and read by its iterations.
final class Shared<Value: Sendable>: @unchecked Sendable {  // Sendable: `lock` guards `stored`.
    private let lock = NSLock()
    private var stored: Value?

    var value: Value? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
