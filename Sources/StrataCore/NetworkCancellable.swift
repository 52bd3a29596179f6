/// Something that can stop an operation that is under way: a request, a transfer, a retry.
///
/// Every Strata layer returns one from a request. Calling ``cancel()`` is safe from any thread,
/// any number of times, before the work started, while it is waiting (for a token refresh, a retry
/// delay) or mid-transfer; the request's completion then runs exactly once, with a cancelled error.
public protocol NetworkCancellable: Sendable {
    /// Stops the operation. Idempotent and thread-safe.
    func cancel()

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { get }
}

/// A ``NetworkCancellable`` that is only a flag: what a mock or a custom layer returns when there
/// is nothing else to stop, or when what it stops is attached later with
/// ``CancellableCompletion/attach(_:)``.
///
/// It is a ``CancellableCompletion`` with no completion, so cancellation has one implementation in
/// Strata.
public typealias CancellationToken = CancellableCompletion<Void>

extension CancellableCompletion where Value == Void {
    /// Creates a token that is not cancelled.
    public convenience init() {
        self.init { _ in }
    }
}
