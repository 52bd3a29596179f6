import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request through a ``SessionManager``: adapt, check, send, follow redirects, validate, and
/// retry as decided, until it succeeds, fails for good, or is cancelled.
///
/// Each attempt — from its first byte sent to the last byte of its final response, redirects
/// included — ends by the request's `timeoutInterval`, on a timer of Strata's own: a server that
/// never answers, stops after `100 Continue` or trickles a body forever fails with
/// `URLError(.timedOut)`, which the retriers then judge like any other failure.
///
/// An outcome keeps the transport's shape, ``TransportOutcome``, all the way through; it becomes the
/// manager's `(Data?, URLResponse?, Error?)` only in the completion.
final class RequestExecution: Sendable {
    /// One request of a chain of redirects: the request as the caller made it for this hop (before
    /// adapters, which run again for every hop), the requests made before (since a response on the
    /// way last set a cookie), and how many redirects led here.
    private struct Hop: Sendable {
        var base: URLRequest
        var visited: Set<String> = []
        var redirects = 0
    }

    private struct State: Sendable {
        /// The attempt under way (1 after the first).
        var attempt = 0
        /// Whether the attempt has ended: by its outcome, its deadline or cancellation.
        var attemptEnded = true
        /// Advances whenever something the attempt waits for (an adaptation, a task) starts or is
        /// consumed: a callback that finds it changed belongs to a step already over.
        var step = 0
        /// The transport's handle of the attempt in flight.
        var sent: (any NetworkCancellable)?
        /// The attempt's entry in the session's ``Deadlines``.
        var deadline: Int?
        /// The last request sent, for a failure that ends an attempt before an answer.
        var lastSent: URLRequest?
        /// Whether the accepted response has been handed on as a stream: nothing is retried, and
        /// the attempt's deadline no longer applies.
        var streaming = false
        /// The caller's code the request waits for outside any deadline, if any: see ``Awaited``.
        var awaited: Awaited?
        /// Numbers each wait for the caller's code.
        var tickets = 0

        /// Waits for `code` (a number from ``tickets``), ending any wait before it.
        mutating func await(_ code: Awaited.Code) -> (ticket: Int, ended: Int?) {
            tickets += 1
            let ended = awaited?.entry
            awaited = Awaited(code: code, ticket: tickets)
            return (tickets, ended)
        }

        /// Ends the wait for the caller's code, if any: its entry in the deadlines, to cancel.
        mutating func endAwaiting() -> Int? {
            defer { awaited = nil }
            return awaited?.entry
        }
    }

    /// What a request waits for where no deadline of the attempt's runs: the caller's code — the
    /// adapters before an attempt's first request, the retriers' decision after it — and the delay
    /// a retrier asked for before the next attempt. Code that calls back before it returns costs
    /// nothing more; for code that does not, an entry in the session's ``Deadlines`` ends the wait
    /// after the request's timeout, so that an adapter or retrier that never calls back (a
    /// completion dropped on some path) fails the request with a timeout rather than hold it for
    /// ever. A delay is an entry too, which a cancellation removes: the request is released then,
    /// not when the delay has passed.
    struct Awaited: Sendable {
        enum Code: Sendable {
            /// The adaptation of the attempt's first request: the attempt fails unsent.
            case adaptation
            /// The retriers' decision on the failed attempt's `outcome`: it fails with the timeout.
            case decision(TransportOutcome)
            /// The delay before the next attempt, which starts when it has passed.
            case retryDelay
        }

        let code: Code
        let ticket: Int
        /// Its entry in the session's deadlines, once made.
        var entry: Int?
    }

    /// The request's one completion and its cancellation: the handle the caller gets.
    let call: CancellableCompletion<TransportOutcome>
    /// The request's number among the manager's ``RequestsUnderWay``.
    private let number: Int
    private let core: PipelineCore
    private let original: URLRequest
    private let acceptableStatusCodes: Set<Int>
    private let uploadProgress: (@Sendable (Progress) -> Void)?
    private let interceptor: Interceptor
    private let redirectPolicy: RedirectPolicy
    private let originBoundHeaderNames: Set<String>
    /// Where a download's body is written, if the request is one.
    private let download: URL?
    /// What a download that resumes keeps between attempts, if the request is one.
    private let resumption: DownloadResumption?
    /// Told of the response body as it arrives, written to the download's file or collected in
    /// memory; a streamed body is the caller's to count.
    private let downloadProgress: (@Sendable (Progress) -> Void)?
    /// Where the caller's progress closures are called, if it gave any.
    private let progress: ProgressRelay?
    /// The longest body held in memory for an accepted response.
    private let maximumBodyLength: Int
    /// Why the request cannot start, if it cannot: its options out of range, or a timeout that is not
    /// a positive number (which would leave no bound on the wait for its adapters). It fails with it
    /// before any of the caller's code runs for it.
    private let refusal: RequestValidationError?
    private let startDate = Date()
    /// What the monitors are told, if the manager has any.
    private let record: ExecutionRecord?
    /// Whether a final success completes on the transport's queue (see
    /// ``SessionManager/send(_:options:completion:)``).
    private let completesSuccessInline: Bool
    /// Where an accepted response goes as it comes, for a streamed request.
    private let stream: PipelineStream?
    /// What the request keeps of its caller's context, bound again around the caller's code.
    private let context: RequestContext
    private let state = Locked(State())

