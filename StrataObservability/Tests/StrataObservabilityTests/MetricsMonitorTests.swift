import CoreMetrics
import Foundation
import MetricsTestKit
import Strata
import StrataObservability
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct MetricsMonitorTests {
    private let stub = URLProtocolStub { request in
        switch request.url?.path {
        case "/busy": .response(statusCode: 503, headers: ["Retry-After": "0"])
        case "/missing": .response(statusCode: 404)
        case "/away": .response(statusCode: 302, headers: ["Location": "https://elsewhere.strata.test/landing"])
        case "/garbled": .response(statusCode: 200, body: Data("<html>".utf8))
        case "/taken": .response(statusCode: 422, body: Data(#"{"code": "taken"}"#.utf8))
        default: .response(statusCode: 200, body: Data("{}".utf8))
        }
    }

    private func service(_ metrics: TestMetrics) -> DefaultDataTransferService {
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(),
            retriers: [RetryPolicy(maximumAttempts: 2, initialDelay: 0, jitter: 0)],
            monitors: [MetricsMonitor(factory: metrics)])
        return DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: stub.baseURL), sessionManager: manager),
            errorResolver: JSONErrorBodyResolver<TakenError>(),
            completionQueue: DispatchQueue(label: "completions"))
    }

    /// Waits until `metrics` has counted `count` requests, for the monitor's queue to catch up.
    private func settle(_ metrics: TestMetrics, count: Int64) async throws {
        for _ in 0..<400 where metrics.counterTotal(label: "http.client.requests") < count {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(20))
    }

    @Test func theTotalsMatchTheRequestsSentWithLowCardinalityDimensions() async throws {
        let metrics = TestMetrics()
        let service = service(metrics)
        let host = stub.host
        for id in 0..<5 {
            try await service.request(Endpoint<Void>(path: "items/\(id)", queryParameters: ["q": .string("\(id)")]))
        }
        await #expect(throws: DataTransferError.self) { try await service.request(Endpoint<Void>(path: "missing")) }
        await #expect(throws: DataTransferError.self) { try await service.request(Endpoint<Void>(path: "busy")) }
        try await service.request(Endpoint<Void>(path: "items", method: HTTPMethod(rawValue: "PURGE")))
        try await settle(metrics, count: 8)

        #expect(metrics.counterTotal(label: "http.client.requests") == 8)
        let ok: [(String, String)] = [
            ("http.request.method", "GET"), ("server.address", host), ("http.response.status_class", "2xx"),
        ]
        #expect(metrics.counterTotal(label: "http.client.requests", dimensions: ok) == 5)
        #expect(try metrics.expectTimer("http.client.request.duration", ok).values.count == 5)
        #expect(
            metrics.counterTotal(
                label: "http.client.requests",
                dimensions: [
                    ("http.request.method", "_OTHER"), ("server.address", host), ("http.response.status_class", "2xx"),
                ]) == 1)
        let get: [(String, String)] = [("http.request.method", "GET"), ("server.address", host)]
        #expect(metrics.counterTotal(label: "http.client.failures", dimensions: get + [("error.type", "status")]) == 2)
        #expect(metrics.counterTotal(label: "http.client.retries") == 1)
        #expect(metrics.counterTotal(label: "http.client.retries", dimensions: get) == 1)
        // No series names a path or a query.
        let series = metrics.counters.map { "\($0.label) \($0.dimensions)" } + metrics.timers.map { "\($0.dimensions)" }
        #expect(!series.contains { $0.contains("items") || $0.contains("q=") }, "\(series)")
        // Every request that started has ended.
        #expect(try metrics.expectMeter("http.client.active_requests", get).lastValue == 0)
    }

    /// What failed above the manager counts as failed: a body that did not decode, and an error
    /// the resolver turned into the app's.
    @Test func aBodyThatDoesNotDecodeAndAResolvedErrorCountAsFailures() async throws {
        let metrics = TestMetrics()
        let service = service(metrics)
        await #expect(throws: DataTransferError.self) {
            try await service.request(Endpoint<[String: Int]>(path: "garbled"))
        }
        await #expect(throws: DataTransferError.self) { try await service.request(Endpoint<Void>(path: "taken")) }
        try await settle(metrics, count: 2)
        let get: [(String, String)] = [("http.request.method", "GET"), ("server.address", stub.host)]
        #expect(
            metrics.counterTotal(label: "http.client.failures", dimensions: get + [("error.type", "decoding")]) == 1)
        #expect(
            metrics.counterTotal(label: "http.client.failures", dimensions: get + [("error.type", "resolved")]) == 1)
        #expect(metrics.counterTotal(label: "http.client.failures") == 2)
    }

    @Test func aRequestInFlightIsCountedUntilItEndsWhereverItWasRedirected() async throws {
        let metrics = TestMetrics()
        let service = service(metrics)
        // The redirect leads to a host no stub answers: the request fails there, but its start and its
        // end are counted under the host the caller addressed.
        await #expect(throws: DataTransferError.self) { try await service.request(Endpoint<Void>(path: "away")) }
        try await settle(metrics, count: 1)
        let addressed: [(String, String)] = [("http.request.method", "GET"), ("server.address", stub.host)]
        let meter = try metrics.expectMeter("http.client.active_requests", addressed)
        #expect(meter.values == [1, 0])
        #expect(
            metrics.counterTotal(label: "http.client.failures", dimensions: addressed + [("error.type", "connection")])
                == 1)
    }

    /// swift-metrics means a metric to be made once and kept: a backend looks each one made up
    /// under a lock of its own. The monitor makes each of a method and host's once, and still
    /// counts right for more hosts than it keeps.
    @Test func metricsAreMadeOnceForEachMethodAndHostAndCountedBeyondTheOnesKept() async throws {
        let metrics = TestMetrics()
        let factory = CountingFactory(metrics)
        let service = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: URL(string: "https://api.strata.test")!),
                sessionManager: SessionManager(transport: Answering(), monitors: [MetricsMonitor(factory: factory)])),
            completionQueue: DispatchQueue(label: "completions"))
        for id in 0..<40 {
            try await service.request(Endpoint<Void>(path: "items/\(id)"))
        }
        try await settle(metrics, count: 40)
        // The meter of GET api.strata.test, and its 2xx counter and timer; no retry counter, as
        // nothing was retried.
        #expect(factory.made == 3)
        #expect(!metrics.counters.contains { $0.label == "http.client.retries" })

        let hosts = 300  // more than a monitor keeps
        for host in 0..<hosts {
            try await service.request(Endpoint<Void>(path: "https://h\(host).strata.test/x", isFullPath: true))
        }
        try await settle(metrics, count: Int64(40 + hosts))
        #expect(metrics.counterTotal(label: "http.client.requests") == Int64(40 + hosts))
        for host in [0, 255, 256, 299] {
            let dimensions: [(String, String)] = [
                ("http.request.method", "GET"), ("server.address", "h\(host).strata.test"),
            ]
            #expect(
                metrics.counterTotal(
                    label: "http.client.requests", dimensions: dimensions + [("http.response.status_class", "2xx")])
                    == 1)
            #expect(try metrics.expectMeter("http.client.active_requests", dimensions).lastValue == 0)
        }
    }

    /// A backend may do anything as it makes a metric — take locks of its own, or wait on another
    /// request: the monitor makes none while it holds its lock, so no other request waits on it.
    @Test func noRequestWaitsWhileABackendMakesAMetric() async throws {
        let manager = Guarded<SessionManager?>(nil)
        let first = Guarded(true)
        let otherStarted = Guarded<Bool?>(nil)
        let factory = CountingFactory(TestMetrics()) {
            let isFirst = first.withLock { isFirst in
                defer { isFirst = false }
                return isFirst
            }
            guard isFirst, let manager = manager.value else { return }
            let started = DispatchSemaphore(value: 0)
            Thread {
                manager.send(URLRequest(url: URL(string: "https://other.strata.test/")!), options: RequestOptions()) {
                    _ in
                }
                started.signal()
            }.start()
            otherStarted.withLock { $0 = started.wait(timeout: .now() + 2) == .success }
        }
        manager.withLock { $0 = SessionManager(transport: Answering(), monitors: [MetricsMonitor(factory: factory)]) }
        let outcome = await withCheckedContinuation { continuation in
            manager.value?.send(
                URLRequest(url: URL(string: "https://api.strata.test/items")!), options: RequestOptions()
            ) {
                continuation.resume(returning: $0)
            }
        }
        #expect(outcome.error == nil)
        #expect(otherStarted.value == true)
    }

    @Test(arguments: [
        (URLError(.timedOut) as any Error, "timeout"), (URLError(.cancelled), "cancelled"),
        (URLError(.networkConnectionLost), "connection"), (URLError(.serverCertificateUntrusted), "tls"),
        (URLError(.dataLengthExceedsMaximum), "too_large"), (URLError(.unknown), "transport"),
        (SessionError.unacceptableStatusCode(500), "status"),
        (SessionError.incompleteBody(expected: 2, received: 1), "bad_response"),
        (RequestValidationError.missingURL, "invalid_request"), (RedirectError.bodyNotReplayable, "redirect"),
        (CocoaError(.fileNoSuchFile), "other"),
    ])
    func aFailureHasOneOfAFewKinds(error: any Error, kind: String) {
        #expect(MetricsMonitor.failureKind(of: error) == kind)
    }
}

