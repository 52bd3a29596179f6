import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The order a ``Transport`` reports an exchange in, kept in one place for every transport: what
/// arrives from the network (a head, body parts, the end) is queued here and handed to the
/// ``ResponseReceiver`` — the head at once, then one part or the end per
/// ``ResponseExchange/demand()``, and after a cancellation the end at once — with no two calls to
/// the receiver overlapping, whichever threads push, ask or cancel.
///
/// A transport pushes what arrives (``push(_:)-(ResponseHead)``, ``push(_:)-(Data)``,
/// ``end(_:)``), returns the relay as its exchange, and holds back the network by what
/// ``bufferedBytes`` says, or in the `onTaken` closure given at creation, called each time the
/// receiver takes a part:
///
/// ```swift
/// func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
///     let relay = ResponseRelay(to: receiver, stop: { connection.close() })
///     connection.onHead = { relay.push($0) }
///     connection.onBody = { relay.push($0) }
///     connection.onEnd = { relay.end($0) }
///     return relay
/// }
/// ```
public final class ResponseRelay: ResponseExchange, @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
    private enum Item {
        case head(ResponseHead)
        case part(Data)
        case file(URL, decided: @Sendable (_ taken: Bool) -> Void)
        case end((any Error)?)
    }

    private let lock = PlainLock.make()
    /// What is queued, from `first` on; a slot is emptied as its item is taken, so that a part the
    /// receiver is done with is not kept alive by the parts queued behind it (over AsyncHTTPClient,
    /// a part holds the buffer it was read into).
    private var items: [Item?] = []
    private var first = 0
    private var demanded = false
    private var delivering = false
    private var again = false
    private var headDelivered = false
    /// The end is queued: nothing pushed afterwards counts.
    private var ended = false
    /// The end was delivered.
    private var closed = false
    private var cancelled = false
    private var buffered = 0
    /// The parts queued: each counts `partOverhead` bytes against `bufferLimit` besides its own.
    private var queuedParts = 0
    private let bufferLimit: Int
    private let joinsSmallParts: Bool
    // Dropped once the end is delivered: a receiver usually holds its exchange, and the transport
    // is held by `stop`, so keeping them would keep both alive for as long as anyone holds this.
    private var receiver: (any ResponseReceiver)?
    private var stop: (@Sendable () -> Void)?
    private var onTaken: (@Sendable (_ stillBuffered: Int) -> Void)?

    /// What a queued part costs besides its bytes, as the buffer limit counts: its slot in the
    /// queue and its bookkeeping (a `Data` of a few bytes holds them inline).
    package static let partOverhead = 64

    /// A relay joining small parts joins those under this many bytes, up to ``joinedPartLimit``
    /// bytes; larger ones are handed on as they came, uncopied.
    package static let smallPart = 4_096
    package static let joinedPartLimit = 65_536

    /// A relay to `receiver`; `stop` is called once when the exchange is cancelled before its end,
    /// to stop the network side; `onTaken` after the receiver took a part, with the bytes still
    /// queued, outside any lock.
    ///
    /// A transport that cannot hold the server back gives a `bufferLimit`: once more than that many
    /// bytes are queued (each part counting `partOverhead` more, its slot in the queue, so that a
    /// server sending a byte at a time cannot queue millions of parts), the exchange ends with
    /// ``/StrataCore/StreamError/consumerFellBehind(limit:)`` after the parts queued, and `stop` is
    /// called, so that memory stays bounded whatever the server sends.
    ///
    /// A transport that reads ahead of its consumer and gets the body in whatever pieces the server
    /// wrote it (one-byte chunks, a trickle of tiny writes) passes `joiningSmallParts`: the parts
    /// under 4 KiB queued one behind the other then go on as one, up to 64 KiB, when the receiver
    /// asks for the next — otherwise each would cost the receiver a hand-over, a decoding step and
    /// a demand. Parts queue only while the receiver is behind, so one that keeps up still gets
    /// each part as it came. A test double that plays its parts leaves them apart, as scripted.
    public init(
        to receiver: any ResponseReceiver, bufferLimit: Int? = nil, joiningSmallParts: Bool = false,
        onTaken: (@Sendable (Int) -> Void)? = nil, stop: (@Sendable () -> Void)? = nil
    ) {
        self.receiver = receiver
        self.bufferLimit = bufferLimit ?? .max
        self.joinsSmallParts = joiningSmallParts
        self.onTaken = onTaken
        self.stop = stop
    }

    /// The bytes queued and not yet taken.
    public var bufferedBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return buffered
    }

    /// Whether the exchange is over for the receiver: ended, or cancelled.
    public var isOver: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// The response head arrived.
    public func push(_ head: ResponseHead) {
        enqueue(.head(head))
    }

    /// A body part arrived; an empty one is dropped.
    public func push(_ part: Data) {
        guard !part.isEmpty else { return }
        enqueue(.part(part))
    }

    /// The exchange ended: `nil` when the body is complete.
    public func end(_ error: (any Error)?) {
        enqueue(.end(error))
    }

    /// The whole body is in the file at `url`: offered to the receiver when it asks for the next
    /// part (see ``ResponseReceiver/take(bodyFile:)``). `decided` is told whether it took it; if
    /// not, the transport pushes the file's contents as parts, and then the end.
    /// An exchange that is over (cancelled) does not take it.
    public func offer(bodyFile url: URL, decided: @escaping @Sendable (_ taken: Bool) -> Void) {
        if !enqueue(.file(url, decided: decided)) {
            decided(false)
        }
    }

    /// Queues `item`, unless the exchange is over; returns whether it was queued.
    @discardableResult
    private func enqueue(_ item: Item) -> Bool {
        lock.lock()
        guard !ended else {
            lock.unlock()
            return false
        }
        items.append(item)
        var stop: (@Sendable () -> Void)?
        switch item {
        case .part(let data):
            buffered += data.count
            queuedParts += 1
            // Over the limit, the parts queued stay for the receiver, and the network side stops.
            if buffered + queuedParts * Self.partOverhead > bufferLimit {
                ended = true
                items.append(.end(StreamError.consumerFellBehind(limit: bufferLimit)))
                (stop, self.stop) = (self.stop, nil)
            }
        case .end: ended = true
        case .head, .file: break
        }
        lock.unlock()
        stop?()
        deliver()
        return true
    }

    /// Lets the receiver have the next part, or the end, once it is here.
    public func demand() {
        lock.lock()
        demanded = true
        lock.unlock()
        deliver()
    }

    /// Whether ``cancel()`` was called before the end.
    public var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    /// Ends the exchange with `URLError(.cancelled)` at once, unless the receiver has been told its
    /// end; what is queued is dropped, and the network side stopped.
    public func cancel() {
        lock.lock()
        // Also when the end has arrived but not been asked for: the receiver is told now.
        guard !closed, !cancelled else { return lock.unlock() }
        let networkEnded = ended
        cancelled = true
        ended = true
        // A body file offered and not yet taken is declined, so that the transport removes it.
        let declined = items.compactMap { item -> (@Sendable (Bool) -> Void)? in
            guard case .file(_, let decided)? = item else { return nil }
            return decided
        }
        items.removeAll()
        first = 0
        buffered = 0
        queuedParts = 0
        items.append(.end(URLError(.cancelled)))
        let stop = networkEnded ? nil : self.stop
        self.stop = nil
        lock.unlock()
        for decided in declined { decided(false) }
        stop?()
        deliver()
    }

    /// Hands the receiver whatever it may have now, one call at a time: a thread that finds another
    /// delivering leaves its work to that one.
    private func deliver() {
        lock.lock()
        if delivering {
            again = true
            return lock.unlock()
        }
        delivering = true
        while true {
            guard let item = takeDeliverable(), let receiver else {
                if again {
                    again = false
                    continue
                }
                delivering = false
                return lock.unlock()
            }
            let (onTaken, stillBuffered) = (self.onTaken, buffered)
            if case .end = item {
                (self.receiver, self.stop, self.onTaken) = (nil, nil, nil)
            }
            lock.unlock()
            switch item {
            case .head(let head):
                receiver.receive(head)
            case .part(let part):
                onTaken?(stillBuffered)
                receiver.receive(part)
            case .file(let url, let decided):
                let taken = receiver.take(bodyFile: url)
                if taken {
                    lock.lock()
                    (ended, closed) = (true, true)
                    (self.receiver, self.stop, self.onTaken) = (nil, nil, nil)
                    items.removeAll()
                    first = 0
                    lock.unlock()
                }
                decided(taken)
            case .end(let error):
                receiver.finish(error)
            }
            lock.lock()
        }
    }

    /// The next item the receiver may have, taken off the queue; called with the lock held.
    private func takeDeliverable() -> Item? {
        guard !closed, first < items.count, let item = items[first] else { return nil }
        switch item {
        case .head:
            headDelivered = true
        case .part(let data):
            guard demanded || cancelled else { return nil }
            demanded = false
            buffered -= data.count
            queuedParts -= 1
            if joinsSmallParts, data.count < Self.smallPart, first + 1 < items.count, case .part? = items[first + 1] {
                return .part(joiningQueuedParts(after: data))
            }
        case .file:
            guard demanded else { return nil }
        case .end:
            guard demanded || !headDelivered || cancelled else { return nil }
            closed = true
        }
        items[first] = nil
        first += 1
        compact()
        return item
    }

    /// `part` and the small parts (under ``smallPart`` bytes each) queued right behind it as one,
    /// up to ``joinedPartLimit`` bytes, taken off the queue; called with the lock held, `part`
    /// taken and counted off already.
    private func joiningQueuedParts(after part: Data) -> Data {
        var joined = part
        items[first] = nil
        first += 1
        while first < items.count, case .part(let next)? = items[first], next.count < Self.smallPart,
            joined.count + next.count <= Self.joinedPartLimit
        {
            joined.append(next)
            buffered -= next.count
            queuedParts -= 1
            items[first] = nil
            first += 1
        }
        compact()
        return joined
    }

    /// Drops the slots of the items taken, once all are, or once they are most of the queue.
    private func compact() {
        if first == items.count || closed {
            items.removeAll(keepingCapacity: !closed)
            first = 0
        } else if first > 64, first * 2 > items.count {
            items.removeFirst(first)
            first = 0
        }
    }
}