    init(
        core: PipelineCore,
        request: URLRequest,
        options: RequestOptions,
        acceptableStatusCodes: Set<Int>,
        completesSuccessInline: Bool,
        stream: PipelineStream? = nil,
        completion: @escaping @Sendable (TransportOutcome) -> Void
    ) {
        self.core = core
        self.stream = stream
        self.completesSuccessInline = completesSuccessInline
        self.original = request.movingUserInfo(keepingCredentials: true)
        self.acceptableStatusCodes = acceptableStatusCodes
        self.uploadProgress = options.uploadProgress
        self.redirectPolicy = options.redirectPolicy ?? core.redirectPolicy
        self.originBoundHeaderNames = options.originBoundHeaderNames
        self.download = options.downloadDestination
        let resumption =
            options.resumesDownload
            ? options.downloadDestination.flatMap { DownloadResumption(of: request, to: $0) } : nil
        self.resumption = resumption
        self.downloadProgress = stream == nil ? options.downloadProgress : nil
        let progress = uploadProgress != nil || downloadProgress != nil ? ProgressRelay() : nil
        self.progress = progress
        self.maximumBodyLength = min(options.maximumBodyLength, BodyCollector.maximumLength)
        do throws(RequestValidationError) {
            try options.validate()
            guard request.timeoutInterval > 0 else { throw .invalidTimeout(request.timeoutInterval) }
            self.refusal = nil
        } catch {
            self.refusal = error
        }
        // The manager's chain, then the request's own interceptor, if it has one.
        self.interceptor =
            options.interceptor.map { Interceptor(interceptors: [core.interceptor, $0]) } ?? core.interceptor
        var context = core.monitors.capture(into: options.context)
        let record: ExecutionRecord?
        if core.monitors.isEmpty {
            record = nil
        } else {
            // Not kept in the context: the report would then hold, through it, what it must drop.
            let handling = context.responseHandling
            context.responseHandling = nil
            // Started here, on the caller's thread: a span a monitor opens is the child of the caller's.
            let id = RequestID.next()
            context = core.monitors.starting(request, id: id, in: context)
            record = ExecutionRecord(
                id: id, original: request, monitors: core.monitors, context: context,
                interests: core.monitors.interests(in: context), handling: handling)
        }
        self.context = context
        self.record = record
        let underWay = core.underWay
        let number = underWay.number()
        self.number = number
        @Sendable func deliver(_ outcome: TransportOutcome) {
            guard let progress else { return completion(outcome) }
            progress.finish { completion(outcome) }
        }
        self.call = CancellableCompletion(cancelledWith: .cancelled) { outcome in
            underWay.remove(number)
            resumption?.callEnded()
            record?.finished(outcome)
            // A failure may end the request on the stack of the caller's own call — `send` refused
            // it, an adapter failed before returning, `cancel()` — where the completion could
            // deadlock on a lock its caller holds, or, starting the next request that fails at
            // once, grow the stack without bound: it runs on a lane. A success comes up from the
            // transport, off any caller's stack.
            guard outcome.error != nil else { return deliver(outcome) }
            StrataQueue.async(ending: true) { deliver(outcome) }
        }
    }

    func start() {
        core.underWay.add(call, as: number)
        record?.created()
        // Cancelling ends the attempt under way, then completes the call. The call holds the execution
        // only weakly: it completes even when an adapter or retrier has dropped its callback (and the
        // execution with it), and no cycle outlives the request.
        call.attach(EndsAttempt(self))
        if let refusal {
            call.complete(TransportOutcome(error: refusal))
            return
        }
        guard let resumption else { return attempt() }
        // A wait for a cancelled download's writer is bounded by half the request's timeout too, so
        // that a short one is not held far past its deadline (whose attempt starts after the wait).
        resumption.claim(waitingAtMost: original.timeoutInterval / 2) { [self] in attempt() }
    }

    // MARK: - Attempts and steps

    private func attempt() {
        guard !call.isCancelled else { return }
        if let reachability = core.reachability, !context.run({ reachability.isReachable(original.url) }) {
            call.complete(TransportOutcome(error: URLError(.notConnectedToInternet)))
            return
        }
        let (step, ticket, ended) = state.withLock { state -> (Int, Int, Int?) in
            state.attempt += 1
            state.attemptEnded = false
            state.step += 1
            let (ticket, ended) = state.await(.adaptation)
            return (state.step, ticket, ended)
        }
        if let ended { core.deadlines.cancel(ended) }
        adapt(Hop(base: original), step: step)
        bound(ticket, by: original.timeoutInterval)
    }

    /// Bounds wait `ticket` by `timeout` seconds, if the caller's code it waits for has not called
    /// back yet (and the timeout is one): ``waitPassed(_:)`` after that. A retry's delay is bound
    /// as `.retryDelay`.
    private func bound(
        _ ticket: Int, by timeout: TimeInterval, as kind: (Int) -> Deadlines.Bound = Deadlines.Bound.awaited
    ) {
        guard timeout > 0, state.withLock({ $0.awaited?.ticket == ticket }),
            let entry = core.deadlines.start(after: timeout, execution: self, bounding: kind(ticket))
        else { return }
        let late = state.withLock { state -> Bool in
            guard state.awaited?.ticket == ticket else { return true }
            state.awaited?.entry = entry
            return false
        }
        if late { core.deadlines.cancel(entry) }
    }

    /// Wait `ticket` has run its time: the caller's code did not call back within the request's
    /// timeout, or a retry's delay has passed.
    private func waitPassed(_ ticket: Int) {
        let code = state.withLock { state -> Awaited.Code? in
            guard let awaited = state.awaited, awaited.ticket == ticket else { return nil }
            state.awaited = nil
            return awaited.code
        }
        switch code {
        case nil:
            return
        case .adaptation:
            // Ending the attempt makes the adapters' late callback one of a step that is over.
            fail(Self.timeoutError(original, "the adapters had not called back"))
        case .decision(let outcome):
            call.complete(outcome.failing(with: Self.timeoutError(original, "the retriers had not decided")))
        case .retryDelay:
            attempt()
        }
    }

    /// The next step of the attempt under way, or `nil` if it has ended (or the request was cancelled).
    private func nextStep() -> Int? {
        state.withLock { state -> Int? in
            guard !state.attemptEnded, !call.isCancelled else { return nil }
            state.step += 1
            return state.step
        }
    }

