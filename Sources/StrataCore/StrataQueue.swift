import Dispatch

/// Where Strata runs its own work — hand-overs, deadlines, retry delays, decoding — so that none of
/// it waits for threads a caller can block.
///
/// `DispatchQueue.global()` (and every concurrent queue made without a target) is width-limited:
/// when callers block its threads — a work item that waits on a semaphore for its request's
/// completion, as command-line tools and older server code do — libdispatch adds a thread about
/// once a second on Linux, and work hopped onto it waits that long. A serial queue made without a
/// target is served from libdispatch's overcommitting pool, which starts a thread for it at once
/// when none is idle. Each piece of work that may run a caller's code gets such a queue to itself
/// — one that has nothing else to do — so a closure that blocks holds up only its own request.
package enum StrataQueue {
    /// A new serial queue of Strata's own.
    package static func make(_ label: String = "Strata.work") -> DispatchQueue {
        DispatchQueue(label: label)
    }

    /// Runs `work` on a serial queue of its own, which nothing else is sent to until it has run.
    package static func async(_ work: @escaping @Sendable () -> Void) {
        let queue = takeOneOff()
        queue.async {
            work()
            giveBack(queue)
        }
    }

    /// Runs `work` after `seconds` on a serial queue of its own: at once if `seconds` is not a
    /// number or not positive (Dispatch would wait forever for a time that is not a number, so a
    /// careless timeout would hang what it bounds), never if it is too long for the clock.
    package static func async(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
        let queue = takeOneOff()
        queue.asyncAfter(deadline: .now() + (seconds.isNaN ? 0 : seconds)) {
            work()
            giveBack(queue)
        }
    }

    // MARK: - One-off queues

    /// Marks the queues ``async(_:)`` and ``async(after:_:)`` run work on: a thread running one of
    /// them runs nothing else of anyone's, so it may wait (``HandOver``).
    fileprivate static let oneOff = DispatchSpecificKey<Bool>()

    /// One-off queues whose work has run, kept for the next: a queue marked with a specific value
    /// hands that value's release to a global queue when it is freed — a thread woken per request.
    private static let idle = Locked<[DispatchQueue]>([])
    /// How many idle one-off queues are kept; more are freed.
    private static let idleLimit = 64

    private static func takeOneOff() -> DispatchQueue {
        if let queue = idle.withLock({ $0.popLast() }) { return queue }
        let queue = make()
        queue.setSpecific(key: oneOff, value: true)
        return queue
    }

    /// Keeps `queue`, whose work has just run (on it, as its last act), for the next piece of work.
    private static func giveBack(_ queue: DispatchQueue) {
        idle.withLock { idle in
            if idle.count < idleLimit { idle.append(queue) }
        }
    }
}

/// Hands completions to a queue of the caller's, sparing a thread wake-up where it can; a session
/// manager's monitor events to its event queue the same way.
///
/// Each completion to come is announced (``begin()``), then handed over once. One handed over with
/// ``run(_:)`` from a queue of ``StrataQueue/async(_:)``'s, which has nothing else to do,
/// runs on that thread as the queue's own work (`sync`) when it is the only one of this
/// hand-over's under way: handing it to an idle queue would wake a thread for it (a tenth of a
/// small GET's time over loopback), and no other can come meanwhile and find the queue taken.
/// Otherwise it is queued (`async`), as are ``queue(_:)``'s always, and all of them for the main
/// queue (which runs on the main thread: this thread could only wait for it). While completions
/// come one after another, a thread already draining the queue takes each without a wake-up, which
/// a completion run in place would interrupt.
///
/// For the work this is the same either way: it runs on the queue, after what was queued there
/// before it, never beside anything else of the queue's (a serial queue's), and after the code
/// that led to it has returned.
package final class HandOver: Sendable {
    /// The caller's queue.
    package let queue: DispatchQueue
    /// The completions announced and not yet run.
    private let open = Locked(0)
    private let inPlace: Bool

    /// Hands work over to `queue`.
    package init(to queue: DispatchQueue) {
        self.queue = queue
        self.inPlace = queue !== DispatchQueue.main
    }

    /// Announces a completion, which ``run(_:)`` or ``queue(_:)`` will hand over.
    package func begin() {
        open.withLock { $0 += 1 }
    }

    /// Runs `work` on the queue: in place, from a one-off queue of Strata's while it is the only
    /// completion under way; queued otherwise. Call it only where nothing of the caller's is on
    /// the stack below (a response on its way up, not a retrier's decision or a cancellation):
    /// the caller's code could be the queue's own work, or hold a lock `work` takes.
    package func run(_ work: @escaping @Sendable () -> Void) {
        guard inPlace, open.value == 1, DispatchQueue.getSpecific(key: StrataQueue.oneOff) == true else {
            return queue(work)
        }
        queue.sync(execute: work)
        open.withLock { $0 -= 1 }
    }

    /// Queues `work` on the queue.
    package func queue(_ work: @escaping @Sendable () -> Void) {
        queue.async { [open] in
            work()
            open.withLock { $0 -= 1 }
        }
    }
}
