import Dispatch
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP server on 127.0.0.1 whose every byte a test writes itself, for answers no HTTP library
/// would produce: a reset in the middle of a body, HTTP/0.9 garbage, a byte a second forever.
///
/// Each connection is handed to `script` on a thread of its own, with blocking reads and writes.
///
/// ```swift
/// let server = try RawServer { connection in
///     _ = connection.readHead()
///     connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten!!")
///     connection.reset()
/// }
/// defer { server.shutdown() }
/// ```
public final class RawServer: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    private let listener: Int32
    private let accepted = NIOLockedValueBox(0)
    private let stopped = NIOLockedValueBox(false)
    private let gate: DispatchSemaphore?
    /// The connection of its own that holds the accept queue of an ``unreachable(script:)`` server.
    private let filler = NIOLockedValueBox<Int32?>(nil)

    /// Starts listening on a port the system chooses and accepts connections until ``shutdown()``.
    public convenience init(script: @escaping @Sendable (RawConnection) -> Void) throws {
        try self.init(backlog: 128, acceptsAtOnce: true, script: script)
    }

    /// A server on a host that does not answer, until ``startAccepting()``: its accept queue is
    /// full, held by a connection of its own, and nothing is accepted, so the system drops each
    /// `SYN` that comes, and a client's connection attempt waits, sending it again after 1, 3, 7…
    /// seconds, as to a host whose packets are lost.
    public static func unreachable(script: @escaping @Sendable (RawConnection) -> Void) throws -> RawServer {
        let server = try RawServer(backlog: 0, acceptsAtOnce: false, script: script)
        let filler = Socket.tcp()
        guard filler >= 0 else {
            server.shutdown()
            throw RawServerError.socket(errno)
        }
        var address = Socket.loopback(port: UInt16(server.baseURL.port ?? 0))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let error = errno
            Socket.close(filler)
            server.shutdown()
            throw RawServerError.socket(error)
        }
        server.filler.withLockedValue { $0 = filler }
        return server
    }

    /// Starts listening with an accept queue of `backlog` connections; accepts connections until
    /// ``shutdown()``, from the start or, unless `acceptsAtOnce`, from ``startAccepting()`` on.
    private init(
        backlog: Int32, acceptsAtOnce: Bool, script: @escaping @Sendable (RawConnection) -> Void
    ) throws {
        let socket = Socket.tcp()
        guard socket >= 0 else { throw RawServerError.socket(errno) }
        var yes: Int32 = 1
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Socket.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(socket, backlog) == 0 else {
            close(socket)
            throw RawServerError.socket(errno)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        guard let url = URL(string: "http://127.0.0.1:\(port)") else {
            close(socket)
            throw RawServerError.socket(0)
        }
        listener = socket
        baseURL = url
        let gate = acceptsAtOnce ? nil : DispatchSemaphore(value: 0)
        self.gate = gate
        let counter = accepted
        let stopped = self.stopped
        // The thread owns the listener's descriptor and closes it once `shutdown()` has ended its
        // wait. Closed by `shutdown()` instead, the number could be a later server's listener by
        // the time this thread, held up between two connections, called `accept` again: it took
        // that server's connections for this server's script (a test saw its requests answered
        // and none of them arrive).
        let thread = Thread {
            gate?.wait()
            while true {
                let connection = accept(socket, nil, nil)
                guard connection >= 0 else {
                    if stopped.withLockedValue({ $0 }) {
                        Socket.close(socket)
                        return
                    }
                    // Interrupted, or a connection reset before it was accepted; a shortage of
                    // descriptors waits a moment rather than spin.
                    if errno != EINTR, errno != ECONNABORTED { usleep(1000) }
                    continue
                }
                counter.withLockedValue { $0 += 1 }
                let worker = Thread { script(RawConnection(descriptor: connection)) }
                worker.start()
            }
        }
        thread.start()
    }

    /// Starts accepting connections, for an ``unreachable(script:)`` server: the host answers.
    public func startAccepting() {
        let filler = filler.withLockedValue { filler in
            defer { filler = nil }
            return filler
        }
        if let filler { Socket.close(filler) }
        gate?.signal()
    }

    /// How many connections were accepted so far.
    public var connectionCount: Int {
        accepted.withLockedValue { $0 }
    }

    /// A URL on this server.
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery) ?? baseURL
    }

    /// Stops accepting connections; those already open run their scripts to the end. Once only: the
    /// listener's descriptor may belong to another socket after that.
    public func shutdown() {
        let first = stopped.withLockedValue { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        if first {
            Socket.shutdown(listener)
            // A server that never accepted lets its thread go, to find the listener shut.
            startAccepting()
        }
    }
}

