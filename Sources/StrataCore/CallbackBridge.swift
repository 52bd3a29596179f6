/// Runs a callback-based operation from async code: the operation starts, its single completion
/// resumes the caller, and cancelling the Swift task cancels the operation.
///
/// A task already cancelled still starts the operation and cancels it at once, so the operation's
/// own cancellation path (and its exactly-once completion) produces the result.
package func withCancellableCallback<Success: Sendable, Failure: Error>(
    _ start: (@escaping @Sendable (Result<Success, Failure>) -> Void) -> any NetworkCancellable
) async -> Result<Success, Failure> {
    // One lock orders the three events: the operation being stored, the task being cancelled (which
    // cancels the stored operation, or leaves the starter to cancel it once stored), and the
    // completion, which takes the continuation so that it resumes exactly once.
    let state = Locked(BridgeState<Result<Success, Failure>>())
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            state.withLock { $0.continuation = continuation }
            let operation = start { result in
                state.withLock { state in
                    defer { state.continuation = nil }
                    return state.continuation
                }?.resume(returning: result)
            }
            let cancelNow = state.withLock { state -> Bool in
                state.operation = operation
                return state.isCancelled
            }
            if cancelNow {
                operation.cancel()
            }
        }
    } onCancel: {
        state.withLock { state -> (any NetworkCancellable)? in
            state.isCancelled = true
            return state.operation
        }?.cancel()
    }
}

/// What ``withCancellableCallback(_:)`` guards with its lock.
private struct BridgeState<Value: Sendable>: Sendable {
    var continuation: CheckedContinuation<Value, Never>?
    var operation: (any NetworkCancellable)?
    var isCancelled = false
}
