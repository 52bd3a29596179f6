import Benchmark
import Foundation
import StackFixture
import Strata
import StrataTestServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// GETs of 1 KiB of JSON from the loopback test server: one at a time, and 64 at once, through
/// Strata and through a `URLSession` with the same configuration. Both decode the body into the
/// same type with `JSONDecoder`.
enum Loopback {
    /// The requests a concurrent iteration runs at once.
    static let concurrency = 64

    /// The server, the raw session and the Strata service of this process (each benchmark runs in
    /// a process of its own), made in a benchmark's setup.
    final class Fixture: Sendable {
        let server: TestServer
        let session: URLSession
        let transfer: DefaultDataTransferService
        let request: URLRequest

        init() async throws {
            server = try await TestServer.start(standardRoutes: false)
            server.router.add("GET", "/items") { _ in
                .json(String(decoding: StackOverhead.body, as: UTF8.self))
            }
            // One configuration for both sides; URLSessionManager drops the URL cache on Linux,
            // so the raw session goes without one too.
            let configuration = URLSessionConfiguration.default
            configuration.urlCache = nil
            configuration.httpMaximumConnectionsPerHost = concurrency
            session = URLSession(configuration: configuration)
            transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL),
                    sessionManager: URLSessionManager(configuration: configuration)
                )
            )
            request = URLRequest(url: server.url("/items"))
        }

        /// What a hand-written client does: send, check the status, decode.
        func raw() async throws -> StackOverhead.Page {
            let (data, response) = try await session.data(for: request)
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
        SideBySide.register(
            "Loopback GET, sequential, vs URLSession", operations: 1, iterations: 20_000,
            setup: setup, teardown: teardown,
            baseline: { blackHole(try await fixture.value?.raw()) },
            strata: { blackHole(try await fixture.value?.strata()) }
        )
        SideBySide.register(
            "Loopback GET, 64 at once, vs URLSession", operations: concurrency, iterations: 20_000,
            setup: setup, teardown: teardown,
            baseline: { try await batch { try await $0.raw() } },
            strata: { try await batch { try await $0.strata() } }
        )
    }

    /// Runs `call` ``concurrency`` times at once.
    private static func batch(_ call: @escaping @Sendable (Fixture) async throws -> StackOverhead.Page) async throws {
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

/// A value set once in a benchmark's setup and read by its iterations.
final class Shared<Value: Sendable>: @unchecked Sendable {  // Sendable: `lock` guards `stored`.
    private let lock = NSLock()
    private var stored: Value?

    var value: Value? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
