import Foundation
import InMemoryTracing
import Strata
import StrataObservability
import StrataTesting
import Testing
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct TracingMonitorTests {
    private let stub = URLProtocolStub { request in
        switch request.url?.path {
        case "/busy": .response(statusCode: 503, headers: ["Retry-After": "0"])
        case "/away": .response(statusCode: 302, headers: ["Location": "/landing"])
        case "/slow": .response(statusCode: 200, delay: 0.05)
        case "/garbled": .response(statusCode: 200, body: Data("<html>".utf8))
        default: .response(statusCode: 200, body: Data("{}".utf8))
        }
    }

    private func service(_ tracer: any Tracer, origins: Set<Origin>? = nil) -> DefaultDataTransferService {
        let tracing = TracingMonitor(tracer: tracer)
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(),
            adapters: [tracing.injector(origins: origins)],
            retriers: [RetryPolicy(maximumAttempts: 2, initialDelay: 0, jitter: 0)],
            monitors: [tracing])
        return DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: stub.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
    }

    /// Waits until `tracer` has `count` finished spans.
    private func finished(_ tracer: InMemoryTracer, count: Int) async throws -> [FinishedInMemorySpan] {
        for _ in 0..<400 where tracer.finishedSpans.count < count {
            try await Task.sleep(for: .milliseconds(5))
        }
        return tracer.finishedSpans
    }

    @Test func aRequestsSpanIsTheChildOfTheCallersAndItsContextGoesOnTheWireOnEveryAttemptAndRedirect() async throws {
        let tracer = InMemoryTracer()
        let service = service(tracer)
        let parent = tracer.startSpan("caller", context: .topLevel)
        // A redirect, then a 503, a retry, the redirect again and the answer.
        try await ServiceContext.withValue(parent.context) {
            try await service.request(Endpoint<Void>(path: "away", queryParameters: ["token": "s3cr3t"]))
        }
        parent.end()
        let spans = try await finished(tracer, count: 2)
        let span = try #require(spans.first { $0.operationName == "GET" })
        #expect(span.kind == .client)
        #expect(span.traceID == parent.traceID)
        #expect(span.parentSpanID == parent.spanID)
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(span.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(span.attributes["url.full"]?.toSpanAttribute() == "\(stub.baseURL.absoluteString)/landing")
        #expect(span.status == nil)
        // The server saw the span's context on both requests, the redirect's included.
        let sent = stub.requests
        #expect(sent.count == 2)
        for request in sent {
            #expect(request.value(forHTTPHeaderField: InMemoryTracer.traceIDKey) == span.traceID)
            #expect(request.value(forHTTPHeaderField: InMemoryTracer.spanIDKey) == span.spanID)
        }
    }

    @Test func aFailureSetsTheErrorTypeAndStatusAndTheRetryCountsAsAResend() async throws {
        let tracer = InMemoryTracer()
        await #expect(throws: DataTransferError.self) {
            try await service(tracer).request(Endpoint<Void>(path: "busy", queryParameters: ["api_key": "s3cr3t"]))
        }
        let span = try #require(try await finished(tracer, count: 1).first)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "503")
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
        #expect(span.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(span.status?.code == .error)
        let url = "\(String(describing: span.attributes["url.full"]?.toSpanAttribute()))"
        #expect(url.contains("api_key=") && !url.contains("s3cr3t"), "\(url)")
        // Without a caller's span, the request's is a root.
        #expect(span.parentSpanID == nil)
    }

    @Test func aBodyThatDoesNotDecodeEndsTheSpanAsAnError() async throws {
        let tracer = InMemoryTracer()
        await #expect(throws: DataTransferError.self) {
            try await service(tracer).request(Endpoint<[String: Int]>(path: "garbled"))
        }
        let span = try #require(try await finished(tracer, count: 1).first)
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "Swift.DecodingError")
        #expect(span.status?.code == .error)
    }

    /// A span the tracer does not record (its sampler dropped it) gets no attribute made for it,
    /// and is still ended once, its context still on the wire.
    @Test func aSpanTheTracerDoesNotRecordGetsNoAttributesAndStillEnds() async throws {
        let tracer = SampledOutTracer()
        let service = service(tracer)
        try await service.request(Endpoint<Void>(path: "items", queryParameters: ["token": "s3cr3t"]))
        await #expect(throws: DataTransferError.self) { try await service.request(Endpoint<Void>(path: "busy")) }
        let spans = try await finished(tracer.recorder, count: 2)
        #expect(spans.count == 2)
        #expect(tracer.attributeWrites == 0)
        #expect(spans.allSatisfy { $0.status == nil })
        let sent = try #require(stub.requests.first)
        #expect(sent.value(forHTTPHeaderField: InMemoryTracer.traceIDKey) == spans.first?.traceID)
    }

    @Test func theContextGoesOnlyToTheOriginsTheInjectorIsBoundTo() async throws {
        let tracer = InMemoryTracer()
        let elsewhere = try #require(Origin(URL(string: "https://elsewhere.strata.test") ?? stub.baseURL))
        try await service(tracer, origins: [elsewhere]).request(Endpoint<Void>(path: "items"))
        _ = try await finished(tracer, count: 1)
        #expect(stub.requests.first?.value(forHTTPHeaderField: InMemoryTracer.traceIDKey) == nil)
    }

    /// The manager's redaction decides what does not follow a redirect to another origin than the
    /// caller addressed: with the instrument's fields among its names, the context stays home.
    @Test(arguments: [false, true]) func theContextFollowsARedirectElsewhereUnlessTheRedactionKeepsItHome(
        keptHome: Bool
    ) async throws {
        let far = URLProtocolStub { _ in .response(statusCode: 200, body: Data("{}".utf8)) }
        let near = URLProtocolStub { _ in .response(statusCode: 302, headers: ["Location": "\(far.baseURL)/landing"]) }
        let tracer = InMemoryTracer()
        let tracing = TracingMonitor(tracer: tracer)
        let manager = SessionManager(
            configuration: near.makeSessionConfiguration(),
            adapters: [tracing.injector],
            redaction: keptHome
                ? Redaction(extraHeaderNames: [InMemoryTracer.traceIDKey, InMemoryTracer.spanIDKey]) : .standard,
            monitors: [tracing])
        let service = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: near.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
        try await service.request(Endpoint<Void>(path: "away"))
        let span = try #require(try await finished(tracer, count: 1).first)
        #expect(near.requests.first?.value(forHTTPHeaderField: InMemoryTracer.traceIDKey) == span.traceID)
        let landed = try #require(far.requests.first)
        #expect(landed.value(forHTTPHeaderField: InMemoryTracer.traceIDKey) == (keptHome ? nil : span.traceID))
        #expect(landed.value(forHTTPHeaderField: InMemoryTracer.spanIDKey) == (keptHome ? nil : span.spanID))
    }

    /// The injector handed a request without a URL directly refuses it rather than write into it:
    /// on Linux, changing a copy of such a request traps inside FoundationNetworking.
    @Test func theInjectorRefusesARequestWithoutAURL() async throws {
        let tracer = InMemoryTracer()
        let injector = TracingMonitor(tracer: tracer).injector
        var request = URLRequest(url: stub.baseURL)
        request.url = nil
        let parent = tracer.startSpan("caller", context: .topLevel)
        let results = CompletionRecorder<Result<URLRequest, any Error>>()
        ServiceContext.withValue(parent.context) {
            injector.adapt(request) { results.record($0) }
        }
        parent.end()
        let result = try #require(await results.first())
        #expect(throws: RequestValidationError.missingURL) { try result.get() }
    }

    /// What an instrument writes replaces a field of the same name in any case, each name once;
    /// a field HTTP would refuse is left out, and the request still goes.
    @Test func theInstrumentsFieldsReplaceTheirNamesAndAFieldHTTPRefusesIsLeftOut() async throws {
        let tracer = InMemoryTracer()
        let tracing = TracingMonitor(tracer: tracer)
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(),
            adapters: [tracing.injector(instrument: CarelessInstrument())], monitors: [tracing])
        let service = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: stub.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
        try await service.request(
            Endpoint<Void>(path: "items", headerParameters: ["TRACEPARENT": "stale", "Accept": "application/json"]))
        let sent = try #require(stub.requests.first)
        let fields = sent.allHTTPHeaderFields ?? [:]
        #expect(fields.keys.filter { $0.lowercased() == "traceparent" }.count == 1, "\(fields)")
        #expect(sent.value(forHTTPHeaderField: "traceparent") == "00-second-01")
        #expect(sent.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(sent.value(forHTTPHeaderField: "X-Smuggled") == nil)
        #expect(fields.values.allSatisfy { !$0.contains("\r") && !$0.contains("\n") }, "\(fields)")
        #expect(sent.value(forHTTPHeaderField: "Bad Name") == nil)
        _ = try await finished(tracer, count: 1)
    }

    /// A URL the pipeline refuses unsent (a port past 65535) still has its span, ended once, as
    /// the error it was; its attributes say what the caller asked for.
    @Test func aRequestRefusedUnsentEndsItsSpanOnceAsAnError() async throws {
        let tracer = InMemoryTracer()
        let tracing = TracingMonitor(tracer: tracer)
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(), adapters: [tracing.injector], monitors: [tracing])
        let url = try #require(URL(string: "http://127.0.0.1:99999/items?token=s3cr3t"))
        let recorder = CompletionRecorder<Bool>()
        manager.request(URLRequest(url: url)) { _, _, error in recorder.record(error != nil) }
        #expect(await recorder.first() == true)
        let spans = try await finished(tracer, count: 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(tracer.finishedSpans.count == 1)
        let span = try #require(spans.first)
        #expect(span.status?.code == .error)
        #expect(span.attributes["server.port"]?.toSpanAttribute() == 99999)
        let full = "\(String(describing: span.attributes["url.full"]?.toSpanAttribute()))"
        #expect(!full.contains("s3cr3t"), "\(full)")
    }

    @Test func everySpanEndsExactlyOnceUnderAStormOfCancellations() async throws {
        let tracer = InMemoryTracer()
        let service = service(tracer)
        let total = 200
        var generator = SeededGenerator(seed: 33)
        for _ in 0..<total {
            let call = service.request(with: Endpoint<Void>(path: "slow")) { _ in }
            let delay = Double.random(in: 0...0.06, using: &generator)
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { call.cancel() }
        }
        let spans = try await finished(tracer, count: total)
        try await Task.sleep(for: .milliseconds(200))
        #expect(spans.count == total)
        #expect(tracer.finishedSpans.count == total)
        #expect(tracer.activeSpans.isEmpty)
        #expect(Set(spans.map(\.spanID)).count == total)
    }
}

