import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs adapters in order, each on the previous one's output, and asks retriers in order.
///
/// The first retrier to answer ``/StrataCore/RetryDecision/retry`` or ``/StrataCore/RetryDecision/retryAfter(_:)`` wins;
/// ``/StrataCore/RetryDecision/doNotRetryWithError(_:)`` stops the search with its error; ``/StrataCore/RetryDecision/doNotRetry``
/// asks the next. A `URLSessionManager` chains its own interceptors with a request's this way.
///
/// ```swift
/// let interceptor = Interceptor(adapters: [APIKeyAdapter()], retriers: [RetryPolicy()])
/// ```
public struct Interceptor: RequestInterceptor {
    /// The adapters, in the order they run.
    public let adapters: [any RequestAdapter]
    /// The retriers, in the order they are asked.
    public let retriers: [any RequestRetrier]

    /// Creates a composite of `adapters`, `retriers`, and `interceptors` (which take part in both,
    /// after the others).
    public init(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) {
        self.adapters = adapters + interceptors.map { $0 as any RequestAdapter }
        self.retriers = retriers + interceptors.map { $0 as any RequestRetrier }
    }

    /// Runs the adapters in order; the first failure ends the chain. Each adapter's callback is
    /// honoured once. A request without a URL — the caller's, or one an adapter returned — fails
    /// with ``/StrataCore/RequestValidationError/missingURL`` before any adapter sees it: on Linux,
    /// changing a copy of such a request traps inside FoundationNetworking.
    public func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        Self.adapt(request, with: adapters[...], completion: completion)
    }

    /// Runs the adapters as ``adapt(_:completion:)`` does; with a `redaction`, for a request that
    /// goes to another origin than the one the caller addressed (a redirect's), whatever credential
    /// field (one `redaction` hides) an adapter adds or changes is taken back unless the adapter is
    /// bound to the request's origin (``/StrataCore/RequestAdapter/credentialOrigins``).
    package func adapt(
        _ request: URLRequest, guardingCredentialsWith redaction: Redaction?,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        guard let redaction else { return adapt(request, completion: completion) }
        Self.adapt(request, with: adapters[...], guard: redaction, completion: completion)
    }

    /// Asks the retriers in order until one decides.
    public func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        Self.retry(failure, asking: retriers[...], completion: completion)
    }

    private static func adapt(
        _ request: URLRequest,
        with adapters: ArraySlice<any RequestAdapter>,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        guard request.url != nil else { return completion(.failure(RequestValidationError.missingURL)) }
        guard let adapter = adapters.first else { return completion(.success(request)) }
        let step = CancellableCompletion<Result<URLRequest, any Error>>(cancelledWith: .failure(CancellationError())) {
            result in
            switch result {
            case .success(let adapted): adapt(adapted, with: adapters.dropFirst(), completion: completion)
            case .failure: completion(result)
            }
        }
        adapter.adapt(request) { step.complete($0) }
    }

    private static func adapt(
        _ request: URLRequest,
        with adapters: ArraySlice<any RequestAdapter>,
        guard redaction: Redaction,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        guard request.url != nil else { return completion(.failure(RequestValidationError.missingURL)) }
        guard let adapter = adapters.first else { return completion(.success(request)) }
        let before = Self.credentials(of: request, redaction)
        let secretItems = Self.secretQueryItems(of: request.url, redaction)
        let bound = request.url.flatMap(Origin.init).map { adapter.credentialOrigins?.contains($0) ?? false } ?? false
        let step = CancellableCompletion<Result<URLRequest, any Error>>(cancelledWith: .failure(CancellationError())) {
            result in
            switch result {
            case .success(var adapted):
                guard adapted.url != nil else { return completion(.failure(RequestValidationError.missingURL)) }
                if !bound, !(adapter is Interceptor) {
                    // The credential fields as they were, whatever the adapter did to their names' case.
                    let added = Self.credentials(of: adapted, redaction).keys.map { ($0, String?.none) }
                    adapted.setHeaderFields(added + before.map { ($0.key, $0.value) })
                    Self.restore(secretItems, in: &adapted, redaction)
                }
                adapt(adapted, with: adapters.dropFirst(), guard: redaction, completion: completion)
            case .failure: completion(result)
            }
        }
        if let nested = adapter as? Interceptor {
            nested.adapt(request, guardingCredentialsWith: redaction) { step.complete($0) }
        } else {
            adapter.adapt(request) { step.complete($0) }
        }
    }

    /// The credential fields of `request`, by name as it holds them.
    private static func credentials(of request: URLRequest, _ redaction: Redaction) -> [String: String] {
        (request.allHTTPHeaderFields ?? [:]).filter { redaction.hidesHeader(named: $0.key) }
    }

    /// The query items of `url` whose keys `redaction` hides (an API key, an access token), as they
    /// are written, with their places among all the items.
    private static func secretQueryItems(of url: URL?, _ redaction: Redaction) -> [(place: Int, item: URLQueryItem)] {
        guard let url, url.query(percentEncoded: true) != nil,
            let items = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedQueryItems
        else { return [] }
        return items.enumerated().compactMap { place, item in
            redaction.hidesQueryKey(named: item.name.removingPercentEncoding ?? item.name) ? (place, item) : nil
        }
    }

    /// Puts back the secret query items `request` had before an adapter ran (`before`), in their
    /// places, in place of those it has now: for a request to an origin the adapter is not bound
    /// to, an adapter adds or changes no query credential, as it adds or changes no credential field.
    private static func restore(
        _ before: [(place: Int, item: URLQueryItem)], in request: inout URLRequest, _ redaction: Redaction
    ) {
        let now = secretQueryItems(of: request.url, redaction)
        guard now.map(\.item) != before.map(\.item), let url = request.url,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return }
        var items = (components.percentEncodedQueryItems ?? []).filter { item in
            !redaction.hidesQueryKey(named: item.name.removingPercentEncoding ?? item.name)
        }
        for (place, item) in before {
            items.insert(item, at: min(place, items.count))
        }
        components.percentEncodedQueryItems = items.isEmpty ? nil : items
        // A URL the items cannot make again goes nowhere: the request fails as one without a URL.
        request.url = components.url
    }

    private static func retry(
        _ failure: RequestFailure,
        asking retriers: ArraySlice<any RequestRetrier>,
        completion: @escaping @Sendable (RetryDecision) -> Void
    ) {
        guard let retrier = retriers.first else { return completion(.doNotRetry) }
        let step = CancellableCompletion<RetryDecision>(cancelledWith: .doNotRetry) { decision in
            if case .doNotRetry = decision {
                retry(failure, asking: retriers.dropFirst(), completion: completion)
            } else {
                completion(decision)
            }
        }
        retrier.retry(failure) { step.complete($0) }
    }
}