/// Why a raw server could not start.
public enum RawServerError: Error {
    /// A socket call failed with this `errno`.
    case socket(Int32)
}

/// One accepted connection: raw reads and writes, a close, a reset. Sendable: `lock` guards
/// `isOpen`, and the descriptor is used by the one script thread that owns the connection.
public final class RawConnection: @unchecked Sendable {  // the lock guards the mutable state
    private let descriptor: Int32
    private let lock = NIOLock()
    private var isOpen = true

    init(descriptor: Int32) {
        self.descriptor = descriptor
        Socket.disableSIGPIPE(descriptor)
    }

    deinit {
        close()
    }

    /// Reads up to the end of the request head (`CRLF CRLF`), at most 64 KiB; what came with it
    /// of a body stays unread. `nil` if the peer closed first.
    @discardableResult
    public func readHead() -> String? {
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while head.count < 65_536 {
            guard recv(descriptor, &byte, 1, 0) == 1 else { return nil }
            head.append(byte)
            // By index: `suffix(4) == [...]` picks `Sequence.suffix`, which copies the whole head.
            if head.count >= 4, head[(head.count - 4)...].elementsEqual([13, 10, 13, 10]) {
                return String(decoding: head, as: UTF8.self)
            }
        }
        return String(decoding: head, as: UTF8.self)
    }

    /// Reads exactly `count` bytes; `nil` if the peer closed first.
    public func read(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let read = bytes[filled...].withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard read > 0 else { return nil }
            filled += read
        }
        return bytes
    }

    /// Reads `count` bytes (a body whose length the head gave) and drops them; `false` if the
    /// peer closed first.
    @discardableResult
    public func discard(_ count: Int) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var left = count
        while left > 0 {
            let read = recv(descriptor, &buffer, min(left, buffer.count), 0)
            guard read > 0 else { return false }
            left -= read
        }
        return true
    }

    /// Writes `bytes`; `false` once the peer is gone.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Socket.sendFlags)
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Writes `text` as UTF-8; `false` once the peer is gone.
    @discardableResult
    public func write(_ text: String) -> Bool {
        write(Array(text.utf8))
    }

    /// Waits until the peer closes the connection (or `limit` passes), reading and dropping what it sends.
    public func waitForClose(limit: Duration = .seconds(120)) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let end = ContinuousClock.now + limit
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < end {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { return }
        }
    }

    /// Waits up to `limit` for the peer to send a byte (or to close); `true` if one came.
    public func awaitsBytes(within limit: Duration) -> Bool {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            limit.components.seconds * 1_000 + limit.components.attoseconds / 1_000_000_000_000_000)
        return poll(&ready, 1, milliseconds) == 1
    }

    /// Ends the sending side (FIN), the reading side left open: a server closing a kept connection
    /// lingers so, reading what was on its way, before it closes.
    public func finishSending() {
        #if canImport(Glibc)
            _ = shutdown(descriptor, Int32(SHUT_WR))
        #else
            _ = shutdown(descriptor, SHUT_WR)
        #endif
    }

    /// Closes the connection in order (FIN).
    public func close() {
        lock.withLock {
            guard isOpen else { return }
            isOpen = false
            Socket.close(descriptor)
        }
    }

    /// Closes the connection with a reset (RST): unsent data is dropped and the peer sees an error.
    public func reset() {
        var immediately = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &immediately, socklen_t(MemoryLayout<linger>.size))
        close()
    }
}

/// The few socket calls whose types differ between Linux and Darwin, written once.
private enum Socket {
    /// A new TCP socket, or -1.
    static func tcp() -> Int32 {
        #if canImport(Glibc)
            socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    /// `127.0.0.1:port`.
    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// What `send` needs so that writing to a closed peer fails instead of raising SIGPIPE.
    static var sendFlags: Int32 {
        #if canImport(Glibc)
            Int32(MSG_NOSIGNAL)
        #else
            0
        #endif
    }

    /// Stops a listener: a blocked `accept` returns.
    static func shutdown(_ descriptor: Int32) {
        #if canImport(Glibc)
            _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        #else
            _ = Darwin.shutdown(descriptor, SHUT_RDWR)
        #endif
    }

    static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #else
            _ = Darwin.close(descriptor)
        #endif
    }

    /// On Darwin, SIGPIPE is turned off per socket instead.
    static func disableSIGPIPE(_ descriptor: Int32) {
        #if canImport(Darwin)
            var yes: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }
}
