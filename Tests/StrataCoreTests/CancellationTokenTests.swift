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

@Suite struct CompletionOnceTests {
    @Test func racingCompletionsRunTheHandlerExactlyOnce() {
        for _ in 0..<500 {
            let calls = Locked<[Int]>([])
            let once = CompletionOnce<Int> { value in calls.withLock { $0.append(value) } }
            DispatchQueue.concurrentPerform(iterations: 8) { index in once.complete(index) }
            #expect(calls.value.count == 1)
            #expect(once.isCompleted)
        }
    }

    @Test func completeReportsWhetherItRanTheHandler() {
        let once = CompletionOnce<Int> { _ in }
        #expect(!once.isCompleted)
        #expect(once.complete(1))
        #expect(!once.complete(2))
    }
}
