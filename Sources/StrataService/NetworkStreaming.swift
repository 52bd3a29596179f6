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

extension NetworkService {
    /// Sends the request `endpoint` describes and hands each element of its body to `receive` as
    /// it arrives — byte chunks, lines, Server-Sent Events, JSON Lines values, as `decoder` makes
    /// them — then calls `completion` exactly once: with the response (status, headers; an empty
    /// body) when the body ended, or with the error that ended it.
    ///
    /// `receive` and `completion` run on a serial queue of the stream's own, in order; the next
    /// part of the body is read only after `receive` has returned for the elements of the last,
    /// so a slow consumer slows the server down instead of filling memory. A failure before the
    /// response is accepted — an unacceptable status, with its body — is retried as the session
    /// manager's retriers decide; nothing is retried once an element has been handed on.
    ///
    /// ```swift
    /// service.stream(endpoint: Endpoint<Void>(path: "chat"), decoding: .serverSentEvents()) { event in
    ///     print(event.data)
    /// } completion: { result in
    ///     print(result)
    /// }
    /// ```
    @discardableResult
    public func stream<Decoder: StreamDecoder>(
        endpoint: any Requestable,
        decoding decoder: Decoder,
        receive: @escaping @Sendable (Decoder.Element) -> Void,
        completion: @escaping @Sendable (Result<NetworkResponse, NetworkError>) -> Void
    ) -> any NetworkCancellable {
        let consumer = DecodingConsumer(
            decoder, delivery: nil, receive: receive, mapError: { NetworkError($0, response: nil, data: nil) },
            completion: completion)
        consumer.start(stream(endpoint: endpoint, to: consumer))
        return consumer
    }

    /// The elements of the body of the request `endpoint` describes, as `decoder` makes them, as
    /// they arrive. The request is sent when iteration starts; leaving the loop or cancelling the
    /// task cancels it. Each part of the body is read from the network only as the loop asks for
    /// it, and decoded in the loop's task.
    ///
    /// ```swift
    /// for try await line in service.stream(endpoint: Endpoint<Void>(path: "export"), decoding: .lines()) {
    ///     print(line)
    /// }
    /// ```
    public func stream<Decoder: StreamDecoder>(
        endpoint: any Requestable, decoding decoder: Decoder
    ) -> ResponseStream<Decoder.Element, NetworkError> {
        ResponseStream { buffer in
            let decoding = DecodingConsumer(
                decoder, into: buffer, mapError: { NetworkError($0, response: nil, data: nil) })
            decoding.start(stream(endpoint: endpoint, to: decoding))
            return decoding
        }
    }

    /// ``NetworkService/stream(endpoint:to:)``'s default, for a service without a stream of its
    /// own (a test double that only answers whole): the whole response, played once it arrived.
    package func bufferedStream(endpoint: any Requestable, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let call = BufferedStream(to: receiver) { outcome in
            (outcome.error as? NetworkError)
                ?? NetworkError(outcome.error ?? SessionError.invalidResponse, response: nil, data: nil)
        }
        call.start(
            request(endpoint: endpoint) { result in
                switch result {
                case .success(let response):
                    call.arrived(TransportOutcome(head: ResponseHead(response), body: response.body))
                case .failure(let error):
                    call.arrived(TransportOutcome(head: nil, error: error))
                }
            })
        return call
    }
}

extension ResponseHead {
    /// The head of `response`: its URL, status and fields.
    package convenience init(_ response: NetworkResponse) {
        self.init(
            url: response.url ?? URL(fileURLWithPath: "/"), statusCode: response.statusCode, httpVersion: "HTTP/1.1",
            headers: response.headers)
    }
}

/// Passes a session manager's stream on with its end as a ``NetworkError``.
final class NetworkErrorMapping: ResponseReceiver {
    private let receiver: any ResponseReceiver

    init(_ receiver: any ResponseReceiver) {
        self.receiver = receiver
    }

    func receive(_ head: ResponseHead) { receiver.receive(head) }
    func receive(_ part: Data) { receiver.receive(part) }
    func finish(_ error: (any Error)?) {
        receiver.finish(error.map { NetworkError($0, response: nil, data: nil) })
    }
}

