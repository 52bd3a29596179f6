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

    /// Neither kind of work waits for work sent after it: 16 pieces that each wait until all 16
    /// have started finish, round after round — on the kept one-off queues (`async(after:)`), and
    /// on the lanes (`async`), which are fewer than 16 and are replaced as the pieces block them.
    @Test(arguments: [false, true])
    func workNeverWaitsForOtherWorkSentMeanwhile(delayed: Bool) async {
        let width = 16
        let timedOut = Locked(false)
        for _ in 0..<20 where !timedOut.value {
            let started = Locked(0)
            let allStarted = DispatchSemaphore(value: 0)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<width {
                    group.addTask {
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            let work: @Sendable () -> Void = {
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
                            if delayed { StrataQueue.async(after: 0, work) } else { StrataQueue.async(work) }
                        }
                    }
                }
            }
            #expect(started.value == width)
        }
        #expect(!timedOut.value, "a piece of work waited for one sent after it")
    }
}

/// Many pieces of short work at once share as many threads as there are lanes; a piece that runs
/// long holds up the work waiting behind it only until its lane is replaced.
@Suite struct WorkLanesTests {
    /// Sends `count` pieces from four threads at once and waits until all have run.
    private func send(_ count: Int, to lanes: WorkLanes, _ work: @escaping @Sendable (Int) -> Void) async {
        let done = DispatchGroup()
        await withCheckedContinuation { (sent: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                DispatchQueue.concurrentPerform(iterations: 4) { sender in
                    for piece in stride(from: sender, to: count, by: 4) {
                        done.enter()
                        lanes.run {
                            work(piece)
                            done.leave()
                        }
                    }
                }
                done.wait()
                sent.resume()
            }
        }
    }

    /// Sends `count` pieces that each run `body` (as ``send(_:to:_:)`` does) and returns how many
    /// times each piece ran and the most that ran at once.
    private func run(
        _ count: Int, on lanes: WorkLanes, _ body: @escaping @Sendable () -> Void
    ) async -> (times: [Int], most: Int) {
        let runs = Locked((times: [Int](repeating: 0, count: count), running: 0, most: 0))
        await send(count, to: lanes) { piece in
            runs.withLock {
                $0.times[piece] += 1
                $0.running += 1
                $0.most = max($0.most, $0.running)
            }
            body()
            runs.withLock { $0.running -= 1 }
        }
        return (runs.value.times, runs.value.most)
    }

    @Test func everyPieceRunsOnceAndNoMoreRunAtOnceThanThereAreLanes() async {
        // No piece runs long enough here for its lane to be replaced.
        let lanes = WorkLanes(width: 2, stallLimit: 3600)
        let runs = await run(4_000, on: lanes) {
            // Long enough for pieces sent from the four threads to overlap if nothing held them.
            let until = DispatchTime.now().uptimeNanoseconds + 20_000
            while DispatchTime.now().uptimeNanoseconds < until {}
        }
        #expect(runs.times.allSatisfy { $0 == 1 })
        #expect(runs.most == 2)
    }

    @Test func workWaitingBehindABlockedLaneStartsOnceTheLaneIsReplaced() async throws {
        let lanes = WorkLanes(width: 1, stallLimit: 0.02)
        let release = DispatchSemaphore(value: 0)
        let order = Locked<[String]>([])
        lanes.run {
            release.wait()
            order.withLock { $0.append("blocked one") }
        }
        let started = ContinuousClock.now
        await withCheckedContinuation { (ran: CheckedContinuation<Void, Never>) in
            lanes.run {
                order.withLock { $0.append("waiting one") }
                ran.resume()
            }
        }
        let waited = ContinuousClock.now - started
        // It waited for the stall limit (the one lane was busy), and not for the blocked piece.
        #expect(waited >= .milliseconds(15))
        #expect(order.value == ["waiting one"])
        release.signal()
        for _ in 0..<500 where order.value.count < 2 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(order.value == ["waiting one", "blocked one"])
        // The retired lane took no more work; the one that replaced it takes the next at once.
        await withCheckedContinuation { (ran: CheckedContinuation<Void, Never>) in lanes.run { ran.resume() } }
    }

    /// Pieces that each block their lane (as a `sync` on a busy queue does) get new lanes only up
    /// to the limit; the rest wait for a retired lane to end, and every piece runs. Without the
    /// limit, lanes were replaced every few milliseconds for as long as work waited: 300 requests
    /// on a busy machine took every thread libdispatch had, and the queue the lanes waited for got
    /// none.
    @Test(arguments: [2, 8])
    func lanesBlockedTogetherAreReplacedOnlyUpToTheLimit(limit: Int) async {
        let lanes = WorkLanes(width: 2, stallLimit: 0.002, limit: limit)
        #expect(lanes.limit == limit)
        let runs = await run(60, on: lanes) { usleep(20_000) }
        #expect(runs.times.allSatisfy { $0 == 1 })
        // Each lane has been replaced at least once: the limit is reached, not merely not passed.
        #expect(runs.most == limit)
    }
}

