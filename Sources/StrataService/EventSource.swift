import Dispatch
import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A Server-Sent Events stream that reconnects, as the HTML standard's `EventSource` does.
///
/// Each connection is a request like any other — adapters, authentication (a token refreshed
/// between connections is used on the next), redirects, retries before the head — with `Accept:
/// text/event-stream`, `Cache-Control: no-store`, and `Last-Event-ID` once the stream has set an ID
/// (the last one a header can carry: one with a control character is skipped; at first, the
/// endpoint's own `Last-Event-ID`, if it names one, so that an app resumes where an earlier run
/// stopped). When a connection
/// ends — the body ends, or the network fails — the source connects again after the reconnection
/// time: the one it was opened with at first, then what the stream's `retry` field says;
/// connections in a row that bring no event back off, each wait twice the last (see
/// ``minimumBackoff``). It stops for good, with its one completion, when:
///
/// - the server answers `204 No Content` (success: the server is done);
/// - a response has a status that is not acceptable, or a type other than `text/event-stream`
///   (``EventSourceError/notAnEventStream(contentType:)``);
/// - the stream breaks a limit (an event too large), or the request cannot be built;
/// - ``maximumReconnections`` connections in a row end without an event;
/// - it is cancelled (``NetworkError/cancelled``).
///
/// ```swift
/// let source = service.eventSource(endpoint: Endpoint<Void>(path: "feed")) { event in
///     print(event.data)
/// } completion: { result in
///     print("stopped:", result)
/// }
/// // later
/// source.cancel()
/// ```
public final class EventSource: NetworkCancellable, @unchecked Sendable {  // Sendable: `queue` serializes the `var`s.
    /// How long to wait before connecting again until the stream says otherwise: 3 s.
    public static let defaultReconnectionTime: TimeInterval = 3
    /// The least wait doubled once connections in a row bring no event: 0.1 s.
    public static let minimumBackoff: TimeInterval = 0.1
    /// The most that doubling makes the wait, unless the reconnection time is longer: 60 s.
    public static let maximumBackoff: TimeInterval = 60

    private let service: any NetworkService
    private let endpoint: any Requestable
    /// What the caller's task had bound, kept as the source starts: every connection, made from
    /// the source's queue, carries it.
    private let context: RequestContext
    /// Hands a part's events on, and calls its second argument once they are taken: at once for
    /// a callback, when the loop has taken them for an `AsyncSequence`. The next part is read then.
    private let deliver: @Sendable ([ServerSentEvent], @escaping @Sendable () -> Void) -> Void
    private let completion: @Sendable (Result<Void, NetworkError>) -> Void
    private let maximumEventSize: Int
    /// How many connections in a row may end without an event before the source gives up; `nil`
    /// for no limit (the standard's behaviour).
    public let maximumReconnections: Int?
    /// Where the source's state changes and its events go out, one piece at a time, in order: on
    /// Strata's work lanes, so that hundreds of sources take no thread each.
    private let queue = SerialLane()
    /// Where every source waits to reconnect: one queue, whose timers hand the connection to the
    /// source's own queue.
    private static let timers = StrataQueue.make("Strata.EventSource.timers")
    private let cancelled = Locked(false)
    private var reconnectionTime: TimeInterval
    private var lastEventID = ""
    /// The last event ID that can stand in a header, sent as `Last-Event-ID` on reconnection: an
    /// ID with a control character in it (other than a tab), or longer than
    /// ``maximumResumeIDLength``, is reported with its events but not sent, so that a server cannot
    /// end the source by setting one.
    private var resumeID = ""
    /// The longest event ID sent back, in UTF-8 bytes: servers and proxies refuse a request whose
    /// header line passes 8 KiB (nginx, Apache), which would end the source.
    static let maximumResumeIDLength = 4096
    private var connection: Connection?
    /// The source, held for its next connection while it waits to reconnect: the timer holds this
    /// box, which ending the source empties, so that a source cancelled meanwhile is released at
    /// once, not when the wait has passed (a stream's `retry` may ask for a day).
    private var waiting: Locked<EventSource?>?
    /// Whether the connection under way has brought an event.
    private var connectionBroughtEvent = false
    /// How many connections in a row ended without bringing an event.
    private var fruitlessConnections = 0
    private var done = false

