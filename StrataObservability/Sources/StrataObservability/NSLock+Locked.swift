import Foundation

extension NSLock {
    /// Runs `body` holding the lock. (`withLock` of Apple's Foundation needs macOS 14 and iOS 17;
    /// this package runs from macOS 13 and iOS 16.)
    func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
