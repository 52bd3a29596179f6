import CoreMetrics
import Foundation
import StrataCore
import StrataSession
import StrataTransfer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An event monitor that counts and times every request through swift-metrics.
///
/// | Metric | Kind | Dimensions |
/// | --- | --- | --- |
/// | `http.client.requests` | counter, one per request finished | method, status class, host |
/// | `http.client.request.duration` | timer, from start to end, retries and redirects included | method, status class, host |
/// | `http.client.failures` | counter, one per request failed | method, host, `error.type` |
/// | `http.client.retries` | counter, one per retry decided | method, host |
/// | `http.client.active_requests` | meter, up as a request starts and down as it ends | method, host |
///
/// The dimensions keep the number of series small whatever the requests are: `http.request.method`
/// (a method outside RFC 9110's and PATCH is `_OTHER`), `http.response.status_class` (`2xx` …
/// `5xx`, or `none` when no response came), `server.address` (the host the caller addressed,
/// never a path or a query) and `error.type`, one of a few kinds (see ``failureKind(of:)``).
///
/// ```swift
/// let manager = SessionManager(monitors: [MetricsMonitor(factory: MetricsSystem.factory)])
/// ```
public struct MetricsMonitor: EventMonitor {
    /// Where the metrics are made.
    public let factory: any MetricsFactory
    /// The dimensions of each request in flight, taken as it started: its end decrements what its
    /// start incremented, wherever redirects took it.
    private let started = InFlight()

    /// Creates a monitor.
    /// - Parameter factory: Where the metrics are made; by default the process's
    ///   (`MetricsSystem.factory`, set by `MetricsSystem.bootstrap`).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
    }

    /// The hooks it counts in besides the request's start: its retries and its end.
    public func events(for context: RequestContext) -> MonitoredEvents {
        [.retrying, .finished]
    }

    /// Counts the request in flight, as it starts.
    public func requestStarting(_ request: URLRequest, id: RequestID, context: inout RequestContext) {
        let dimensions = Dimensions(request)
        started.insert(dimensions, for: id)
        Meter(label: "http.client.active_requests", dimensions: dimensions.target, factory: factory).increment()
    }

    /// Counts a retry.
    public func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID) {
        let dimensions = started.dimensions(of: id) ?? Dimensions(failure.request)
        Counter(label: "http.client.retries", dimensions: dimensions.target, factory: factory).increment()
    }

    /// Counts and times the request, and its failure if it failed.
    public func requestFinished(
        _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
    ) {
        let dimensions = started.remove(id) ?? Dimensions(request)
        Meter(label: "http.client.active_requests", dimensions: dimensions.target, factory: factory).decrement()
        let statusClass = outcome.head.map { "\($0.statusCode / 100)xx" } ?? "none"
        let answered = dimensions.target + [("http.response.status_class", statusClass)]
        Counter(label: "http.client.requests", dimensions: answered, factory: factory).increment()
        let (seconds, attoseconds) = metrics.duration.components
        CoreMetrics.Timer(label: "http.client.request.duration", dimensions: answered, factory: factory)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        if let error = outcome.error {
            Counter(
                label: "http.client.failures",
                dimensions: dimensions.target + [("error.type", Self.failureKind(of: error))],
                factory: factory
            ).increment()
        }
    }

    /// The kind of a failure, one of a few: `status` (an unacceptable status), `timeout`,
    /// `cancelled`, `connection` (no connection, or one lost), `tls`, `bad_response`, `too_large`,
    /// `transport` (any other `URLError`), `invalid_request`, `redirect`, `stream`, `decoding`,
    /// `resolved`, `other`.
    ///
    /// What a layer above the manager failed is `decoding` (a body that did not decode) or
    /// `resolved` (an error the error resolver turned into one of the app's); the layers' wrappers
    /// of the manager's own failures are looked through.
    public static func failureKind(of error: any Error) -> String {
        switch Attributes.cause(of: error) {
        case DataTransferError.parsing, DataTransferError.noResponse: return "decoding"
        case DataTransferError.resolvedNetworkFailure: return "resolved"
        case SessionError.unacceptableStatusCode: return "status"
        case is SessionError: return "bad_response"
        case is RequestValidationError: return "invalid_request"
        case is RedirectError: return "redirect"
        case is ServerTrustError: return "tls"
        case is StreamError: return "stream"
        case let error as URLError:
            switch error.code {
            case .timedOut: return "timeout"
            case .cancelled: return "cancelled"
            case .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet, .cannotFindHost,
                .dnsLookupFailed:
                return "connection"
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
                return "tls"
            case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData:
                return "bad_response"
            case .dataLengthExceedsMaximum: return "too_large"
            default: return "transport"
            }
        default: return "other"
        }
    }
}

/// A request's dimensions, as it started.
private struct Dimensions: Sendable {
    let target: [(String, String)]

    init(_ request: URLRequest) {
        target = [
            ("http.request.method", Attributes.method(of: request)),
            ("server.address", request.url?.host?.lowercased() ?? ""),
        ]
    }
}

/// The dimensions of the requests in flight, by request; a monitor may serve several managers, so
/// its hooks may run on several queues at once.
private final class InFlight: @unchecked Sendable {  // Sendable: `lock` guards `requests`.
    private let lock = NSLock()
    private var requests: [RequestID: Dimensions] = [:]

    func insert(_ dimensions: Dimensions, for id: RequestID) {
        lock.locked { requests[id] = dimensions }
    }

    func dimensions(of id: RequestID) -> Dimensions? {
        lock.locked { requests[id] }
    }

    func remove(_ id: RequestID) -> Dimensions? {
        lock.locked { requests.removeValue(forKey: id) }
    }
}
