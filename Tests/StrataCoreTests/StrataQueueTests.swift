import Dispatch
import Foundation
import StrataCore
import Testing

/// Strata's delays come from callers (timeouts, reconnection times) and servers (`Retry-After`):
/// whatever the number, the work runs or, for a delay too long for the clock, never does; none
/// traps, and one that is not a number does not wait forever (Dispatch's reading of it).
@Suite struct StrataQueueTests {
    @Test(arguments: [TimeInterval.nan, -TimeInterval.nan, -1, 0, -TimeInterval.infinity])
    func aDelayThatIsNotANumberOrNotPositiveRunsTheWorkAtOnce(delay: TimeInterval) async throws {
        let ran = Locked(false)
        StrataQueue.async(after: delay) { ran.withLock { $0 = true } }
        for _ in 0..<500 where !ran.value { try await Task.sleep(for: .milliseconds(2)) }
        #expect(ran.value)
    }

    @Test(arguments: [TimeInterval.infinity, 1e300, Double.greatestFiniteMagnitude])
    func aDelayTooLongForTheClockNeverRunsTheWorkAndDoesNotTrap(delay: TimeInterval) async throws {
        let ran = Locked(false)
        StrataQueue.async(after: delay) { ran.withLock { $0 = true } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!ran.value)
    }

    /// One-off queues are kept for reuse once their work has run, never handed to a second piece
    /// of work while the first runs: 16 pieces that each wait until all 16 have started finish,
    /// round after round, on the same kept queues.
    @Test func workNeverWaitsForOtherWorkSentMeanwhileEvenOnReusedQueues() async {
        let width = 16
        let timedOut = Locked(false)
        for _ in 0..<20 where !timedOut.value {
            let started = Locked(0)
            let allStarted = DispatchSemaphore(value: 0)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<width {
                    group.addTask {
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            StrataQueue.async(after: 0) {
                                if started.withLock({
                                    $0 += 1; return $0
                                }) == width {
                                    for _ in 0..<width { allStarted.signal() }
                                }
                                // A wait that only the other pieces' start can end (or, once
                                // one has waited in vain, none).
                                if !timedOut.value, allStarted.wait(timeout: .now() + 2) == .timedOut {
                                    timedOut.withLock { $0 = true }
                                }
                                done.resume()
                            }
                        }
                    }
                }
            }
            #expect(started.value == width)
        }
        #expect(!timedOut.value, "a piece of work waited for one sent after it")
    }
}

