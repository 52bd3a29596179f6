import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cache stage of a ``SessionManager``'s pipeline: between the pipeline and its transport, it
/// answers fresh requests from the ``HTTPCache``, makes stale ones conditional, turns a `304` into
/// the stored response, and stores what may be stored. Every exchange — each redirect's too —
/// passes through it, so redirects, retries and validation above work on what it answers.
///
/// A response passes through as it arrives, part by part; a copy of its body is kept on the way
/// only when it may be stored, and stored when the body is complete.
///
/// The cache keys each exchange on the request as it goes on the wire, with the cookies the
/// transport adds (``Transport/cookieJar``): a response that varies by `Cookie` answers only a
/// request that would carry the same cookies — after a login or a logout, not the page stored
/// for the user before.
struct CachingTransport: Transport {
    let cache: HTTPCache
    let transport: any Transport

    func validate(_ url: URL) throws(UnsupportedURLReason) {
        try transport.validate(url)
    }

    var cookieJar: CookieJar? { transport.cookieJar }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        // What is sent stays as it is: the transport adds its cookies itself.
        var request = attempt.request
        if let cookies = transport.cookieJar?.field(for: request) {
            request.setHeaderField("Cookie", cookies)
        }
        let lookup = cache.lookup(request)
        switch lookup {
        case .fresh(let entry, let age):
            let head = entry.response(for: request.url, age: age).map { ResponseHead($0, isFromCache: true) }
            return ResponsePlayback.start(head: head, steps: [.part(entry.body)], to: receiver)
        case .unsatisfiable:
            let head = ResponseHead(
                url: request.url ?? URL(fileURLWithPath: "/"), statusCode: 504, httpVersion: "HTTP/1.1",
                headers: ["Content-Length": "0"], isFromCache: true)
            return ResponsePlayback.start(head: head, steps: [], to: receiver)
        case .revalidate(let entry):
            var sent = attempt
            sent.request = entry.conditional(attempt.request)
            return CachedExchange.Pass(
                cache: cache, transport: transport, attempt: attempt, keyedOn: request, receiver: receiver,
                stores: true
            ).start(sent, revalidating: entry)
        case .miss, .bypass:
            return CachedExchange.Pass(
                cache: cache, transport: transport, attempt: attempt, keyedOn: request, receiver: receiver,
                stores: lookup.stores
            ).start(attempt, revalidating: nil)
        }
    }
}

extension CachedExchange {
    /// One request's exchanges through the cache: each response passes to the pipeline's receiver,
    /// a copy of a storable body kept on the way; a `304` that refreshes the stored response is
    /// answered with it, and one that cannot (§4.3.4) sends the request again, unconditional.
    final class Pass: ResponseExchange, @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
        private let cache: HTTPCache
        private let transport: any Transport
        private let attempt: TransportAttempt
        /// The attempt's request as the cache keys it: with the transport's cookies.
        private let keyed: URLRequest
        /// Dropped once told the end: it holds this exchange.
        private var receiver: (any ResponseReceiver)?
        private let stores: Bool
        private let lock = PlainLock.make()
        /// What the pipeline's demands and cancellation go to: the exchange with the transport, or a
        /// playback of the stored response.
        private var current: (any ResponseExchange)?
        private var pendingDemand = false
        private var cancelled = false
        /// Advances with each exchange, so that a superseded one's calls are ignored.
        private var leg = 0
        private var revalidating: CachedExchange?
        private var requestTime = Date()
        private var head: ResponseHead?
        /// The body kept for storing, while it may be stored.
        private var kept: Data?

        init(
            cache: HTTPCache, transport: any Transport, attempt: TransportAttempt, keyedOn keyed: URLRequest,
            receiver: any ResponseReceiver, stores: Bool
        ) {
            self.cache = cache
            self.transport = transport
            self.attempt = attempt
            self.keyed = keyed
            self.receiver = receiver
            self.stores = stores
        }

        /// Sends `sent`, a conditional request when it revalidates `stored`.
        func start(_ sent: TransportAttempt, revalidating stored: CachedExchange?) -> Self {
            lock.lock()
            leg += 1
            let leg = self.leg
            revalidating = stored
            current = nil
            requestTime = cache.now()
            (head, kept) = (nil, nil)
            lock.unlock()
            let exchange = transport.send(sent, to: Leg(self, leg))
            use(exchange, leg: leg)
            return self
        }

