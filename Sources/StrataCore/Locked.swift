#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// State guarded by a lock: every read and write of `state` goes through ``withLock(_:)``.
///
/// The state and the lock live in one heap allocation, and copies of a `Locked` share them. Every
/// request creates several of these (completions, cancellation tokens), so the lock is a plain
/// `os_unfair_lock` or `pthread_mutex_t` rather than `NSLock`, which allocates twice on Linux (the
/// object and its mutex). It is inlinable, so a module that makes one for its own state type
/// builds it without looking up `LockedStorage<State>` at run time. Give it a state that means
/// something: with an empty one (`Locked(())`) ThreadSanitizer reports the state's access racing
/// the buffer's header.
@usableFromInline
package struct Locked<State: Sendable>: @unchecked Sendable {  // Sendable: the lock guards every access to the state.
    @usableFromInline let storage: LockedStorage<State>

    /// Creates the guard around an initial state.
    @inlinable
    package init(_ state: State) {
        storage = LockedStorage.make(state)
    }

    /// Runs `body` with exclusive access to the state.
    ///
    /// Always inlined: a call left generic over `Result` looks up `Result`'s type at run time when
    /// it depends on a caller's generic parameter (a completion's value type), on every request.
    @inlinable @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { state, lock in
            LockPrimitive.lock(lock)
            defer { LockPrimitive.unlock(lock) }
            return try body(&state.pointee)
        }
    }

    /// A copy of the state.
    package var value: State {
        withLock { $0 }
    }
}

/// The state as the header of a buffer whose one element is the lock.
@usableFromInline
final class LockedStorage<State>: ManagedBuffer<State, LockPrimitive.Lock> {
    @inlinable
    static func make(_ state: State) -> LockedStorage<State> {
        let buffer = create(minimumCapacity: 1) { _ in state }
        buffer.withUnsafeMutablePointerToElements { LockPrimitive.initialize($0) }
        // `create` is declared to return the base class; the object is of this class.
        return unsafeDowncast(buffer, to: LockedStorage<State>.self)
    }

    @inlinable
    deinit {
        withUnsafeMutablePointerToElements { LockPrimitive.destroy($0) }
    }
}

/// A plain mutex for a class that guards several fields with it, taken and released by hand
/// (``Locked`` keeps its state in a struct): one allocation, where `NSLock` makes two on Linux, and
/// a lock taken without a call through Foundation. Per-request objects (a response's relay, its
/// collector) use it.
@usableFromInline
package final class PlainLock: ManagedBuffer<Void, LockPrimitive.Lock> {
    /// A new, unlocked mutex.
    package static func make() -> PlainLock {
        let buffer = create(minimumCapacity: 1) { _ in }
        buffer.withUnsafeMutablePointerToElements { LockPrimitive.initialize($0) }
        // `create` is declared to return the base class; the object is of this class.
        return unsafeDowncast(buffer, to: PlainLock.self)
    }

    deinit {
        withUnsafeMutablePointerToElements { LockPrimitive.destroy($0) }
    }

    @inlinable
    package func lock() {
        withUnsafeMutablePointerToElements { LockPrimitive.lock($0) }
    }

    @inlinable
    package func unlock() {
        withUnsafeMutablePointerToElements { LockPrimitive.unlock($0) }
    }

    /// Runs `body` holding the mutex.
    @inlinable
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// The platform's plain mutex.
@usableFromInline
package enum LockPrimitive {
    #if canImport(Darwin)
        @usableFromInline package typealias Lock = os_unfair_lock

        @inlinable static func initialize(_ lock: UnsafeMutablePointer<Lock>) { lock.initialize(to: os_unfair_lock()) }
        @inlinable static func destroy(_ lock: UnsafeMutablePointer<Lock>) { lock.deinitialize(count: 1) }
        @inlinable static func lock(_ lock: UnsafeMutablePointer<Lock>) { os_unfair_lock_lock(lock) }
        @inlinable static func unlock(_ lock: UnsafeMutablePointer<Lock>) { os_unfair_lock_unlock(lock) }
    #else
        @usableFromInline package typealias Lock = pthread_mutex_t

        @inlinable static func initialize(_ lock: UnsafeMutablePointer<Lock>) {
            lock.initialize(to: pthread_mutex_t())
            pthread_mutex_init(lock, nil)
        }
        @inlinable static func destroy(_ lock: UnsafeMutablePointer<Lock>) {
            pthread_mutex_destroy(lock)
            lock.deinitialize(count: 1)
        }
        @inlinable static func lock(_ lock: UnsafeMutablePointer<Lock>) { pthread_mutex_lock(lock) }
        @inlinable static func unlock(_ lock: UnsafeMutablePointer<Lock>) { pthread_mutex_unlock(lock) }
    #endif
}
