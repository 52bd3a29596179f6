import Foundation
import Logging
import StrataCore
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An event monitor that logs every request through a swift-log `Logger`: the manager's, or the
/// one a request names in its options (`RequestOptions.logger`).
///
/// It logs as swift-log asks of a library: nothing above `debug` for a request that went as
/// planned, `info` only for what the caller is not told otherwise (a retry), nothing above `info`
/// ever. Each line carries the request's identity and outcome as metadata, with the names
/// OpenTelemetry gives them — `http.request.method`, `url.full` (redacted), `http.response.status_code`,
/// `error.type` — and Strata's own `strata.request.id`, `strata.attempt`, `strata.attempts` and
/// `strata.duration`. No credential reaches a line: the URL's query values and user information
/// go through the monitor's ``redaction``, no header is logged, and an error is logged
/// by its type and code only (its description may quote what the server or the caller sent).
///
/// | Event | Level | Message |
/// | --- | --- | --- |
/// | sent, each attempt and redirect | `trace` | `sending request` |
/// | redirect followed | `debug` | `following redirect` |
/// | retry decided | `info` | `retrying request` |
/// | finished | `debug` | `request finished` or `request failed` |
///
/// ```swift
/// let manager = SessionManager(monitors: [LoggingMonitor(logger: logger)])
/// ```
///
/// Lines are written from the manager's event queue, to the request's own logger or else the
/// monitor's, with the values the caller's task had bound when the request started bound again —
/// so a metadata provider that reads a task-local (a trace context) adds it as if the line were
/// written by the caller.
public struct LoggingMonitor: EventMonitor {
    /// The logger of every request that names none.
    public let logger: Logger
    /// What the URLs logged hide.
    public let redaction: Redaction

    /// Creates a monitor.
    /// - Parameters:
    ///   - logger: The logger of every request that names none in its options.
    ///   - redaction: What the URLs logged hide: the query values it names secret. By default
    ///     ``/StrataCore/Redaction/standard``.
    public init(logger: Logger, redaction: Redaction = .standard) {
        self.logger = logger
        self.redaction = redaction
    }

    /// Binds the request's logger — its own, or this monitor's — as `Logger.current` for the
    /// request's adapters, retriers and transport. The monitor's own lines go to the request's
    /// logger if it names one, else to this monitor's: with two monitors on a manager, each
    /// writes to its own, whichever bound `Logger.current` last.
    public func captureContext(into context: inout RequestContext) {
        let own = context[RequestLoggerKey.self]
        context.rebinding { [logger] body in
            withLogger(own ?? logger) { _ in
                // Bound only for a request that names its own: most pay no second task-local.
                guard let own else { return body() }
                RequestLogger.$current.withValue(own) { body() }
            }
        }
    }

    /// The logger of the request whose hook is running: its own, or this monitor's.
    private var requestLogger: Logger { RequestLogger.current ?? logger }

    /// The hooks whose lines the request's logger lets through: none at `notice` and above, the
    /// retry at `info`, the redirects and the end too at `debug`, every attempt too at `trace`.
    public func events(for context: RequestContext) -> MonitoredEvents {
        switch (context[RequestLoggerKey.self] ?? logger).logLevel {
        case .trace: [.sent, .redirected, .retrying, .finished]
        case .debug: [.redirected, .retrying, .finished]
        case .info: [.retrying]
        case .notice, .warning, .error, .critical: []
        }
    }

    /// Logs each request handed to the transport, at `trace`.
    public func requestSent(_ request: URLRequest, id: RequestID, attempt: Int) {
        let logger = requestLogger
        guard logger.logLevel <= .trace else { return }
        var metadata = metadata(for: request, id: id)
        metadata["strata.attempt"] = "\(attempt)"
        logger.trace("sending request", metadata: metadata)
    }

    /// Logs a redirect followed, at `debug`.
    public func requestRedirected(_ response: HTTPURLResponse, to next: URLRequest, id: RequestID) {
        let logger = requestLogger
        guard logger.logLevel <= .debug else { return }
        var metadata = metadata(for: next, id: id)
        metadata["http.response.status_code"] = "\(response.statusCode)"
        logger.debug("following redirect", metadata: metadata)
    }

    /// Logs a retry, at `info`: the one thing the caller is not told of otherwise.
    public func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID) {
        let logger = requestLogger
        guard logger.logLevel <= .info else { return }
        var metadata = metadata(for: failure.request, id: id)
        metadata["strata.attempt"] = "\(failure.attemptCount)"
        metadata["strata.retry.delay"] = "\(delay)"
        metadata["error.type"] = .string(Attributes.errorType(failure.error))
        if let status = failure.response?.statusCode {
            metadata["http.response.status_code"] = "\(status)"
        }
        logger.info("retrying request", metadata: metadata)
    }

    /// Logs the end of a request, at `debug`, success or failure: either way the caller is told.
    public func requestFinished(
        _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
    ) {
        let logger = requestLogger
        guard logger.logLevel <= .debug else { return }
        var metadata = metadata(for: request, id: id)
        metadata["strata.attempts"] = "\(metrics.attempts)"
        metadata["strata.duration"] = "\(metrics.duration)"
        if let status = outcome.head?.statusCode {
            metadata["http.response.status_code"] = "\(status)"
        }
        if outcome.isFromCache {
            metadata["strata.cache"] = "hit"
        }
        if let error = outcome.error {
            metadata["error.type"] = .string(Attributes.errorType(error))
            logger.debug("request failed", metadata: metadata)
        } else {
            logger.debug("request finished", metadata: metadata)
        }
    }

    /// The method as it went (custom ones included), or `_OTHER` for one that is not a token:
    /// such a request is refused unsent, and its line must not carry what could forge another.
    private static func method(of request: URLRequest) -> String {
        let method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        return method.isValid ? method.rawValue : "_OTHER"
    }

    private func metadata(for request: URLRequest, id: RequestID) -> Logger.Metadata {
        [
            "strata.request.id": "\(id.rawValue)",
            "http.request.method": .string(Self.method(of: request)),
            "url.full": .string(request.url.map { redaction.redact($0) } ?? ""),
        ]
    }
}

/// The request's own logger (`RequestOptions.logger`), bound while its hooks run; `nil` when it
/// names none.
enum RequestLogger {
    @TaskLocal static var current: Logger?
}

/// The key of a request's own logger in its ``/StrataCore/RequestContext``.
enum RequestLoggerKey: RequestContextKey {
    typealias Value = Logger
}

extension RequestOptions {
    /// The logger a ``LoggingMonitor`` logs this request to, instead of its own; `nil` for the
    /// monitor's.
    public var logger: Logger? {
        get { context[RequestLoggerKey.self] }
        set { context[RequestLoggerKey.self] = newValue }
    }
}
