/// Runs a callback-based operation from async code: the operation starts, its single completion
/// resumes the caller, and cancelling the Swift task cancels the operation.
///
/// A task already cancelled still starts the operation and cancels it at once, so the operation's
/// own cancellation path (and its exactly-once completion) produces the result.
package func withCancellableCallback<Success: Sendable, Failure: Error>(
    _ start: (@escaping @Sendable (Result<Success, Failure>) -> Void) -> any NetworkCancellable
) async -> Result<Success, Failure> {
    // The call guards the one completion and orders cancellation with the start: cancelling before
    // the operation is attached cancels it as it is attached. The continuation exists only inside
    // the closure below, so the completion finds it in its own box.
    let continuation = Locked<CheckedContinuation<Result<Success, Failure>, Never>?>(nil)
    let call = CancellableCompletion<Result<Success, Failure>> { result in
        continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }?.resume(returning: result)
    }
    return await withTaskCancellationHandler {
        await withCheckedContinuation { resume in
            continuation.withLock { $0 = resume }
            call.attach(start { call.complete($0) })
        }
    } onCancel: {
        call.cancel()
    }
}
