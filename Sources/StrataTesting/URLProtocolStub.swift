import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers requests made through a real `URLSession` without a network, for end-to-end tests of
/// every layer (a `URLSessionManager` included).
///
/// Each stub owns a unique host; use ``baseURL`` as the configuration's base URL and
/// ``makeSessionConfiguration()`` for the session, and the stub answers every request to its host:
///
/// ```swift
/// let stub = URLProtocolStub { request in
///     .response(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"id":1}"#.utf8))
/// }
/// let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
/// let configuration = NetworkConfiguration(baseURL: stub.baseURL)
/// ```
///
/// Requests are recorded with their bodies (read from a body stream if needed). Responses can be
/// delayed and their bodies sent in chunks, to test timeouts and cancellation mid-transfer. The stub
/// stops answering when it is released.
public final class URLProtocolStub: Sendable {
    /// What the stub answers.
    public enum Reply: Sendable {
        /// A response. The body is sent in `chunks` pieces, `chunkInterval` seconds apart, after
        /// waiting `delay` seconds.
        case response(
            statusCode: Int = 200,
            headers: [String: String] = [:],
            body: Data = Data(),
            delay: TimeInterval = 0,
            chunks: Int = 1,
            chunkInterval: TimeInterval = 0
        )
        /// A failure with this error after `delay` seconds, and no response.
        case failure(URLError, delay: TimeInterval = 0)
    }

    /// The host this stub answers, unique to it.
    public let host: String
    private let handler: @Sendable (URLRequest) -> Reply
    private let recorded = Locked<[URLRequest]>([])

    /// Creates a stub that answers each request with `handler`'s reply.
    public init(handler: @escaping @Sendable (URLRequest) -> Reply) {
        self.host = "stub-\(UUID().uuidString.lowercased()).strata.test"
        self.handler = handler
        StubURLProtocol.register(self)
    }

    deinit {
        StubURLProtocol.unregister(host: host)
    }

    /// `https://<host>`, to use as a configuration's base URL.
    public var baseURL: URL {
        URL(string: "https://\(host)") ?? URL(fileURLWithPath: "/")
    }

    /// An ephemeral session configuration whose requests this stub (and any other live stub, by
    /// host) answers.
    public func makeSessionConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        // Without a cache, FoundationNetworking creates the protocol at once instead of after an
        // asynchronous cache lookup, which otherwise lets a cancellation race the stub's reply.
        configuration.urlCache = nil
        return configuration
    }

    /// Every request received, in order, with its body in `httpBody`.
    public var requests: [URLRequest] { recorded.value }

    fileprivate func reply(to request: URLRequest) -> Reply {
        recorded.withLock { $0.append(request) }
        return handler(request)
    }
}

/// The `URLProtocol` that routes requests to the live ``URLProtocolStub`` for their host.
final class StubURLProtocol: URLProtocol {
    private static let stubs = Locked<[String: WeakStub]>([:])
    private let stopped = Locked(false)

    private struct WeakStub: @unchecked Sendable {  // Sendable: read and written only under the `stubs` lock.
        weak var stub: URLProtocolStub?
    }

    static func register(_ stub: URLProtocolStub) {
        stubs.withLock { $0[stub.host] = WeakStub(stub: stub) }
    }

    static func unregister(host: String) {
        stubs.withLock { $0[host] = nil }
    }

