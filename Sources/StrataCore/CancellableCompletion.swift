import Dispatch

/// A request's one completion and its cancellation, in one object: what every layer returns, and
/// Strata's one guard of "exactly once". A custom session manager, transport or service built on
/// callbacks returns one too.
///
/// The completion runs exactly once: with the first value passed to ``complete(_:)``, or with the
/// cancelled value when ``cancel()`` comes first. Cancelling also cancels the operation attached
/// with ``attach(_:)`` — the request of the layer below — even when it is attached afterwards, and
/// before the completion runs.
/// Made without a cancelled value, cancelling only cancels the operation, whose own completion
/// then comes through ``complete(_:)``. Give it the queue your completions run on, and a
/// cancellation completes there too, after ``cancel()`` has returned, as Strata's own layers
/// complete one: within ``cancel()``, a completion that takes a lock its caller holds deadlocks.
///
/// ```swift
/// let call = CancellableCompletion(cancelledWith: .failure(.cancelled), on: completionQueue, completion)
/// call.attach(sessionManager.request(request, options: options) { data, response, error in
///     call.complete(result(data, response, error))
/// })
/// return call
/// ```
public final class CancellableCompletion<Value: Sendable>:
    NetworkCancellable, @unchecked Sendable  // Sendable: `lock` guards the `var`s.
{
    // The state is kept in the object, under a lock of a concrete type, rather than in a
    // `Locked<State>` generic over `Value`: making one of those looks up two generic types at run
    // time, on every request, in every layer. The lock holds whether `cancel()` was called.
    // Nor is a `Value?` stored: destroying one looks up `Optional<Value>` at run time. The
    // cancelled value is kept in a closure that passes it to the completion.
    private let lock = Locked(false)
    private var completion: (@Sendable (Value) -> Void)?
    private var operation: (any NetworkCancellable)?
    private let completeCancelled: (@Sendable (@escaping @Sendable (Value) -> Void) -> Void)?

    /// Wraps `completion`, which a cancellation calls with `cancelledValue`: on `queue` when one is
    /// given, after ``cancel()`` has returned, else within ``cancel()``, on its caller's thread.
    public convenience init(
        cancelledWith cancelledValue: Value, on queue: DispatchQueue? = nil,
        _ completion: @escaping @Sendable (Value) -> Void
    ) {
        var schedule: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
        if let queue {
            schedule = { work in queue.async(execute: work) }
        }
        self.init(cancelledWith: cancelledValue, scheduledBy: schedule, completion)
    }

    /// Wraps `completion`, which a cancellation calls with `cancelledValue` from what `schedule`
    /// runs it in (Strata's own lanes, say), or within ``cancel()`` for none.
    package init(
        cancelledWith cancelledValue: Value,
        scheduledBy schedule: (@Sendable (@escaping @Sendable () -> Void) -> Void)?,
        _ completion: @escaping @Sendable (Value) -> Void
    ) {
        if let schedule {
            self.completeCancelled = { completion in schedule { completion(cancelledValue) } }
        } else {
            self.completeCancelled = { completion in completion(cancelledValue) }
        }
        self.completion = completion
    }

    /// Wraps `completion`, which only ``complete(_:)`` calls: a cancellation cancels the attached
    /// operation, and the outcome of that comes through ``complete(_:)``.
    public init(_ completion: @escaping @Sendable (Value) -> Void) {
        self.completeCancelled = nil
        self.completion = completion
    }

    /// Cancelling cancels `operation` too; if this is already cancelled, `operation` is cancelled now.
    public func attach(_ operation: any NetworkCancellable) {
        let cancelNow = lock.withLock { cancelled -> Bool in
            if cancelled { return true }
            // Once completed there is nothing left to stop, and nothing is kept alive for it.
            if completion != nil { self.operation = operation }
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
        // Taken into a local rather than returned: a closure returned through `withLock`'s generic
        // result is wrapped in a thunk, allocated, on the way out and again on the way back.
        var completion: (@Sendable (Value) -> Void)?
        lock.withLock { _ in
            completion = self.completion
            (self.completion, operation) = (nil, nil)
        }
        guard let completion else { return false }
        completion(value)
        return true
    }

    /// Whether the completion has run.
    public var isCompleted: Bool {
        lock.withLock { _ in completion == nil }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        lock.value
    }

    /// Cancels the attached operation, then completes with the cancelled value, if there is one,
    /// unless already completed. Idempotent and thread-safe.
    public func cancel() {
        var completion: (@Sendable (Value) -> Void)?
        var operation: (any NetworkCancellable)?
        lock.withLock { cancelled in
            guard !cancelled else { return }
            cancelled = true
            operation = self.operation
            self.operation = nil
            guard completeCancelled != nil else { return }
            completion = self.completion
            self.completion = nil
        }
        // The layer below is stopped before the caller hears of it: a completion that starts the
        // request again (as one resuming a download does) finds the cancelled one's hold let go.
        operation?.cancel()
        if let completion, let completeCancelled {
            completeCancelled(completion)
        }
    }
}