/// Writes a field twice, one whose value would smuggle in another field, and one whose name is
/// not a token.
private struct CarelessInstrument: Instrument {
    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        injector.inject("00-first-01", forKey: "traceparent", into: &carrier)
        injector.inject("00-second-01", forKey: "Traceparent", into: &carrier)
        injector.inject("a\r\nX-Smuggled: 1", forKey: "tracestate", into: &carrier)
        injector.inject("b", forKey: "Bad Name", into: &carrier)
    }
}

/// A tracer whose sampler drops every span: each is made and ended by `recorder`, which also
/// writes the context, but none records anything; attribute writes are counted.
private final class SampledOutTracer: Tracer, @unchecked Sendable {  // Sendable: `lock` guards `writes`.
    let recorder = InMemoryTracer()
    private let lock = NSLock()
    private var writes = 0

    var attributeWrites: Int { lock.withLock { writes } }

    fileprivate func wrote() {
        lock.withLock { writes += 1 }
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> SampledOutSpan {
        SampledOutSpan(
            recorded: recorder.startSpan(operationName, context: context(), ofKind: kind, at: instant()),
            tracer: self)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        recorder.inject(context, into: &carrier, using: injector)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        recorder.extract(carrier, into: &context, using: extractor)
    }
}

/// A span that is not recorded: what is set on it is dropped (and counted), its end is the
/// recorder's span's.
private struct SampledOutSpan: Span {
    let recorded: InMemorySpan
    let tracer: SampledOutTracer

    var context: ServiceContext { recorded.context }
    var isRecording: Bool { false }
    var operationName: String {
        get { recorded.operationName }
        nonmutating set { tracer.wrote() }
    }
    var attributes: SpanAttributes {
        get { [:] }
        nonmutating set { tracer.wrote() }
    }

    func setStatus(_ status: SpanStatus) { tracer.wrote() }
    func addEvent(_ event: SpanEvent) { tracer.wrote() }
    func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) { tracer.wrote() }
    func addLink(_ link: SpanLink) { tracer.wrote() }
    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) { recorded.end(at: instant()) }
}
