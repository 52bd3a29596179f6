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

/// Strata's callback API, its first, side by side with each client's own callback API, as an app
/// calls them: 500 GETs one at a time (each completion starts the next) and 2,000 GETs 64 at once
/// (each completion starts one more), every body decoded with `JSONDecoder` and delivered on a
/// serial queue of the caller's.
///
/// - Over AsyncHTTPClient: its future API (`execute(request:deadline:)`, the deadline Strata gives
///   every request too), the body decoded on the caller's queue once the future completes.
/// - Over URLSession: a session with a delegate (Strata's has one, for redirects, challenges and
///   progress), the body decoded on the caller's queue once the task completes.
enum LoopbackCallbacks {
    typealias Completion = @Sendable (Result<StackOverhead.Page, any Error>) -> Void
    typealias Call = @Sendable (LoopbackCallbacks.Fixture, @escaping Completion) -> Void

    static let sequential = Settings.smoke ? 20 : 500
    static let concurrent = Settings.smoke ? 128 : 2_000

    final class Fixture: Sendable {
        let server: LoopbackServer
        let client: HTTPClient
        let request: HTTPClient.Request
        let strataTransport: AsyncHTTPClientTransport
        let strataOverAsyncHTTPClient: DefaultDataTransferService
        let collector = Collector()
        let session: URLSession
        let urlRequest: URLRequest
        let strataOverURLSession: DefaultDataTransferService
        /// Where the hand-written clients decode and deliver.
        let callerQueue = DispatchQueue(label: "Benchmark.caller")

        init() async throws {
            server = try await LoopbackServer.start()
            // One client for both sides, configured as Strata's own: they share its pool.
            client = HTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                configuration: AsyncHTTPClientTransport.strataConfiguration())
            request = try HTTPClient.Request(url: server.itemsURL.absoluteString)
            strataTransport = AsyncHTTPClientTransport(client: client, decompresses: true)
            strataOverAsyncHTTPClient = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL),
                    sessionManager: SessionManager(transport: strataTransport)),
                completionQueue: DispatchQueue(label: "Benchmark.strata"))
            let configuration = URLSessionConfiguration.default
            configuration.urlCache = nil
            configuration.httpMaximumConnectionsPerHost = Loopback.concurrency
            session = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
            urlRequest = URLRequest(url: server.itemsURL)
            strataOverURLSession = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL),
                    sessionManager: SessionManager(configuration: configuration)),
                completionQueue: DispatchQueue(label: "Benchmark.strata"))
        }

        func tearDown() async throws {
            try await client.shutdown()
            try await strataTransport.shutdown()
            try await server.shutdown()
        }

        /// AsyncHTTPClient's future API, by hand: send, then on the caller's queue check and decode.
        func rawFutures(_ completion: @escaping Completion) {
            let queue = callerQueue
            client.execute(request: request, deadline: .now() + .seconds(60)).whenComplete { result in
                queue.async {
                    completion(
                        Result {
                            let response = try result.get()
                            guard (200..<300).contains(response.status.code), let body = response.body else {
                                throw URLError(.badServerResponse)
                            }
                            return try JSONDecoder().decode(StackOverhead.Page.self, from: body)
                        })
                }
            }
        }

        /// A session with a delegate, by hand: send, then on the caller's queue check and decode.
        func rawURLSession(_ completion: @escaping Completion) {
            let queue = callerQueue
            collector.data(for: urlRequest, in: session) { result in
                queue.async { completion(Result { try Loopback.Fixture.decode(try result.get()) }) }
            }
        }

        static func strata(_ service: DefaultDataTransferService, _ completion: @escaping Completion) {
            service.request(with: Endpoint<StackOverhead.Page>(path: "items")) { result in
                completion(result.mapError { $0 })
            }
        }
    }

    private static let fixture = Shared<Fixture>()

    static func register() {
        let setup: Benchmark.BenchmarkSetupHook = { fixture.value = try await Fixture() }
        let teardown: Benchmark.BenchmarkTeardownHook = { try await fixture.value?.tearDown() }
        let pairs: [(String, baseline: Call, strata: Call)] = [
            (
                "over AsyncHTTPClient, vs AsyncHTTPClient execute(request:deadline:)",
                { $0.rawFutures($1) }, { Fixture.strata($0.strataOverAsyncHTTPClient, $1) }
            ),
            (
                "over URLSession, vs URLSession with a session delegate",
                { $0.rawURLSession($1) }, { Fixture.strata($0.strataOverURLSession, $1) }
            ),
        ]
        for (name, baseline, strata) in pairs {
            for (shape, total, width) in [
                ("sequential", sequential, 1), ("64 at once", concurrent, Loopback.concurrency),
            ] {
                SideBySide.register(
                    "Loopback GET, callback API \(name), \(shape)", operations: total, iterations: 1_000, seconds: 15,
                    oneSidePerIteration: true,
                    setup: setup, teardown: teardown,
                    baseline: { try await run(total, width, baseline) },
                    strata: { try await run(total, width, strata) }
                )
            }
        }
    }

    /// Runs `call` `total` times, `width` at once: each completion starts the next call.
    private static func run(_ total: Int, _ width: Int, _ call: @escaping Call) async throws {
        guard let fixture = fixture.value else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let driver = Driver(total: total, fixture: fixture, call: call, continuation: continuation)
            for _ in 0..<width { driver.next() }
        }
    }

    private final class Driver: @unchecked Sendable {  // Sendable: `lock` guards the counts.
        private let lock = NSLock()
        private let total: Int
        private let fixture: Fixture
        private let call: Call
        private var continuation: CheckedContinuation<Void, any Error>?
        private var started = 0
        private var finished = 0

        init(total: Int, fixture: Fixture, call: @escaping Call, continuation: CheckedContinuation<Void, any Error>) {
            self.total = total
            self.fixture = fixture
            self.call = call
            self.continuation = continuation
        }

        func next() {
            let go = lock.withLock {
                guard started < total else { return false }
                started += 1
                return true
            }
            guard go else { return }
            call(fixture) { self.finish($0) }
        }

        private func finish(_ result: Result<StackOverhead.Page, any Error>) {
            let (done, failure): (CheckedContinuation<Void, any Error>?, (any Error)?) = lock.withLock {
                finished += 1
                if case .failure(let error) = result {
                    defer { continuation = nil }
                    return (continuation, error)
                }
                guard finished == total else { return (nil, nil) }
                defer { continuation = nil }
                return (continuation, nil)
            }
            if let done {
                if let failure { done.resume(throwing: failure) } else { done.resume() }
                return
            }
            if case .success(let page) = result { blackHole(page) }
            next()
        }
    }
}
