import Dispatch
import Foundation

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
    /// The queue runs on the threads of the global concurrent queue, as a plain `OperationQueue`
    /// does, rather than on a thread of its own (a serial queue's default). A completion that
    /// resumes a Swift task hands the task to those same threads, so the thread that delivered the
    /// completion runs the task next, where from a thread of its own another had to be woken: a
    /// sequential loopback GET through the data transfer service took 2–4% less time (the two
    /// queues side by side in one process, 1,500 requests each), 64 at once about 2% more.
    final class SerialDelegateQueue: OperationQueue, @unchecked Sendable {  // Restated; `queue` is immutable.
        private let queue: DispatchQueue

        init(label: String) {
            queue = DispatchQueue(label: label, target: .global())
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
