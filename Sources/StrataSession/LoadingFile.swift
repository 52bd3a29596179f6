import Foundation

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
/// is taken under the task's own lock right after `resume()`, and its file removed, if it is still
/// there, after the task has ended. On Apple platforms, where the system removes the file, and should
/// those properties be gone from FoundationNetworking, there is nothing to watch.
struct LoadingFile: @unchecked Sendable {  // Sendable: the loader is only read, after its task has ended.
    private let loader: AnyObject

    /// The loader of `task`, a download task just resumed; `nil` without one to watch.
    init?(of task: URLSessionTask) {
        #if canImport(FoundationNetworking)
            var mirror: Mirror? = Mirror(reflecting: task)
            while let current = mirror {
                if let lock = current.descendant("_protocolLock") as? NSLock {
                    // The loading system replaces the loader under this lock; read it the same way.
                    let loader = lock.withLock { current.descendant("_protocolStorage", 0) as AnyObject? }
                    guard let loader, loader is URLProtocol else { return nil }
                    self.loader = loader
                    return
                }
                mirror = current.superclassMirror
            }
        #endif
        return nil
    }

    /// Removes the loader's file, if it made one and it is still there (a success's file has been
    /// moved away by then). Only a file of the temporary folder is touched.
    func remove() {
        var mirror: Mirror? = Mirror(reflecting: loader)
        while let current = mirror {
            // An `Optional<URL>`, nil until the loader wrote a byte.
            if let stored = current.descendant("$__lazy_storage_$_tempFileURL") {
                guard let url = stored as? URL, url.isFileURL,
                    url.deletingLastPathComponent().standardizedFileURL.path
                        == URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
                else { return }
                try? FileManager.default.removeItem(at: url)
                return
            }
            mirror = current.superclassMirror
        }
    }
}
