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
/// Each metric is made once, the first time a method and host needs it, and kept by the monitor for
/// the next requests, as swift-metrics means metrics to be used; the metrics of 256 methods and
/// hosts are kept, and those of any beyond are made for each of their requests.
///
/// ```swift
/// let manager = SessionManager(monitors: [MetricsMonitor(factory: MetricsSystem.factory)])
/// ```
public struct MetricsMonitor: EventMonitor {
    /// Where the metrics are made.
    public let factory: any MetricsFactory
    /// The metrics of each method and host, made once and kept, and of each request in flight.
    private let instruments: Instruments

    /// Creates a monitor.
    /// - Parameter factory: Where the metrics are made; by default the process's
    ///   (`MetricsSystem.factory`, set by `MetricsSystem.bootstrap`).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        self.instruments = Instruments(factory: factory)
    }

    /// The hooks it counts in besides the request's start: its retries and its end.
    public func events(for context: RequestContext) -> MonitoredEvents {
        [.retrying, .finished]
    }

    /// Counts the request in flight.
    public func requestStarting(_ request: URLRequest, id: RequestID, context: inout RequestContext) {
        instruments.start(request, id: id).active.increment()
    }

    /// Counts the retry.
    public func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID) {
        instruments.retries(id, failure.request).increment()
    }

    /// Counts and times the request by its status class, and its failure by kind; it is no longer
    /// in flight.
    public func requestFinished(
        _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
    ) {
        let target = instruments.finish(id, request)
        target.active.decrement()
        let (requests, duration) = instruments.answered(target, statusClass: outcome.head?.statusCode)
        requests.increment()
        let (seconds, attoseconds) = metrics.duration.components
        duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        if let error = outcome.error {
            instruments.failures(target, kind: Self.failureKind(of: error)).increment()
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

/// The metrics of one method and host, made as first needed.
private final class Target: @unchecked Sendable {  // Sendable: its `Instruments`' lock guards the `var`s.
    let dimensions: [(String, String)]
    let active: Meter
    /// Made at the first retry, so that a backend shows no series of retries that never happened.
    var retries: Counter?
    /// Requests and their duration by status class (`2xx`, `none`, …: a few, the status being three
    /// digits).
    var answered: [String: (Counter, CoreMetrics.Timer)] = [:]
    /// Failures by kind (a few; see `MetricsMonitor.failureKind(of:)`).
    var failures: [String: Counter] = [:]

    init(_ dimensions: [(String, String)], factory: any MetricsFactory) {
        self.dimensions = dimensions
        active = Meter(label: "http.client.active_requests", dimensions: dimensions, factory: factory)
    }
}

/// A monitor's metrics, made once for each method and host and kept, as swift-metrics means them to
/// be: making one asks the backend, which looks its label and dimensions up under a lock of its own.
/// At most ``limit`` methods and hosts are kept; the metrics of others are made for each request.
private final class Instruments: @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
    static let limit = 256

    private struct Key: Hashable {
        let method: String
        let host: String
    }

    private let factory: any MetricsFactory
    private let lock = NSLock()
    private var targets: [Key: Target] = [:]
    /// The target of each request in flight, taken as it started: its end decrements what its start
    /// incremented, wherever redirects took it.
    private var inFlight: [RequestID: Target] = [:]

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// The metrics of `request`'s method and host, which it is counted in until it finishes.
    func start(_ request: URLRequest, id: RequestID) -> Target {
        let target = target(request)
        lock.locked { inFlight[id] = target }
        return target
    }

    /// The retry counter of the method and host request `id` started with, else of `request`'s.
    func retries(_ id: RequestID, _ request: URLRequest) -> Counter {
        let target = lock.locked { inFlight[id] } ?? target(request)
        return kept(
            { target.retries },
            make: { Counter(label: "http.client.retries", dimensions: target.dimensions, factory: factory) },
            keep: { target.retries = $0 })
    }

    /// The metrics request `id` started with, else those of `request`; it is no longer in flight.
    func finish(_ id: RequestID, _ request: URLRequest) -> Target {
        lock.locked { inFlight.removeValue(forKey: id) } ?? target(request)
    }

    /// The request counter and the duration timer of `target` for a response of `statusCode`.
    func answered(_ target: Target, statusClass statusCode: Int?) -> (Counter, CoreMetrics.Timer) {
        let statusClass = statusCode.map { "\($0 / 100)xx" } ?? "none"
        return kept(
            { target.answered[statusClass] },
            make: {
                let dimensions = target.dimensions + [("http.response.status_class", statusClass)]
                return (
                    Counter(label: "http.client.requests", dimensions: dimensions, factory: factory),
                    CoreMetrics.Timer(label: "http.client.request.duration", dimensions: dimensions, factory: factory)
                )
            },
            keep: { target.answered[statusClass] = $0 })
    }

    /// The failure counter of `target` for failures of `kind`.
    func failures(_ target: Target, kind: String) -> Counter {
        kept(
            { target.failures[kind] },
            make: {
                Counter(
                    label: "http.client.failures", dimensions: target.dimensions + [("error.type", kind)],
                    factory: factory)
            },
            keep: { target.failures[kind] = $0 })
    }

    /// The kept metrics of `request`'s method and host; made now, and kept while there is room.
    private func target(_ request: URLRequest) -> Target {
        let key = Key(method: Attributes.method(of: request), host: request.url?.host?.lowercased() ?? "")
        return kept(
            { targets[key] },
            make: { Target([("http.request.method", key.method), ("server.address", key.host)], factory: factory) },
            keep: { target in
                if targets.count < Self.limit { targets[key] = target }
            })
    }

    /// What `find` finds under the lock; else what `make` makes, which `keep` keeps under the lock
    /// unless another thread kept one first, which is then returned instead. `make` runs outside the
    /// lock: the backend's factory takes locks of its own and may do anything, even wait on
    /// another request, whose start needs the lock too.
    private func kept<Made>(_ find: () -> Made?, make: () -> Made, keep: (Made) -> Void) -> Made {
        if let found = lock.locked(find) { return found }
        let made = make()
        return lock.locked {
            if let found = find() { return found }
            keep(made)
            return made
        }
    }
}