/// A response's completion is handed to the caller's queue from the thread it came up on: run
/// there, as the queue's own work, when nothing else can be held up by it; queued otherwise.
@Suite struct HandOverTests {
    /// Runs `body` on a one-off queue of Strata's and waits for it.
    private func onOneOffQueue(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            StrataQueue.async {
                body()
                done.resume()
            }
        }
    }

    /// A queue whose work waits for `release` to be signalled, once `busy` returns.
    private func busy(_ queue: DispatchQueue, then order: Locked<[String]>) -> DispatchSemaphore {
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        queue.async {
            started.signal()
            release.wait()
            order.withLock { $0.append("busy") }
        }
        started.wait()
        return release
    }

    @Test func fromAOneOffQueueTheWorkRunsOnItsThreadAsTheCallersQueuesWork() async {
        let callers = DispatchQueue(label: "callers")
        let handOver = HandOver(to: callers)
        let seen = Locked<(asker: pthread_t?, worker: pthread_t?, onCallersQueue: Bool)>((nil, nil, false))
        handOver.begin()
        await onOneOffQueue {
            seen.withLock { $0.asker = pthread_self() }
            handOver.run {
                dispatchPrecondition(condition: .onQueue(callers))
                seen.withLock { $0 = ($0.asker, pthread_self(), true) }
            }
            // It has run by now: handed over in place.
            #expect(seen.value.onCallersQueue)
        }
        let (asker, worker, _) = seen.value
        #expect(asker.flatMap { asker in worker.map { pthread_equal(asker, $0) != 0 } } == true)
    }

    @Test func fromAnyOtherThreadTheWorkIsQueued() async {
        let callers = DispatchQueue(label: "callers")
        let order = Locked<[String]>([])
        let release = busy(callers, then: order)
        // The test's own thread, then a queue that is not a one-off one of Strata's; each the only
        // completion of its hand-over, so that only where it comes from decides.
        let fromTheTest = HandOver(to: callers)
        fromTheTest.begin()
        fromTheTest.run { order.withLock { $0.append("from the test") } }
        let fromAnotherQueue = HandOver(to: callers)
        fromAnotherQueue.begin()
        DispatchQueue(label: "someone else's").sync {
            fromAnotherQueue.run { order.withLock { $0.append("from another queue") } }
        }
        #expect(order.value.isEmpty)  // Neither waited for the busy queue.
        release.signal()
        callers.sync {}
        #expect(order.value == ["busy", "from the test", "from another queue"])
    }

    @Test func workForTheMainQueueIsQueued() async {
        let returned = Locked(false)
        let handOver = HandOver(to: .main)
        handOver.begin()
        await onOneOffQueue {
            // The main thread does not run queued work here until the test returns to it; a hand-over
            // that waited for it would never come back.
            handOver.run {}
            returned.withLock { $0 = true }
        }
        #expect(returned.value)
    }

    @Test func whileOneWaitsForABusyQueueTheNextIsQueuedAndOrderIsKept() async throws {
        let callers = DispatchQueue(label: "callers")
        let handOver = HandOver(to: callers)
        let order = Locked<[String]>([])
        let release = busy(callers, then: order)
        let firstReturned = Locked(false)
        handOver.begin()
        StrataQueue.async {
            handOver.run { order.withLock { $0.append("first") } }
            firstReturned.withLock { $0 = true }
        }
        // Give the first time to start waiting on the busy queue.
        try await Task.sleep(for: .milliseconds(50))
        #expect(!firstReturned.value)
        handOver.begin()
        await onOneOffQueue {
            // Returns at once although the queue is still busy: another completion is under way.
            handOver.run { order.withLock { $0.append("second") } }
        }
        release.signal()
        callers.sync {}
        for _ in 0..<500 where !firstReturned.value { try await Task.sleep(for: .milliseconds(2)) }
        #expect(firstReturned.value)
        #expect(order.value == ["busy", "first", "second"])
    }

    @Test func whileWorkOfItsOwnIsQueuedTheNextIsQueuedBehindIt() async {
        let callers = DispatchQueue(label: "callers")
        let handOver = HandOver(to: callers)
        let order = Locked<[String]>([])
        let release = busy(callers, then: order)
        handOver.begin()
        handOver.queue { order.withLock { $0.append("queued") } }
        handOver.begin()
        await onOneOffQueue {
            // Returns at once: the queue has work of this hand-over's to do first.
            handOver.run { order.withLock { $0.append("handed over") } }
        }
        release.signal()
        callers.sync {}
        #expect(order.value == ["busy", "queued", "handed over"])
        // Once that work has run, the next is handed over in place again.
        let inPlace = Locked(false)
        handOver.begin()
        await onOneOffQueue {
            handOver.run { inPlace.withLock { $0 = true } }
            #expect(inPlace.value)
        }
    }

    @Test func workHandedOverFromWorkHandedOverToTheSameQueueIsQueuedNotDeadlocked() async throws {
        let callers = DispatchQueue(label: "callers")
        let ran = Locked<[String]>([])
        let outer = HandOver(to: callers)
        outer.begin()
        await onOneOffQueue {
            outer.run {
                // Now `callers`' own work, on the one-off queue's thread: handing over again must
                // not wait for `callers`, which is this very work (another hand-over, so that only
                // the queue it runs on decides).
                let inner = HandOver(to: callers)
                inner.begin()
                inner.run { ran.withLock { $0.append("inner") } }
                ran.withLock { $0.append("outer") }
            }
        }
        callers.sync {}
        #expect(ran.value == ["outer", "inner"])
    }
}