    /// Whether `step` is the current one, which it then consumes; `false` for a step already over.
    private func consume(_ step: Int) -> Bool {
        let consumed = state.withLock { state -> (consumed: Bool, awaited: Int?) in
            guard state.step == step, !state.attemptEnded, !call.isCancelled else { return (false, nil) }
            state.step += 1
            state.sent = nil
            return (true, state.endAwaiting())
        }
        if let entry = consumed.awaited { core.deadlines.cancel(entry) }
        return consumed.consumed
    }

    /// Ends attempt `attempt` (by default, the one under way) if it has not ended yet: its deadline
    /// stops, and what the transport is sending for it, if anything, is cancelled.
    /// - Returns: The request the attempt sent last, if this call ended it; `nil` if it had ended.
    fileprivate func endAttempt(_ attempt: Int? = nil) -> URLRequest? {
        let (ended, awaited) = state.withLock { state -> (((any NetworkCancellable)?, Int?, URLRequest)?, Int?) in
            let ends = !state.attemptEnded && attempt.map({ $0 == state.attempt }) ?? true
            // A cancellation (no `attempt`) ends a wait for a retrier's decision too, and ending an
            // attempt ends the wait for its adapters. An attempt's deadline firing late (the attempt
            // ended, or another is under way) keeps the wait and its bound: the retriers are
            // deciding on it, or the next attempt's adapters are running.
            let awaited = attempt == nil || ends ? state.endAwaiting() : nil
            guard ends else { return (nil, awaited) }
            state.attemptEnded = true
            state.step += 1
            defer { (state.sent, state.deadline) = (nil, nil) }
            return ((state.sent, state.deadline, state.lastSent ?? original), awaited)
        }
        if let awaited { core.deadlines.cancel(awaited) }
        guard let (sent, deadline, request) = ended else { return nil }
        if let deadline {
            core.deadlines.cancel(deadline)
        }
        sent?.cancel()
        return request
    }

    /// The deadline of `bound` has passed.
    func deadlinePassed(_ bound: Deadlines.Bound) {
        switch bound {
        case .attempt(let attempt): attemptTimedOut(attempt)
        case .awaited(let ticket), .retryDelay(let ticket): waitPassed(ticket)
        }
    }

    /// Attempt `attempt` did not end within the request's timeout: whatever it was waiting for, it
    /// fails with a timeout.
    private func attemptTimedOut(_ attempt: Int) {
        guard !state.withLock({ $0.streaming }), let request = endAttempt(attempt) else { return }
        let error = Self.deadlineError(request)
        judge(request, TransportOutcome(error: error), failure: error)
    }

    /// The error of an attempt of `request` whose deadline passed: `URLError(.timedOut)`, saying
    /// which deadline it was and naming the URL, as a transport's errors do.
    static func deadlineError(_ request: URLRequest) -> URLError {
        timeoutError(request, "no complete answer came", bounding: "which bounds each attempt, redirects included")
    }

