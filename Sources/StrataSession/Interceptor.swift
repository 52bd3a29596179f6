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
    /// honoured once.
    public func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        Self.adapt(request, with: adapters[...], completion: completion)
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
