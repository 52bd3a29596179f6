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
/// milliseconds at most: the lane it blocks is then replaced, while fewer than 128 lanes run; past
/// that, work that ends a request runs beyond them.
package enum StrataQueue {
    /// A new serial queue of Strata's own.
    package static func make(_ label: String = "Strata.work") -> DispatchQueue {
        DispatchQueue(label: label)
    }

    /// Runs `work` soon on a thread of Strata's own (``WorkLanes``): at once on an idle lane, or
    /// after the work a lane is running, or — when that work runs longer than a few milliseconds —
    /// on a new lane.
    ///
    /// Work that ends a request (an answer on its way up, a deadline, a failure handed to the
    /// completion) passes `ending`: when every lane is taken and no more may start, it runs beyond
    /// the limit (``WorkLanes/run(_:ending:)``), so that requests a caller's closures wait for on
    /// every lane still end.
    package static func async(ending: Bool = false, _ work: @escaping @Sendable () -> Void) {
        lanes.run(work, ending: ending)
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
    /// and resumes a task with FoundationNetworking, which waits for the session's queue. A timer
    /// whose work ends requests (a refresh that timed out) passes `ending`, as ``async(ending:_:)``.
    package static func async(
        after seconds: Double, ending: Bool = false, _ work: @escaping @Sendable () -> Void
    ) {
        timers.asyncAfter(deadline: .now() + (seconds.isNaN ? 0 : seconds)) { lanes.run(work, ending: ending) }
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
/// for a retired lane to end — except work that ends a request, which then runs on a queue of its
/// own, up to ``endingLimit`` pieces at once. A closure of the caller's that blocks until another
/// request ends (an adapter fetching a token through the same stack, waiting on a semaphore)
/// holds its lane: with a few hundred such waits at once every lane was held, the answers they
/// waited for waited for a lane, and so did every deadline, and nothing ended again.
///
/// libdispatch gives a process a few hundred threads (255 on Linux) for all its queues, and what a
/// blocked lane waits for may need one of them: FoundationNetworking makes and resumes a task with
/// a `sync` on its session's queue, which its work there holds up. On a busy machine each such
/// wait took longer than the stall limit, so each replacement lane blocked in turn; a few hundred
/// requests, streams and forms at once took every thread libdispatch had, none was left for the
/// session's queue, and the process hung.
package final class WorkLanes: Sendable {
    /// How long a lane may run one piece of work while other work waits before it is replaced, in
    /// nanoseconds.
    private let stallLimit: UInt64
    /// The most lanes running at once, the ones retired while they run included.
    package let limit: Int
    /// The most pieces of work that end requests running at once beyond ``limit``.
    package let endingLimit: Int

    private final class Lane: @unchecked Sendable {  // Sendable: `WorkLanes.state`'s lock guards the `var`s.
        let queue = StrataQueue.makeMarked()
        /// When the lane started the piece of work it runs; nil while idle.
        var busySince: UInt64?
        /// Replaced while running a piece of work that took too long: it takes no more.
        var retired = false
    }

    /// Work waiting for a lane, in the order it came.
    private struct Backlog: Sendable {
        private var pieces: [(order: UInt64, work: @Sendable () -> Void)] = []
        private var head = 0

        var count: Int { pieces.count - head }
        /// The order of the first piece, if any.
        var first: UInt64? { head < pieces.count ? pieces[head].order : nil }

        mutating func append(_ work: @escaping @Sendable () -> Void, order: UInt64) {
            pieces.append((order, work))
        }

        mutating func take() -> (@Sendable () -> Void)? {
            guard head < pieces.count else { return nil }
            let work = pieces[head].work
            head += 1
            if head == pieces.count {
                pieces.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 32, head * 2 >= pieces.count {
                pieces.removeFirst(head)
                head = 0
            }
            return work
        }
    }

    private struct State: Sendable {
        var lanes: [Lane]
        /// Work that ends requests, and other work, waiting for a lane; lanes take both in the order
        /// they came.
        var ending = Backlog()
        var other = Backlog()
        var arrivals: UInt64 = 0
        /// Whether a look at stalled lanes is due.
        var watching = false
        /// Retired lanes still running their piece of work.
        var retiredRunning = 0
        /// Pieces of work that end requests running beyond the limit.
        var endingRunning = 0

        var waiting: Int { ending.count + other.count }

        mutating func wait(_ work: @escaping @Sendable () -> Void, ending isEnding: Bool) {
            arrivals += 1
            if isEnding {
                ending.append(work, order: arrivals)
            } else {
                other.append(work, order: arrivals)
            }
        }

        /// The piece of work that has waited longest.
        mutating func takeWaiting() -> (@Sendable () -> Void)? {
            guard let endingFirst = ending.first else { return other.take() }
            guard let otherFirst = other.first, otherFirst < endingFirst else { return ending.take() }
            return other.take()
        }

        /// The longest-waiting work that ends a request, to run beyond `limit` lanes once they run,
        /// if fewer than `endingLimit` such pieces do.
        mutating func takeBeyond(limit: Int, endingLimit: Int) -> (@Sendable () -> Void)? {
            guard lanes.count + retiredRunning >= limit, endingRunning < endingLimit, let work = ending.take() else {
                return nil
            }
            endingRunning += 1
            return work
        }
    }

    private let state: Locked<State>
    private let watcher = StrataQueue.make("Strata.work.watcher")

    /// `width` lanes (by default as many as the machine has active cores, and at least two), each
    /// replaced once it has run one piece of work for `stallLimit` seconds (2 ms by default, an
    /// hour at most) while other work waits, as long as no more than `limit` lanes (128 by default,
    /// at least `width`) then run at once; beyond them, up to `endingLimit` (32 by default) pieces
    /// of work that end requests.
    package init(
        width: Int = max(2, ProcessInfo.processInfo.activeProcessorCount), stallLimit: TimeInterval = 0.002,
        limit: Int = 128, endingLimit: Int = 32
    ) {
        let width = max(1, width)
        state = Locked(State(lanes: (0..<width).map { _ in Lane() }))
        self.stallLimit = stallLimit > 0 ? UInt64(min(stallLimit, 3600) * 1e9) : 0
        self.limit = max(width, limit)
        self.endingLimit = max(0, endingLimit)
    }

    private static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `work` on an idle lane, or once a lane is free (or replaced). Work that ends a request
    /// (`ending`) that finds every lane busy and ``limit`` lanes running runs at once on a queue of
    /// its own instead, while fewer than ``endingLimit`` such pieces run, and such work that waits
    /// when the limit is reached starts there as soon as the limit allows.
    package func run(_ work: @escaping @Sendable () -> Void, ending: Bool = false) {
        let now = Self.now
        let (lane, beyond, watch) = state.withLock { state -> (Lane?, (@Sendable () -> Void)?, Bool) in
            if let lane = state.lanes.first(where: { $0.busySince == nil }) {
                lane.busySince = now
                return (lane, nil, false)
            }
            state.wait(work, ending: ending)
            let beyond = ending ? state.takeBeyond(limit: limit, endingLimit: endingLimit) : nil
            guard state.waiting > 0, !state.watching else { return (nil, beyond, false) }
            state.watching = true
            return (nil, beyond, true)
        }
        if let lane {
            lane.queue.async { self.drain(lane, from: work) }
        }
        if let beyond {
            runBeyondLimit(beyond)
        }
        if watch {
            lookForStalls()
        }
    }

    /// Runs `first`, which ends a request, on a queue of its own, then other such work while the
    /// limit holds the lanes. Not a lane: nothing replaces it if it blocks, so completions are
    /// queued from it (``HandOver``).
    private func runBeyondLimit(_ first: @escaping @Sendable () -> Void) {
        StrataQueue.make("Strata.work.ending").async { [self] in
            var work = first
            while true {
                work()
                let next = state.withLock { state -> (@Sendable () -> Void)? in
                    state.endingRunning -= 1
                    return state.takeBeyond(limit: limit, endingLimit: endingLimit)
                }
                guard let next else { return }
                work = next
            }
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
    /// long as ``limit`` allows, giving waiting work to the new lanes, and starts waiting work that
    /// ends a request beyond the limit once it is reached; looks again after ``stallLimit`` while
    /// work waits.
    private func lookForStalls() {
        watcher.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: stallLimit))) { [self] in
            let now = Self.now
            let (started, beyond, again) = state.withLock {
                state -> ([(Lane, @Sendable () -> Void)], [@Sendable () -> Void], Bool) in
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
                var beyond: [@Sendable () -> Void] = []
                while let work = state.takeBeyond(limit: limit, endingLimit: endingLimit) {
                    beyond.append(work)
                }
                state.watching = state.waiting > 0
                return (started, beyond, state.watching)
            }
            for (lane, work) in started {
                lane.queue.async { self.drain(lane, from: work) }
            }
            beyond.forEach(runBeyondLimit)
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
