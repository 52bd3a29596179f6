import Dispatch

/// Where Strata runs its own work — hand-overs, deadlines, retry delays, decoding — so that none of
/// it waits for threads a caller can block.
///
/// `DispatchQueue.global()` (and every concurrent queue made without a target) is width-limited:
/// when callers block its threads — a work item that waits on a semaphore for its request's
/// completion, as command-line tools and older server code do — libdispatch adds a thread about
/// once a second on Linux, and work hopped onto it waits that long. A serial queue made without a
/// target is served from libdispatch's overcommitting pool, which starts a thread for it at once
/// when none is idle. Each piece of work that may run a caller's code gets a queue of its own
/// (making one costs about 0.3 µs), so a closure that blocks holds up only its own request.
package enum StrataQueue {
    /// A new serial queue of Strata's own.
    package static func make(_ label: String = "Strata.work") -> DispatchQueue {
        DispatchQueue(label: label)
    }

    /// Runs `work` on a new serial queue of its own.
    package static func async(_ work: @escaping @Sendable () -> Void) {
        make().async(execute: work)
    }

    /// Runs `work` after `seconds` on a new serial queue of its own: at once if `seconds` is not a
    /// number or not positive (Dispatch would wait forever for a time that is not a number, so a
    /// careless timeout would hang what it bounds), never if it is too long for the clock.
    package static func async(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
        make().asyncAfter(deadline: .now() + (seconds.isNaN ? 0 : seconds), execute: work)
    }
}
