import Dispatch
import Foundation
import StrataCore

/// Turns a transport's byte counts into the caller's `Progress`, off the transport's queue.
///
/// Each exchange with the transport gets a new `Progress` (on Linux, setting a total back to zero
/// traps, so one is never reused). It is changed and handed to the caller's closure only on the
/// relay's own serial queue, in the order the counts came: a slow progress closure delays only
/// this request's later reports, never a transfer.
final class ProgressRelay: Sendable {
    private let queue = StrataQueue.make("Strata.SessionManager.progress")
    private let report: @Sendable (Progress) -> Void

    init(_ report: @escaping @Sendable (Progress) -> Void) {
        self.report = report
    }

    /// The count handler of a new exchange, with a `Progress` of its own.
    func exchange() -> @Sendable (Int64, Int64) -> Void {
        let progress = Progress(totalUnitCount: -1)
        return { [queue, report] done, expected in
            queue.async {
                if expected > 0, progress.totalUnitCount != expected {
                    progress.totalUnitCount = expected
                }
                progress.completedUnitCount = done
                report(progress)
            }
        }
    }
}
