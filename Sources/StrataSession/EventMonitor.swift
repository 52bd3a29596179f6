import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Observes the life of every request through a ``SessionManager``: for logging, metrics, tracing.
///
/// Add monitors to a manager (`SessionManager(monitors: [...])`). Each hook has an empty default,
/// so a monitor implements only what it needs. For one request the hooks come in this order:
/// ``requestCreated(_:id:)``; then for each attempt ``requestAdapted(_:id:attempt:)``,
/// ``requestSent(_:id:attempt:)`` with the request exactly as it goes on the wire (every adapter's
/// headers included), ``responseReceived(_:for:id:timing:)``, and
/// ``requestRedirected(_:to:id:)`` for each redirect followed; ``requestRetrying(_:delay:id:)``
/// before a retry; and ``requestFinished(_:for:id:metrics:)`` exactly once, with the outcome the
/// caller got (a body that failed to decode above the manager included).
///
/// A request the manager's ``HTTPCache`` answers is "sent" to the cache stage, not to the wire: its
/// outcomes say so with ``TransportOutcome/isFromCache``.
///
/// **Queue.** Hooks run on the manager's event queue, one serial queue per manager, never on the
/// transport's delegate queue: a slow monitor delays other events, never a transfer. Because they
/// are delivered asynchronously, ``requestFinished(_:for:id:metrics:)`` may run after the caller's
/// completion; for a body the data-transfer layer decodes it always does, and when nothing
/// else waits on the event queue it runs as that queue's work on the thread that ran the
/// completion, once the completion has returned (no thread is woken for it). A manager without
/// monitors pays nothing for them. Hooks must return: events wait
/// for the monitor before them, with what they carry (bodies included), so a monitor that never
/// returns keeps every later event of its manager in memory.
///
/// **The caller's context.** One hook runs elsewhere: ``captureContext(into:)``, on the thread that
/// starts the request, in the caller's task, before anything else. What monitors keep there — a
/// trace context, a logger, any task-local value — is bound again (``/StrataCore/RequestContext``)
/// around every other hook of that request, and around its adapters, retriers, redirect decisions,
/// reachability gate and transport, so each sees the caller's task-local values as the caller had
/// them. An `EventSource` (`StrataService`) keeps them as it starts, for every connection it makes.
public protocol EventMonitor: Sendable {
    /// A request is starting, on the caller's thread: keep in `context` what the request's code and
    /// this monitor's hooks need of the caller's task (see ``/StrataCore/RequestContext``).
    /// Values the caller put in the request's options are there already.
    func captureContext(into context: inout RequestContext)
    /// A request is starting: called once per request, on the thread that starts it, with what the
    /// monitors kept of the caller's task bound, before its adapters run; ``requestFinished(_:for:id:metrics:)``
    /// follows exactly once. What a monitor adds to `context` here — the context of a span it
    /// opened for the request — is bound, inside what was kept, around the request's code and hooks.
    func requestStarting(_ request: URLRequest, id: RequestID, context: inout RequestContext)
    /// The hooks this monitor wants called for a request that starts with `context` (what the
    /// monitors kept of its caller, after ``requestStarting(_:id:context:)``). Asked once per
    /// request; a hook no monitor wants is not queued at all. By default ``MonitoredEvents/all``.
    ///
    /// A monitor that implements a few hooks names them, and one whose hooks would do nothing for
    /// this request (a logger whose level lets nothing through) names none: it then costs the
    /// request nearly nothing. ``captureContext(into:)`` and ``requestStarting(_:id:context:)``
    /// are always called.
    func events(for context: RequestContext) -> MonitoredEvents
    /// A request was handed to the manager, as the caller made it.
    func requestCreated(_ request: URLRequest, id: RequestID)
    /// The adapters have run for an attempt (or for a redirect's next request).
    func requestAdapted(_ request: URLRequest, id: RequestID, attempt: Int)
    /// The request was handed to the transport as it goes on the wire.
    func requestSent(_ request: URLRequest, id: RequestID, attempt: Int)
    /// The transport reported what came back for `request`: a response, or the error that ended it.
    func responseReceived(_ outcome: TransportOutcome, for request: URLRequest, id: RequestID, timing: AttemptTiming)
    /// The server redirected and the pipeline follows, with `next` (before its adapters run).
    func requestRedirected(_ response: HTTPURLResponse, to next: URLRequest, id: RequestID)
    /// A retrier decided to try again after `delay` seconds.
    func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID)
    /// The request ended with `outcome` (its status validated; a cancelled request has a
    /// `URLError(.cancelled)`); `request` is the last one sent, or the caller's if none was.
    ///
    /// For a request made through a `DefaultDataTransferService`, this comes once that layer has
    /// made the caller's result, and the outcome's error is the one the caller got where it is
    /// not the manager's: a body that did not decode (`DataTransferError.parsing`, also for a
    /// streamed line), or an error the error resolver turned into the app's
    /// (`DataTransferError.resolvedNetworkFailure`). `metrics` still measure the exchange alone.
    func requestFinished(_ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics)
}

