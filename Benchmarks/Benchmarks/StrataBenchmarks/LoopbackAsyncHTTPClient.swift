import AsyncHTTPClient
import Benchmark
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import StackFixture
import Strata
import StrataAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The GETs of ``Loopback`` with Strata over AsyncHTTPClient: against raw AsyncHTTPClient (its
/// future-based `execute(request:)` without and with a deadline, and its async `execute(_:timeout:)`,
/// each collecting the body and decoding it with `JSONDecoder`), one at a time and 64 at once; and
/// one at a time against Strata over `URLSession` and raw `URLSession.data(for:)`, to show what the
/// transport changes. (``LoopbackCallbacks`` runs the callback APIs over the same fixture.)
enum LoopbackAsyncHTTPClient {
    final class Fixture: Sendable {
        let server: LoopbackServer
        let client: HTTPClient
        let request: HTTPClient.Request
        let url: String
        let strata: DefaultDataTransferService
        let strataTransport: AsyncHTTPClientTransport
        let session: URLSession
        let strataOverURLSession: DefaultDataTransferService
        let urlRequest: URLRequest
        /// A session with a delegate, for the callback pairs.
        let collector = Collector()
        let delegateSession: URLSession
        /// Where the hand-written clients of the callback pairs decode and deliver.
        let callerQueue = DispatchQueue(label: "Benchmark.caller")

        init() async throws {
            server = try await LoopbackServer.start()
            // One client for both sides, configured as Strata's own (no redirects, decompression,
            // no retried connection establishment): they share its connection pool, so the pairs
            // measure the layers, not which event loops two pools' connections landed on.
            client = HTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                configuration: AsyncHTTPClientTransport.strataConfiguration())
            url = server.itemsURL.absoluteString
            request = try HTTPClient.Request(url: url)
            strataTransport = AsyncHTTPClientTransport(client: client, decompresses: true)
            // Completions on a serial queue, as for the hand-written clients (the async methods do
            // not use it).
            strata = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL),
                    sessionManager: SessionManager(transport: strataTransport)
                ),
                completionQueue: DispatchQueue(label: "Benchmark.strata")
            )
            let configuration = URLSessionConfiguration.default
            configuration.urlCache = nil
            configuration.httpMaximumConnectionsPerHost = Loopback.concurrency
            session = URLSession(configuration: configuration)
            delegateSession = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
            strataOverURLSession = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL),
                    sessionManager: SessionManager(configuration: configuration)
                ),
                completionQueue: DispatchQueue(label: "Benchmark.strata")
            )
            urlRequest = URLRequest(url: server.itemsURL)
        }

        func tearDown() async throws {
            try await client.shutdown()
            try await strataTransport.shutdown()
            try await server.shutdown()
        }

        /// A hand-written client over AsyncHTTPClient's futures: send, check the status, decode.
        /// With `deadline`, as Strata sends every request, it also pays for a request's timeout in
        /// AsyncHTTPClient (a task scheduled on the event loop, and cancelled).
        func rawFutures(deadline: Bool = false) async throws -> StackOverhead.Page {
            let response = try await client.execute(request: request, deadline: deadline ? .now() + .seconds(60) : nil)
                .get()
            guard (200..<300).contains(response.status.code), let body = response.body else {
                throw URLError(.badServerResponse)
            }
            return try JSONDecoder().decode(StackOverhead.Page.self, from: body)
        }

        /// The same over AsyncHTTPClient's async API.
        func rawAsync() async throws -> StackOverhead.Page {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            guard (200..<300).contains(response.status.code) else { throw URLError(.badServerResponse) }
            let body = try await response.body.collect(upTo: 1_048_576)
            return try JSONDecoder().decode(StackOverhead.Page.self, from: body)
        }

        /// Strata over AsyncHTTPClient.
        func overAsyncHTTPClient() async throws -> StackOverhead.Page {
            try await strata.request(Endpoint<StackOverhead.Page>(path: "items"))
        }

        /// Strata over `URLSession`.
        func overURLSession() async throws -> StackOverhead.Page {
            try await strataOverURLSession.request(Endpoint<StackOverhead.Page>(path: "items"))
        }

        /// Raw `URLSession.data(for:)`.
        func rawURLSession() async throws -> StackOverhead.Page {
            let (data, response) = try await session.data(for: urlRequest)
            guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
                throw URLError(.badServerResponse)
            }
            return try JSONDecoder().decode(StackOverhead.Page.self, from: data)
        }
    }

    private static let fixture = Shared<Fixture>()

    static func register() {
        let setup: Benchmark.BenchmarkSetupHook = { fixture.value = try await Fixture() }
        let teardown: Benchmark.BenchmarkTeardownHook = { try await fixture.value?.tearDown() }
        Loopback.registerPairs(
            named: "Loopback GET over AsyncHTTPClient", fixture: fixture, setup: setup, teardown: teardown,
            baselines: [
                ("AsyncHTTPClient execute(request:)", { try await $0.rawFutures() }),
                ("AsyncHTTPClient execute(request:deadline:)", { try await $0.rawFutures(deadline: true) }),
                ("AsyncHTTPClient async execute", { try await $0.rawAsync() }),
            ],
            strata: { try await $0.overAsyncHTTPClient() }
        )
        // The transport's gain: Strata over AsyncHTTPClient is the "Strata" side of these pairs.
        Loopback.registerPairs(
            named: "Loopback GET over AsyncHTTPClient", fixture: fixture, setup: setup, teardown: teardown,
            baselines: [
                ("Strata over URLSession", { try await $0.overURLSession() }),
                ("URLSession", { try await $0.rawURLSession() }),
            ],
            strata: { try await $0.overAsyncHTTPClient() },
            sequentialOnly: true, iterations: 5_000
        )
    }
}
