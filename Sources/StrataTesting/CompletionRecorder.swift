import Dispatch
import Foundation
import StrataCore

/// Records every call of a completion handler, to check that it ran exactly once and with what.
///
/// ```swift
/// let recorder = CompletionRecorder<Result<User, DataTransferError>>()
/// transfer.request(with: endpoint, completion: recorder.record)
/// let result = await recorder.first()
/// #expect(recorder.callCount == 1)
/// ```
public final class CompletionRecorder<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var values: [Value] = []
        var instants: [ContinuousClock.Instant] = []
        var waiters: [UUID: CheckedContinuation<Value?, Never>] = [:]
    }

    private let state = Locked(State())

    /// Creates an empty recorder.
    public init() {}

    /// Records one call; pass this as the completion handler.
    public var record: @Sendable (Value) -> Void {
        { [self] value in
            let now = ContinuousClock.now
            let waiters = state.withLock { state in
                state.values.append(value)
                state.instants.append(now)
                defer { state.waiters = [:] }
                return state.waiters.values
            }
            for waiter in waiters {
                waiter.resume(returning: value)
            }
        }
    }

    /// Every recorded value, in order.
    public var values: [Value] { state.value.values }

    /// When each call was made, in order: a test that times a completion reads it here, since the
    /// task awaiting ``first(timeout:)`` resumes whenever the shared pool gets to it, which on a busy
    /// machine running hundreds of tests at once can be seconds later.
    public var instants: [ContinuousClock.Instant] { state.value.instants }

    /// How many times the handler was called.
    public var callCount: Int { state.withLock { $0.values.count } }

    /// The first recorded value, waiting up to `timeout` seconds for it; `nil` if none arrived in time.
    public func first(timeout: TimeInterval = 10) async -> Value? {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let recorded = state.withLock { state -> Value? in
                if let first = state.values.first { return first }
                state.waiters[id] = continuation
                return nil
            }
            if let recorded {
                continuation.resume(returning: recorded)
                return
            }
            // On Strata's own lanes, which a test's blocked global-queue threads do not hold up.
            StrataQueue.async(after: timeout) { [self] in
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
            }
        }
    }
}
