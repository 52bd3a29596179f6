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

    typealias Fixture = LoopbackAsyncHTTPClient.Fixture

    /// AsyncHTTPClient's future API, by hand: send, then on the caller's queue check and decode.
    static func rawFutures(_ fixture: Fixture, _ completion: @escaping Completion) {
        let queue = fixture.callerQueue
        fixture.client.execute(request: fixture.request, deadline: .now() + .seconds(60)).whenComplete { result in
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
    static func rawURLSession(_ fixture: Fixture, _ completion: @escaping Completion) {
        let queue = fixture.callerQueue
        fixture.collector.data(for: fixture.urlRequest, in: fixture.delegateSession) { result in
            queue.async { completion(Result { try Loopback.Fixture.decode(try result.get()) }) }
        }
    }

    /// Strata's callback API, completing on the service's serial completion queue.
    static func strata(_ service: DefaultDataTransferService, _ completion: @escaping Completion) {
        service.request(with: Endpoint<StackOverhead.Page>(path: "items")) { result in
            completion(result.mapError { $0 })
        }
    }

    private static let fixture = Shared<Fixture>()

    static func register() {
        let setup: Benchmark.BenchmarkSetupHook = { fixture.value = try await Fixture() }
        let teardown: Benchmark.BenchmarkTeardownHook = { try await fixture.value?.tearDown() }
        let pairs: [(String, baseline: Call, strata: Call)] = [
            (
                "over AsyncHTTPClient, vs AsyncHTTPClient execute(request:deadline:)",
                rawFutures, { strata($0.strata, $1) }
            ),
            (
                "over URLSession, vs URLSession with a session delegate",
                rawURLSession, { strata($0.strataOverURLSession, $1) }
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