        private func use(_ exchange: any ResponseExchange, leg: Int) {
            lock.lock()
            guard self.leg == leg, !cancelled else {
                lock.unlock()
                return exchange.cancel()
            }
            current = exchange
            let demands = pendingDemand
            pendingDemand = false
            lock.unlock()
            if demands { exchange.demand() }
        }

        func demand() {
            lock.lock()
            guard let current else {
                pendingDemand = true
                return lock.unlock()
            }
            lock.unlock()
            current.demand()
        }

        var isCancelled: Bool {
            lock.lock()
            defer { lock.unlock() }
            return cancelled
        }

        func cancel() {
            lock.lock()
            cancelled = true
            let current = self.current
            lock.unlock()
            current?.cancel()
        }

        fileprivate func received(_ head: ResponseHead, leg: Int) {
            let response = head.httpURLResponse
            lock.lock()
            guard self.leg == leg else { return lock.unlock() }
            let (stored, requestTime, exchange, receiver) = (revalidating, self.requestTime, current, self.receiver)
            self.head = head
            if head.statusCode == 304, stored != nil {
                // Whatever else comes of this exchange is not the pipeline's; its demands wait for
                // what answers instead.
                self.leg += 1
                current = nil
            }
            lock.unlock()
            if head.statusCode == 304, let stored, let response {
                // A 304 has no body; whatever is left of its exchange is nobody's.
                exchange?.cancel()
                guard
                    let refreshed = cache.refresh(
                        stored, with: response, requestTime: requestTime, responseTime: cache.now())
                else {
                    _ = start(attempt, revalidating: nil)
                    return
                }
                guard let receiver else { return }
                lock.lock()
                self.receiver = nil
                lock.unlock()
                let playback = ResponsePlayback.start(
                    head: refreshed.response(for: attempt.request.url).map { ResponseHead($0) },
                    steps: [.part(refreshed.body)], to: receiver)
                return use(playback, leg: leg + 1)
            }
            if stores, let response {
                if attempt.request.httpMethod ?? "GET" != "GET" {
                    // §4.4: an answer to an unsafe method invalidates; the cache decides, from the head.
                    cache.store(
                        response, body: Data(), for: keyed, requestTime: requestTime, responseTime: cache.now())
                } else if cache.keepsBody(of: response, for: keyed) {
                    lock.lock()
                    kept = Data()
                    lock.unlock()
                }
            }
            receiver?.receive(head)
        }

        fileprivate func received(_ part: Data, leg: Int) {
            lock.lock()
            guard self.leg == leg else { return lock.unlock() }
            if kept != nil {
                if let count = kept?.count, count + part.count <= cache.maximumBodyLength {
                    kept?.append(part)
                } else {
                    kept = nil
                }
            }
            let receiver = self.receiver
            lock.unlock()
            receiver?.receive(part)
        }

        fileprivate func finish(_ error: (any Error)?, leg: Int) {
            lock.lock()
            guard self.leg == leg else { return lock.unlock() }
            let (head, kept, requestTime) = (self.head, self.kept, self.requestTime)
            self.kept = nil
            let receiver = self.receiver
            self.receiver = nil
            lock.unlock()
            // §3.3: a body cut short is never kept.
            if error == nil, let head, let kept, let response = head.httpURLResponse,
                !head.isShorterThanAnnounced(Int64(kept.count), for: attempt.request)
            {
                cache.store(response, body: kept, for: keyed, requestTime: requestTime, responseTime: cache.now())
            }
            receiver?.finish(error)
        }
    }

    /// Hands one exchange's calls to its ``Pass``, marked with the exchange they belong to.
    private final class Leg: ResponseReceiver {
        private let pass: Pass
        private let leg: Int

        init(_ pass: Pass, _ leg: Int) {
            self.pass = pass
            self.leg = leg
        }

        func receive(_ head: ResponseHead) { pass.received(head, leg: leg) }
        func receive(_ part: Data) { pass.received(part, leg: leg) }
        func finish(_ error: (any Error)?) { pass.finish(error, leg: leg) }
    }
}

extension HTTPCache.Lookup {
    /// Whether the response to the request may be stored.
    fileprivate var stores: Bool {
        if case .bypass = self { return false }
        return true
    }
}
