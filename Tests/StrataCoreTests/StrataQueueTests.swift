import Dispatch
import Foundation
import StrataCore
import Testing

/// Strata's delays come from callers (timeouts, reconnection times) and servers (`Retry-After`):
/// whatever the number, the work runs or, for a delay too long for the clock, never does; none
/// traps, and one that is not a number does not wait forever (Dispatch's reading of it).
@Suite struct StrataQueueTests {
    @Test(arguments: [TimeInterval.nan, -TimeInterval.nan, -1, 0, -TimeInterval.infinity])
    func aDelayThatIsNotANumberOrNotPositiveRunsTheWorkAtOnce(delay: TimeInterval) async throws {
        let ran = Locked(false)
        StrataQueue.async(after: delay) { ran.withLock { $0 = true } }
        for _ in 0..<500 where !ran.value { try await Task.sleep(for: .milliseconds(2)) }
        #expect(ran.value)
    }

    @Test(arguments: [TimeInterval.infinity, 1e300, Double.greatestFiniteMagnitude])
    func aDelayTooLongForTheClockNeverRunsTheWorkAndDoesNotTrap(delay: TimeInterval) async throws {
        let ran = Locked(false)
        StrataQueue.async(after: delay) { ran.withLock { $0 = true } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!ran.value)
    }
}
