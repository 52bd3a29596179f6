import Dispatch
import Foundation

/// Where Strata runs its own work — hand-overs, deadlines, retry delays, decoding — so that none of
/// it waits for threads a caller can block, and so that many requests at once do not each take a
/// thread of their own.
///
/// `DispatchQueue.global()` (and every concurrent queue made without a target) is width-limited:
/// when callers block its threads — a work item that waits on a semaphore for its request's
/// completion, as command-line tools and older server code do — libdispatch adds a thread about
/// once a second on Linux, and work hopped onto it waits that long. A serial queue made without a
/// target is served from libdispatch's overcommitting pool, which starts a thread for it at once
/// when none is idle: a queue of its own for each piece of work would hold up nothing, but 64
/// responses at once then ran on some 60 threads on two cores. So work goes to a few such queues
/// (``WorkLanes``, one per core), which a caller's closure that blocks holds up for a few
/// milliseconds at most: the lane it blocks is then replaced, while fewer than 128 lanes run.
package enum StrataQueue {
    /// A new serial queue of Strata's own.
    package static func make(_ label: String = "Strata.work") -> DispatchQueue {
        DispatchQueue(label: label)
    }

    /// Runs `work` soon on a thread of Strata's own (``WorkLanes``): at once on an idle lane, or
    /// after the work a lane is running, or — when that work runs longer than a few milliseconds —
    /// on a new lane.
    package static func async(_ work: @escaping @Sendable () -> Void) {
        lanes.run(work)
    }

    private static let lanes = WorkLanes()

    /// Runs `work` after `seconds` as ``async(_:)`` runs it (a timer holds no thread while it
    /// waits): at once if `seconds` is not a number or not positive (Dispatch would wait forever
    /// for a time that is not a number, so a careless timeout would hang what it bounds), never if
    /// it is too long for the clock.
    ///
    /// The timers fire on one queue, which hands each piece of work to the lanes, so that their
    /// work takes no thread beyond the lanes' limit. A queue of its own for each ran the work
    /// there, a thread each for timers that fire together — and a retry's next attempt, say, makes
    /// and resumes a task with FoundationNetworking, which waits for the session's queue.
    package static func async(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
        timers.asyncAfter(deadline: .now() + (seconds.isNaN ? 0 : seconds)) { lanes.run(work) }
    }

    private static let timers = make("Strata.timers")

    // MARK: - Strata's queues

    /// Marks the queues ``async(_:)`` and ``async(after:_:)`` run work on: a thread running one of
    /// them runs nothing of anyone's beside it and nothing is held up for long by its waiting (a
    /// lane that waits is replaced), so it may wait (``HandOver``).
    fileprivate static let onLane = DispatchSpecificKey<Bool>()

    /// A serial queue of Strata's, marked as one it runs its own work on.
    fileprivate static func makeMarked() -> DispatchQueue {
        let queue = make()
        queue.setSpecific(key: onLane, value: true)
        return queue
    }
}

/// A serial queue over the work lanes (``StrataQueue/async(_:)``): its pieces of work run one at a
/// time, in order, each on a lane. Many of them — a stream's decoding each — share the lanes'
/// threads, where a `DispatchQueue` each took a thread each whenever they had work at once (200
/// streams cancelled together: some hundred threads); a piece that blocks holds up this queue alone,
/// its lane being replaced as any lane is.
package final class SerialLane: Sendable {
    private struct State: Sendable {
        var pending: [@Sendable () -> Void] = []
        /// Whether a lane is running this queue's pieces.
        var draining = false
    }

    private let state = Locked(State())

    package init() {}

    /// Runs `work` after the pieces given before it.
    package func async(_ work: @escaping @Sendable () -> Void) {
        let starts = state.withLock { state -> Bool in
            state.pending.append(work)
            defer { state.draining = true }
            return !state.draining
        }
        if starts {
            StrataQueue.async { self.drain() }
        }
    }

    /// Runs the pieces waiting, and those that come meanwhile, until there are none.
    private func drain() {
        while true {
            let batch = state.withLock { state -> [@Sendable () -> Void] in
                defer { state.pending.removeAll(keepingCapacity: true) }
                state.draining = !state.pending.isEmpty
                return state.pending
            }
            guard !batch.isEmpty else { return }
            for work in batch { work() }
        }
    }
}

