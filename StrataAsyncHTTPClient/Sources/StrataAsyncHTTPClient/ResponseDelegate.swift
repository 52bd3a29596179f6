import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import StrataCore
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Receives one attempt's response: the head, the body into memory or into a download's file, and
/// upload progress; and reports the outcome once, when the task's future completes.
///
/// AsyncHTTPClient calls it on the task's event loop, one call at a time, and asks for the next body
/// part only when the future returned for the last one has completed: a download's writes, on the
/// NIO thread pool, hold back the socket, so memory stays bounded however fast the server is.
final class ResponseDelegate: HTTPClientResponseDelegate {
    typealias Response = Void

    /// The most of an unacceptable download's body reported in memory, as `URLSessionTransport` does.
    static let errorBodyLimit = 1_048_576
    /// The most of a body held in memory: what one `ByteBuffer` can hold (4 GiB). A server sending
    /// more fails the attempt with `URLError(.dataLengthExceedsMaximum)` instead of trapping in
    /// the buffer; bodies that large belong in a download's file.
    static let memoryBodyLimit = Int(UInt32.max)

    private struct State {
        var head: ResponseHead?
        var body: ByteBuffer?
        var sent: Int64 = 0
        var visits = 0
        /// Whether the whole request went out.
        var requestSent = false
        /// The bytes of the response body received, before any is dropped.
        var received: Int64 = 0
        /// Whether a whole `3xx`–`5xx` response arrived while the request body was still going out.
        var answeredEarly = false
        /// The file a `2xx` download is written to, until it is moved to its destination.
        var file: FileHandle?
        var partial: URL?
        var written: Int64 = 0
    }

    private let url: URL
    private let uploadLength: Int64
    private let uploadProgress: (@Sendable (Int64, Int64) -> Void)?
    private let destination: URL?
    private let downloadProgress: (@Sendable (Int64, Int64) -> Void)?
    private let memoryLimit: Int
    private let state = NIOLockedValueBox(State())

    init(
        url: URL,
        uploadLength: Int64,
        uploadProgress: (@Sendable (Int64, Int64) -> Void)?,
        destination: URL?,
        downloadProgress: (@Sendable (Int64, Int64) -> Void)?,
        memoryLimit: Int = ResponseDelegate.memoryBodyLimit
    ) {
        self.url = url
        self.memoryLimit = memoryLimit
        self.uploadLength = uploadLength
        self.uploadProgress = uploadProgress
        self.destination = destination
        self.downloadProgress = downloadProgress
    }

    func didSendRequest(task: HTTPClient.Task<Void>) {
        state.withLockedValue { $0.requestSent = true }
    }

