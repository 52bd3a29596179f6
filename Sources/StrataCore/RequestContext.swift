/// What a request keeps of the context it was made in — values its caller's task had bound, such as
/// a trace context or a logger, and values the caller gives the request itself — so that the code
/// that runs for the request later, on other threads, sees them again.
///
/// Swift's task-local values stay with the task that bound them: a request's adapters, retriers,
/// redirect decisions, transport and event monitors run later, on queues of their own, where a
/// caller's `ServiceContext.current` or `Logger.current` is gone. A session manager therefore fills
/// a request's context where the request starts — on the caller's thread, in the caller's task — by
/// asking its event monitors what to keep, and runs that code for the request inside ``run(_:)``,
/// which binds what was kept again. A manager whose monitors keep nothing pays nothing for it.
///
/// ```swift
/// enum TenantKey: RequestContextKey { typealias Value = String }
///
/// struct TenantMonitor: EventMonitor {
///     func captureContext(into context: inout RequestContext) {
///         context[TenantKey.self] = Tenant.current          // a task-local of the app's
///         context.rebinding { body in Tenant.$current.withValue(Tenant.current, operation: body) }
///     }
/// }
/// ```
public struct RequestContext: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]
    @usableFromInline var scopes: [@Sendable (_ body: () -> Void) -> Void] = []
    /// Whether a session manager has filled it already, on the thread that started the request: a
    /// service that hops to another queue before sending fills it first, so that it is filled once.
    package var isCaptured = false
    /// What the layer above will report of the request's response, claimed by the request that
    /// starts with this context (see ``ResponseHandling``).
    package var responseHandling: ResponseHandling?

    /// An empty context.
    public init() {}

    /// Whether it holds nothing: no value and nothing to bind.
    public var isEmpty: Bool { values.isEmpty && scopes.isEmpty }

    /// The value kept under `key`, if any.
    public subscript<Key: RequestContextKey>(key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    /// Adds `scope`, which must run the code it is given exactly once, with a value bound again —
    /// typically a task-local's `withValue(_:operation:)`. Scopes nest in the order added, the first
    /// outermost.
    public mutating func rebinding(with scope: @escaping @Sendable (_ body: () -> Void) -> Void) {
        scopes.append(scope)
    }

    /// Runs `body` inside every scope added with ``rebinding(with:)``: with the values the request
    /// kept bound again. A scope that does not run its body is passed over.
    ///
    /// Inlinable, so that it is specialized where it is called: unspecialized, each call looks up
    /// the type `Result?` at run time, and the pipeline runs every step of a request through it.
    @inlinable
    public func run<Result>(_ body: () -> Result) -> Result {
        guard !scopes.isEmpty else { return body() }
        var result: Result?
        nest(from: scopes[...]) { result = body() }
        return result ?? body()
    }

    @usableFromInline
    func nest(from scopes: ArraySlice<@Sendable (_ body: () -> Void) -> Void>, _ body: () -> Void) {
        guard let scope = scopes.first else { return body() }
        var entered = false
        scope {
            entered = true
            nest(from: scopes.dropFirst(), body)
        }
        if !entered {
            nest(from: scopes.dropFirst(), body)
        }
    }
}

/// A key of a ``RequestContext`` value: a type of its own, naming the type of the value.
public protocol RequestContextKey {
    /// The type of the value kept under the key.
    associatedtype Value: Sendable
}