/// Plays a response from memory to a ``ResponseReceiver`` as a transport would: a test double's
/// answer, or a cache's. Parts are handed over only as they are asked for; pauses are waited out
/// on a queue of the playback's own, as a server that sends slowly.
///
/// ```swift
/// ResponsePlayback.start(
///     head: head, steps: [.part(Data("data: 1\n\n".utf8)), .pause(0.5), .fail(URLError(.networkConnectionLost))],
///     to: receiver)
/// ```
public final class ResponsePlayback: ResponseExchange {
    /// One step of a played response, after its head.
    public enum Step: Sendable {
        /// A body part (an empty one is skipped).
        case part(Data)
        /// A wait before the next step, in seconds.
        case pause(TimeInterval)
        /// The connection fails with `error`: the exchange ends with it, the steps after are not played.
        case fail(any Error)
    }

    private let relay: ResponseRelay
    private let queue = StrataQueue.make("Strata.ResponsePlayback")

    private init(relay: ResponseRelay) {
        self.relay = relay
    }

    /// Plays `head` (none: the exchange fails or ends before a response) and then `steps` to
    /// `receiver`, starting on a queue of its own; the body ends after the last step.
    @discardableResult
    public static func start(
        head: ResponseHead?, pauseBeforeHead: TimeInterval = 0, steps: [Step], to receiver: any ResponseReceiver
    ) -> ResponsePlayback {
        let playback = ResponsePlayback(relay: ResponseRelay(to: receiver))
        playback.queue.asyncAfter(deadline: .now() + max(0, pauseBeforeHead)) {
            [relay = playback.relay, queue = playback.queue] in
            if let head { relay.push(head) }
            Self.play(steps[...], into: relay, on: queue)
        }
        return playback
    }

