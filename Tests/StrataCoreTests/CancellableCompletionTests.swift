import Dispatch
import StrataCore
import Testing

@Suite struct CancellableCompletionTests {
    /// Records what a completion received.
    private static func recorder() -> (calls: Locked<[String]>, completion: @Sendable (String) -> Void) {
        let calls = Locked<[String]>([])
        return (calls, { value in calls.withLock { $0.append(value) } })
    }

    @Test func completesOnceWithTheFirstValue() {
        let (calls, completion) = Self.recorder()
        let call = CancellableCompletion(cancelledWith: "cancelled", completion)
        #expect(call.complete("first"))
        #expect(!call.complete("second"))
        call.cancel()
        #expect(calls.value == ["first"])
        #expect(call.isCompleted)
    }

    @Test func cancelCompletesWithTheCancelledValueAndCancelsTheOperation() {
        let (calls, completion) = Self.recorder()
        let call = CancellableCompletion(cancelledWith: "cancelled", completion)
        let operation = CancellationToken()
        call.attach(operation)
        call.cancel()
        call.cancel()
        #expect(!call.complete("late"))
        #expect(calls.value == ["cancelled"])
        #expect(call.isCancelled)
        #expect(operation.isCancelled)
    }

    /// The layer below is stopped before the completion runs, and what it completes with as it
    /// stops (its own cancellation, coming back up) is not a second completion.
    @Test func theOperationIsCancelledBeforeTheCompletionRuns() {
        let (calls, completion) = Self.recorder()
        let operationCancelled = Locked(false)
        let call = CancellableCompletion(cancelledWith: "cancelled") { value in
            completion("\(value), the operation cancelled: \(operationCancelled.value)")
        }
        call.attach(
            Stopping { [call] in
                operationCancelled.withLock { $0 = true }
                #expect(!call.complete("stopped"))
            })
        call.cancel()
        #expect(calls.value == ["cancelled, the operation cancelled: true"])
    }

    /// An operation that runs `onCancel` when cancelled.
    private struct Stopping: NetworkCancellable {
        let onCancel: @Sendable () -> Void
        var isCancelled: Bool { false }
        func cancel() { onCancel() }
    }

    @Test func anOperationAttachedAfterCancellationIsCancelledAtOnce() {
        let (calls, completion) = Self.recorder()
        let call = CancellableCompletion(cancelledWith: "cancelled", completion)
        call.cancel()
        let operation = CancellationToken()
        call.attach(operation)
        #expect(operation.isCancelled)
        #expect(calls.value == ["cancelled"])
    }

    @Test func cancellingAfterCompletionDoesNotCancelTheFinishedOperation() {
        let (calls, completion) = Self.recorder()
        let call = CancellableCompletion(cancelledWith: "cancelled", completion)
        let operation = CancellationToken()
        call.attach(operation)
        call.complete("done")
        call.cancel()
        #expect(calls.value == ["done"])
        #expect(!operation.isCancelled)
    }

    @Test func racingCompletionsAndCancelsCallTheCompletionExactlyOnce() {
        for _ in 0..<500 {
            let (calls, completion) = Self.recorder()
            let call = CancellableCompletion(cancelledWith: "cancelled", completion)
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                if index.isMultiple(of: 2) { call.cancel() } else { call.complete("value \(index)") }
            }
            #expect(calls.value.count == 1)
        }
    }
}
