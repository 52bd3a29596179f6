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
struct CachingTransport: Transport {
    let cache: HTTPCache
    let transport: any Transport

    func validate(_ url: URL) throws(UnsupportedURLReason) {
        try transport.validate(url)
    }

    func send(
        _ attempt: TransportAttempt, completion: @escaping @Sendable (TransportOutcome) -> Void
    )
        -> any NetworkCancellable
    {
        // A download goes to its file, not to the cache.
        guard attempt.downloadDestination == nil else { return transport.send(attempt, completion: completion) }
        let request = attempt.request
        let lookup = cache.lookup(request)
        switch lookup {
        case .fresh(let entry, let age):
            return answer(
                TransportOutcome(
                    response: entry.response(for: request.url, age: age), body: entry.body, isFromCache: true),
                completion)
        case .unsatisfiable:
            let response = HTTPURLResponse(
                url: request.url ?? URL(fileURLWithPath: "/"), statusCode: 504, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Length": "0"])
            return answer(TransportOutcome(response: response, isFromCache: true), completion)
        case .revalidate(let conditional, let entry):
            var sent = attempt
            sent.request = conditional
            // A `304` that cannot refresh the stored response (§4.3.4) is not the caller's: the
            // request goes again, unconditional, and that answer is.
            let call = CancellableCompletion(cancelledWith: .cancelled, completion)
            call.attach(
                exchange(sent, revalidating: entry) { [self] outcome in
                    guard let outcome else {
                        return call.attach(exchange(attempt, revalidating: nil) { call.complete($0 ?? .cancelled) })
                    }
                    call.complete(outcome)
                })
            return call
        case .miss, .bypass:
            return exchange(attempt, revalidating: nil, stores: lookup.stores) { completion($0 ?? .cancelled) }
        }
    }

    /// Completes with `outcome` on a queue of its own, cancellably.
    private func answer(
        _ outcome: TransportOutcome, _ completion: @escaping @Sendable (TransportOutcome) -> Void
    ) -> any NetworkCancellable {
        let call = CancellableCompletion(cancelledWith: .cancelled, completion)
        StrataQueue.async { call.complete(outcome) }
        return call
    }

    /// Sends `attempt` and stores what may be stored of its answer; a `304` to a revalidation of
    /// `stored` becomes the refreshed stored response, or `nil` when it cannot refresh it.
    private func exchange(
        _ attempt: TransportAttempt, revalidating stored: CachedExchange?, stores: Bool = true,
        _ completion: @escaping @Sendable (TransportOutcome?) -> Void
    ) -> any NetworkCancellable {
        let requestTime = cache.now()
        return transport.send(attempt) { [cache] outcome in
            guard outcome.error == nil, let response = outcome.response as? HTTPURLResponse else {
                return completion(outcome)
            }
            let responseTime = cache.now()
            if response.statusCode == 304, let stored {
                guard
                    let refreshed = cache.refresh(
                        stored, with: response, requestTime: requestTime, responseTime: responseTime)
                else { return completion(nil) }
                return completion(
                    TransportOutcome(response: refreshed.response(for: attempt.request.url), body: refreshed.body))
            }
            // §3.3: a body cut short is never kept.
            if stores, !outcome.isShorterThanAnnounced(for: attempt.request) {
                cache.store(
                    response, body: outcome.body, for: attempt.request, requestTime: requestTime,
                    responseTime: responseTime)
            }
            completion(outcome)
        }
    }
}

extension HTTPCache.Lookup {
    /// Whether the response to the request may be stored.
    fileprivate var stores: Bool {
        if case .bypass = self { return false }
        return true
    }
}