    /// Plays `outcome` (a response and its whole body, or an error) to `receiver`.
    @discardableResult
    public static func start(_ outcome: TransportOutcome, to receiver: any ResponseReceiver) -> ResponsePlayback {
        var steps: [Step] = [.part(outcome.body)]
        if let error = outcome.error { steps.append(.fail(error)) }
        return start(head: outcome.responseHead, steps: steps, to: receiver)
    }

    private static func play(_ steps: ArraySlice<Step>, into relay: ResponseRelay, on queue: DispatchQueue) {
        var steps = steps
        while let step = steps.popFirst() {
            guard !relay.isOver else { return }
            switch step {
            case .part(let data):
                relay.push(data)
            case .pause(let seconds):
                let rest = steps
                queue.asyncAfter(deadline: .now() + max(0, seconds)) { play(rest, into: relay, on: queue) }
                return
            case .fail(let error):
                return relay.end(error)
            }
        }
        relay.end(nil)
    }

    /// Lets the receiver have the next part, or the end.
    public func demand() { relay.demand() }
    /// Whether ``cancel()`` was called before the end.
    public var isCancelled: Bool { relay.isCancelled }
    /// Ends the playback with `URLError(.cancelled)` at once, unless it had ended.
    public func cancel() { relay.cancel() }
}