/// Decodes a stream's parts into elements and hands them to a caller, a part at a time: the next
/// part is asked for once the elements of the last have been handed on. For callbacks, decoding
/// runs on a serial queue of its own, and elements and the end are handed on there, or on
/// `delivery` when one is given; for an `AsyncSequence`, each part is decoded by the loop's task as
/// it reaches the part (as the async API decodes a whole body in the caller's task), so a part
/// wakes one thread, not two. The end comes exactly once, and no element after it.
package final class DecodingConsumer<Decoder: StreamDecoder, Failure: Error>: ResponseReceiver, NetworkCancellable,
    @unchecked Sendable  // Sendable: `queue`, or the buffer's `lock` (one loop decodes), orders the `var`s.
{
    private var decoder: Decoder
    /// Orders the decoding (and, without a delivery queue, the callbacks) on Strata's lanes.
    private let queue = SerialLane()
    private let delivery: DispatchQueue?
    private let receive: @Sendable (Decoder.Element) -> Void
    /// For an `AsyncSequence`: where elements wait for the loop, which asks for the next part.
    private let buffer: ResponseStreamBuffer<Decoder.Element, Failure>?
    private let mapError: @Sendable (any Error) -> Failure
    private let completion: @Sendable (Result<NetworkResponse, Failure>) -> Void
    private let exchange = ExchangeSlot()
    /// What the request's monitors are told became of the body.
    private let handling = ResponseHandling()
    private let cancelled = Locked(false)
    private var head: ResponseHead?
    private var done = false

    package init(
        _ decoder: Decoder, delivery: DispatchQueue?, receive: @escaping @Sendable (Decoder.Element) -> Void,
        mapError: @escaping @Sendable (any Error) -> Failure,
        completion: @escaping @Sendable (Result<NetworkResponse, Failure>) -> Void
    ) {
        self.decoder = decoder
        self.delivery = delivery
        self.receive = receive
        self.buffer = nil
        self.mapError = mapError
        self.completion = completion
    }

    /// A consumer for an `AsyncSequence`: elements go to `buffer`, and the next part is asked for
    /// once the loop has taken them.
    package init(
        _ decoder: Decoder, into buffer: ResponseStreamBuffer<Decoder.Element, Failure>,
        mapError: @escaping @Sendable (any Error) -> Failure
    ) {
        self.decoder = decoder
        self.delivery = nil
        self.receive = { _ in }
        self.buffer = buffer
        self.mapError = mapError
        self.completion = { buffer.finish($0.map { _ in () }) }
    }

    /// The stream the parts come from, which `exchange` starts; its request's monitors hear of a
    /// body that could not be decoded as the failure it was (``/StrataSession/ResponseHandling``).
    package func start(_ exchange: @autoclosure () -> any ResponseExchange) {
        self.exchange.set(handling.run(exchange))
    }

    package func receive(_ head: ResponseHead) {
        // For a buffer, here: the transport's calls never overlap, and the buffer's lock orders
        // this before the decoding of any part.
        guard buffer == nil else {
            self.head = head
            return exchange.demand()
        }
        queue.async { [self] in
            self.head = head
            exchange.demand()
        }
    }

    package func receive(_ part: Data) {
        if let buffer {
            return buffer.receive(
                decoding: { [self] in
                    let (elements, end) = decoded(part)
                    return (elements, end.map { $0.map { _ in () } })
                },
                whenTaken: { [exchange] in exchange.demand() })
        }
        queue.async { [self] in
            let (elements, end) = decoded(part)
            guard let end else { return deliver(elements) { [exchange] in exchange.demand() } }
            self.end(end, after: elements)
        }
    }

    package func finish(_ error: (any Error)?) {
        if let buffer {
            return buffer.receive(
                decoding: { [self] in
                    let (elements, end) = ended(by: error)
                    return (elements, end.map { $0.map { _ in () } })
                }, whenTaken: nil)
        }
        queue.async { [self] in
            let (elements, end) = ended(by: error)
            if let end { self.end(end, after: elements) }
        }
    }

    /// The elements of `part`, and the end if decoding it failed (the exchange is then cancelled);
    /// nothing once the stream has ended or been cancelled. Called one at a time, in order.
    private func decoded(_ part: Data) -> ([Decoder.Element], Result<NetworkResponse, Failure>?) {
        guard !done, !cancelled.value else { return ([], nil) }
        var elements: [Decoder.Element] = []
        do {
            try decoder.decode(part) { elements.append($0) }
            return (elements, nil)
        } catch {
            let failure = mapError(error)
            handling.handled(failure)
            exchange.cancel()
            done = true
            return (elements, .failure(failure))
        }
    }

    /// The last elements and the end, once the body ended with `error` or completely; nothing if
    /// the stream had already ended. Called after every part, once.
    private func ended(by error: (any Error)?) -> ([Decoder.Element], Result<NetworkResponse, Failure>?) {
        guard !done else { return ([], nil) }
        done = true
        if let error {
            handling.handled(nil)
            return ([], .failure(mapError(error)))
        }
        var elements: [Decoder.Element] = []
        do {
            try decoder.finish { elements.append($0) }
        } catch {
            let failure = mapError(error)
            handling.handled(failure)
            return (elements, .failure(failure))
        }
        handling.handled(nil)
        let response = head.map { NetworkResponse($0, body: Data()) }
        return (elements, response.map { .success($0) } ?? .failure(mapError(SessionError.invalidResponse)))
    }

    /// Hands `elements` on, then runs `next`; on `delivery` when there is one.
    private func deliver(_ elements: [Decoder.Element], then next: @escaping @Sendable () -> Void) {
        if let buffer {
            return buffer.receive(elements, whenTaken: next)
        }
        guard let delivery else {
            for element in elements where !cancelled.value { receive(element) }
            return next()
        }
        delivery.async { [self, elements] in
            for element in elements where !cancelled.value { receive(element) }
            next()
        }
    }

    private func end(_ result: Result<NetworkResponse, Failure>, after elements: [Decoder.Element]) {
        let completion = self.completion
        deliver(elements) { completion(result) }
    }

    package var isCancelled: Bool { cancelled.value }

    /// Cancels the stream: no element is handed on after this returns (on the delivery queue), and
    /// the end is the cancellation, unless the stream had ended.
    package func cancel() {
        cancelled.withLock { $0 = true }
        handling.handled(nil)
        exchange.cancel()
    }
}