/// Answers every request with an empty `200`, at once.
private struct Answering: Transport {
    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let url = attempt.request.url ?? URL(fileURLWithPath: "/")
        let head = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:])
        return ResponsePlayback.start(head: head, steps: [], to: receiver)
    }
}

/// A value behind a lock.
private final class Guarded<Value: Sendable>: @unchecked Sendable {  // Sendable: `lock` guards `stored`.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value { lock.withLock { stored } }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&stored) }
    }
}

/// `TestMetrics`, counting the metrics made through it.
private final class CountingFactory: MetricsFactory, @unchecked Sendable {  // Sendable: `lock` guards `count`.
    private let metrics: TestMetrics
    private let lock = NSLock()
    private var count = 0
    /// Called as each metric is made, before it is.
    private let onMake: @Sendable () -> Void

    init(_ metrics: TestMetrics, onMake: @escaping @Sendable () -> Void = {}) {
        self.metrics = metrics
        self.onMake = onMake
    }

    var made: Int { lock.withLock { count } }

    private func counted<Made>(_ make: () -> Made) -> Made {
        lock.withLock { count += 1 }
        onMake()
        return make()
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        counted { metrics.makeCounter(label: label, dimensions: dimensions) }
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        counted { metrics.makeFloatingPointCounter(label: label, dimensions: dimensions) }
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        counted { metrics.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate) }
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        counted { metrics.makeTimer(label: label, dimensions: dimensions) }
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        counted { metrics.makeMeter(label: label, dimensions: dimensions) }
    }
    func destroyCounter(_ handler: any CounterHandler) { metrics.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        metrics.destroyFloatingPointCounter(handler)
    }
    func destroyRecorder(_ handler: any RecorderHandler) { metrics.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { metrics.destroyTimer(handler) }
    func destroyMeter(_ handler: any MeterHandler) { metrics.destroyMeter(handler) }
}

private struct TakenError: Decodable, Error {
    let code: String
}