    override class func canInit(with request: URLRequest) -> Bool {
        true
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override func startLoading() {
        var body = self.request
        if body.httpBody == nil, let stream = body.httpBodyStream {
            body.httpBody = Self.readAll(stream)
        }
        let request = body
        let host = request.url?.host?.lowercased() ?? ""
        guard let stub = Self.stubs.withLock({ $0[host]?.stub }) else {
            fail(URLError(.cannotFindHost))
            return
        }
        guard let queue = workQueue else {
            answer(stub.reply(to: request), to: request)
            return
        }
        // The handler is the test's code, which may block, or start a request on this very
        // session: not on the session's own queue, whose next request would wait for the queue it
        // runs on (libdispatch traps). Its reply is then played on that queue.
        let box = LoaderBox(loader: self)
        StrataQueue.async {
            let reply = stub.reply(to: request)
            queue.async { box.loader.answer(reply, to: request) }
        }
    }

    /// Plays `reply` to `request`, on the queue the loader talks to its client on.
    private func answer(_ reply: URLProtocolStub.Reply, to request: URLRequest) {
        switch reply {
        case .failure(let error, let delay):
            after(delay) { $0.fail(error) }
        case .response(let statusCode, let headers, let body, let delay, let chunks, let chunkInterval):
            after(delay) { loader in
                let url = request.url ?? URL(fileURLWithPath: "/")
                guard
                    let response = HTTPURLResponse(
                        url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headers)
                else {
                    loader.fail(URLError(.badServerResponse))
                    return
                }
                loader.client?.urlProtocol(loader, didReceive: response, cacheStoragePolicy: .notAllowed)
                loader.send(Self.split(body, into: chunks)[...], interval: chunkInterval)
            }
        }
    }

    /// Takes the lock that deliveries hold, so no delivery reaches the client after this returns:
    /// on Linux, a client call for a task the session has already finished traps.
    override func stopLoading() {
        stopped.withLock { $0 = true }
    }

    /// Sends the pieces, `interval` seconds apart, then finishes. Runs under the `stopped` lock.
    private func send(_ pieces: ArraySlice<Data>, interval: TimeInterval) {
        var pieces = pieces
        while let piece = pieces.popFirst() {
            // The task may be cancelled while the pieces go out (a consumer that gave up on the head).
            guard !isCancelled else { return }
            if !piece.isEmpty {
                client?.urlProtocol(self, didLoad: piece)
            }
            if interval > 0, !pieces.isEmpty {
                let rest = pieces
                after(interval) { $0.send(rest, interval: interval) }
                return
            }
        }
        guard !isCancelled else { return }
        client?.urlProtocolDidFinishLoading(self)
    }

    /// Whether the task was cancelled: on Linux, its cancellation reaches ``stopLoading()`` only
    /// once the step under way returns, and a download task told it finished meanwhile traps.
    private var isCancelled: Bool {
        guard let task else { return false }
        return task.state == .canceling || task.state == .completed
    }

    private func fail(_ error: URLError) {
        client?.urlProtocol(self, didFailWithError: error)
    }

    /// Runs `step` after `delay` seconds (at once for no delay), unless loading was stopped, holding
    /// the `stopped` lock while it talks to the client.
    private func after(_ delay: TimeInterval, _ step: @escaping @Sendable (StubURLProtocol) -> Void) {
        let box = LoaderBox(loader: self)
        let work: @Sendable () -> Void = {
            box.loader.stopped.withLock { stopped in
                guard !stopped, !box.loader.isCancelled else { return }
                step(box.loader)
            }
        }
        guard delay > 0 else {
            work()
            return
        }
        // Timed on Strata's own lanes: a test whose code blocks `DispatchQueue.global()` threads
        // would otherwise get the stub's answer seconds late.
        let queue = workQueue
        StrataQueue.async(after: delay) {
            if let queue { queue.async(execute: work) } else { work() }
        }
    }

    /// The queue FoundationNetworking calls ``startLoading()`` on, where a later step must talk to
    /// the client. On Linux a client call reads the session's task registry unguarded, and from any
    /// other thread it races a task being cancelled and removed, and crashes the process. No public
    /// API names that queue; a task keeps it in a stored property, which `Mirror` reads. On Apple
    /// platforms, and should the property be gone, steps run where their timer fires.
    private var workQueue: DispatchQueue? {
        #if canImport(FoundationNetworking)
            guard let task else { return nil }
            var mirror: Mirror? = Mirror(reflecting: task)
            while let current = mirror {
                if let queue = current.descendant("workQueue") as? DispatchQueue { return queue }
                mirror = current.superclassMirror
            }
        #endif
        return nil
    }

    /// Carries the loader to the queue that delivers its next step (see ``workQueue``); the
    /// loader's only mutable state, `stopped`, is behind a lock.
    private struct LoaderBox: @unchecked Sendable {  // Sendable: the loader's mutable state is under a lock.
        let loader: StubURLProtocol
    }

    private static func split(_ body: Data, into count: Int) -> [Data] {
        guard count > 1, body.count > 1 else { return [body] }
        let size = (body.count + count - 1) / count
        return stride(from: 0, to: body.count, by: size).map { body.subdata(in: $0..<min($0 + size, body.count)) }
    }

    private static func readAll(_ stream: InputStream) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        stream.open()
        defer { stream.close() }
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { break }
            data.append(buffer, count: count)
        }
        return data
    }
}
