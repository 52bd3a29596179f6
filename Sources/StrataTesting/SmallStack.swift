import Foundation

/// Runs `body` on a new thread with a stack of `stackSize` bytes and returns what it returned: for
/// tests that prove code does not recurse as deep as its input. 512 KiB is what Apple platforms
/// give a secondary thread; Linux's default of 8 MiB hides such recursion.
///
/// Also for test work that takes seconds of CPU. On Linux, Swift's cooperative pool has a thread
/// per core, and tests that hold them all hold up the dispatch queues behind them too: timers and
/// URL loading in every other test wait, and their timing checks fail. A thread of its own leaves
/// the pool free.
///
/// ```swift
/// let error = await runOnThread(stackSize: 512 * 1024) { deepValue.encodeForTest() }
/// ```
public func runOnThread<Result: Sendable>(stackSize: Int, _ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = stackSize
        thread.start()
    }
}