/// The elements of a streamed body as an `AsyncSequence`: the request starts when iteration does,
/// each next element is read from the network as the loop asks for it, and leaving the loop or
/// cancelling the task cancels the request.
///
/// The loop's side is inlinable, as SwiftNIO's async sequences are: it is specialized for the
/// element type where the loop is compiled. Unspecialized, every part cost some twenty look-ups of
/// generic metadata, a sixth of the CPU time of a stream of bytes.
public struct ResponseStream<Element: Sendable, Failure: Error>: AsyncSequence, Sendable {
    /// Starts the stream, feeding `consumer`; returns its handle.
    @usableFromInline package typealias Start =
        @Sendable (ResponseStreamBuffer<Element, Failure>) -> any NetworkCancellable
    @usableFromInline let start: Start

    package init(_ start: @escaping Start) {
        self.start = start
    }

    /// An iterator that starts the stream on its first `next()`.
    @inlinable
    public func makeAsyncIterator() -> Iterator {
        Iterator(start: start)
    }

    /// Reads the stream's elements as they arrive.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline let start: Start
        @usableFromInline var buffer: ResponseStreamBuffer<Element, Failure>?
        @usableFromInline var owner: Owner?

        @usableFromInline
        init(start: @escaping Start) {
            self.start = start
        }

        /// The next element, or `nil` when the body ended.
        /// - Throws: The error that ended the stream (cancellation included).
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(Failure) -> Element?
        {
            if buffer == nil {
                let buffer = ResponseStreamBuffer<Element, Failure>()
                self.buffer = buffer
                owner = Owner(start(buffer), buffer)
            }
            guard let buffer, let owner else { return nil }
            return try await buffer.next(cancelling: owner.handle)
        }

        /// `next()` for callers without typed throws.
        @inlinable
        public mutating func next() async throws(Failure) -> Element? {
            try await next(isolation: nil)
        }
    }

    /// Cancels the stream when the last iterator holding it is gone, and lets go of what the
    /// buffer kept for a loop that is no more.
    @usableFromInline
    final class Owner: Sendable {
        @usableFromInline let handle: any NetworkCancellable
        private let buffer: ResponseStreamBuffer<Element, Failure>

        @usableFromInline
        init(_ handle: any NetworkCancellable, _ buffer: ResponseStreamBuffer<Element, Failure>) {
            self.handle = handle
            self.buffer = buffer
        }

        deinit {
            buffer.abandon()
            handle.cancel()
        }
    }
}

