/// A completion handler that can be called from any number of racing paths but runs only once.
///
/// Each Strata layer wraps its caller's completion in one, so that success, failure and
/// cancellation racing each other still call the caller exactly once.
package struct CompletionOnce<Value: Sendable>: Sendable {
    private let handler: Locked<(@Sendable (Value) -> Void)?>

    /// Wraps `handler`.
    package init(_ handler: @escaping @Sendable (Value) -> Void) {
        self.handler = Locked(handler)
    }

    /// Calls the handler with `value` if it has not been called yet.
    /// - Returns: `true` if this call ran the handler, `false` if an earlier call did.
    @discardableResult
    package func complete(_ value: Value) -> Bool {
        let taken = handler.withLock { handler -> (@Sendable (Value) -> Void)? in
            defer { handler = nil }
            return handler
        }
        guard let taken else { return false }
        taken(value)
        return true
    }

    /// Whether the handler has already run.
    package var isCompleted: Bool {
        handler.withLock { $0 == nil }
    }
}
