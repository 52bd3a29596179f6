import Dispatch
import StrataCore
import Testing

/// `CancellationToken` is a ``CancellableCompletion`` with no completion: a flag, and the operation
/// attached to it, cancelled once.
@Suite struct CancellationTokenTests {
    @Test func cancelSetsTheFlagOnceAndCancelsWhatIsAttached() {
        let token = CancellationToken()
        let calls = Locked(0)
        token.attach(CancellableCompletion(cancelledWith: ()) { calls.withLock { $0 += 1 } })
        #expect(!token.isCancelled)
        token.cancel()
        token.cancel()
        #expect(token.isCancelled)
        #expect(!token.isCompleted)
        #expect(calls.value == 1)
    }

    @Test func anOperationAttachedAfterCancelIsCancelledAtOnce() {
        let token = CancellationToken()
        token.cancel()
        let operation = CancellationToken()
        token.attach(operation)
        #expect(operation.isCancelled)
    }

    @Test func concurrentCancelsCancelTheOperationExactlyOnce() {
        for _ in 0..<500 {
            let token = CancellationToken()
            let calls = Locked(0)
            token.attach(CancellableCompletion(cancelledWith: ()) { calls.withLock { $0 += 1 } })
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
        let operation = CancellableCompletion(cancelledWith: ()) { call.complete("cancelled by the operation") }
        call.attach(operation)
        #expect(operation.isCancelled)
        #expect(calls.value == ["cancelled by the operation"])
        #expect(!call.complete("late"))
    }
}