/// Work that ends a request does not wait for lanes a caller's closures hold: when every lane is
/// taken and the limit reached, it runs beyond it, up to its own limit; other work waits.
@Suite struct EndingWorkTests {
    /// Sends `count` closures that each block until `release` is signalled; returns how many have
    /// started.
    private func hold(_ count: Int, on lanes: WorkLanes, until release: DispatchSemaphore) -> Locked<Int> {
        let holding = Locked(0)
        for _ in 0..<count {
            lanes.run {
                holding.withLock { $0 += 1 }
                release.wait()
            }
        }
        return holding
    }

    /// Polls until `condition` holds, for a second at most.
    private func until(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(2)) }
    }

    @Test func workThatEndsARequestRunsBeyondTheLimitWhileEveryLaneIsHeld() async throws {
        #expect(WorkLanes().endingLimit == 32)
        let lanes = WorkLanes(width: 2, stallLimit: 0.002, limit: 4, endingLimit: 2)
        let release = DispatchSemaphore(value: 0)
        // Six closures that block until released: four lanes (the limit) take them, two wait.
        let holding = hold(6, on: lanes, until: release)
        try await until { holding.value == 4 }
        #expect(holding.value == 4)
        let plain = Locked(false)
        lanes.run { plain.withLock { $0 = true } }
        let ended = Locked(0)
        let endingRelease = DispatchSemaphore(value: 0)
        for _ in 0..<3 {
            lanes.run(
                {
                    ended.withLock { $0 += 1 }
                    endingRelease.wait()
                }, ending: true)
        }
        try await until { ended.value == 2 }
        try await Task.sleep(for: .milliseconds(50))
        // Two ran beyond the limit; the third, past the ending limit, waits with the plain one.
        #expect(ended.value == 2)
        #expect(!plain.value)
        #expect(holding.value == 4)
        for _ in 0..<6 { release.signal() }
        for _ in 0..<3 { endingRelease.signal() }
        try await until { holding.value == 6 && plain.value && ended.value == 3 }
        #expect(holding.value == 6)
        #expect(plain.value)
        #expect(ended.value == 3)
    }

    /// A piece that came while lanes could still be added waits for one like other work; once the
    /// limit is reached, it starts beyond it with the next look at the lanes.
    @Test func workThatEndsARequestWaitingWhenTheLimitIsReachedStartsBeyondIt() async throws {
        let lanes = WorkLanes(width: 1, stallLimit: 0.002, limit: 2, endingLimit: 1)
        let release = DispatchSemaphore(value: 0)
        let holding = hold(2, on: lanes, until: release)
        let ended = Locked(false)
        lanes.run({ ended.withLock { $0 = true } }, ending: true)
        try await until { ended.value && holding.value == 2 }
        #expect(ended.value)
        #expect(holding.value == 2)
        for _ in 0..<2 { release.signal() }
    }

    @Test func workThatEndsARequestTakesAnIdleLaneOrWaitsBelowTheLimitAsOtherWorkDoes() async throws {
        let lanes = WorkLanes(width: 1, stallLimit: 3600, limit: 4, endingLimit: 2)
        let release = DispatchSemaphore(value: 0)
        let order = Locked<[String]>([])
        lanes.run {
            release.wait()
            order.withLock { $0.append("blocked") }
        }
        // One lane of four allowed, busy: the ending piece waits for it (no stall is seen within
        // an hour), as other work does, rather than start a queue of its own.
        lanes.run({ order.withLock { $0.append("ending") } }, ending: true)
        try await Task.sleep(for: .milliseconds(50))
        #expect(order.value.isEmpty)
        release.signal()
        try await until { order.value.count == 2 }
        #expect(order.value == ["blocked", "ending"])
    }
}

/// A serial queue over the work lanes: one piece at a time, in the order given, each once; and a
/// piece that blocks holds up its own queue, not another's.
@Suite struct SerialLaneTests {
    @Test func piecesRunOnceInOrderAndNeverTwoAtOnce() async {
        let queue = SerialLane()
        let count = 20_000
        let runs = Locked((order: [Int](), running: 0, most: 0))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                // From four threads at once, each its own ascending run of pieces.
                DispatchQueue.concurrentPerform(iterations: 4) { sender in
                    for piece in stride(from: sender, to: count, by: 4) {
                        queue.async {
                            runs.withLock {
                                $0.running += 1
                                $0.most = max($0.most, $0.running)
                                $0.order.append(piece)
                            }
                            runs.withLock { $0.running -= 1 }
                            if piece >= count - 4, runs.value.order.count == count { done.resume() }
                        }
                    }
                }
            }
        }
        let order = runs.value.order
        #expect(Set(order).count == count)
        #expect(runs.value.most == 1)
        for sender in 0..<4 {
            let own = order.filter { $0 % 4 == sender }
            #expect(own == own.sorted(), "sender \(sender)'s pieces out of order")
        }
    }

    @Test func aBlockedQueueHoldsUpNoOther() async {
        let blocked = SerialLane()
        let release = DispatchSemaphore(value: 0)
        blocked.async { release.wait() }
        await withCheckedContinuation { (ran: CheckedContinuation<Void, Never>) in
            SerialLane().async { ran.resume() }
        }
        release.signal()
        await withCheckedContinuation { (ran: CheckedContinuation<Void, Never>) in blocked.async { ran.resume() } }
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
