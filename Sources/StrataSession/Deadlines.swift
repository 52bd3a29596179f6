import Dispatch
import Foundation
import StrataCore

/// The deadlines of a session's attempts, of its waits for the caller's code, and its retries'
/// delays, on one timer.
///
/// An attempt costs an entry in a table, not a timer of its own (a dispatch source, its handler and
/// a weak reference for every request). The timer is set for the earliest deadline, and moved only
/// when a new deadline comes before it; when it fires, the attempts past their deadline are told
/// and it is set for the earliest of the rest. Most requests end long before their deadline and
/// leave the table without touching the timer.
final class Deadlines: @unchecked Sendable {  // Sendable: `state` is under its lock; `timer` is immutable.
    /// What a deadline bounds.
    enum Bound: Sendable {
        /// Attempt `number` of a request (1 for the first).
        case attempt(Int)
        /// A request's wait `ticket` for the caller's code: see ``RequestExecution/Awaited``.
        case awaited(ticket: Int)
        /// A request's wait `ticket` before it is sent again, which starts the next attempt.
        case retryDelay(ticket: Int)

        /// Whether its passing ends the request (and so runs beyond the lanes' limit): every
        /// bound's but a retry delay's, which starts an attempt — the adapters, the caller's code.
        var endsRequest: Bool {
            if case .retryDelay = self { return false }
            return true
        }
    }

    /// A deadline not yet passed.
    private struct Entry: Sendable {
        let deadline: UInt64
        let execution: RequestExecution
        let bound: Bound
    }

    private struct State: Sendable {
        var entries: [Int: Entry] = [:]
        var nextID = 0
        /// When the timer fires next, if it is set.
        var wakeUp: UInt64?
    }

    /// Timeouts this long or longer (ten years) set no deadline at all.
    static let longest: TimeInterval = 315_360_000

    /// The queue every session's timer fires on. One for all: a timer's source is registered and
    /// cancelled by its queue, and a queue per session took a thread of its own for each — a
    /// burst of some hundred threads when an app made a manager per request.
    private static let queue = StrataQueue.make("Strata.SessionManager.deadlines")

    private let state = Locked(State())
    private let timer: any DispatchSourceTimer

    init() {
        timer = DispatchSource.makeTimerSource(queue: Self.queue)
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.activate()
    }

    deinit {
        timer.cancel()
    }

    /// Tells `execution` when `bound` is `seconds` old, unless ``cancel(_:)`` comes first.
    /// - Returns: The entry's identifier, or `nil` for a timeout too long to be one (infinity).
    func start(after seconds: TimeInterval, execution: RequestExecution, bounding bound: Bound) -> Int? {
        guard seconds < Self.longest else { return nil }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        return state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.entries[id] = Entry(deadline: deadline, execution: execution, bound: bound)
            if state.wakeUp.map({ deadline < $0 }) ?? true {
                state.wakeUp = deadline
                timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
            }
            return id
        }
    }

    /// Forgets entry `id`: what it bounds ended.
    func cancel(_ id: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Tells every execution whose deadline passed, and sets the timer for the earliest of the rest.
    private func fire() {
        let now = DispatchTime.now().uptimeNanoseconds
        let due = state.withLock { state -> [Entry] in
            let due = state.entries.filter { $0.value.deadline <= now }
            for id in due.keys {
                state.entries[id] = nil
            }
            state.wakeUp = state.entries.values.lazy.map(\.deadline).min()
            if let wakeUp = state.wakeUp {
                timer.schedule(deadline: DispatchTime(uptimeNanoseconds: wakeUp))
            }
            return Array(due.values)
        }
        // Each on a lane: a timed-out attempt goes on to the retriers and the completion, the
        // caller's code, which must hold up neither the timer nor another request. A deadline ends
        // a request, so it runs beyond the lanes' limit when closures of the caller's hold them all;
        // a retry's next attempt waits for a lane like any other start.
        for entry in due {
            StrataQueue.async(ending: entry.bound.endsRequest) { entry.execution.deadlinePassed(entry.bound) }
        }
    }
}
