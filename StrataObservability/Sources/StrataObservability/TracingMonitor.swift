import Foundation
import StrataCore
import StrataSession
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An event monitor that opens a client span per request through swift-distributed-tracing, the
/// child of the caller's span, named and attributed as OpenTelemetry's HTTP client conventions say,
/// and ended exactly once, whatever the outcome.
///
/// The span starts as the request does, on the caller's thread, with the caller's
/// `ServiceContext` as its parent; its context is then the current `ServiceContext` wherever the
/// request's code runs — adapters, retriers, the transport, every monitor's hooks — so
/// ``injector`` puts it on the wire as the tracer's instrument writes it (W3C `traceparent` for an
/// OpenTelemetry tracer), on every attempt and every redirect, and a log line's metadata provider
/// sees it.
///
/// | Attribute | Value |
/// | --- | --- |
/// | `http.request.method` | the method; the span is named after it (`HTTP` for one outside RFC 9110's) |
/// | `url.full` | the URL last sent, its secrets redacted (set as the span ends) |
/// | `server.address`, `server.port` | the host and port the caller addressed |
/// | `http.response.status_code` | the final status, if a response came |
/// | `http.request.resend_count` | how many times the request went again: retries and redirects |
/// | `error.type` | for a failure: the status, or the kind of error (the span's status is then `error`) |
///
/// A span the tracer does not record — its sampler dropped it, or the tracer is a no-op — gets no
/// attribute and no status: none is made for it (nor its URL redacted). It is still ended once,
/// and its context still goes on the wire.
///
/// ```swift
/// let tracing = TracingMonitor(tracer: InstrumentationSystem.tracer)
/// let traced = SessionManager(adapters: [tracing.injector], monitors: [tracing])
/// ```
public struct TracingMonitor: EventMonitor {
    /// Opens the spans, and writes their context into requests.
    public let tracer: any Tracer
    /// What `url.full` hides.
    public let redaction: Redaction

    /// Creates a monitor.
    /// - Parameters:
    ///   - tracer: Opens the spans; by default the process's (`InstrumentationSystem.tracer`).
    ///   - redaction: What the URLs in attributes hide. By default ``/StrataCore/Redaction/standard``.
    public init(tracer: any Tracer = InstrumentationSystem.tracer, redaction: Redaction = .standard) {
        self.tracer = tracer
        self.redaction = redaction
    }

    /// The adapter that writes the request's span context into each request it adapts, as
    /// `instrument` writes it: add it to the manager's adapters. It runs for every attempt and
    /// every redirect.
    /// - Parameters:
    ///   - instrument: Writes the context, by default the tracer itself (an OpenTelemetry tracer
    ///     writes W3C `traceparent` and `tracestate`).
    ///   - origins: Only requests to these origins get it — a redirect elsewhere does not; `nil`,
    ///     the default: every origin.
    public func injector(instrument: (any Instrument)? = nil, origins: Set<Origin>? = nil) -> some RequestAdapter {
        TraceContextInjector(instrument: instrument ?? tracer, origins: origins)
    }

    /// ``injector(instrument:origins:)`` for every origin.
    public var injector: some RequestAdapter { injector() }

    /// The hook it traces in besides the request's start: its end (what was sent on the way is in
    /// the end's metrics).
    public func events(for context: RequestContext) -> MonitoredEvents {
        [.finished]
    }

    /// Keeps the caller's `ServiceContext`: the parent of the request's span.
    public func captureContext(into context: inout RequestContext) {
        guard let parent = ServiceContext.current else { return }
        context.rebinding { body in ServiceContext.withValue(parent, operation: body) }
    }

    /// Opens the request's span, and makes its context the request's.
    public func requestStarting(_ request: URLRequest, id: RequestID, context: inout RequestContext) {
        let method = Attributes.method(of: request)
        let span: any Span = tracer.startSpan(
            method == "_OTHER" ? "HTTP" : method, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        // A span the tracer does not record (sampled out, or a no-op tracer's) takes no attribute:
        // none is made for it. All at once: setting one attribute reads and writes all of a span's
        // (`InMemorySpan` copies them, under its lock, twice per attribute).
        if span.isRecording {
            span.updateAttributes { attributes in
                attributes["http.request.method"] = method
                // `url.full` is set as the span ends, from the request last sent, off the caller's path.
                if let url = request.url {
                    attributes["server.address"] = url.host ?? ""
                    attributes["server.port"] = url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443)
                }
            }
        }
        var spanContext = span.context
        spanContext[RequestSpanKey.self] = RequestSpan(span)
        let bound = spanContext
        context.rebinding { body in ServiceContext.withValue(bound, operation: body) }
    }

    /// Ends the span, with the URL last sent, how many times the request went again, the status,
    /// and the error if there was one.
    public func requestFinished(
        _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
    ) {
        guard let span = ServiceContext.current?[RequestSpanKey.self] else { return }
        guard span.span.isRecording else { return span.end() }
        span.span.updateAttributes { attributes in
            if let url = request.url {
                attributes["url.full"] = redaction.redact(url)
            }
            if metrics.exchanges.count > 1 {
                attributes["http.request.resend_count"] = metrics.exchanges.count - 1
            }
            if let status = outcome.head?.statusCode {
                attributes["http.response.status_code"] = status
            }
            if let error = outcome.error {
                attributes["error.type"] = Attributes.errorType(error)
            }
        }
        if outcome.error != nil {
            span.span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }
}

/// A request's span, kept in its context; ended once.
final class RequestSpan: @unchecked Sendable {  // Sendable: `lock` guards `ended`.
    let span: any Span
    private let lock = NSLock()
    private var ended = false

    init(_ span: any Span) {
        self.span = span
    }

    /// Ends the span, unless it has ended.
    func end() {
        let ends = lock.locked {
            defer { ended = true }
            return !ended
        }
        if ends {
            span.end()
        }
    }
}

/// The key of a request's span in its `ServiceContext`.
enum RequestSpanKey: ServiceContextKey {
    typealias Value = RequestSpan
}

/// Writes the current `ServiceContext` into each request, with `instrument`'s injector.
///
/// The fields are gathered first and written into the request at once: on Linux each
/// `URLRequest.setValue(_:forHTTPHeaderField:)` copies the request's fields and capitalizes the
/// name, a few microseconds a field. A field the instrument writes that breaks HTTP's grammar is
/// left out, as FoundationNetworking's `setValue` leaves it out: tracing never fails a request.
struct TraceContextInjector: RequestAdapter {
    let instrument: any Instrument
    let origins: Set<Origin>?

    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        // FoundationNetworking traps on changing a copy of a request without a URL.
        guard request.url != nil else { return completion(.failure(RequestValidationError.missingURL)) }
        guard let context = ServiceContext.current,
            origins.map({ origins in origins.contains { $0.contains(request.url) } }) ?? true
        else { return completion(.success(request)) }
        var fields = HTTPHeaders()
        instrument.inject(context, into: &fields, using: HeaderFieldInjector())
        guard !fields.isEmpty else { return completion(.success(request)) }
        var request = request
        // The instrument's field replaces one the request has under that name, in any case.
        request.setHeaderFields(fields.lazy.map { ($0.name, $0.value) })
        completion(.success(request))
    }
}

/// Gathers the fields an instrument writes, each name once, leaving out those HTTP would refuse.
struct HeaderFieldInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout HTTPHeaders) {
        let field = HTTPHeader(name: key, value: value)
        guard (try? field.validate()) != nil else { return }
        fields.update(name: key, value: value)
    }
}