/// A few serial queues, one per core, that run Strata's short pieces of work — a response's way
/// up, its decoding, a hand-over — from a common backlog.
///
/// Work that finds every lane busy waits in the backlog for the first lane to finish what it runs.
/// A lane whose piece of work has run for ``stallLimit`` while work waits (a caller's closure that
/// blocks, a large body decoded) is retired: a new lane takes its place and the backlog, and the
/// old one ends once its piece has run. So work waits behind other work for a few milliseconds at
/// most, a caller that blocks lanes costs a thread each (as a queue per piece of work did), and
/// many requests at once share as many threads as there are cores.
///
/// The lanes running at once, retired ones included, are at most ``limit``; past it, work waits
/// for a retired lane to end. libdispatch gives a process a few hundred threads (255 on Linux) for
/// all its queues, and what a blocked lane waits for may need one of them: FoundationNetworking
/// makes and resumes a task with a `sync` on its session's queue, which its work there holds up.
/// On a busy machine each such wait took longer than the stall limit, so each replacement lane
/// blocked in turn; a few hundred requests, streams and forms at once took every thread
/// libdispatch had, none was left for the session's queue, and the process hung.
package final class WorkLanes: Sendable {
    /// How long a lane may run one piece of work while other work waits before it is replaced, in
    /// nanoseconds.
    private let stallLimit: UInt64
    /// The most lanes running at once, the ones retired while they run included.
    package let limit: Int

    private final class Lane: @unchecked Sendable {  // Sendable: `WorkLanes.state`'s lock guards the `var`s.
        let queue = StrataQueue.makeMarked()
        /// When the lane started the piece of work it runs; nil while idle.
        var busySince: UInt64?
        /// Replaced while running a piece of work that took too long: it takes no more.
        var retired = false
    }

    private struct State: Sendable {
        var lanes: [Lane]
        /// Work waiting for a lane, first at `head`.
        var backlog: [@Sendable () -> Void] = []
        var head = 0
        /// Whether a look at stalled lanes is due.
        var watching = false
        /// Retired lanes still running their piece of work.
        var retiredRunning = 0

        var waiting: Int { backlog.count - head }

        mutating func takeWaiting() -> (@Sendable () -> Void)? {
            guard head < backlog.count else { return nil }
            let work = backlog[head]
            head += 1
            if head == backlog.count {
                backlog.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 32, head * 2 >= backlog.count {
                backlog.removeFirst(head)
                head = 0
            }
            return work
        }
    }

    private let state: Locked<State>
    private let watcher = StrataQueue.make("Strata.work.watcher")

    /// `width` lanes (by default as many as the machine has active cores, and at least two), each
    /// replaced once it has run one piece of work for `stallLimit` seconds (2 ms by default, an
    /// hour at most) while other work waits, as long as no more than `limit` lanes (128 by default,
    /// at least `width`) then run at once.
    package init(
        width: Int = max(2, ProcessInfo.processInfo.activeProcessorCount), stallLimit: TimeInterval = 0.002,
        limit: Int = 128
    ) {
        let width = max(1, width)
        state = Locked(State(lanes: (0..<width).map { _ in Lane() }))
        self.stallLimit = stallLimit > 0 ? UInt64(min(stallLimit, 3600) * 1e9) : 0
        self.limit = max(width, limit)
    }

    private static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `work` on an idle lane, or once a lane is free (or replaced).
    package func run(_ work: @escaping @Sendable () -> Void) {
        let now = Self.now
        let (lane, watch) = state.withLock { state -> (Lane?, Bool) in
            if let lane = state.lanes.first(where: { $0.busySince == nil }) {
                lane.busySince = now
                return (lane, false)
            }
            state.backlog.append(work)
            defer { state.watching = true }
            return (nil, !state.watching)
        }
        if let lane {
            lane.queue.async { self.drain(lane, from: work) }
        } else if watch {
            lookForStalls()
        }
    }

    /// Runs `first`, then waiting work until there is none or the lane is retired.
    private func drain(_ lane: Lane, from first: @escaping @Sendable () -> Void) {
        var work = first
        while true {
            work()
            let now = Self.now
            let next = state.withLock { state -> (@Sendable () -> Void)? in
                if lane.retired {
                    state.retiredRunning -= 1
                    return nil
                }
                guard let next = state.takeWaiting() else {
                    lane.busySince = nil
                    return nil
                }
                lane.busySince = now
                return next
            }
            guard let next else { return }
            work = next
        }
    }

    /// While work waits, replaces every lane that has run one piece of work for ``stallLimit``, as
    /// long as ``limit`` allows, giving waiting work to the new lanes; looks again after
    /// ``stallLimit`` while work waits.
    private func lookForStalls() {
        watcher.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: stallLimit))) { [self] in
            let now = Self.now
            let (started, again) = state.withLock { state -> ([(Lane, @Sendable () -> Void)], Bool) in
                var started: [(Lane, @Sendable () -> Void)] = []
                for index in state.lanes.indices where state.waiting > 0 {
                    guard state.lanes.count + state.retiredRunning < limit else { break }
                    guard let since = state.lanes[index].busySince, since <= now, now - since >= stallLimit else {
                        continue
                    }
                    state.lanes[index].retired = true
                    state.retiredRunning += 1
                    let lane = Lane()
                    state.lanes[index] = lane
                    if let work = state.takeWaiting() {
                        lane.busySince = now
                        started.append((lane, work))
                    }
                }
                state.watching = state.waiting > 0
                return (started, state.watching)
            }
            for (lane, work) in started {
                lane.queue.async { self.drain(lane, from: work) }
            }
            if again { lookForStalls() }
        }
    }
}

/// Hands completions to a queue of the caller's, sparing a thread wake-up where it can; a session
/// manager's monitor events to its event queue the same way.
///
/// Each completion to come is announced (``begin()``), then handed over once. One handed over with
/// ``run(_:)`` from a lane of ``StrataQueue/async(_:)``'s, which runs nothing beside it and is
/// replaced if it waits long while other work does, runs on that thread as the queue's own work
/// (`sync`) when it is the only one of this hand-over's under way: handing it to an idle queue
/// would wake a thread for it (a tenth of a small GET's time over loopback), and no other can come
/// meanwhile and find the queue taken. Otherwise it is queued (`async`), as are ``queue(_:)``'s
/// always, and all of them for the main queue (which runs on the main thread: this thread could
/// only wait for it). While completions come one after another, a thread already draining the queue
/// takes each without a wake-up, which a completion run in place would interrupt.
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

    /// Runs `work` on the queue: in place, from a lane of Strata's while it is the only
    /// completion under way; queued otherwise. Call it only where nothing of the caller's is on
    /// the stack below (a response on its way up, not a retrier's decision or a cancellation):
    /// the caller's code could be the queue's own work, or hold a lock `work` takes.
    package func run(_ work: @escaping @Sendable () -> Void) {
        guard inPlace, open.value == 1, DispatchQueue.getSpecific(key: StrataQueue.onLane) == true else {
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
