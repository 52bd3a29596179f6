import Foundation

/// State guarded by a lock: every read and write of `state` goes through ``withLock(_:)``.
package final class Locked<State: Sendable>: @unchecked Sendable {  // Sendable: `lock` guards every access to `state`.
    private let lock = NSLock()
    private var state: State

    /// Creates the guard around an initial state.
    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    /// A copy of the state.
    package var value: State {
        withLock { $0 }
    }
}