extension EventMonitor {
    /// Keeps nothing.
    public func captureContext(into context: inout RequestContext) {}
    /// Adds nothing.
    public func requestStarting(_ request: URLRequest, id: RequestID, context: inout RequestContext) {}
    /// Every hook.
    public func events(for context: RequestContext) -> MonitoredEvents { .all }
    /// Does nothing.
    public func requestCreated(_ request: URLRequest, id: RequestID) {}
    /// Does nothing.
    public func requestAdapted(_ request: URLRequest, id: RequestID, attempt: Int) {}
    /// Does nothing.
    public func requestSent(_ request: URLRequest, id: RequestID, attempt: Int) {}
    /// Does nothing.
    public func responseReceived(
        _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, timing: AttemptTiming
    ) {}
    /// Does nothing.
    public func requestRedirected(_ response: HTTPURLResponse, to next: URLRequest, id: RequestID) {}
    /// Does nothing.
    public func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID) {}
    /// Does nothing.
    public func requestFinished(
        _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
    ) {}
}

/// Hooks of an ``EventMonitor``, as it names those it wants (``EventMonitor/events(for:)``).
public struct MonitoredEvents: OptionSet, Hashable, Sendable {
    /// One bit per hook.
    public let rawValue: UInt8

    /// Makes a set of hooks from its bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// ``EventMonitor/requestCreated(_:id:)``.
    public static let created = MonitoredEvents(rawValue: 1 << 0)
    /// ``EventMonitor/requestAdapted(_:id:attempt:)``.
    public static let adapted = MonitoredEvents(rawValue: 1 << 1)
    /// ``EventMonitor/requestSent(_:id:attempt:)``.
    public static let sent = MonitoredEvents(rawValue: 1 << 2)
    /// ``EventMonitor/responseReceived(_:for:id:timing:)``.
    public static let received = MonitoredEvents(rawValue: 1 << 3)
    /// ``EventMonitor/requestRedirected(_:to:id:)``.
    public static let redirected = MonitoredEvents(rawValue: 1 << 4)
    /// ``EventMonitor/requestRetrying(_:delay:id:)``.
    public static let retrying = MonitoredEvents(rawValue: 1 << 5)
    /// ``EventMonitor/requestFinished(_:for:id:metrics:)``.
    public static let finished = MonitoredEvents(rawValue: 1 << 6)
    /// Every hook.
    public static let all: MonitoredEvents = [.created, .adapted, .sent, .received, .redirected, .retrying, .finished]
}

/// Tells one request's events from another's: unique among a process's requests.
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    /// The number, increasing with each request.
    public let rawValue: UInt64

    /// An identifier with this number (for tests of a monitor; the manager numbers its requests).
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// `#42`.
    public var description: String { "#\(rawValue)" }

    private static let counter = Locked<UInt64>(0)

    static func next() -> RequestID {
        RequestID(
            rawValue: counter.withLock { counter in
                counter += 1
                return counter
            })
    }
}