    /// `URLError(.timedOut)` saying that `what` happened within `request`'s timeout.
    private static func timeoutError(
        _ request: URLRequest, _ what: String, bounding: String = "which bounds the caller's code too"
    ) -> URLError {
        let seconds = request.timeoutInterval
        let shown = seconds == seconds.rounded() && seconds < 1e15 ? "\(Int(seconds))" : "\(seconds)"
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: "\(what) within the request's timeout of \(shown) s, \(bounding)"
        ]
        userInfo[NSURLErrorFailingURLErrorKey] = request.url
        return URLError(.timedOut, userInfo: userInfo)
    }

    // MARK: - One hop: adapt, check, send

    private func adapt(_ hop: Hop, step: Int) {
        // Only a redirect leads elsewhere than the caller addressed.
        let guarded = hop.redirects == 0 || isAddressed(hop.base.url) ? nil : core.redaction
        context.run {
            interceptor.adapt(hop.base, guardingCredentialsWith: guarded) { [self] result in
                guard consume(step) else { return }
                switch result {
                case .success(let request):
                    record?.adapted(request, attempt: state.withLock { $0.attempt })
                    send(request, hop: hop)
                case .failure(let error): fail(error)
                }
            }
        }
    }

    /// Hands `adapted` to the transport, unless it breaks HTTP's grammar.
    private func send(_ adapted: URLRequest, hop: Hop) {
        // A download that resumes asks for what an earlier attempt did not keep.
        let kept = resumption?.kept()
        let adapted = normalized(adapted).asking(after: kept)
        do {
            try validate(adapted)
        } catch {
            return fail(error)
        }
        // The step is taken before the transport is called: its outcome can arrive, and even start
        // the next attempt, before `send` has returned.
        let claimed = state.withLock { state -> (step: Int, attempt: Int, startsDeadline: Bool)? in
            guard !state.attemptEnded, !call.isCancelled else { return nil }
            state.step += 1
            state.lastSent = adapted
            return (state.step, state.attempt, state.deadline == nil)
        }
        guard let (step, attempt, startsDeadline) = claimed else { return }
        if startsDeadline {
            startDeadline(after: adapted.timeoutInterval, attempt: attempt)
        }
        let sentAt = record?.sent(adapted, attempt: attempt)
        let uploadProgress = self.uploadProgress.flatMap { progress?.exchange(reportingTo: $0) }
        // One count for the attempt's body, whoever takes it: the transport writing the file, or the
        // pipeline writing it or collecting it in memory.
        let downloadProgress = self.downloadProgress.flatMap { progress?.exchange(reportingTo: $0) }
        let arrived: @Sendable (TransportOutcome) -> Void = { [self] outcome in
            uploadProgress?.end()
            downloadProgress?.end()
            if kept != nil, outcome.statusCode == 416 {
                // The range asked for is not there: what was kept is no part of what the server has,
                // and the request goes again for the whole body (see `arrived`).
                resumption?.discard()
            }
            // Judged once, here: whether it failed decides both the queue and, later, the retriers.
            let failure = self.failure(of: adapted, outcome)
            let handle: @Sendable () -> Void = { [self] in
                guard consume(step) else { return }
                if let sentAt {
                    record?.received(outcome, for: adapted, attempt: attempt, sentAt: sentAt)
                }
                self.arrived(outcome, failure: failure, for: adapted, hop: hop)
            }
            // What follows is the caller's code — redirect decisions, adapters, retriers, the
            // completion and whatever the layers above do in it — and runs off the transport's
            // queue (for URLSession, its one serial delegate queue), so none of it can hold up
            // another transfer. Only a success for a completion that resumes a task, which runs
            // none of the caller's code, completes where it is (a success is never a redirect:
            // a 3xx is acceptable only when the caller says so).
            // A redirect goes on to the adapters, so it is no end (see `WorkLanes.run(_:ending:)`).
            let redirects = isRedirect(outcome)
            if completesSuccessInline, failure == nil, !redirects {
                handle()
            } else {
                StrataQueue.async(ending: !redirects, handle)
            }
        }
        let exchange = ExchangeSlot()
        let router = BodyRouter(
            choose: { [self] head in
                consumer(
                    for: head, of: adapted, step: step, from: exchange, kept: kept?.length ?? 0,
                    downloadProgress: downloadProgress?.counts, completion: arrived)
            },
            headless: arrived)
        let sending = TransportAttempt(
            // A download that resumes writes the parts itself, to keep them if the exchange is cut short.
            request: adapted, uploadProgress: uploadProgress?.counts,
            bodyIsBoundForFile: download != nil && resumption?.holds != true,
            fileProgress: download != nil ? downloadProgress?.counts : nil, bufferLimit: stream?.bufferLimit)
        exchange.set(context.run { core.transport.send(sending, to: router) })
        let sent: any NetworkCancellable = exchange
        let isCurrent = state.withLock { state -> Bool in
            guard state.step == step, !state.attemptEnded else { return false }
            state.sent = sent
            return true
        }
        if !isCurrent {
            // Cancelled, timed out or already answered meanwhile; cancelling a finished attempt does nothing.
            sent.cancel()
        }
    }

    /// Where the body of the response `head` to `request` goes, decided as its head arrives: for
    /// an acceptable status with no redirect to follow, the caller's stream, or a download's file;
    /// otherwise memory — for a stream or a download, only the first ``errorBodyLimit`` bytes.
    private func consumer(
        for head: ResponseHead, of request: URLRequest, step: Int, from exchange: ExchangeSlot, kept: Int64,
        downloadProgress: (@Sendable (Int64, Int64) -> Void)?,
        completion: @escaping @Sendable (TransportOutcome) -> Void
    ) -> any ResponseReceiver {
        if download == nil, stream == nil {
            // The body of a redirect that is followed is nobody's: not counted.
            let progress = downloadProgress.flatMap { follows(head) ? nil : $0 }
            return BodyCollector(limit: maximumBodyLength, from: exchange, progress: progress, completion)
        }
        guard accepts(head.statusCode, for: request), !follows(head) else {
            return BodyCollector(limit: Self.errorBodyLimit, truncates: true, from: exchange, completion)
        }
        if let stream {
            // Too late (the deadline passed, or the caller cancelled): nobody takes the body.
            guard handOver(step: step) else { return BodyCollector(limit: 0, from: exchange) { _ in } }
            stream.handOver(exchange)
            return stream
        }
        guard let download else { return BodyCollector(limit: maximumBodyLength, from: exchange, completion) }
        let resumption = self.resumption.flatMap { $0.holds ? $0 : nil }
        return FileWriter(
            to: download, for: request, from: exchange, resuming: resumption, after: kept,
            progress: downloadProgress, completion)
    }

    /// Whether `status` answers `request` as the caller wants: one of its acceptable codes, or a
    /// `206` answering the range a download that resumes asked for.
    private func accepts(_ status: Int, for request: URLRequest) -> Bool {
        acceptableStatusCodes.contains(status)
            || (status == 206 && resumption?.holds == true && request.headerField("Range") != nil)
    }

    /// Claims the attempt under way for a stream, if `step` is still its step: its deadline stops,
    /// and nothing of it will be retried.
    private func handOver(step: Int) -> Bool {
        let deadline = state.withLock { state -> Int?? in
            guard state.step == step, !state.attemptEnded, !call.isCancelled else { return .none }
            state.streaming = true
            defer { state.deadline = nil }
            return .some(state.deadline)
        }
        guard let deadline else { return false }
        if let deadline { core.deadlines.cancel(deadline) }
        return true
    }

    /// The stream handed on ended with `outcome` (or by one of its deadlines): the request's one
    /// completion.
    func finishStream(_ outcome: TransportOutcome) {
        state.withLock { state in
            state.attemptEnded = true
            state.sent = nil
        }
        call.complete(outcome)
    }

    /// The most of a download's body kept in memory when it is not written to its file (an error
    /// page, a redirect's body).
    static let errorBodyLimit = 1_048_576

    /// `request` as a transport gets it: user information in the URL (an adapter may have put
    /// some there) goes on the wire only as a credential field, and only to the addressed origin;
    /// the scheme is lowercased (it is case-insensitive, and FoundationNetworking takes only a
    /// lowercase one); and its framing is the body's (``URLRequest/framedByItsBody()``).
    private func normalized(_ request: URLRequest) -> URLRequest {
        var request = request.framedByItsBody()
        if let url = request.url, url.user != nil || url.password != nil {
            request = request.movingUserInfo(keepingCredentials: isAddressed(url))
        }
        if let url = request.url, let scheme = url.scheme, scheme != "http", scheme != "https" {
            request.url = url.lowercasingScheme(scheme)
        }
        return request
    }

    /// Starts the deadline of attempt `attempt`, unless the attempt has ended meanwhile.
    private func startDeadline(after timeout: TimeInterval, attempt: Int) {
        guard let deadline = core.deadlines.start(after: timeout, execution: self, bounding: .attempt(attempt)) else {
            return
        }
        let late = state.withLock { state -> Bool in
            guard state.attempt == attempt, !state.attemptEnded else { return true }
            state.deadline = deadline
            return false
        }
        if late {
            core.deadlines.cancel(deadline)
        }
    }

    /// Throws unless the request can go on the wire as it is: a URL the transport can send to, a
    /// positive timeout (an adapter may have changed it), a token for a method, tokens for header
    /// names and no control characters in header values (RFC 9110); a body's file still the size
    /// the request announces; and a download's destination is a file or nothing yet (a folder
    /// would be replaced with all it holds, a device such as `/dev/null` removed).
    private func validate(_ request: URLRequest) throws(RequestValidationError) {
        // FoundationNetworking traps on a request without a URL; SwiftNIO on a port out of range.
        guard let url = request.url else { throw .missingURL }
        try core.transport.validateForSending(url, redaction: core.redaction)
        try request.validateMethodAndHeaders()
        guard request.timeoutInterval > 0 else { throw .invalidTimeout(request.timeoutInterval) }
        if let file = request.httpBodyStream as? FileBodyStream {
            try file.checkUnchanged()
        }
        if let destination = download, let refusal = RequestValidationError.refusingDownload(to: destination) {
            throw refusal
        }
    }

    // MARK: - Outcomes

    /// An exchange's outcome for `request`, and why it failed if it did: a redirect to follow, or
    /// the attempt's outcome.
    private func arrived(_ outcome: TransportOutcome, failure: (any Error)?, for request: URLRequest, hop: Hop) {
        if outcome.statusCode == 416, resumption?.holds == true, request.headerField("Range") != nil {
            // The kept bytes reach past what the server has (they were removed as the answer came):
            // the same request again, for the whole body.
            guard let step = nextStep() else { return }
            return adapt(hop, step: step)
        }
        guard isRedirect(outcome), outcome.headerValue("Location") != nil,
            let response = outcome.response as? HTTPURLResponse, let decide = redirectPolicy.decide
        else { return finish(outcome, failure: failure) }
        follow(response, of: request, hop: hop, decide: decide, otherwise: outcome, failure: failure)
    }

    /// Whether `outcome` is a response of a redirect status, which the policy may follow.
    private func isRedirect(_ outcome: TransportOutcome) -> Bool {
        guard outcome.error == nil, let status = outcome.statusCode else { return false }
        return isRedirectStatus(status)
    }

    /// Whether the response `head` is a redirect the policy may follow: its body is nobody's.
    private func follows(_ head: ResponseHead) -> Bool {
        isRedirectStatus(head.statusCode) && head.headers["Location"] != nil && redirectPolicy.decide != nil
    }

    /// Whether `status` is a redirect status.
    private func isRedirectStatus(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: return true
        default: return false
        }
    }

    /// Follows the redirect `response` to `request` as `decide` says, or ends the attempt with
    /// `outcome` (which failed with `failure`, if it did) when it says no.
    private func follow(
        _ response: HTTPURLResponse, of request: URLRequest, hop: Hop, decide: RedirectPolicy.Decision,
        otherwise outcome: TransportOutcome, failure: (any Error)?
    ) {
        do {
            var next = try nextHop(
                after: hop, sent: request, response: response,
                location: Self.location(outcome.head?.headers.values(for: "Location") ?? []))
            let proposed = next.base.url
            // The policy decides with no lock held: it may start requests of its own.
            guard let decided = context.run({ decide(next.base, response) }) else {
                return finish(outcome, failure: failure)
            }
            next.base = decided
            if decided.url != proposed {
                guard let url = decided.url else { throw RedirectError.invalidLocation("") }
                next.base.url = try checkedTarget(url, from: request.url)
            }
            // A decision is bound to no origin: what it adds stays with the origin the caller addressed.
            if !isAddressed(next.base.url) {
                removeOriginBoundHeaders(from: &next.base)
            }
            guard let step = nextStep() else { return }
            record?.redirected(response, to: next.base)
            adapt(next, step: step)
        } catch {
            finish(outcome.failing(with: error), failure: error)
        }
    }

    /// The target a redirect's `Location` fields name: a field repeated with one value (two layers
    /// of a server each adding it) names that value, and so does one value repeated in a field a
    /// transport joined from several (FoundationNetworking joins them with ", ", which no URI
    /// holds); fields of different values name no one target (RFC 9110 §10.2.2 allows one). A value
    /// is read without the spaces and tabs around it, which are not part of it (RFC 9110 §5.5) and
    /// which neither client's parser takes off the end: curl and browsers follow `/next` for
    /// `Location: /next  ` too.
    static func location(_ fields: [String]) throws(RedirectError) -> String {
        let fields = fields.map { $0.trimmingCharacters(in: Self.optionalWhitespace) }
        guard let first = fields.first else { return "" }
        guard fields.count == 1 else {
            guard fields.allSatisfy({ $0 == first }) else {
                throw .invalidLocation(fields.joined(separator: ", "))
            }
            return first
        }
        let parts = first.components(separatedBy: ", ")
        return parts.count > 1 && parts.allSatisfy({ $0 == parts[0] }) ? parts[0] : first
    }

    /// The whitespace HTTP allows around a field value: spaces and tabs (RFC 9110 §5.6.3).
    private static let optionalWhitespace = CharacterSet(charactersIn: " \t")

    /// The next request of a redirect from `sent` to `location`, made safe (see
    /// ``/StrataCore/RedirectPolicy``).
    private func nextHop(after hop: Hop, sent: URLRequest, response: HTTPURLResponse, location: String) throws -> Hop {
        guard let resolved = URL(string: location, relativeTo: response.url ?? sent.url)?.absoluteURL else {
            throw RedirectError.invalidLocation(location)
        }
        // A relative `Location` comes resolved; an absolute one is sent as every transport would.
        let url = try checkedTarget(DotSegments.resolving(resolved), from: sent.url)
        guard hop.redirects < redirectPolicy.maximumRedirects else {
            throw RedirectError.tooManyRedirects(maximum: redirectPolicy.maximumRedirects)
        }
        // A response that sets a cookie changes the requests after it: going back where the chain
        // has been is no loop then (a cookie check that redirects to itself, a sign-in that sends
        // back to the page that sent it there), and `maximumRedirects` still bounds the chain.
        let setsCookie = response.value(forHTTPHeaderField: "Set-Cookie") != nil
        var next = Hop(base: hop.base, visited: setsCookie ? [] : hop.visited, redirects: hop.redirects + 1)
        if next.visited.isEmpty, !setsCookie {
            next.visited.insert(Self.visit(hop.base.httpMethod, sent.url))
        }
        next.base.url = url
        let method = hop.base.httpMethod ?? HTTPMethod.get.rawValue
        let becomesGet =
            (response.statusCode == 303 && method != HTTPMethod.head.rawValue)
            || ([301, 302].contains(response.statusCode) && method == HTTPMethod.post.rawValue)
        if becomesGet {
            next.base.httpMethod = HTTPMethod.get.rawValue
            next.base.httpBody = nil
            next.base.httpBodyStream = nil
            next.base.setHeaderFields(Self.bodyHeaderNames.lazy.map { ($0, nil) })
        } else if let stream = next.base.httpBodyStream, !(stream is FileBodyStream) {
            throw RedirectError.bodyNotReplayable
        }
        guard next.visited.insert(Self.visit(next.base.httpMethod, url)).inserted else {
            throw RedirectError.loop(url)
        }
        if !isAddressed(url) {
            removeOriginBoundHeaders(from: &next.base)
        } else if !isAddressed(sent.url) {
            // Back at the origin the caller addressed: its own credentials and configuration apply again.
            restoreOriginBoundHeaders(to: &next.base)
        }
        return next
    }

    /// `url` as the target of a redirect from `previous`, if the policy allows its scheme and the
    /// transport can send to it; without user information, which a server does not get to choose.
    private func checkedTarget(_ url: URL, from previous: URL?) throws -> URL {
        try redirectPolicy.check(from: previous, to: url)
        do {
            try core.transport.validate(url)
        } catch {
            throw RedirectError.unsupportedLocation(core.redaction.redact(url), reason: error)
        }
        return url.removingUserInfo()
    }

    /// The headers that describe a body, removed with it when a redirect turns a request into a `GET`.
    private static let bodyHeaderNames = [
        "Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location",
    ]

    /// How a request made on the way is remembered, to tell a loop.
    private static func visit(_ method: String?, _ url: URL?) -> String {
        "\(method ?? HTTPMethod.get.rawValue) \(url?.absoluteString ?? "")"
    }

    /// Whether `url` belongs to the origin the caller addressed: the only one that gets the
    /// request's own credentials and those of adapters bound to no origin. (Worked out when asked:
    /// only redirects and URLs with user information ask.)
    private func isAddressed(_ url: URL?) -> Bool {
        original.url.flatMap(Origin.init)?.contains(url) ?? false
    }

    /// Whether the field `name` must not leave the addressed origin: a credential (the manager's
    /// redaction hides it), a field of the configuration, or a `Host` of the request's own, which
    /// names the addressed origin (a virtual host behind its address) and no other: a hop
    /// elsewhere gets the `Host` of its own URL, as curl sends it.
    private func isOriginBound(_ name: String) -> Bool {
        core.redaction.hidesHeader(named: name) || name.caseInsensitiveCompare("Host") == .orderedSame
            || originBoundHeaderNames.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Removes what must not leave the addressed origin: the headers the manager's redaction calls
    /// credentials and the request's origin-bound (configuration) headers.
    private func removeOriginBoundHeaders(from request: inout URLRequest) {
        request.setHeaderFields((request.allHTTPHeaderFields ?? [:]).keys.filter(isOriginBound).map { ($0, nil) })
    }

    /// Puts back the caller's credentials and configuration headers, removed on the way to another
    /// origin, on a request back at the addressed origin.
    private func restoreOriginBoundHeaders(to request: inout URLRequest) {
        request.setHeaderFields(
            (original.allHTTPHeaderFields ?? [:]).filter { isOriginBound($0.key) }.map { ($0.key, $0.value) })
    }

    /// The attempt is over with `outcome`, which the retriers judge if it failed with `failure`.
    private func finish(_ outcome: TransportOutcome, failure: (any Error)?) {
        guard let request = endAttempt() else { return }
        judge(request, outcome, failure: failure)
    }

    /// The request fails with `error` before anything was sent for this hop (an adapter failed, or
    /// the adapted request is invalid): no retrier is asked, as trying again would change nothing.
    private func fail(_ error: any Error) {
        guard endAttempt() != nil else { return }
        call.complete(TransportOutcome(error: error))
    }

    /// Completes with `outcome` if it is a success (no `failure`); otherwise asks the retriers.
    private func judge(_ request: URLRequest, _ outcome: TransportOutcome, failure error: (any Error)?) {
        guard !call.isCancelled else { return }
        guard let error else {
            call.complete(outcome)
            return
        }
        // Without retriers, no `RequestFailure` (whose response a head would have to be made into).
        // Nor for a body read from a stream of the caller's once a transport has opened it: the
        // stream goes once, and a retry would send what is left of it, nothing, as the body.
        guard !interceptor.retriers.isEmpty, !Self.hasSpentStream(request) else {
            call.complete(outcome.failing(with: error))
            return
        }
        let failure = RequestFailure(
            request: request,
            response: outcome.response as? HTTPURLResponse,
            data: outcome.body,
            error: error,
            attemptCount: state.withLock { $0.attempt },
            startDate: startDate
        )
        context.run {
            retry(failure, outcome: outcome, error: error)
        }
    }

    /// Whether `request`'s body is a stream of the caller's (not a file, which is read again) that
    /// a transport has opened.
    private static func hasSpentStream(_ request: URLRequest) -> Bool {
        guard let stream = request.httpBodyStream, !(stream is FileBodyStream) else { return false }
        return stream.streamStatus != .notOpen
    }

    /// Asks the retriers about `failure` (`outcome`, which failed with `error`), and acts as they decide.
    private func retry(_ failure: RequestFailure, outcome: TransportOutcome, error: any Error) {
        let (ticket, ended) = state.withLock { $0.await(.decision(outcome)) }
        if let ended { core.deadlines.cancel(ended) }
        interceptor.retry(failure) { [self] decision in
            // A decision that comes after the request's timeout has passed is one nobody waits for.
            let awaited = state.withLock { state -> Int?? in
                guard state.awaited?.ticket == ticket else { return nil }
                return .some(state.endAwaiting())
            }
            guard let awaited else { return }
            if let entry = awaited { core.deadlines.cancel(entry) }
            guard !call.isCancelled else { return }
            switch decision {
            case .retry:
                record?.retrying(failure, delay: 0)
                attempt()
            case .retryAfter(let delay):
                record?.retrying(failure, delay: delay)
                scheduleRetry(after: delay)
            case .doNotRetry:
                call.complete(outcome.failing(with: error))
            case .doNotRetryWithError(let replacement):
                call.complete(outcome.failing(with: replacement))
            }
        }
        bound(ticket, by: failure.request.timeoutInterval)
    }

    /// The reason the outcome counts as a failure, or `nil` for success.
    ///
    /// A body shorter than its `Content-Length` is a failure (the connection ended early: see
    /// ``TransportOutcome/isShorterThanAnnounced(for:)``; a file's writer checks its own).
    private func failure(of request: URLRequest, _ outcome: TransportOutcome) -> (any Error)? {
        if let error = outcome.error { return error }
        guard let status = outcome.statusCode else { return SessionError.invalidResponse }
        guard accepts(status, for: request) else {
            return SessionError.unacceptableStatusCode(status)
        }
        if outcome.fileURL == nil, outcome.isShorterThanAnnounced(for: request) {
            return SessionError.incompleteBody(
                expected: Int(clamping: outcome.expectedContentLength), received: outcome.body.count)
        }
        return nil
    }

    /// A year: the longest wait between attempts.
    private static let longestDelay: TimeInterval = 31_536_000

    /// Waits `delay` seconds, then attempts again: a wait in the session's ``Deadlines``, which
    /// cancelling the request ends, releasing it at once.
    private func scheduleRetry(after delay: TimeInterval) {
        let delay = delay.isNaN ? 0 : min(delay, Self.longestDelay)
        guard delay > 0 else { return attempt() }
        let wait = state.withLock { state -> (ticket: Int, ended: Int?)? in
            // A cancellation that came first has ended every wait: none is begun after it.
            guard !call.isCancelled else { return nil }
            return state.await(.retryDelay)
        }
        guard let wait else { return }
        if let ended = wait.ended { core.deadlines.cancel(ended) }
        bound(wait.ticket, by: delay, as: Deadlines.Bound.retryDelay)
    }
}

