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

/// The standard ``NetworkCancellable``: a flag set once, and handlers that run when it is set.
///
/// Layers register what cancelling means for them with ``onCancel(_:)``; a handler registered
/// after cancellation runs at once. Custom session managers and mocks can return one too.
public final class CancellationToken: NetworkCancellable {
    private struct State: Sendable {
        var isCancelled = false
        // Nearly every token has one handler: it is kept on its own, without an array to allocate.
        var first: (@Sendable () -> Void)?
        var more: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    /// Creates a token that is not cancelled.
    public init() {}

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    /// Marks the token cancelled and runs the registered handlers once, in order, outside the lock.
    public func cancel() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.isCancelled else { return [] }
            state.isCancelled = true
            defer { (state.first, state.more) = (nil, []) }
            return (state.first.map { [$0] } ?? []) + state.more
        }
        for handler in handlers {
            handler()
        }
    }

    /// Registers `handler` to run when the token is cancelled; runs it now if it already is.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard !state.isCancelled else { return true }
            if state.first == nil {
                state.first = handler
            } else {
                state.more.append(handler)
            }
            return false
        }
        if runNow {
            handler()
        }
    }
}