/// How long one request or redirect took on the transport.
public struct AttemptTiming: Hashable, Sendable {
    /// The attempt, from 1.
    public let attempt: Int
    /// When it was handed to the transport, on the continuous clock.
    public let sent: ContinuousClock.Instant
    /// From being handed to the transport to its outcome.
    public let duration: Duration

    /// Describes an exchange's timing.
    public init(attempt: Int, sent: ContinuousClock.Instant, duration: Duration) {
        self.attempt = attempt
        self.sent = sent
        self.duration = duration
    }
}

/// What a finished request took.
public struct RequestMetrics: Hashable, Sendable {
    /// Every exchange with the transport, in order: one per attempt and per redirect followed.
    public let exchanges: [AttemptTiming]
    /// How many attempts were made (retries included; 0 if none reached the transport).
    public let attempts: Int
    /// From the request's creation to its end, adapters and retry delays included.
    public let duration: Duration

    /// Describes what a request took.
    public init(exchanges: [AttemptTiming], attempts: Int, duration: Duration) {
        self.exchanges = exchanges
        self.attempts = attempts
        self.duration = duration
    }
}

/// A manager's monitors and the queue they run on.
struct EventMonitors: Sendable {
    let monitors: [any EventMonitor]
    /// The event queue, and each event queued on it and not yet run.
    private let events: HandOver?

    init(_ monitors: [any EventMonitor]) {
        self.monitors = monitors
        events = monitors.isEmpty ? nil : HandOver(to: DispatchQueue(label: "Strata.SessionManager.events"))
    }

    /// Whether any monitor listens.
    var isEmpty: Bool { events == nil }

    /// `context`, with what every monitor keeps of the calling task added, once, and the report
    /// of the layer above about the request starting here (``ResponseHandling``), if it makes one.
    func capture(into context: RequestContext) -> RequestContext {
        guard !context.isCaptured, !isEmpty else { return context }
        var context = context
        for monitor in monitors {
            monitor.captureContext(into: &context)
        }
        context.responseHandling = ResponseHandling.claim()
        context.isCaptured = true
        return context
    }

    /// `context` with what every monitor adds for request `id`, which starts now; run inside `context`.
    func starting(_ request: URLRequest, id: RequestID, in context: RequestContext) -> RequestContext {
        var started = context
        context.run {
            for monitor in monitors {
                monitor.requestStarting(request, id: id, context: &started)
            }
        }
        return started
    }

    /// What each monitor wants of a request that starts with `context`, in the monitors' order.
    func interests(in context: RequestContext) -> Interests {
        Interests(each: monitors.map { $0.events(for: context) })
    }

    /// Runs `event` for every monitor that wants `kind`, in order, on the event queue, inside
    /// `context`; nothing is queued if none does. `inPlace`: from a thread that has nothing else
    /// to do (``/StrataCore/HandOver/run(_:)``), the event runs there, as the queue's work, when
    /// nothing else waits on the queue — a thread woken for it would cost the request more than
    /// the hooks do.
    func emit(
        _ kind: MonitoredEvents, to interests: Interests, in context: RequestContext, inPlace: Bool = false,
        _ event: @escaping @Sendable (any EventMonitor) -> Void
    ) {
        guard let events, interests.any.contains(kind) else { return }
        let work: @Sendable () -> Void = { [monitors] in
            context.run {
                for (monitor, wanted) in zip(monitors, interests.each) where wanted.contains(kind) {
                    event(monitor)
                }
            }
        }
        events.begin()
        if inPlace {
            events.run(work)
        } else {
            events.queue(work)
        }
    }

    /// The hooks each monitor wants for one request.
    struct Interests: Sendable {
        /// One per monitor, in the monitors' order.
        let each: [MonitoredEvents]
        /// The hooks some monitor wants.
        let any: MonitoredEvents

        init(each: [MonitoredEvents]) {
            self.each = each
            any = each.reduce([]) { $0.union($1) }
        }
    }
}