    /// Why the source cannot open, if it cannot: a limit out of range (no event fits in
    /// `maximumEventSize` ≤ 0, and fewer than no reconnections mean none). It then ends with it
    /// before a request is sent, rather than fail on the first byte or after the first connection.
    private var refusal: RequestValidationError? {
        if maximumEventSize <= 0 {
            return .invalidOption(name: "maximumEventSize", value: "\(maximumEventSize)")
        }
        if let maximumReconnections, maximumReconnections < 0 {
            return .invalidOption(name: "maximumReconnections", value: "\(maximumReconnections)")
        }
        return nil
    }

    /// Whether `id` can go back to the server as `Last-Event-ID`.
    private static func canResume(from id: String) -> Bool {
        id.utf8.count <= maximumResumeIDLength && HTTPGrammar.isFieldValue(id)
    }

    init(
        service: any NetworkService, endpoint: any Requestable, reconnectionTime: TimeInterval,
        maximumReconnections: Int?, maximumEventSize: Int,
        deliver: @escaping @Sendable ([ServerSentEvent], @escaping @Sendable () -> Void) -> Void,
        completion: @escaping @Sendable (Result<Void, NetworkError>) -> Void
    ) {
        self.service = service
        self.endpoint = endpoint
        self.context = service.captureContext(endpoint.options.context)
        // A time that is not a number would never reconnect (Dispatch waits forever for it) and
        // never double in the backoff.
        self.reconnectionTime = reconnectionTime.isNaN ? Self.defaultReconnectionTime : max(0, reconnectionTime)
        self.maximumReconnections = maximumReconnections
        self.maximumEventSize = maximumEventSize
        // A `Last-Event-ID` of the endpoint's own (an ID the app kept from an earlier run) is
        // where the source resumes from until the stream names another.
        if let kept = endpoint.headerParameters["Last-Event-ID"], Self.canResume(from: kept) {
            (lastEventID, resumeID) = (kept, kept)
        }
        self.deliver = deliver
        self.completion = completion
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.value }

    /// Stops the source: the connection under way is cancelled, none follows, and the completion
    /// runs with ``NetworkError/cancelled`` unless it has run.
    public func cancel() {
        cancelled.withLock { $0 = true }
        queue.async { [self] in
            connection?.exchange.cancel()
            end(.failure(.cancelled))
        }
    }

    func connect() {
        queue.async { [self] in
            waiting = nil
            guard !done else { return }
            guard !cancelled.value else { return end(.failure(.cancelled)) }
            if let refusal { return end(.failure(.invalidRequest(refusal))) }
            let connection = Connection(
                source: self,
                decoder: ServerSentEventDecoder(
                    maximumEventSize: maximumEventSize, maximumLineLength: maximumEventSize, lastEventID: lastEventID))
            self.connection = connection
            connectionBroughtEvent = false
            let request = EventSourceRequest(base: endpoint, lastEventID: resumeID, context: context)
            connection.exchange.set(service.stream(endpoint: request, to: connection))
        }
    }

    // MARK: What a connection reports, on the queue

    fileprivate func opened(_ connection: Connection, _ head: ResponseHead) -> Bool {
        guard self.connection === connection, !done else { return false }
        if head.statusCode == 204 {
            connection.exchange.cancel()
            end(.success(()))
            return false
        }
        guard head.statusCode == 200 else {
            connection.exchange.cancel()
            end(.failure(.unacceptableStatusCode(NetworkResponse(head, body: Data()))))
            return false
        }
        let type = head.headers["Content-Type"]
        guard MIMEType.essence(of: type) == "text/event-stream" else {
            connection.exchange.cancel()
            end(.failure(.underlying(EventSourceError.notAnEventStream(contentType: type))))
            return false
        }
        return true
    }

    /// A connection's part was decoded: its events are handed on, and `next` runs once they are
    /// taken (never, if the connection is over).
    fileprivate func received(
        _ events: [ServerSentEvent], from connection: Connection, state: ServerSentEventDecoder,
        next: @escaping @Sendable () -> Void
    ) {
        guard self.connection === connection, !done else { return }
        lastEventID = state.lastEventID
        if Self.canResume(from: lastEventID) {
            resumeID = lastEventID
        } else if let sendable = events.last(where: { Self.canResume(from: $0.lastEventID) }) {
            resumeID = sendable.lastEventID
        }
        if let retry = state.reconnectionTime {
            reconnectionTime = Double(min(retry, 86_400_000)) / 1000
        }
        if !events.isEmpty { connectionBroughtEvent = true }
        guard !cancelled.value else { return }
        deliver(events, next)
    }

