import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The file FoundationNetworking writes a download task's body to, removed once the task has ended.
///
/// On Linux a download task writes its body to a file of its own (`<UUID>.tmp` in the temporary
/// folder) and removes it neither when the task fails or is cancelled nor after a success: a
/// download cut short at 900 MB leaves 900 MB behind, and every retry of it as much again. No
/// public API names that file before it is complete, and none at all after a failure. The task's
/// loader (its `URLProtocol`) holds it in a lazily made property, which `Mirror` reads: the loader
/// is taken under the task's own lock before it starts loading (see ``resume(_:found:)``), and its
/// file removed, if it is still there, after the task has ended. On Apple platforms, where the
/// system removes the file, and should those properties be gone from FoundationNetworking, there is
/// nothing to watch.
struct LoadingFile: @unchecked Sendable {  // Sendable: the loader is only read, after its task has ended.
    private let loader: AnyObject

    /// Resumes `task`, a download task, and hands its loading file to `found` before the task
    /// starts loading, if there is one to watch.
    ///
    /// Taken once `resume()` has returned, the loader of a task that failed at once — a kept
    /// connection that turned out dead, the bytes an earlier answer left on it — was already gone,
    /// and its file stayed. The loading system makes the loader within `resume()`, on the task's
    /// work queue, and queues the start of its loading there; ``LoadingFileHook`` runs as it picks
    /// the loader's class, and queues the loader's taking ahead of that start.
    static func resume(_ task: URLSessionTask, found: @escaping @Sendable (LoadingFile) -> Void) {
        #if canImport(FoundationNetworking)
            if LoadingFileHook.resume(task, found: found) { return }
        #else
            task.resume()
        #endif
        if let file = LoadingFile(of: task) { found(file) }
    }

    /// The loader of `task`, a download task just resumed; `nil` without one to watch.
    init?(of task: URLSessionTask) {
        #if canImport(FoundationNetworking)
            if let level = Mirror.level(of: task, holding: "_protocolLock"),
                let lock = level.descendant("_protocolLock") as? NSLock
            {
                // The loading system replaces the loader under this lock; read it the same way.
                let loader = lock.withLock { level.descendant("_protocolStorage", 0) as AnyObject? }
                guard let loader, loader is URLProtocol else { return nil }
                self.loader = loader
                return
            }
        #endif
        return nil
    }

    /// Removes the loader's file, if it made one and it is still there (a success's file has been
    /// moved away by then). Only a file of the temporary folder is touched.
    func remove() {
        let label = "$__lazy_storage_$_tempFileURL"
        // An `Optional<URL>`, nil until the loader wrote a byte.
        guard let url = Mirror.level(of: loader, holding: label)?.descendant(label) as? URL, url.isFileURL,
            url.deletingLastPathComponent().standardizedFileURL.path
                == URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
        else { return }
        try? FileManager.default.removeItem(at: url)
    }
}

extension Mirror {
    /// The mirror of `subject`, or of the superclass of it, that has a stored property named
    /// `label`; `nil` if none has.
    fileprivate static func level(of subject: Any, holding label: String) -> Mirror? {
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let current = mirror {
            if current.children.contains(where: { $0.label == label }) { return current }
            mirror = current.superclassMirror
        }
        return nil
    }
}

#if canImport(FoundationNetworking)
    /// A loader class that loads nothing, first in a transport's session configuration: the
    /// loading system asks it whether it loads a request as it picks a new task's loader, within
    /// `resume()` and on the thread that called it. For a download task that ``LoadingFile`` is
    /// resuming on that thread, it queues the taking of the task's loader on the task's work queue,
    /// where the loader's start is queued next.
    final class LoadingFileHook: URLProtocol {
        /// A download task being resumed, and where its loading file goes.
        private final class Pending {
            let task: URLSessionTask
            let found: @Sendable (LoadingFile) -> Void
            /// Whether the taking of the loader is queued.
            var queued = false

            init(task: URLSessionTask, found: @escaping @Sendable (LoadingFile) -> Void) {
                self.task = task
                self.found = found
            }
        }

        /// How many download tasks are being resumed now: with none, a request is turned down at once.
        private static let resuming = Locked(0)
        /// The key of the ``Pending`` task in the resuming thread's dictionary.
        private static let key = "Strata.LoadingFileHook.pending"

        /// Resumes `task`, queuing the taking of its loader as the loading system picks it.
        /// - Returns: Whether it was queued; if not, the loader is the caller's to take.
        static func resume(_ task: URLSessionTask, found: @escaping @Sendable (LoadingFile) -> Void) -> Bool {
            let pending = Pending(task: task, found: found)
            let thread = Thread.current
            thread.threadDictionary[key] = pending
            resuming.withLock { $0 += 1 }
            task.resume()
            resuming.withLock { $0 -= 1 }
            thread.threadDictionary[key] = nil
            return pending.queued
        }

        override class func canInit(with request: URLRequest) -> Bool {
            guard resuming.withLock({ $0 > 0 }),
                let pending = Thread.current.threadDictionary[key] as? Pending, !pending.queued,
                let workQueue = Self.workQueue(of: pending.task)
            else { return false }
            pending.queued = true
            let (task, found) = (pending.task, pending.found)
            workQueue.async {
                if let file = LoadingFile(of: task) { found(file) }
            }
            return false
        }

        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

        /// The serial queue `task` makes its loader and starts it on.
        private static func workQueue(of task: URLSessionTask) -> DispatchQueue? {
            Mirror.level(of: task, holding: "workQueue")?.descendant("workQueue") as? DispatchQueue
        }
    }
#endif