/// A request's story for the event monitors: its identity, when it began, what was sent last, and
/// the timing of each exchange with the transport.
private final class ExecutionRecord: Sendable {
    private struct State: Sendable {
        var lastSent: URLRequest?
        var attempts = 0
        var exchanges: [AttemptTiming] = []
    }

    let id: RequestID
    private let original: URLRequest
    private let monitors: EventMonitors
    private let context: RequestContext
    /// The hooks each monitor wants of this request.
    private let interests: EventMonitors.Interests
    /// What the layer above will report of the response, if it said it would.
    private let handling: ResponseHandling?
    private let createdAt = ContinuousClock.now
    private let state = Locked(State())

    init(
        id: RequestID, original: URLRequest, monitors: EventMonitors, context: RequestContext,
        interests: EventMonitors.Interests, handling: ResponseHandling?
    ) {
        self.id = id
        self.original = original
        self.monitors = monitors
        self.context = context
        self.interests = interests
        self.handling = handling
    }

    // Each hook is checked for before its event is made: an event's closure is allocated as it is made.

    func created() {
        guard interests.any.contains(.created) else { return }
        monitors.emit(.created, to: interests, in: context) { [original, id] in $0.requestCreated(original, id: id) }
    }

    func adapted(_ request: URLRequest, attempt: Int) {
        guard interests.any.contains(.adapted) else { return }
        monitors.emit(.adapted, to: interests, in: context) { [id] in
            $0.requestAdapted(request, id: id, attempt: attempt)
        }
    }