/// Where a ``ResponseStream``'s elements wait for the loop: at most those of one part of the body,
/// since the next part is asked for only when these have been taken. A part may come undecoded:
/// the loop's task decodes it when it reaches it.
///
/// The producer's side (``receive(_:whenTaken:)``, ``receive(decoding:whenTaken:)``,
/// ``finish(_:)``) is called by Strata's consumers; the loop's side (``next(cancelling:)``) is
/// inlinable, so that it is specialized where the loop is compiled.
// Sendable: `lock` guards the `var`s.
@usableFromInline
package final class ResponseStreamBuffer<Element: Sendable, Failure: Error>: @unchecked Sendable {  // `lock`
    @usableFromInline let lock = PlainLock.make()
    @usableFromInline var elements: [Element] = []
    @usableFromInline var first = 0
    @usableFromInline var end: Result<Void, Failure>?
    @usableFromInline var waiting: CheckedContinuation<Void, Never>?
    /// Whether the loop is gone: nothing is kept for it any more.
    private var abandoned = false
    /// Parts not decoded yet, in order (a part of the body, then perhaps the end), from
    /// `undecodedFirst` on; a slot is emptied as its part is taken, so that the queue keeps no part
    /// alive that the loop is done with.
    @usableFromInline var undecoded: [Decoding?] = []
    @usableFromInline var undecodedFirst = 0
    /// Called once the loop has taken every element, to ask for more.
    @usableFromInline var whenTaken: (@Sendable () -> Void)?

    /// Decodes a part: its elements, and the end if the part ends the stream.
    @usableFromInline package typealias Decoding = @Sendable () -> (elements: [Element], end: Result<Void, Failure>?)

    @usableFromInline
    package init() {}

    /// An element arrived.
    package func receive(_ element: Element) {
        receive([element], whenTaken: nil)
    }

    /// Elements arrived; `next` runs once the loop has taken them all (at once, if there are none).
    package func receive(_ batch: [Element], whenTaken next: (@Sendable () -> Void)?) {
        lock.lock()
        guard !abandoned else { return lock.unlock() }
        elements.append(contentsOf: batch)
        let runNow = first == elements.count ? next : nil
        if runNow == nil { whenTaken = next }
        let waiting = self.waiting
        self.waiting = nil
        lock.unlock()
        waiting?.resume()
        runNow?()
    }

    /// A part arrived, which `decoding` decodes when the loop reaches it; `next` runs once the loop
    /// has taken its elements.
    package func receive(decoding: @escaping Decoding, whenTaken next: (@Sendable () -> Void)?) {
        lock.lock()
        // A part kept for a loop that is gone would keep its decoder, which holds this, alive.
        guard !abandoned else { return lock.unlock() }
        undecoded.append(decoding)
        if let next { whenTaken = next }
        let waiting = self.waiting
        self.waiting = nil
        lock.unlock()
        waiting?.resume()
    }

    /// The loop is gone: what waits for it is dropped, and what arrives from now on too.
    func abandon() {
        lock.lock()
        abandoned = true
        let dropped = (elements, undecoded, whenTaken)
        (elements, undecoded, whenTaken, first, undecodedFirst) = ([], [], nil, 0, 0)
        lock.unlock()
        withExtendedLifetime(dropped) {}
    }

    /// The stream ended.
    package func finish(_ result: Result<Void, Failure>) {
        lock.lock()
        if end == nil { end = result }
        let waiting = self.waiting
        self.waiting = nil
        lock.unlock()
        waiting?.resume()
    }

    /// What the loop gets now: an element, a part to decode, the end, or nothing yet.
    @usableFromInline
    enum Take {
        case element(Element)
        case decode(Decoding)
        case end(Result<Void, Failure>)
        case wait
    }

    /// The elements and end `decoding` made, in the loop's task: the part's `whenTaken` runs once
    /// they are taken (at once, if there are none).
    @inlinable
    func decoded(_ decoding: Decoding) {
        let (batch, ended) = decoding()
        lock.lock()
        elements.append(contentsOf: batch)
        if let ended, end == nil { end = ended }
        var drained: (@Sendable () -> Void)?
        if first == elements.count {
            drained = whenTaken
            whenTaken = nil
        }
        lock.unlock()
        drained?()
    }

    @inlinable
    func take() -> Take {
        lock.lock()
        if first < elements.count {
            let element = elements[first]
            first += 1
            var drained: (@Sendable () -> Void)?
            if first == elements.count {
                elements.removeAll(keepingCapacity: true)
                first = 0
                drained = whenTaken
                whenTaken = nil
            }
            lock.unlock()
            drained?()
            return .element(element)
        }
        defer { lock.unlock() }
        if undecodedFirst < undecoded.count, let decoding = undecoded[undecodedFirst] {
            undecoded[undecodedFirst] = nil
            undecodedFirst += 1
            if undecodedFirst == undecoded.count {
                undecoded.removeAll(keepingCapacity: true)
                undecodedFirst = 0
            }
            return .decode(decoding)
        }
        if let end { return .end(end) }
        return .wait
    }

    /// Parks `continuation` until an element or the end arrives; resumes it at once if one has.
    @inlinable
    func park(_ continuation: CheckedContinuation<Void, Never>) {
        lock.lock()
        if first < elements.count || undecodedFirst < undecoded.count || end != nil {
            lock.unlock()
            continuation.resume()
        } else {
            waiting = continuation
            lock.unlock()
        }
    }

    /// The next element; cancelling the task cancels `handle`, the stream's.
    @inlinable
    func next(cancelling handle: any NetworkCancellable) async throws(Failure) -> Element? {
        // A task cancelled while it was not waiting here: the stream ends after what has arrived.
        if Task.isCancelled { handle.cancel() }
        while true {
            switch take() {
            case .element(let element):
                return element
            case .decode(let decoding):
                decoded(decoding)
            case .end(let end):
                try end.get()
                return nil
            case .wait:
                await withTaskCancellationHandler {
                    await withCheckedContinuation { park($0) }
                } onCancel: {
                    handle.cancel()
                }
            }
        }
    }
}
