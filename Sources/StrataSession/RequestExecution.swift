import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request through a ``URLSessionManager``: adapt, send, validate, and retry as decided, until
/// it succeeds, fails for good, or is cancelled.
final class RequestExecution: Sendable {
    private typealias Outcome = (data: Data?, response: URLResponse?, error: (any Error)?)

    private struct State: Sendable {
        var attemptCount = 0
        /// Tasks sent so far, redirects' included.
        var sendCount = 0
        var task: URLSessionTask?
    }

    let token = CancellationToken()
    private let core: SessionCore
    private let original: URLRequest
    private let acceptableStatusCodes: Set<Int>
    private let uploadProgress: (@Sendable (Progress) -> Void)?
    private let interceptor: Interceptor
    private let redirectPolicy: RedirectPolicy
    private let download: (destination: URL, progress: (@Sendable (Progress) -> Void)?)?
    private let startDate = Date()
    private let completion: CompletionOnce<Outcome>
    private let state = Locked(State())

    init(
        core: SessionCore,
        request: URLRequest,
        options: SessionRequestOptions,
        acceptableStatusCodes: Set<Int>,
        completion: @escaping NetworkSessionManager.CompletionHandler
    ) {
        self.core = core
        self.original = request
        self.acceptableStatusCodes = acceptableStatusCodes
        self.uploadProgress = options.uploadProgress
        self.redirectPolicy = options.redirectPolicy ?? core.redirectPolicy
        self.download = options.downloadDestination.map { ($0, options.downloadProgress) }
        // The manager's chain, then the request's own interceptor, if it has one.
        self.interceptor =
            options.interceptor.map { Interceptor(interceptors: [core.interceptor, $0]) } ?? core.interceptor
        self.completion = CompletionOnce { completion($0.data, $0.response, $0.error) }
    }

    func start() {
        // The handler holds the completion, not the execution: cancelling completes the request even
        // when an adapter or retrier has dropped its callback, and no cycle outlives the request.
        token.onCancel { [weak self, completion] in
            completion.complete((nil, nil, URLError(.cancelled)))
            self?.stopWork()
        }
        attempt()
    }

    private func stopWork() {
        let task = state.withLock { state in
            defer { state.task = nil }
            return state.task
        }
        if let task {
            core.delegate.cancel(task, in: core.session)
        }
    }

    private func attempt() {
        guard !token.isCancelled else { return }
        if let reachability = core.reachability, !reachability.isReachable(original.url) {
            completion.complete((nil, nil, URLError(.notConnectedToInternet)))
            return
        }
        interceptor.adapt(original) { [self] result in
            guard !token.isCancelled else { return }
            switch result {
            case .success(let request): send(request)
            case .failure(let error): completion.complete((nil, nil, error))
            }
        }
    }

    /// Sends `adapted` as a new task: a new attempt, or (with `visited`, the URLs earlier redirects
    /// led to) the continuation of the current one after a redirect.
    private func send(_ adapted: URLRequest, visited: Set<URL>? = nil) {
        var request = adapted
        #if canImport(FoundationNetworking)
            // FoundationNetworking truncates a request's timeout to whole seconds, so a timeout
            // under one second would become none at all: round up instead.
            let timeout = max(1, request.timeoutInterval.rounded(.up))
            if request.timeoutInterval != timeout {
                request.timeoutInterval = timeout
            }
        #endif
        let sent = request
        let task: URLSessionTask
        if let file = request.httpBodyStream as? FileBodyStream {
            // A body on disk is uploaded from its file: a known length, and readable again on a retry.
            request.httpBodyStream = nil
            task = core.session.uploadTask(with: request, fromFile: file.fileURL)
        } else if download != nil {
            task = core.session.downloadTask(with: request)
        } else {
            task = core.session.dataTask(with: request)
        }
        // Counted before the task runs: its outcome can arrive, be judged by the retriers with this
        // count, and even start the next task, before `resume()` has returned.
        let sending = state.withLock { state -> Int in
            if visited == nil { state.attemptCount += 1 }
            state.sendCount += 1
            return state.sendCount
        }
        core.delegate.register(
            task,
            uploadProgress: uploadProgress,
            redirectPolicy: redirectPolicy,
            download: download,
            visited: visited ?? []
        ) {
            [self] outcome in
            switch outcome {
            case .completed(let data, let response, let error):
                handle(request: sent, outcome: (data, response, error))
            case .redirect(let next, let visited):
                guard !token.isCancelled else { return }
                send(next, visited: visited)
            }
        }
        // The task becomes visible to cancellation only once resumed, so it is never cancelled
        // before it started (which would leave it neither running nor completed).
        task.resume()
        let cancelled = state.withLock { state -> Bool in
            // Unless a later send (a retry, a redirect) has already taken over.
            if state.sendCount == sending { state.task = task }
            return token.isCancelled
        }
        if cancelled {
            core.delegate.cancel(task, in: core.session)
        }
    }

    private func handle(request: URLRequest, outcome: Outcome) {
        guard !token.isCancelled else { return }
        let attemptCount = state.withLock { state in
            state.task = nil
            return state.attemptCount
        }
        guard let error = failure(of: request, outcome) else {
            completion.complete(outcome)
            return
        }
        let failure = RequestFailure(
            request: request,
            response: outcome.response as? HTTPURLResponse,
            data: outcome.data ?? Data(),
            error: error,
            attemptCount: attemptCount,
            startDate: startDate
        )
        interceptor.retry(failure) { [self] decision in
            guard !token.isCancelled else { return }
            switch decision {
            case .retry:
                attempt()
            case .retryAfter(let delay):
                scheduleRetry(after: delay)
            case .doNotRetry:
                completion.complete((outcome.data, outcome.response, error))
            case .doNotRetryWithError(let replacement):
                completion.complete((outcome.data, outcome.response, replacement))
            }
        }
    }

    /// The reason the outcome counts as a failure, or `nil` for success.
    private func failure(of request: URLRequest, _ outcome: Outcome) -> (any Error)? {
        if let error = outcome.error { return error }
        guard let response = outcome.response as? HTTPURLResponse else { return SessionError.invalidResponse }
        guard acceptableStatusCodes.contains(response.statusCode) else {
            return SessionError.unacceptableStatusCode(response.statusCode)
        }
        if download == nil, request.httpMethod != "HEAD", response.value(forHTTPHeaderField: "Content-Encoding") == nil,
            let announced = response.value(forHTTPHeaderField: "Content-Length").flatMap({ Int($0) }),
            let received = outcome.data?.count, received < announced
        {
            return SessionError.incompleteBody(expected: announced, received: received)
        }
        return nil
    }

    /// Waits `delay` seconds, then attempts again unless cancelled meanwhile (cancelling completes
    /// the request at once; the late timer then finds the token cancelled and does nothing).
    private func scheduleRetry(after delay: TimeInterval) {
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, delay)) { [self] in attempt() }
    }
}
