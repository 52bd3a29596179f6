/// Runs a callback-based operation from async code: the operation starts, its single completion
/// resumes the caller, and cancelling the Swift task cancels the operation.
///
/// A task already cancelled still starts the operation and cancels it at once, so the operation's
/// own cancellation path (and its exactly-once completion) produces the result.
package func withCancellableCallback<Success: Sendable, Failure: Error>(
    _ start: (@escaping @Sendable (Result<Success, Failure>) -> Void) -> any NetworkCancellable
) async -> Result<Success, Failure> {
    let operation = Locked<(any NetworkCancellable)?>(nil)
    let cancelled = Locked(false)
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            let resume = CompletionOnce<Result<Success, Failure>> { continuation.resume(returning: $0) }
            let cancellable = start { resume.complete($0) }
            operation.withLock { $0 = cancellable }
            if cancelled.value {
                cancellable.cancel()
            }
        }
    } onCancel: {
        cancelled.withLock { $0 = true }
        operation.value?.cancel()
    }
}
