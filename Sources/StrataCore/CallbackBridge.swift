/// Runs a callback-based operation from async code: the operation starts, its single completion
/// resumes the caller, and cancelling the Swift task cancels the operation.
///
/// A task already cancelled still starts the operation and cancels it at once, so the operation's
/// own cancellation path (and its exactly-once completion) produces the result.
package func withCancellableCallback<Success: Sendable, Failure: Error>(
    _ start: (@escaping @Sendable (Result<Success, Failure>) -> Void) -> any NetworkCancellable
) async -> Result<Success, Failure> {
    // Either the operation is stored before cancellation arrives (the handler cancels it), or
    // cancellation is recorded first (the starter cancels it once stored): one lock decides which.
    let state = Locked<(operation: (any NetworkCancellable)?, isCancelled: Bool)>((nil, false))
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            let resume = CompletionOnce<Result<Success, Failure>> { continuation.resume(returning: $0) }
            let operation = start { resume.complete($0) }
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
