/// What the layer above a manager made of a request's response, for the manager's monitors.
///
/// The data-transfer layer decodes a body, or resolves an error, after the manager has completed:
/// a body that does not decode fails the caller's request although its exchange succeeded. That
/// layer makes a report current (``run(_:)``) while it starts the request and says what the caller
/// got once it knows (``handled(_:onTheWayUp:)``). The manager's request claims the report as it
/// starts, and tells its monitors `EventMonitor.requestFinished` only once the report has come,
/// with the caller's error in the outcome.
///
/// One report belongs to one request: only the first request that starts while it is current
/// claims it, not one that an adapter sends meanwhile (a token refresh). A report dropped without
/// a word lets the request's monitors be told as the manager saw it.
package final class ResponseHandling: Sendable {
    @TaskLocal private static var current: ResponseHandling?

    private enum State: Sendable {
        /// No request has claimed it.
        case open
        /// A request claimed it and has not ended.
        case claimed
        /// The request ended; its monitors are told once the report comes.
        case waiting(Tell)
        /// The report came first.
        case reported((any Error)?)
        /// Both came, or nothing claimed it and it came.
        case done
    }

    /// Tells a request's monitors what the caller got; `onTheWayUp` when it is told from the
    /// thread that brought the response up, as the report is made there (see ``handled(_:onTheWayUp:)``).
    package typealias Tell = @Sendable (_ error: (any Error)?, _ onTheWayUp: Bool) -> Void

    private let state = Locked(State.open)

    package init() {}

    /// Runs `body`, whose request is the one this report is about.
    package func run<Result>(_ body: () -> Result) -> Result {
        Self.$current.withValue(self, operation: body)
    }

    /// Runs `body`, whose request is the one this report is about.
    package func run<Result>(
        _ body: () async -> Result, isolation: isolated (any Actor)? = #isolation
    ) async -> Result {
        await Self.$current.withValue(self, operation: body)
    }

    /// The report current in this task or on this thread, for the request starting here; `nil` if
    /// there is none, or another request has it.
    package static func claim() -> ResponseHandling? {
        guard let report = current else { return nil }
        return report.state.withLock { state in
            guard case .open = state else { return nil }
            state = .claimed
            return report
        }
    }

    /// The caller got what the manager delivered (`nil`: its value, or the manager's own error), or
    /// failed with `error` (a body that did not decode, an error the resolver turned into another).
    /// Only the first report counts.
    ///
    /// Pass `onTheWayUp` from the thread that brought the response up and has handed the caller
    /// its result, with nothing of the caller's on the stack below (not a retrier's decision, not a
    /// cancellation): the monitors may then be told on this thread, sparing a wake-up.
    package func handled(_ error: (any Error)?, onTheWayUp: Bool = false) {
        let waiting = state.withLock { state -> Tell? in
            switch state {
            case .waiting(let tell):
                state = .done
                return tell
            case .claimed:
                state = .reported(error)
            case .open:
                state = .done
            case .reported, .done:
                break  // Only the first report counts.
            }
            return nil
        }
        waiting?(error, onTheWayUp)
    }

    /// The request ended: runs `tell` with what the layer above reports, as soon as it has.
    package func whenHandled(_ tell: @escaping Tell) {
        let reported = state.withLock { state -> (any Error)?? in
            guard case .reported(let error) = state else {
                state = .waiting(tell)
                return nil
            }
            state = .done
            return .some(error)
        }
        if let reported {
            tell(reported, false)
        }
    }

    deinit {
        // Dropped unreported: the monitors hear what the manager saw.
        if case .waiting(let tell) = state.value {
            tell(nil, false)
        }
    }
}