    /// A connection ended: reconnect, unless what ended it ends the source.
    fileprivate func closed(_ connection: Connection, _ error: NetworkError?) {
        guard self.connection === connection, !done else { return }
        self.connection = nil
        if let error {
            switch error {
            case .cancelled:
                return end(.failure(.cancelled))
            case .transport, .timedOut, .notConnected, .stream(.idleTimeout):
                break
            default:
                return end(.failure(error))
            }
        }
        // A connection that brought an event ends no run of fruitless ones: it starts the count again.
        fruitlessConnections = connectionBroughtEvent ? 0 : fruitlessConnections + 1
        if let maximumReconnections, fruitlessConnections > maximumReconnections {
            return end(.failure(error ?? .underlying(EventSourceError.tooManyReconnections(maximumReconnections))))
        }
        let held = Locked<EventSource?>(self)
        waiting = held
        Self.timers.asyncAfter(deadline: .now() + nextWait) {
            held.withLock { source in
                defer { source = nil }
                return source
            }?.connect()
        }
    }

    /// The wait before the next connection: the reconnection time after a connection that brought
    /// an event (or the first); after each further one in a row that brought none, twice the
    /// last, from ``minimumBackoff`` up to ``maximumBackoff`` (or the reconnection time, if
    /// longer) — the backoff the standard allows, so that a server that ends every connection at
    /// once, or sets `retry: 0` and sends nothing, is not flooded with connections.
    private var nextWait: TimeInterval {
        guard fruitlessConnections > 1 else { return reconnectionTime }
        let doubled = max(reconnectionTime, Self.minimumBackoff) * Double(1 << min(fruitlessConnections - 1, 20))
        return min(doubled, max(reconnectionTime, Self.maximumBackoff))
    }

    private func end(_ result: Result<Void, NetworkError>) {
        guard !done else { return }
        done = true
        connection = nil
        waiting?.withLock { $0 = nil }
        waiting = nil
        completion(result)
    }

    /// One connection: decodes its parts on the source's queue and asks for the next once the
    /// events of the last have been handed on.
    // Sendable: the source's queue serializes `decoder`.
    fileprivate final class Connection: ResponseReceiver, @unchecked Sendable {  // `source.queue`
        let exchange = ExchangeSlot()
        /// Held while the connection runs: a source nobody keeps runs until it stops.
        private let source: EventSource
        private var decoder: ServerSentEventDecoder

        init(source: EventSource, decoder: ServerSentEventDecoder) {
            self.source = source
            self.decoder = decoder
        }

        func receive(_ head: ResponseHead) {
            source.queue.async { [self] in
                guard source.opened(self, head) else { return }
                exchange.demand()
            }
        }

        func receive(_ part: Data) {
            source.queue.async { [self] in
                var events: [ServerSentEvent] = []
                do {
                    try decoder.decode(part) { events.append($0) }
                } catch {
                    source.received(events, from: self, state: decoder) {}
                    exchange.cancel()
                    return source.closed(self, NetworkError(error, response: nil, data: nil))
                }
                source.received(events, from: self, state: decoder) { [exchange] in exchange.demand() }
            }
        }

        func finish(_ error: (any Error)?) {
            source.queue.async { [self] in
                source.closed(self, error.map { NetworkError($0, response: nil, data: nil) })
            }
        }
    }
}

/// Why an ``EventSource`` stopped, where no ``NetworkError`` case says it.
public enum EventSourceError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// The response is not an event stream: its `Content-Type`, if it had one.
    case notAnEventStream(contentType: String?)
    /// This many connections in a row ended without an event.
    case tooManyReconnections(Int)

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .notAnEventStream(let type):
            return "The response is not an event stream (Content-Type: \(type ?? "none"))."
        case .tooManyReconnections(let count):
            let times = count == 0 ? "once" : "\(count + 1) times"
            return "The event source connected \(times) in a row without receiving an event."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}

/// An event source's endpoint: the caller's, with the fields an event stream is asked for with.
private struct EventSourceRequest: Requestable {
    let base: any Requestable
    let lastEventID: String
    let context: RequestContext

