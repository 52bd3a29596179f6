import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request that failed with a response — a status that is not acceptable, or an error after its
/// head — with that response's head and body (in full, or as far as it came): how a stream reports
/// such a failure, since nothing of it was handed on as it came.
public struct FailedResponse: Error, Sendable, CustomStringConvertible {
    /// The response head.
    public let head: ResponseHead
    /// The body received.
    public let body: Data
    /// Why the request failed: ``SessionError/unacceptableStatusCode(_:)``, or the error that
    /// ended the exchange.
    public let error: any Error

    /// Describes a failure with a response.
    public init(head: ResponseHead, body: Data, error: any Error) {
        self.head = head
        self.body = body
        self.error = error
    }

    /// The error's description, with the status.
    public var description: String { "\(error) (status \(head.statusCode), \(body.count) body bytes)" }

    /// What a stream's receiver is told for an `outcome` that failed before its response was handed on.
    package static func ending(_ outcome: TransportOutcome) -> any Error {
        let error = outcome.error ?? SessionError.invalidResponse
        guard let head = outcome.head else { return error }
        return FailedResponse(head: head, body: outcome.body, error: error)
    }
}

/// One streamed request through a ``SessionManager``: the receiver's side of the pipeline.
///
/// Until a response is accepted, the pipeline works as for any request — adapters, redirects,
/// status validation, retries, authentication refresh — and nothing reaches the receiver. The
/// accepted response is then handed on: its head at once, each body part as the receiver asks
/// (``demand()``), and the end once. From then on nothing is retried, and the request's
/// `timeoutInterval` no longer applies; ``/StrataCore/RequestOptions/streamIdleTimeout`` and
/// ``/StrataCore/RequestOptions/streamDeadline`` do.
// Sendable: `lock` guards the `var`s.
final class PipelineStream: ResponseReceiver, ResponseExchange, @unchecked Sendable {  // `lock`
    /// The caller's receiver, which holds this stream: dropped at the end, with the execution.
    private var receiver: (any ResponseReceiver)?
    private let idleTimeout: TimeInterval?
    private let deadline: TimeInterval?
    /// How far the receiver may fall behind a transport that cannot hold the server back.
    let bufferLimit: Int
    private let lock = PlainLock.make()
    private var exchange: (any ResponseExchange)?
    private var pendingDemand = false
    private var ended = false
    private var head: ResponseHead?
    private var idleTimer: (any DispatchSourceTimer)?
    private var deadlineTimer: (any DispatchSourceTimer)?
    /// Advances with every part; the idle timer fires only if none came since it was armed.
    private var parts = 0
    /// The body's bytes received so far: a content-coded body is checked against its coded length.
    private var received: Int64 = 0
    private var partsWhenArmed = 0
    private var execution: RequestExecution?
    private let start = DispatchTime.now()

    init(to receiver: any ResponseReceiver, options: RequestOptions) {
        self.receiver = receiver
        self.idleTimeout = options.streamIdleTimeout
        self.deadline = options.streamDeadline
        self.bufferLimit = options.streamBufferLimit
    }

    // MARK: The pipeline's side

    /// Sets the execution, to cancel and to end, right after it is made.
    func attach(_ execution: RequestExecution) {
        lock.lock()
        self.execution = execution
        lock.unlock()
    }

    private var currentExecution: RequestExecution? {
        lock.lock()
        defer { lock.unlock() }
        return execution
    }

    /// The accepted response's exchange: from now on its parts go to the receiver.
    func handOver(_ exchange: any ResponseExchange) {
        lock.lock()
        self.exchange = exchange
        let demands = pendingDemand
        pendingDemand = false
        lock.unlock()
        if demands { demand() }
    }

    func receive(_ head: ResponseHead) {
        lock.lock()
        self.head = head
        let receiver = ended ? nil : self.receiver
        lock.unlock()
        receiver?.receive(head)
        startDeadline()
    }

    /// Arms the stream's deadline, counted from the request's start, once the head has been passed
    /// on: a deadline that passed while the head was on its way ends the stream after the head, not
    /// before it.
    private func startDeadline() {
        guard let deadline, deadline < Deadlines.longest else { return }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        lock.lock()
        // Made only while the stream is on: a timer that is never activated must not be released.
        guard !ended else { return lock.unlock() }
        let timer = makeTimer { [weak self] in self?.expire(.deadlineExceeded(deadline)) }
        timer.schedule(deadline: .now() + max(0, deadline - elapsed))
        deadlineTimer = timer
        lock.unlock()
        timer.activate()
    }

    func receive(_ part: Data) {
        lock.lock()
        parts += 1
        received += Int64(part.count)
        let bomb = ended ? nil : head?.decompressionBomb(received)
        let receiver = ended || bomb != nil ? nil : self.receiver
        lock.unlock()
        if let bomb { return end(with: bomb) }
        receiver?.receive(part)
    }

    func finish(_ error: (any Error)?) {
        lock.lock()
        let (head, execution) = (self.head, self.execution)
        lock.unlock()
        execution?.finishStream(TransportOutcome(head: head, error: error))
    }

    /// The request is over with `outcome`: the receiver's one end.
    func ended(_ outcome: TransportOutcome) {
        lock.lock()
        guard !ended else { return lock.unlock() }
        ended = true
        let handedOver = exchange != nil
        let timers = (idleTimer, deadlineTimer)
        let receiver = self.receiver
        // Nothing of the request is kept for a caller that keeps this handle.
        (idleTimer, deadlineTimer, self.receiver, execution, exchange) = (nil, nil, nil, nil, nil)
        lock.unlock()
        timers.0?.cancel()
        timers.1?.cancel()
        receiver?.finish(handedOver ? outcome.error : FailedResponse.ending(outcome))
    }