    /// - Returns: When `request` was handed to the transport.
    func sent(_ request: URLRequest, attempt: Int) -> ContinuousClock.Instant {
        state.withLock { state in
            state.lastSent = request
            state.attempts = max(state.attempts, attempt)
        }
        guard interests.any.contains(.sent) else { return .now }
        monitors.emit(.sent, to: interests, in: context) { [id] in $0.requestSent(request, id: id, attempt: attempt) }
        return .now
    }

    func received(_ outcome: TransportOutcome, for request: URLRequest, attempt: Int, sentAt: ContinuousClock.Instant) {
        let timing = AttemptTiming(attempt: attempt, sent: sentAt, duration: .now - sentAt)
        state.withLock { $0.exchanges.append(timing) }
        guard interests.any.contains(.received) else { return }
        monitors.emit(.received, to: interests, in: context) { [id] in
            $0.responseReceived(outcome, for: request, id: id, timing: timing)
        }
    }

    func redirected(_ response: HTTPURLResponse, to next: URLRequest) {
        guard interests.any.contains(.redirected) else { return }
        monitors.emit(.redirected, to: interests, in: context) { [id] in
            $0.requestRedirected(response, to: next, id: id)
        }
    }

    func retrying(_ failure: RequestFailure, delay: TimeInterval) {
        guard interests.any.contains(.retrying) else { return }
        monitors.emit(.retrying, to: interests, in: context) { [id] in $0.requestRetrying(failure, delay: delay, id: id)
        }
    }