    var path: String { base.path }
    var isFullPath: Bool { base.isFullPath }
    var method: HTTPMethod { base.method }
    var headerParameters: HTTPHeaders {
        var headers = base.headerParameters
        headers["Accept"] = "text/event-stream"
        headers["Cache-Control"] = "no-store"
        headers["Last-Event-ID"] = lastEventID.isEmpty ? nil : lastEventID
        return headers
    }
    var queryParameters: [String: ParameterValue] { base.queryParameters }
    var queryParametersEncodable: (any Encodable & Sendable)? { base.queryParametersEncodable }
    var queryEncoding: URLEncoding { base.queryEncoding }
    var bodyParameters: [String: ParameterValue] { base.bodyParameters }
    var bodyParametersEncodable: (any Encodable & Sendable)? { base.bodyParametersEncodable }
    var bodyEncoding: any ParameterEncoding { base.bodyEncoding }
    var timeoutInterval: TimeInterval? { base.timeoutInterval }
    var options: RequestOptions {
        var options = base.options
        options.context = context
        return options
    }

    func urlRequest(with configuration: any NetworkConfigurable) throws(RequestGenerationError) -> URLRequest {
        var request = try base.urlRequest(with: configuration)
        // A request of an endpoint's own making may have none; FoundationNetworking traps on
        // changing a copy of such a request.
        guard request.url != nil else { throw .invalidRequest(.missingURL) }
        request.setHeaderFields([
            ("Accept", "text/event-stream"), ("Cache-Control", "no-store"),
            ("Last-Event-ID", lastEventID.isEmpty ? nil : lastEventID),
        ])
        return request
    }
}

extension NetworkService {
    /// Opens an ``EventSource`` on `endpoint`: its events go to `onEvent` as they arrive, one at a
    /// time and in order across reconnections, on a thread of Strata's; `completion` runs once, when
    /// it stops, after the last event.
    /// - Parameters:
    ///   - endpoint: The event stream's endpoint; each connection builds its request anew.
    ///   - reconnectionTime: The wait before connecting again until the stream sets one (`retry`); a
    ///     negative one counts as 0, one that is not a number as ``EventSource/defaultReconnectionTime``.
    ///   - maximumReconnections: How many connections in a row may end without an event; `nil`
    ///     (the default) for no limit, as the standard has none. A negative one ends the source
    ///     before it connects, with ``NetworkError/invalidRequest(_:)``.
    ///   - maximumEventSize: The largest event and the longest line, in bytes; one not positive ends
    ///     the source before it connects, with ``NetworkError/invalidRequest(_:)``.
    ///   - onEvent: Called with each event as it arrives.
    ///   - completion: Called once, when the source stops.
    @discardableResult
    public func eventSource(
        endpoint: any Requestable,
        reconnectionTime: TimeInterval = EventSource.defaultReconnectionTime,
        maximumReconnections: Int? = nil,
        maximumEventSize: Int = ServerSentEventDecoder.defaultMaximumEventSize,
        onEvent: @escaping @Sendable (ServerSentEvent) -> Void,
        completion: @escaping @Sendable (Result<Void, NetworkError>) -> Void
    ) -> EventSource {
        let source = EventSource(
            service: self, endpoint: endpoint, reconnectionTime: reconnectionTime,
            maximumReconnections: maximumReconnections, maximumEventSize: maximumEventSize,
            deliver: { events, next in
                for event in events { onEvent(event) }
                next()
            },
            completion: completion)
        source.connect()
        return source
    }

    /// An ``EventSource`` on `endpoint` as an `AsyncSequence`: it connects when iteration starts,
    /// reconnects as the standard says, and ends when the server answers `204` (or fails); leaving
    /// the loop or cancelling the task stops it. The next part of a stream is read once the loop
    /// has taken the events of the last, so a slow loop holds the server back.
    public func eventSource(
        endpoint: any Requestable,
        reconnectionTime: TimeInterval = EventSource.defaultReconnectionTime,
        maximumReconnections: Int? = nil,
        maximumEventSize: Int = ServerSentEventDecoder.defaultMaximumEventSize
    ) -> ResponseStream<ServerSentEvent, NetworkError> {
        ResponseStream { buffer in
            let source = EventSource(
                service: self, endpoint: endpoint, reconnectionTime: reconnectionTime,
                maximumReconnections: maximumReconnections, maximumEventSize: maximumEventSize,
                deliver: { events, next in buffer.receive(events, whenTaken: next) },
                completion: buffer.finish)
            source.connect()
            return source
        }
    }
}
