import Dispatch
import Foundation
import StrataCore

/// Turns a transport's byte counts into the caller's `Progress`, off the transport's queue, and
/// keeps every report of a request before its completion.
///
/// A request with a progress closure has one relay. Each exchange with the transport gets a new
/// `Progress` (on Linux, setting a total back to zero traps, so one is never reused). It is changed
/// and handed to the caller's closure only on the relay's own serial queue, in the order the counts
/// came: a slow progress closure delays only this request — its later reports and its completion —
/// never a transfer. An exchange's counts stop at its outcome, and the request's completion goes
/// through the same queue (``finish(then:)``), so every count reported before it reaches the
/// caller first, and a count that comes after it is dropped: nothing about an attempt is reported
/// once it is over, nor about a request once it has completed.
final class ProgressRelay: Sendable {
    private let queue = StrataQueue.make("Strata.SessionManager.progress")
    /// Whether the request has completed; read and written on `queue` only.
    private let finished = Locked(false)

    /// The counts of one exchange with the transport, with a `Progress` of their own, reported to
    /// `report` until the exchange ends.
    final class Exchange: Sendable {
        private let open = Locked(true)
        /// Takes the transport's counts.
        let counts: @Sendable (Int64, Int64) -> Void

        fileprivate init(on relay: ProgressRelay, reportingTo report: @escaping @Sendable (Progress) -> Void) {
            let progress = Progress(totalUnitCount: -1)
            counts = { [open, queue = relay.queue, finished = relay.finished] done, expected in
                guard open.value else { return }
                queue.async {
                    guard !finished.value else { return }
                    progress.count(done, of: expected)
                    report(progress)
                }
            }
        }

        /// The exchange's outcome has come: counts from now on belong to nothing and are dropped.
        /// A transport reports an exchange's counts before its outcome, from the same thread
        /// (URLSession's delegate queue, or the task's event loop), so none is lost.
        func end() {
            open.withLock { $0 = false }
        }
    }

    /// A new exchange, whose counts go to `report`.
    func exchange(reportingTo report: @escaping @Sendable (Progress) -> Void) -> Exchange {
        Exchange(on: self, reportingTo: report)
    }

    /// Runs `completion` on the relay's queue once every count reported so far has been handed to
    /// the caller; counts reported afterwards are dropped.
    func finish(then completion: @escaping @Sendable () -> Void) {
        queue.async { [finished] in
            finished.withLock { $0 = true }
            completion()
        }
    }
}

extension Progress {
    /// Counts `done` bytes of `expected` (`-1`, unknown, leaves the total as it is: on Linux,
    /// setting a total back to zero traps).
    package func count(_ done: Int64, of expected: Int64) {
        if expected > 0, totalUnitCount != expected {
            totalUnitCount = expected
        }
        completedUnitCount = done
    }
}