    // MARK: The receiver's side

    func demand() {
        lock.lock()
        guard !ended else { return lock.unlock() }
        guard let exchange else {
            pendingDemand = true
            return lock.unlock()
        }
        if let idleTimeout, !ended, idleTimeout < Deadlines.longest {
            partsWhenArmed = parts
            if idleTimer == nil {
                let timer = makeTimer { [weak self] in self?.expire(.idleTimeout(idleTimeout)) }
                timer.schedule(deadline: .now() + idleTimeout)
                timer.activate()
                idleTimer = timer
            } else {
                idleTimer?.schedule(deadline: .now() + idleTimeout)
            }
        }
        lock.unlock()
        exchange.demand()
    }

    private let cancelled = Locked(false)

    var isCancelled: Bool { cancelled.value }

    func cancel() {
        cancelled.withLock { $0 = true }
        currentExecution?.call.cancel()
    }

    /// A timer on the queue every stream's timers share (a queue each took a thread each as the
    /// timer was set up, moved and cancelled: some hundred threads for as many streams cancelled
    /// together), whose expiry runs on Strata's work lanes.
    private func makeTimer(_ handler: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: Self.timers)
        timer.setEventHandler { StrataQueue.async(ending: true, handler) }
        return timer
    }

    private static let timers = StrataQueue.make("Strata.stream.timers")

    /// A stream deadline passed: the stream ends with `error`, unless it has ended, or (for the
    /// idle timeout) a part came since the timer was armed.
    private func expire(_ error: StreamError) {
        lock.lock()
        let stale: Bool
        if case .idleTimeout = error { stale = ended || parts != partsWhenArmed } else { stale = ended }
        lock.unlock()
        guard !stale else { return }
        end(with: error)
    }

    /// Ends the request with `error`, and the transport's exchange with it.
    private func end(with error: any Error) {
        lock.lock()
        let (exchange, head, execution, ended) = (self.exchange, self.head, self.execution, self.ended)
        lock.unlock()
        guard !ended else { return }
        execution?.finishStream(TransportOutcome(head: head, error: error))
        exchange?.cancel()
    }

    deinit {
        idleTimer?.cancel()
        deadlineTimer?.cancel()
    }
}

extension NetworkSessionManager {
    /// Sends `request` and hands its response to `receiver` as it comes — for a manager that has
    /// no stream of its own, such as a test double: its whole response, played to `receiver` once
    /// it has arrived (a failure with a response as a ``FailedResponse``).
    public func stream(
        _ request: URLRequest, options: RequestOptions, to receiver: any ResponseReceiver
    ) -> any ResponseExchange {
        let call = BufferedStream(to: receiver, failure: FailedResponse.ending)
        call.start(
            self.request(request, options: options) { data, response, error in
                let head = (response as? HTTPURLResponse).map { ResponseHead($0) }
                call.arrived(TransportOutcome(head: head, body: data ?? Data(), error: error))
            })
        return call
    }
}

/// A stream for a layer that has no stream of its own (``NetworkSessionManager/stream(_:options:to:)``'s
/// default, and the network service's): the whole response, once it has arrived, played to the
/// receiver; a failure is its end, as `failure` words it. Cancelling ends the request, or the playback.
package final class BufferedStream: ResponseExchange, @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
    private enum Phase {
        case requesting((any NetworkCancellable)?)
        case playing(ResponsePlayback)
        case done
    }

    /// The caller's receiver, which holds this stream: dropped once handed on or told the end.
    private var receiver: (any ResponseReceiver)?
    private let lock = PlainLock.make()
    private var phase = Phase.requesting(nil)
    private var pendingDemand = false

    private let failure: @Sendable (TransportOutcome) -> any Error

    package init(to receiver: any ResponseReceiver, failure: @escaping @Sendable (TransportOutcome) -> any Error) {
        self.receiver = receiver
        self.failure = failure
    }

    /// The request under way, whose outcome ``arrived(_:)`` takes.
    package func start(_ request: any NetworkCancellable) {
        lock.lock()
        guard case .requesting = phase else {
            lock.unlock()
            return request.cancel()
        }
        phase = .requesting(request)
        lock.unlock()
    }

    /// The request's outcome: played, or its failure told.
    package func arrived(_ outcome: TransportOutcome) {
        lock.lock()
        guard case .requesting = phase, let receiver else { return lock.unlock() }
        self.receiver = nil
        guard outcome.error == nil, outcome.head != nil else {
            phase = .done
            lock.unlock()
            return receiver.finish(failure(outcome))
        }
        let playback = ResponsePlayback.start(outcome, to: receiver)
        phase = .playing(playback)
        let demands = pendingDemand
        lock.unlock()
        if demands { playback.demand() }
    }

    package func demand() {
        lock.lock()
        guard case .playing(let playback) = phase else {
            pendingDemand = true
            return lock.unlock()
        }
        lock.unlock()
        playback.demand()
    }

    package var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        switch phase {
        case .done: return true
        case .playing(let playback): return playback.isCancelled
        case .requesting: return false
        }
    }

    package func cancel() {
        lock.lock()
        let (phase, receiver) = (self.phase, self.receiver)
        if case .requesting = phase { (self.phase, self.receiver) = (.done, nil) }
        lock.unlock()
        switch phase {
        case .requesting(let request):
            request?.cancel()
            receiver?.finish(URLError(.cancelled))
        case .playing(let playback):
            playback.cancel()
        case .done:
            break
        }
    }
}
