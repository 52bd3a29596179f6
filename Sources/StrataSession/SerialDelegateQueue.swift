import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    /// The session's delegate queue on Linux: an `OperationQueue` whose operations run in order on
    /// one serial dispatch queue.
    ///
    /// FoundationNetworking hands every delegate callback — each chunk of a body, each chunk written
    /// to a download, each completion — to the delegate queue as a block. A plain `OperationQueue`
    /// wraps each block in an `Operation` with its own locking and thread wake-ups. Profiling showed
    /// it as the largest cost a delegate adds to a loopback GET, and a 1 GiB download (a callback per
    /// 16 KiB chunk) spent much of its time there. The blocks need nothing of that machinery, only to
    /// run one at a time, in order.
    ///
    /// The queue is a serial queue of Strata's own (`StrataQueue`), not one that
    /// targets the global concurrent queue: every transfer's callbacks pass through it, and with
    /// the global queue's threads blocked by callers they waited seconds for libdispatch to add one.
    final class SerialDelegateQueue: OperationQueue, @unchecked Sendable {  // Restated; `queue` is immutable.
        private let queue: DispatchQueue

        init(label: String) {
            queue = StrataQueue.make(label)
            super.init()
            name = label
            maxConcurrentOperationCount = 1
        }

        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            queue.async(execute: block)
        }

        override func addOperation(_ operation: Operation) {
            queue.async { operation.start() }
        }

        override func addOperations(_ operations: [Operation], waitUntilFinished wait: Bool) {
            for operation in operations {
                addOperation(operation)
            }
            if wait {
                queue.sync {}
            }
        }

        override func waitUntilAllOperationsAreFinished() {
            queue.sync {}
        }

        override func addBarrierBlock(_ barrier: @escaping @Sendable () -> Void) {
            // On a serial queue every block already runs alone.
            queue.async(execute: barrier)
        }
    }
#endif
