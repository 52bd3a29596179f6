/// A request's one completion and its cancellation, in one object: what every layer returns, and
/// Strata's one guard of "exactly once". A custom session manager, transport or service built on
/// callbacks returns one too.
///
/// The completion runs exactly once: with the first value passed to ``complete(_:)``, or with the
/// cancelled value when ``cancel()`` comes first. Cancelling also cancels the operation attached
/// with ``attach(_:)`` — the request of the layer below — even when it is attached afterwards.
/// Made without a cancelled value, cancelling only cancels the operation, whose own completion
/// then comes through ``complete(_:)``.
///
/// ```swift
/// let call = CancellableCompletion(cancelledWith: .failure(.cancelled), completion)
/// call.attach(sessionManager.request(request, options: options) { data, response, error in
///     call.complete(result(data, response, error))
/// })
/// return call
/// ```
public final class CancellableCompletion<Value: Sendable>: NetworkCancellable {
    private struct State: Sendable {
        var completion: (@Sendable (Value) -> Void)?
        var operation: (any NetworkCancellable)?
        var isCancelled = false
    }

    private let state: Locked<State>
    private let cancelledValue: Value?

    /// Wraps `completion`, which a cancellation calls with `cancelledValue`.
    public init(cancelledWith cancelledValue: Value, _ completion: @escaping @Sendable (Value) -> Void) {
        self.cancelledValue = cancelledValue
        state = Locked(State(completion: completion))
    }

    /// Wraps `completion`, which only ``complete(_:)`` calls: a cancellation cancels the attached
    /// operation, and the outcome of that comes through ``complete(_:)``.
    public init(_ completion: @escaping @Sendable (Value) -> Void) {
        self.cancelledValue = nil
        state = Locked(State(completion: completion))
    }

    /// Cancelling cancels `operation` too; if this is already cancelled, `operation` is cancelled now.
    public func attach(_ operation: any NetworkCancellable) {
        let cancelNow = state.withLock { state -> Bool in
            if state.isCancelled { return true }
            // Once completed there is nothing left to stop, and nothing is kept alive for it.
            if state.completion != nil { state.operation = operation }
            return false
        }
        if cancelNow {
            operation.cancel()
        }
    }

    /// Calls the completion with `value` if it has not run yet.
    /// - Returns: `true` if this call ran the completion, `false` if it had already run.
    @discardableResult
    public func complete(_ value: Value) -> Bool {
        let completion = state.withLock { state -> (@Sendable (Value) -> Void)? in
            defer { (state.completion, state.operation) = (nil, nil) }
            return state.completion
        }
        guard let completion else { return false }
        completion(value)
        return true
    }

    /// Whether the completion has run.
    public var isCompleted: Bool {
        state.withLock { $0.completion == nil }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    /// Completes with the cancelled value, if there is one, unless already completed; then cancels
    /// the attached operation. Idempotent and thread-safe.
    public func cancel() {
        let (completion, operation) = state.withLock {
            state -> ((@Sendable (Value) -> Void)?, (any NetworkCancellable)?) in
            guard !state.isCancelled else { return (nil, nil) }
            state.isCancelled = true
            defer { state.operation = nil }
            guard cancelledValue != nil else { return (nil, state.operation) }
            defer { state.completion = nil }
            return (state.completion, state.operation)
        }
        if let completion, let cancelledValue {
            completion(cancelledValue)
        }
        operation?.cancel()
    }
}
