import Dispatch
import Foundation
import StrataCore
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``/StrataSession/NetworkSessionManager`` that records each request and answers with stubbed
/// responses, for testing the service layer without a network.
///
/// Responses are used in the order they were enqueued; when none is left, ``fallback`` answers.
/// Status codes are validated as a real manager does, so an unacceptable status arrives with
/// ``/StrataSession/SessionError/unacceptableStatusCode(_:)``; so are the options: a request whose
/// options are out of range (``/StrataCore/RequestOptions/validate()``) is recorded and fails with
/// ``/StrataCore/RequestValidationError/invalidOption(name:value:)``, and no stubbed answer is used.
///
/// Progress closures are told as a real manager tells them, in order and before the completion:
/// `uploadProgress` once a stubbed answer comes, for a body of known length (in memory or a file);
/// `downloadProgress` for each part of a body collected in memory or written to a file, counted
/// against the `Content-Length` the stub names (a ``Response/success(statusCode:headers:body:)``
/// stub that names none is counted against its body's length; one with a `Content-Encoding`
/// against an unknown length, `-1`, as a real manager counts a compressed body). A streamed
/// response's parts are the caller's as they come, and are not counted.
///
/// ```swift
/// let manager = MockNetworkSessionManager()
/// manager.enqueue(.success(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8)))
/// let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
/// // … run the code under test …
/// #expect(manager.requests.first?.url?.path == "/users")
/// ```
public final class MockNetworkSessionManager: NetworkSessionManager {
    /// A stubbed answer.
    public enum Response: Sendable {
        /// A response with this status, headers and body.
        case success(statusCode: Int = 200, headers: [String: String] = [:], body: Data = Data())
        /// A failure with this error (for example `URLError(.timedOut)`), and no response.
        case failure(any Error)
        /// No answer until the request is cancelled; then `URLError(.cancelled)`.
        case pending
        /// This streamed response: played part by part to a stream, collected whole for a request.
        case stream(StreamScript)
    }

    private struct State: Sendable {
        var queue: [Response] = []
        var requests: [URLRequest] = []
        var options: [RequestOptions] = []
    }

    /// The status codes that count as success for requests that do not name their own.
    public let acceptableStatusCodes: Set<Int>
    /// The answer when no enqueued response is left.
    public let fallback: Response
    private let completionQueue: DispatchQueue?
    private let state = Locked(State())