    func finished(_ outcome: TransportOutcome) {
        guard interests.any.contains(.finished) else { return }
        let (request, metrics) = state.withLock { state in
            (
                state.lastSent ?? original,
                RequestMetrics(exchanges: state.exchanges, attempts: state.attempts, duration: .now - createdAt)
            )
        }
        let tell: ResponseHandling.Tell = { [monitors, interests, context, id] error, onTheWayUp in
            var finished = outcome
            if let error {
                finished.error = error
            }
            monitors.emit(.finished, to: interests, in: context, inPlace: onTheWayUp) { [finished] in
                $0.requestFinished(finished, for: request, id: id, metrics: metrics)
            }
        }
        guard let handling else { return tell(nil, false) }
        // The caller's outcome is not known until the layer above has decoded the body.
        handling.whenHandled(tell)
    }
}

/// What cancelling a request does besides completing it: ends the attempt under way, if the
/// execution is still there.
private final class EndsAttempt: NetworkCancellable {
    private weak let execution: RequestExecution?

    init(_ execution: RequestExecution) {
        self.execution = execution
    }

    var isCancelled: Bool { execution?.call.isCancelled ?? true }

    func cancel() {
        _ = execution?.endAttempt()
    }
}

extension URL {
    /// The URL without user information; itself when it has none.
    fileprivate func removingUserInfo() -> URL {
        guard user != nil || password != nil,
            var components = URLComponents(url: self, resolvingAgainstBaseURL: true)
        else { return self }
        components.user = nil
        components.password = nil
        return components.url ?? self
    }
}

