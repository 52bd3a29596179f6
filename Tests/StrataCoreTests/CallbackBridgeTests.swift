import Dispatch
import StrataCore
import Testing

@Suite struct CallbackBridgeTests {
    @Test func resumesWithTheOperationsResult() async {
        let result: Result<Int, Never> = await withCancellableCallback { completion in
            DispatchQueue.global().async { completion(.success(42)) }
            return CancellationToken()
        }
        #expect(result == .success(42))
    }

    @Test func cancellingTheTaskCancelsTheOperation() async {
        let token = CancellationToken()
        let task = Task {
            await withCancellableCallback { (completion: @escaping @Sendable (Result<Int, CancelledError>) -> Void) in
                token.attach(CancellableCompletion(cancelledWith: .failure(CancelledError()), completion))
                return token
            }
        }
        task.cancel()
        #expect(await task.value == .failure(CancelledError()))
        #expect(token.isCancelled)
    }

    @Test func anAlreadyCancelledTaskStartsAndCancelsTheOperation() async {
        let started = Locked(false)
        let token = CancellationToken()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await withCancellableCallback {
                (completion: @escaping @Sendable (Result<Int, CancelledError>) -> Void) in
                started.withLock { $0 = true }
                token.attach(CancellableCompletion(cancelledWith: .failure(CancelledError()), completion))
                return token
            }
        }
        #expect(await task.value == .failure(CancelledError()))
        #expect(started.value)
    }
}

private struct CancelledError: Error, Equatable {}