    /// Creates a mock.
    /// - Parameters:
    ///   - responses: Answers used in order.
    ///   - fallback: The answer once they are used up; by default an empty `200`.
    ///   - acceptableStatusCodes: The status codes that count as success.
    ///   - completionQueue: Where completions run, a cancellation's too (after `cancel()` returns,
    ///     as the real layers complete one); `nil` runs them before `request` or `cancel()` returns.
    public init(
        responses: [Response] = [],
        fallback: Response = .success(),
        acceptableStatusCodes: Set<Int> = RequestOptions.defaultAcceptableStatusCodes,
        completionQueue: DispatchQueue? = .global()
    ) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.fallback = fallback
        self.completionQueue = completionQueue
        state.withLock { $0.queue = responses }
    }

    /// Adds an answer after those already enqueued.
    public func enqueue(_ response: Response) {
        state.withLock { $0.queue.append(response) }
    }

    /// Every request received, in order.
    public var requests: [URLRequest] { state.value.requests }

    /// The options each request came with, in order.
    public var receivedOptions: [RequestOptions] { state.value.options }

    /// Records `request` and answers with the next stubbed response.
    @discardableResult
    public func request(
        _ request: URLRequest,
        options: RequestOptions,
        completion: @escaping CompletionHandler
    ) -> any NetworkCancellable {
        let response = next(request, options)
        let call = CancellableCompletion<(Data?, URLResponse?, (any Error)?)>(
            cancelledWith: (nil, nil, URLError(.cancelled)), on: completionQueue
        ) { completion($0.0, $0.1, $0.2) }

        let acceptable = options.acceptableStatusCodes ?? acceptableStatusCodes
        let upload = ProgressCount(options.uploadProgress) { call.isCompleted }
        let download = ProgressCount(options.downloadProgress) { call.isCompleted }
        let deliver: @Sendable () -> Void
        switch response {
        case .pending:
            return call
        case .failure(let error):
            deliver = { call.complete((nil, nil, error)) }
        case .stream(let script):
            // Collected whole, as a manager does for a request that is not streamed.
            let slot = ExchangeSlot()
            let acceptable = acceptable.contains(script.statusCode)
            let head = ResponseHead(
                url: request.url ?? URL(fileURLWithPath: "/"), statusCode: script.statusCode,
                httpVersion: "HTTP/1.1", headers: HTTPHeaders(script.headers))
            let collector = BodyCollector(from: slot, progress: download.count) { outcome in
                let error = outcome.error ?? (acceptable ? nil : SessionError.unacceptableStatusCode(script.statusCode))
                call.complete((outcome.body, outcome.response, error))
            }
            slot.set(
                ResponsePlayback.start(
                    head: head, pauseBeforeHead: script.pauseBeforeHead, steps: script.steps,
                    to: UploadReported(Self.bodyLength(of: request), to: upload, then: collector)))
            call.attach(slot)
            return call
        case .success(let statusCode, let headers, let body):
            let url = request.url ?? URL(fileURLWithPath: "/")
            let httpResponse = HTTPURLResponse(
                url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headers)
            let error: (any Error)? =
                acceptable.contains(statusCode) ? nil : SessionError.unacceptableStatusCode(statusCode)
            let uploaded = Self.bodyLength(of: request)
            deliver = {
                if let uploaded { upload.count(uploaded, of: uploaded) }
                if !body.isEmpty {
                    // As a real manager counts it; a stub that names no length stands for its body's.
                    let head = ResponseHead(
                        url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headers: HTTPHeaders(headers))
                    let unnamed = head.headers["Content-Length"] == nil && head.headers["Content-Encoding"] == nil
                    download.count(Int64(body.count), of: unnamed ? Int64(body.count) : head.progressTotal)
                }
                call.complete((body, httpResponse, error))
            }
        }
        if let completionQueue {
            completionQueue.async(execute: deliver)
        } else {
            deliver()
        }
        return call
    }

    /// Records `request` and answers with the next stubbed response, as an outcome: an acceptable
    /// body for a request with a download destination is written there, as a real manager does
    /// (which refuses a folder or a device there), and the outcome names the file.
    @discardableResult
    public func send(
        _ request: URLRequest, options: RequestOptions, completion: @escaping @Sendable (TransportOutcome) -> Void
    ) -> any NetworkCancellable {
        self.request(request, options: options) { data, response, error in
            var outcome = TransportOutcome(response: response, body: data ?? Data(), error: error)
            if error == nil, let destination = options.downloadDestination {
                do {
                    if let refusal = RequestValidationError.refusingDownload(to: destination) { throw refusal }
                    try FileManager.default.createDirectory(
                        at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try outcome.body.write(to: destination, options: .atomic)
                    outcome.body = Data()
                    outcome.fileURL = destination
                } catch {
                    outcome.error = error
                }
            }
            completion(outcome)
        }
    }

    /// Records `request` and plays the next stubbed response to `receiver` as a stream: a
    /// ``Response/stream(_:)`` part by part, any other whole; an unacceptable status ends it with a
    /// ``/StrataSession/FailedResponse`` carrying the body.
    public func stream(
        _ request: URLRequest, options: RequestOptions, to receiver: any ResponseReceiver
    ) -> any ResponseExchange {
        let url = request.url ?? URL(fileURLWithPath: "/")
        let acceptable = options.acceptableStatusCodes ?? acceptableStatusCodes
        let script: StreamScript
        switch next(request, options) {
        case .pending:
            return ResponseRelay(to: receiver)
        case .failure(let error):
            return ResponsePlayback.start(head: nil, steps: [.fail(error)], to: receiver)
        case .success(let statusCode, let headers, let body):
            script = StreamScript(statusCode: statusCode, headers: headers, steps: [.part(body)])
        case .stream(let streamed):
            script = streamed
        }
        let upload = ProgressCount(options.uploadProgress) { false }
        return script.play(
            url: url, acceptable: acceptable,
            to: UploadReported(Self.bodyLength(of: request), to: upload, then: receiver),
            failure: FailedResponse.ending)
    }

    /// The length of `request`'s body, when it has one whose length is known: in memory, or a file.
    private static func bodyLength(of request: URLRequest) -> Int64? {
        if let body = request.httpBody, !body.isEmpty { return Int64(body.count) }
        if let file = request.httpBodyStream as? FileBodyStream { return Int64(clamping: file.length) }
        return nil
    }

    /// Records `request` and takes the next stubbed response; a failure, leaving the stubbed
    /// responses as they are, if `options` are out of range (a real manager sends nothing then).
    private func next(_ request: URLRequest, _ options: RequestOptions) -> Response {
        let checked = Result { () throws(RequestValidationError) in try options.validate() }
        return state.withLock { state -> Response in
            state.requests.append(request)
            state.options.append(options)
            if case .failure(let invalid) = checked { return .failure(invalid) }
            return state.queue.isEmpty ? fallback : state.queue.removeFirst()
        }
    }
}

/// One request's progress closure and its `Progress`, told each count in order until the request
/// has completed.
private final class ProgressCount: Sendable {
    private let report: (@Sendable (Progress) -> Void)?
    private let progress = Locked(Progress(totalUnitCount: -1))
    private let isOver: @Sendable () -> Bool

    /// - Parameters:
    ///   - report: The closure; `nil`, nothing is told.
    ///   - isOver: Whether the request has completed: no count is told after.
    init(_ report: (@Sendable (Progress) -> Void)?, isOver: @escaping @Sendable () -> Bool) {
        self.report = report
        self.isOver = isOver
    }

    /// Tells the closure that `done` bytes of `expected` (`-1`: unknown) have gone.
    func count(_ done: Int64, of expected: Int64) {
        guard let report, !isOver() else { return }
        let progress = self.progress.withLock { progress in
            progress.count(done, of: expected)
            return progress
        }
        report(progress)
    }
}

/// Tells `upload` that the request's whole body went out as the answer's head arrives, then hands
/// the answer on.
private final class UploadReported: ResponseReceiver {
    private let length: Int64?
    private let upload: ProgressCount
    private let receiver: any ResponseReceiver

    init(_ length: Int64?, to upload: ProgressCount, then receiver: any ResponseReceiver) {
        self.length = length
        self.upload = upload
        self.receiver = receiver
    }

    func receive(_ head: ResponseHead) {
        if let length { upload.count(length, of: length) }
        receiver.receive(head)
    }

    func receive(_ part: Data) { receiver.receive(part) }
    func finish(_ error: (any Error)?) { receiver.finish(error) }
    func take(bodyFile url: URL) -> Bool { receiver.take(bodyFile: url) }
}
