/// Runs a callback-based operation from async code: the operation starts, its single completion
/// resumes the caller, and cancelling the Swift task cancels the operation.
///
/// A task already cancelled still starts the operation and cancels it at once, so the operation's
/// own cancellation path (and its exactly-once completion) produces the result. With a
/// `cancelledValue`, cancelling returns it at once instead, whether or not the operation answers.
///
/// Inlinable, so each caller's copy is specialized for its result type: the generic copy looked up
/// its box's and its continuation's types at run time on every call.
@inlinable
package func withCancellableCallback<Success: Sendable, Failure: Error>(
    cancelledWith cancelledValue: Result<Success, Failure>? = nil,
    _ start: (@escaping @Sendable (Result<Success, Failure>) -> Void) -> any NetworkCancellable
) async -> Result<Success, Failure> {
    // The call guards the one completion and orders cancellation with the start: cancelling before
    // the operation is attached cancels it as it is attached. A cancelled value can arrive before
    // the caller waits (the task was cancelled before it began), so the box keeps it until then.
    // The box resumes the continuation exactly once, so it need not be a checked one (whose check
    // is an object made on every call and released by the thread that resumes it).
    let waiter = Locked<Waiter<Result<Success, Failure>>>(.notWaiting)
    let resume: @Sendable (Result<Success, Failure>) -> Void = { result in
        waiter.withLock { waiter -> UnsafeContinuation<Result<Success, Failure>, Never>? in
            guard case .waiting(let continuation) = waiter else {
                waiter = .arrived(result)
                return nil
            }
            waiter = .resumed
            return continuation
        }?.resume(returning: result)
    }
    let call =
        if let cancelledValue {
            CancellableCompletion(cancelledWith: cancelledValue, resume)
        } else {
            CancellableCompletion(resume)
        }
    return await withTaskCancellationHandler {
        await withUnsafeContinuation { continuation in
            let arrived = waiter.withLock { waiter -> Result<Success, Failure>? in
                guard case .arrived(let result) = waiter else {
                    waiter = .waiting(continuation)
                    return nil
                }
                waiter = .resumed
                return result
            }
            call.attach(start { call.complete($0) })
            if let arrived {
                continuation.resume(returning: arrived)
            }
        }
    } onCancel: {
        call.cancel()
    }
}

/// Where the caller of ``withCancellableCallback(cancelledWith:_:)`` is in its wait.
@usableFromInline
enum Waiter<Value: Sendable>: Sendable {
    case notWaiting
    case arrived(Value)
    case waiting(UnsafeContinuation<Value, Never>)
    case resumed
}
