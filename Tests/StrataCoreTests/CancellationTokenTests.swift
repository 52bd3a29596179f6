import Dispatch
import StrataCore
import Testing

@Suite struct CancellationTokenTests {
    @Test func cancelRunsEachHandlerOnceAndIsIdempotent() {
        let token = CancellationToken()
        let calls = Locked(0)
        token.onCancel { calls.withLock { $0 += 1 } }
        token.onCancel { calls.withLock { $0 += 10 } }
        #expect(!token.isCancelled)
        token.cancel()
        token.cancel()
        #expect(token.isCancelled)
        #expect(calls.value == 11)
    }

    @Test func handlerRegisteredAfterCancelRunsImmediately() {
        let token = CancellationToken()
        token.cancel()
        let ran = Locked(false)
        token.onCancel { ran.withLock { $0 = true } }
        #expect(ran.value)
    }

    @Test func concurrentCancelsRunHandlersExactlyOnce() {
        for _ in 0..<500 {
            let token = CancellationToken()
            let calls = Locked(0)
            token.onCancel { calls.withLock { $0 += 1 } }
            DispatchQueue.concurrentPerform(iterations: 8) { _ in token.cancel() }
            #expect(calls.value == 1)
        }
    }
}

/// A call made without a cancelled value: cancelling cancels what is attached, and the outcome of
/// that is the one completion.
@Suite struct CancellableCompletionWithoutCancelledValueTests {
    @Test func racingCompletionsRunTheHandlerExactlyOnce() {
        for _ in 0..<500 {
            let calls = Locked<[Int]>([])
            let call = CancellableCompletion<Int> { value in calls.withLock { $0.append(value) } }
            DispatchQueue.concurrentPerform(iterations: 8) { index in call.complete(index) }
            #expect(calls.value.count == 1)
            #expect(call.isCompleted)
        }
    }

    @Test func cancellingCancelsTheOperationWhoseOutcomeIsTheOneCompletion() {
        let calls = Locked<[String]>([])
        let call = CancellableCompletion<String> { value in calls.withLock { $0.append(value) } }
        call.cancel()
        #expect(calls.value.isEmpty)
        #expect(!call.isCompleted)
        let operation = CancellationToken()
        operation.onCancel { call.complete("cancelled by the operation") }
        call.attach(operation)
        #expect(operation.isCancelled)
        #expect(calls.value == ["cancelled by the operation"])
        #expect(!call.complete("late"))
    }
}