/// An exchange that is known only once the transport's `send` returns, while its receiver may be
/// called before: a demand or a cancellation that comes first is passed on when it is set.
package final class ExchangeSlot: ResponseExchange, @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
    private let lock = PlainLock.make()
    private var exchange: (any ResponseExchange)?
    private var pendingDemand = false
    private var cancelled = false

    package init() {}

    /// Sets the exchange, once.
    package func set(_ exchange: any ResponseExchange) {
        lock.lock()
        self.exchange = exchange
        let (demands, cancels) = (pendingDemand, cancelled)
        pendingDemand = false
        lock.unlock()
        if cancels {
            exchange.cancel()
        } else if demands {
            exchange.demand()
        }
    }

    package func demand() {
        lock.lock()
        guard let exchange else {
            pendingDemand = true
            return lock.unlock()
        }
        lock.unlock()
        exchange.demand()
    }

    package var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    package func cancel() {
        lock.lock()
        cancelled = true
        let exchange = self.exchange
        lock.unlock()
        exchange?.cancel()
    }
}

/// The consumer that keeps a whole body in memory: what ``Transport/send(_:maximumBodyLength:completion:)``
/// reports, and what the pipeline uses for every response whose body it neither writes to a file
/// nor hands on as it comes.
package final class BodyCollector: ResponseReceiver, @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
    /// The longest body held in memory by default (4 GiB: see
    /// ``/StrataCore/RequestOptions/defaultMaximumBodyLength``).
    package static let maximumLength = RequestOptions.defaultMaximumBodyLength

    private let lock = PlainLock.make()
    private var head: ResponseHead?
    private var body = Data()
    private var done = false
    private let limit: Int
    private let truncates: Bool
    private let exchange: any ResponseExchange
    private let progress: (@Sendable (Int64, Int64) -> Void)?
    /// The bytes received so far, kept or not.
    private var received: Int64 = 0
    private let completion: @Sendable (TransportOutcome) -> Void

    /// Collects at most `limit` bytes from `exchange`, then calls `completion` once with the
    /// outcome. A longer body fails the outcome with `URLError(.dataLengthExceedsMaximum)` and
    /// ends the exchange; when `truncates`, its first `limit` bytes are kept instead, and the rest
    /// is read and dropped. `progress` is told after each part how many bytes have come and how
    /// many the response announced (`-1`: it did not, or its body is content-coded; see
    /// ``ResponseHead/progressTotal``).
    package init(
        limit: Int = BodyCollector.maximumLength, truncates: Bool = false, from exchange: any ResponseExchange,
        progress: (@Sendable (Int64, Int64) -> Void)? = nil,
        _ completion: @escaping @Sendable (TransportOutcome) -> Void
    ) {
        self.limit = limit
        self.truncates = truncates
        self.exchange = exchange
        self.progress = progress
        self.completion = completion
    }

    package func receive(_ head: ResponseHead) {
        lock.lock()
        self.head = head
        lock.unlock()
        exchange.demand()
    }

    package func receive(_ part: Data) {
        lock.lock()
        guard !done else { return lock.unlock() }
        let room = limit - body.count
        let failure: URLError?
        if part.count > room, !truncates {
            var userInfo: [String: Any] = [
                NSLocalizedDescriptionKey: "the body is longer than the \(limit) bytes that may be held in memory"
            ]
            userInfo[NSURLErrorFailingURLErrorKey] = head?.url
            failure = URLError(.dataLengthExceedsMaximum, userInfo: userInfo)
        } else {
            failure = head?.decompressionBomb(received + Int64(part.count))
        }
        if let failure {
            let head = self.head
            done = true
            lock.unlock()
            exchange.cancel()
            return completion(TransportOutcome(head: head, error: failure))
        }
        if body.isEmpty, part.count <= room {
            body = part
        } else if room > 0 {
            body.append(part.prefix(room))
        }
        received += Int64(part.count)
        let counted = progress.map { ($0, received, head?.progressTotal ?? -1) }
        lock.unlock()
        if let (progress, received, expected) = counted { progress(received, expected) }
        exchange.demand()
    }

    package func finish(_ error: (any Error)?) {
        lock.lock()
        guard !done else { return lock.unlock() }
        done = true
        let (head, body) = (self.head, self.body)
        self.body = Data()
        lock.unlock()
        completion(TransportOutcome(head: head, body: body, error: error))
    }
}