    func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
        guard let uploadProgress else { return }
        let sent = state.withLockedValue { state in
            state.sent += Int64(part.readableBytes)
            return state.sent
        }
        uploadProgress(sent, uploadLength)
    }

    /// Every response head comes here first; a second one means the client followed a redirect,
    /// which only Strata's policy may do.
    func didVisitURL(task: HTTPClient.Task<Void>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        let visits = state.withLockedValue { state in
            state.visits += 1
            return state.visits
        }
        if visits > 1 {
            task.fail(reason: AsyncHTTPClientTransportError.clientFollowedRedirect)
        }
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let received = Self.head(head, url: url)
        state.withLockedValue { $0.head = received }
        endIfAnsweredEarly(task)
        guard let destination, (200..<300).contains(head.status.code) else {
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let partial = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).download")
        return NIOThreadPool.singleton.runIfActive(eventLoop: task.eventLoop) {
            try FileManager.default.createDirectory(
                at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
                throw URLError(.cannotCreateFile, userInfo: [NSURLErrorFailingURLErrorKey: destination])
            }
            return SendableBox(try FileHandle(forWritingTo: partial))
        }.map { [state] file in
            state.withLockedValue { state in
                state.file = file.value
                state.partial = partial
            }
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        defer { endIfAnsweredEarly(task) }
        let kept = state.withLockedValue { [destination, memoryLimit] state -> (file: FileHandle?, fits: Bool) in
            state.received += Int64(buffer.readableBytes)
            if let file = state.file { return (file, true) }
            var part = buffer
            let held = state.body?.readableBytes ?? 0
            if destination != nil {
                // A download's unacceptable status: its body is kept up to the limit.
                let room = Self.errorBodyLimit - held
                guard room > 0 else { return (nil, true) }
                if part.readableBytes > room {
                    part = part.getSlice(at: part.readerIndex, length: room) ?? part
                }
            } else if part.readableBytes > memoryLimit - held {
                return (nil, false)
            }
            if state.body == nil {
                state.body = part
            } else {
                state.body?.writeImmutableBuffer(part)
            }
            return (nil, true)
        }
        guard kept.fits else {
            return task.eventLoop.makeFailedFuture(
                URLError(.dataLengthExceedsMaximum, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        }
        let file = kept.file
        guard let file else { return task.eventLoop.makeSucceededVoidFuture() }
        let handle = SendableBox(file)
        return NIOThreadPool.singleton.runIfActive(eventLoop: task.eventLoop) {
            try handle.value.write(contentsOf: buffer.readableBytesView)
        }.map { [state, downloadProgress] in
            let (written, expected) = state.withLockedValue { state in
                state.written += Int64(buffer.readableBytes)
                return (state.written, state.head?.expectedContentLength ?? -1)
            }
            downloadProgress?(written, expected)
        }
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}

    /// Ends the task once a whole `3xx`–`5xx` response (its `Content-Length` received, and no
    /// content coding that would make the count differ) has arrived while the request body is still
    /// going out, as a server answers an upload it refuses (`413`, `401`) without reading it.
    /// AsyncHTTPClient stops sending then, but may fail the exchange for the body it could not send
    /// (`requestStreamCancelled`) or, if the server closes the connection, wait for the deadline;
    /// the answer is the server's response, which ``finish(_:completion:)`` reports.
    private func endIfAnsweredEarly(_ task: HTTPClient.Task<Void>) {
        // A request without a body (most) has nothing to refuse: no lock taken for it.
        guard uploadLength != 0 else { return }
        let ends = state.withLockedValue { state -> Bool in
            guard !state.answeredEarly, !state.requestSent, let head = state.head,
                head.statusCode >= 300, head.expectedContentLength >= 0,
                head.expectedContentLength == 0 || head.headers.value(for: "Content-Encoding") == nil,
                state.received >= head.expectedContentLength
            else { return false }
            state.answeredEarly = true
            return true
        }
        // Not from inside AsyncHTTPClient's call into this delegate: on the loop's next turn, by
        // which time the exchange may have ended on its own, and cancelling does nothing.
        if ends {
            task.eventLoop.execute { task.cancel() }
        }
    }

    /// Reports the attempt's outcome once its task has ended: moves a download into place first, or
    /// removes its partial file.
    func finish(_ result: Result<Void, any Error>, completion: @escaping @Sendable (TransportOutcome) -> Void) {
        let (head, body, file, partial, answeredEarly) = state.withLockedValue { state in
            defer {
                state.file = nil
                state.partial = nil
            }
            return (state.head, state.body, state.file.map(SendableBox.init), state.partial, state.answeredEarly)
        }
        let data = body.map { Data(buffer: $0, byteTransferStrategy: .automatic) } ?? Data()
        // A response that answered the request before its body was sent is the outcome, whatever
        // became of the rest of the body.
        let error = answeredEarly ? nil : result.failure.map { AsyncHTTPClientTransport.transportError($0, url: url) }
        guard let partial else {
            completion(TransportOutcome(head: head, body: data, error: error))
            return
        }
        let destination = destination
        NIOThreadPool.singleton.submit { _ in
            var error = error
            try? file?.value.close()
            do {
                if error == nil, let destination {
                    let manager = FileManager.default
                    if manager.fileExists(atPath: destination.path) {
                        try manager.removeItem(at: destination)
                    }
                    try manager.moveItem(at: partial, to: destination)
                }
            } catch let moveError {
                error = moveError
            }
            if error != nil {
                try? FileManager.default.removeItem(at: partial)
            }
            completion(TransportOutcome(head: head, body: data, error: error))
        }
    }

    /// The response head as the pipeline takes it: fields in the order received.
    static func head(_ head: HTTPResponseHead, url: URL) -> ResponseHead {
        var fields: [StrataCore.HTTPHeader] = []
        fields.reserveCapacity(head.headers.count)
        for (name, value) in head.headers {
            fields.append(StrataCore.HTTPHeader(name: name, value: value))
        }
        return ResponseHead(
            url: url, statusCode: Int(head.status.code), httpVersion: version(head.version),
            headers: StrataCore.HTTPHeaders(fields))
    }

    /// `HTTP/1.1`, as `HTTPURLResponse` takes a version.
    private static func version(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): "HTTP/1.1"
        case (2, 0): "HTTP/2.0"
        case (1, 0): "HTTP/1.0"
        default: "HTTP/\(version.major).\(version.minor)"
        }
    }
}

/// A value passed between threads that is used by one thread at a time (a file handle written by
/// the thread pool, one write after the other).
struct SendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
