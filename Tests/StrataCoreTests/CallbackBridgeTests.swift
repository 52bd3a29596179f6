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

    /// With a cancelled value, cancelling returns it at once, though the operation never answers,
    /// and a late answer changes nothing: cancelled before the task begins, and while it waits.
    @Test(arguments: [false, true])
    func aCancelledValueEndsTheWaitAtOnceWhenTheOperationNeverAnswers(cancelWhileWaiting: Bool) async {
        let operation = CancellationToken()
        let late = Locked<(@Sendable (Result<Int, CancelledError>) -> Void)?>(nil)
        let begin = DispatchSemaphore(value: 0)
        let task = Task {
            if !cancelWhileWaiting { begin.wait() }
            return await withCancellableCallback(cancelledWith: .failure(CancelledError())) {
                (completion: @escaping @Sendable (Result<Int, CancelledError>) -> Void) in
                late.withLock { $0 = completion }
                return operation
            }
        }
        if cancelWhileWaiting {
            while late.value == nil { await Task.yield() }
        }
        task.cancel()
        begin.signal()
        #expect(await task.value == .failure(CancelledError()))
        #expect(operation.isCancelled)
        late.value?(.success(1))
    }

    @Test func aCancelledValueIsNotUsedWhenTheOperationAnswers() async {
        let result = await withCancellableCallback(cancelledWith: .failure(CancelledError())) {
            (completion: @escaping @Sendable (Result<Int, CancelledError>) -> Void) in
            DispatchQueue.global().async { completion(.success(7)) }
            return CancellationToken()
        }
        #expect(result == .success(7))
    }
}

private struct CancelledError: Error, Equatable {}