extension URL {
    /// The URL with `scheme`, its scheme, lowercased; itself when that changes nothing.
    fileprivate func lowercasingScheme(_ scheme: String) -> URL {
        let lowercased = scheme.lowercased()
        guard lowercased != scheme, var components = URLComponents(url: self, resolvingAgainstBaseURL: true)
        else { return self }
        components.scheme = lowercased
        return components.url ?? self
    }
}

extension URLRequest {
    /// The request with its URL's user information taken out: when `keepingCredentials`, it goes
    /// into a Basic `Authorization` field (unless the request has one), as `URLSession` would send
    /// it; otherwise it is dropped. Transports differ here (AsyncHTTPClient ignores user
    /// information), so none gets a URL with any.
    fileprivate func movingUserInfo(keepingCredentials: Bool) -> URLRequest {
        guard let url, url.user != nil || url.password != nil else { return self }
        var moved = self
        moved.url = url.removingUserInfo()
        if keepingCredentials {
            let credentials = "\(url.user ?? ""):\(url.password ?? "")"
            moved.setHeaderField(
                "Authorization", "Basic " + Data(credentials.utf8).base64EncodedString(), keepingExisting: true)
        }
        return moved
    }
}

extension URLRequest {
    /// The request with the fields that frame its body as the body itself says, whatever a caller
    /// or an adapter set (RFC 9112 §6): a `Transfer-Encoding` is the transport's to choose and is
    /// taken out; a `Content-Length` becomes the length of a body in memory or in a file, stays
    /// on a stream's only when it is one length in digits, not zero, and goes from a request
    /// without a body. A stream announced as empty goes as it is, with no length: whether it holds
    /// anything is known only by reading it, and AsyncHTTPClient would read none of it and send an
    /// empty body, where `URLSession` sends the stream whole.
    /// A `TE` field keeps only `trailers`: no transport decodes another transfer coding of the
    /// response, and HTTP/2 forbids any other (RFC 9113 §8.2.2).
    ///
    /// Over `URLSession` on Linux a request's own fields go on the wire as they are: a
    /// `Content-Length` of 10 on a body of 100 bytes sends 90 bytes the server reads as the next
    /// request on the connection, one of 5 on a `GET` leaves the server waiting for a body. A
    /// request that names none of the fields is returned as it is; the transport frames it. The
    /// pipeline frames every attempt; Strata's transports frame again a request handed to them
    /// directly.
    public func framedByItsBody() -> URLRequest {
        let length = headerField("Content-Length")
        let coding = headerField("Transfer-Encoding")
        let offered = headerField("TE")
        guard length != nil || coding != nil || offered != nil else { return self }
        let trailers = offered.flatMap(Self.trailersOnly)
        let framed: String? =
            if let body = httpBody {
                String(body.count)
            } else if let file = httpBodyStream as? FileBodyStream {
                String(file.length)
            } else if httpBodyStream != nil, let length, !length.contains(","), HTTPGrammar.isOneLength(length),
                length.utf8.contains(where: { $0 != UInt8(ascii: "0") })
            {
                length
            } else {
                nil
            }
        guard length != framed || coding != nil || offered != trailers else { return self }
        var request = self
        request.setHeaderFields([("Transfer-Encoding", nil), ("Content-Length", framed), ("TE", trailers)])
        return request
    }

    /// `trailers` if the `TE` value `offered` names it among its members, whatever their case and
    /// parameters; `nil` otherwise.
    private static func trailersOnly(_ offered: String) -> String? {
        let names = offered.split(separator: ",").map {
            $0.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
        }
        return names.contains("trailers") ? "trailers" : nil
    }
}

extension URLRequest {
    /// The request asking for the bytes after the first `kept.length`, unless the resource is no
    /// longer the one `kept.validator` names; the request itself without `kept`.
    fileprivate func asking(after kept: (length: Int64, validator: String)?) -> URLRequest {
        guard let kept else { return self }
        var request = self
        request.setValue("bytes=\(kept.length)-", forHTTPHeaderField: "Range")
        request.setValue(kept.validator, forHTTPHeaderField: "If-Range")
        return request
    }
}
