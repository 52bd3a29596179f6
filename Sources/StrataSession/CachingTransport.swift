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
        if case .fresh(let entry) = lookup {
            let call = CancellableCompletion(cancelledWith: .cancelled, completion)
            StrataQueue.async {
                call.complete(
                    TransportOutcome(response: entry.response(for: request.url), body: entry.body, isFromCache: true))
            }
            return call
        }
        var sent = attempt
        var stored: CachedExchange?
        if case .revalidate(let conditional, let entry) = lookup {
            sent.request = conditional
            stored = entry
        }
        let store = lookup.stores
        let requestTime = cache.now()
        return transport.send(sent) { [cache, stored] outcome in
            guard outcome.error == nil, let response = outcome.response as? HTTPURLResponse else {
                return completion(outcome)
            }
            let responseTime = cache.now()
            if response.statusCode == 304, let stored {
                let refreshed = cache.refresh(
                    stored, with: response, requestTime: requestTime, responseTime: responseTime)
                return completion(
                    TransportOutcome(response: refreshed.response(for: request.url), body: refreshed.body))
            }
            if store {
                cache.store(
                    response, body: outcome.body, for: request, requestTime: requestTime, responseTime: responseTime)
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
