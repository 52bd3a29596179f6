import CoreMetrics
import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import Strata
import StrataObservability
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Strata's observability over the transport of this run, against the loopback server.
@Suite struct ObservabilityTests {
    @Test func theLoggingMonitorLogsEveryStepWithoutACredential() async throws {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        let logger = Logger(label: "strata.integration") { _ in handler }
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let manager = SessionManager.underTest(
            retriers: [RetryPolicy(maximumAttempts: 2, initialDelay: 0, jitter: 0)],
            monitors: [LoggingMonitor(logger: logger)])
        let service = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
        let key = UUID().uuidString
        // A 503 with `Retry-After: 0`, then the answer after a redirect.
        let endpoint = Endpoint<Void>(
            path: "redirect/302",
            headerParameters: ["Authorization": "Bearer s3cr3t-token"],
            queryParameters: [
                "to": .string("/retry-after/503?key=\(key)&failures=1&seconds=0"), "api_key": "s3cr3t-query",
            ])
        try await service.request(endpoint)
        for _ in 0..<400 where !handler.entries.contains(where: { "\($0.message)" == "request finished" }) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let entries = handler.entries
        #expect(
            entries.map { "\($0.level) \($0.message)" } == [
                "trace sending request", "debug following redirect", "trace sending request", "info retrying request",
                "trace sending request", "debug following redirect", "trace sending request", "debug request finished",
            ], "\(TestTransport.current)")
        #expect(entries.last?.metadata["http.response.status_code"] == "200")
        #expect(entries.last?.metadata["strata.attempts"] == "2")
        let written = entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(!written.contains("s3cr3t"), "\(written)")
    }

    @Test func theMetricsMonitorsTotalsMatchTheRequestsSentAtOnce() async throws {
        let metrics = TestMetrics()
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let manager = SessionManager.underTest(monitors: [MetricsMonitor(factory: metrics)])
        let service = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
        // 40 at once: 30 answered 200, of which 5 do not decode as the caller asked; 10 answered 500.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    switch index {
                    case 25..<30: _ = try? await service.request(Endpoint<[Int]>(path: "echo/\(index)"))
                    default:
                        _ = try? await service.request(
                            Endpoint<Void>(path: index < 30 ? "echo/\(index)" : "status/500"))
                    }
                }
            }
            try await group.waitForAll()
        }
        for _ in 0..<400 where metrics.counterTotal(label: "http.client.requests") < 40 {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(50))
        let host = try #require(server.baseURL.host)
        let get: [(String, String)] = [("http.request.method", "GET"), ("server.address", host)]
        #expect(metrics.counterTotal(label: "http.client.requests") == 40)
        #expect(
            metrics.counterTotal(
                label: "http.client.requests", dimensions: get + [("http.response.status_class", "2xx")]) == 30)
        #expect(
            metrics.counterTotal(
                label: "http.client.requests", dimensions: get + [("http.response.status_class", "5xx")]) == 10)
        #expect(metrics.counterTotal(label: "http.client.failures", dimensions: get + [("error.type", "status")]) == 10)
        #expect(
            metrics.counterTotal(label: "http.client.failures", dimensions: get + [("error.type", "decoding")]) == 5)
        #expect(metrics.counterTotal(label: "http.client.failures") == 15)
        #expect(
            try metrics.expectTimer("http.client.request.duration", get + [("http.response.status_class", "2xx")])
                .values.count == 30)
        let meter = try metrics.expectMeter("http.client.active_requests", get)
        #expect(meter.lastValue == 0)
        #expect(meter.values.count == 80)
    }

    @Test func aSpanPerRequestTheChildOfTheCallersWithTraceparentOnTheWireAsTheServerSawIt() async throws {
        // An in-memory tracer whose identifiers have W3C's lengths, and an instrument that writes
        // them as `traceparent`, as an OpenTelemetry tracer would.
        let counter = SpanIDCounter()
        let tracer = InMemoryTracer(
            idGenerator: .init(
                nextTraceID: { String(format: "%032llx", counter.next()) },
                nextSpanID: { String(format: "%016llx", counter.next()) }))
        let tracing = TracingMonitor(tracer: tracer)
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let manager = SessionManager.underTest(
            adapters: [tracing.injector(instrument: TraceparentInstrument())],
            retriers: [RetryPolicy(maximumAttempts: 2, initialDelay: 0, jitter: 0)],
            monitors: [tracing])
        let service = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
        // A 503 with `Retry-After: 0`, then the answer; the server writes down each `traceparent`.
        let seen = CompletionRecorder<String>()
        server.router.add("GET", "/traced") { request in
            seen.record(request.header("traceparent") ?? "-")
            return seen.callCount == 1 ? .response(status: 503, headers: [("Retry-After", "0")]) : .json("{}")
        }
        let parent = tracer.startSpan("caller", context: .topLevel, ofKind: .server)
        try await ServiceContext.withValue(parent.context) {
            try await service.request(Endpoint<Void>(path: "traced"))
        }
        parent.end()
        for _ in 0..<400 where tracer.finishedSpans.count < 2 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let span = try #require(tracer.finishedSpans.first { $0.operationName == "GET" })
        #expect(span.parentSpanID == parent.spanID)
        #expect(span.traceID == parent.traceID)
        #expect(span.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(
            seen.values == Array(repeating: "00-\(span.traceID)-\(span.spanID)-01", count: 2),
            "\(TestTransport.current)")
    }

    /// Requests cancelled at every point — before they are sent, while the server waits, as the
    /// answer comes — each end their span exactly once, and no span is left open.
    @Test func everySpanEndsExactlyOnceUnderAStormOfCancellations() async throws {
        let tracer = InMemoryTracer()
        let tracing = TracingMonitor(tracer: tracer)
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let manager = SessionManager.underTest(adapters: [tracing.injector], monitors: [tracing])
        let service = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
        let total = 120
        let completions = CompletionRecorder<Bool>()
        var generator = SeededGenerator(seed: 33)
        for index in 0..<total {
            let call = service.request(with: Endpoint<Void>(path: "delay/\(index % 4 * 10)")) { result in
                completions.record((try? result.get()) != nil)
            }
            // Every third request is left to finish: the storm hits both sides of the answer.
            let delay = Double.random(in: 0...0.05, using: &generator)
            guard !index.isMultiple(of: 3) else { continue }
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { call.cancel() }
        }
        for _ in 0..<1000 where tracer.finishedSpans.count < total || completions.callCount < total {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(200))
        let spans = tracer.finishedSpans
        #expect(completions.callCount == total)
        #expect(spans.count == total, "\(TestTransport.current)")
        #expect(Set(spans.map(\.spanID)).count == total)
        #expect(tracer.activeSpans.isEmpty)
        let cancelled = spans.filter { $0.attributes["error.type"]?.toSpanAttribute() == "URLError(-999)" }.count
        #expect(cancelled > 0 && cancelled <= total - total / 3, "\(cancelled) of \(total) cancelled")
        #expect(completions.values.filter { $0 }.count >= total / 3)
    }
}

/// Writes an in-memory span's context as W3C `traceparent`.
private struct TraceparentInstrument: Instrument {
    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {}
}

/// Numbers from 1, taken from any thread.
private final class SpanIDCounter: @unchecked Sendable {  // Sendable: `lock` guards `value`.
    private let lock = NSLock()
    private var value: UInt64 = 0

    func next() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
