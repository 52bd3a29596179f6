import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Security)
    import Security
#endif

/// The delegate of a ``URLSessionTransport``'s session: relays each task's response head and body
/// parts as they arrive, and its end once. It follows no redirect: each task ends with the 3xx
/// response, and the ``SessionManager`` decides on the next request (see
/// ``/StrataCore/RedirectPolicy``).
///
/// **Back-pressure.** `URLSession` pushes a data task's body parts as fast as they arrive; they
/// are queued in the task's ``ResponseRelay`` until the consumer asks for them. There is no way to
/// hold the server back: `suspend()` and `resume()` restart a data task (measured on Linux: a
/// 256 MiB body came out as 481 MB), so a consumer slower than the network holds the difference.
/// A body bound for a file goes through a download task instead, which the loading system writes
/// to disk itself; once it is complete, the file is played to the relay a part at a time, as the
/// consumer asks, so memory stays bounded.
///
/// A `401` must reach the caller as an ordinary response with its body. On Apple platforms the
/// challenge gets default handling, which delivers the `401` when no credential is stored. On Linux,
/// default handling of `WWW-Authenticate: Basic` hangs forever, so every challenge is declined;
/// declining ends the task with `URLError.cancelled` although the response and body arrived, and the
/// delegate turns that back into the `401` response. A task that does not finish within
/// ``challengeTimeout`` after a declined challenge is ended the same way.
final class SessionDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, Sendable {
    /// Called with the bytes done so far and the bytes expected (`-1` when unknown).
    typealias ProgressHandler = @Sendable (Int64, Int64) -> Void

    private struct Record: Sendable {
        let relay: ResponseRelay
        let uploadProgress: ProgressHandler?
        let fileProgress: ProgressHandler?
        /// Whether the head went to the relay; body parts wait for it in `early`.
        var headPushed = false
        var early = Data()
        var challengedResponse: URLResponse?
        /// Why the server's certificate chain was refused, if it was.
        var trustError: ServerTrustError?
        /// Set when the task is cancelled, before the loading system is told: a redirect is not
        /// answered afterwards.
        var isCancelled = false
        /// Taken to answer a redirect or a challenge, and to cancel, so that they never overlap;
        /// it holds whether the loading system has been told to cancel. (A `Locked`, not an
        /// `NSLock`, which allocates twice on Linux, for every task.)
        let answering = Locked(false)
        /// The cancellation under way, which the task's completion waits for.
        var cancelling: DispatchGroup?
        /// A download task's body, moved out of the loading system's hands, and its reader.
        var downloaded: FileParts?
        /// Whether libcurl asked for the body again (see `urlSession(_:task:needNewBodyStream:)`):
        /// the task is being cancelled, and the request ends as lost, whatever comes meanwhile.
        var bodyAskedAgain = false
        /// Whether the task has completed (its downloaded body may still be being read).
        var taskEnded = false
        /// Why a download task's file could not be kept: the body is lost, and the exchange fails.
        var fileError: (any Error)?
        /// Where the loading system writes a download task's body, for what it leaves to be removed.
        var loadingFile: LoadingFile?
        /// Where the response's cookies are kept, and the request they answer; `nil` where the
        /// loading system keeps them.
        let cookies: (jar: CookieJar, request: URLRequest)?
        /// Why the request's body stream, if it is one of the caller's, failed, if it did: that
        /// fails the task.
        let bodyStreamFailure: Locked<RequestValidationError?>?
        /// Sends the request once more, on a new task answering to the same relay, if its body can
        /// be sent again (`nil` for the task that already did); returns whether it went out (not if
        /// the exchange was cancelled meanwhile).
        let resend: (@Sendable () -> Bool)?
    }

    private let records = Locked<[Int: Record]>([:])
    let challengeTimeout: TimeInterval
    let serverTrust: (any ServerTrustEvaluator)?

    init(challengeTimeout: TimeInterval, serverTrust: (any ServerTrustEvaluator)? = nil) {
        self.challengeTimeout = challengeTimeout
        self.serverTrust = serverTrust
    }

    /// Registers `task`, before it is resumed, with the relay its response goes to, its progress
    /// handlers and, for a request that may go out twice, how to send it again.
    func register(
        _ task: URLSessionTask, relay: ResponseRelay, uploadProgress: ProgressHandler?, fileProgress: ProgressHandler?,
        cookies: (jar: CookieJar, request: URLRequest)? = nil,
        bodyStreamFailure: Locked<RequestValidationError?>? = nil,
        resend: (@Sendable () -> Bool)? = nil
    ) {
        let record = Record(
            relay: relay, uploadProgress: uploadProgress, fileProgress: fileProgress, cookies: cookies,
            bodyStreamFailure: bodyStreamFailure, resend: resend)
        records.withLock { $0[task.taskIdentifier] = record }
    }

    /// Resumes `task`, a download task, noting where the loading system writes its body, so that
    /// what it leaves there is removed as the task ends (see ``LoadingFile``).
    func resumeWatchingLoadingFile(_ task: URLSessionTask) {
        LoadingFile.resume(task) { [weak self] file in
            let noted = self?.records.withLock { records in
                records[task.taskIdentifier]?.loadingFile = file
                return records[task.taskIdentifier] != nil
            }
            // The task has ended already: nothing will remove the file but this.
            if noted != true { file.remove() }
        }
    }

    /// The consumer of `task` took a part: a downloaded body is read on, a part ahead.
    func consumerTook(_ task: URLSessionTask, stillBuffered: Int) {
        guard stillBuffered == 0, let file = records.withLock({ $0[task.taskIdentifier]?.downloaded }) ?? nil
        else { return }
        file.feed()
    }

    /// Cancels `task`, unless its completion was already delivered.
    ///
    /// On Linux, `URLSessionTask.cancel()` races the task's completion: it queues a block on the
    /// session's work queue that reports the cancellation, while completion runs
    /// `didCompleteWithError` on the delegate queue and then removes the task from the session's
    /// registry; a report that comes after the removal traps ("task that is not in the registry").
    /// So a cancellation under way holds the task's completion (``finish(_:error:)``) until the
    /// loading system has run the report (reading `priority` waits for the work queue). And
    /// answering a redirect of a task cancelled meanwhile traps: the answer and the cancellation
    /// take the task's `answering` lock, and a task flagged cancelled gets no answer.
    ///
    /// The cancellation runs on a queue of its own, not on the delegate queue: while a transfer
    /// keeps the work queue busy (a fast server on loopback), `cancel()` waits seconds for it, and
    /// a delegate queue held that long would keep every part read meanwhile in its queue —
    /// gigabytes. Left free, it drops them as they come.
    func cancel(_ task: URLSessionTask, in session: URLSession) {
        let cancelling = DispatchGroup()
        let record = records.withLock { records -> Record? in
            guard let record = records[task.taskIdentifier], !record.isCancelled else { return nil }
            records[task.taskIdentifier]?.isCancelled = true
            if !record.taskEnded {
                cancelling.enter()
                records[task.taskIdentifier]?.cancelling = cancelling
            }
            return record
        }
        guard let record else { return }
        // A completed task is not cancelled (that can trap on Linux): only its file goes.
        if record.taskEnded {
            record.downloaded?.discard()
            return
        }
        StrataQueue.async {
            record.answering.withLock { cancelled in
                cancelled = true
                task.cancel()
            }
            #if canImport(FoundationNetworking)
                _ = task.priority
            #endif
            cancelling.leave()
        }
    }

    private func finish(_ task: URLSessionTask, error: (any Error)?) {
        // A cancellation under way is reported to the loading system first (see `cancel(_:in:)`).
        (records.withLock { $0[task.taskIdentifier]?.cancelling } ?? nil)?.wait()
        // A downloaded body is still being read: the record stays until the consumer is done.
        guard
            let record = records.withLock({ records -> Record? in
                guard let record = records[task.taskIdentifier] else { return nil }
                if record.downloaded == nil || error != nil {
                    records[task.taskIdentifier] = nil
                } else {
                    records[task.taskIdentifier]?.taskEnded = true
                }
                return record
            })
        else { return }
        // Whatever the task's body became (kept, refused, failed or cancelled), the loading
        // system's own file of it is nobody's now.
        record.loadingFile?.remove()
        let relay = record.relay
        if record.bodyAskedAgain {
            record.downloaded?.discard()
            var userInfo: [String: Any] = [
                NSLocalizedDescriptionKey:
                    "the server closed a kept connection unanswered, and the request's body cannot be sent again"
            ]
            userInfo[NSURLErrorFailingURLErrorKey] = task.originalRequest?.url
            return relay.end(URLError(.networkConnectionLost, userInfo: userInfo))
        }
        if let trustError = record.trustError {
            return relay.end(trustError)
        }
        // A body cut short by its stream: whatever came back answers another request than the one made.
        if let failure = record.bodyStreamFailure?.withLock({ $0 }) {
            record.downloaded?.discard()
            return relay.end(failure)
        }
        if let fileError = record.fileError, error == nil {
            return relay.end(fileError)
        }
        if let resend = record.resend, Self.goesOutAgain(task, after: error, record), resend() {
            record.downloaded?.discard()
            return
        }
        var error = error
        var response = task.response
        if let challenged = record.challengedResponse, (error as? URLError)?.code == .cancelled {
            (response, error) = (challenged, nil)
        }
        // An interim response is not the answer, and what ended the task before one came says
        // what happened (the connection closed or reset, bytes that are not HTTP), as it does over
        // AsyncHTTPClient.
        if !record.headPushed, let response = response as? HTTPURLResponse,
            error == nil || !Self.isInterim(response)
        {
            if let refusal = Self.refusal(of: response) {
                record.downloaded?.discard()
                return relay.end(refusal)
            }
            Self.keepCookies(of: response, in: record.cookies)
            relay.push(ResponseHead(response))
            // What came before the head was told (a challenged `401`'s body); never a part without one.
            relay.push(record.early)
        }
        if let file = record.downloaded, error == nil {
            // A consumer that wants a file takes this one as it is; any other reads it in parts.
            return relay.offer(bodyFile: file.url) { taken in
                if taken { file.discard() } else { file.start() }
            }
        }
        record.downloaded?.discard()
        relay.end(error.map(URLSessionTransport.classified))
    }

    /// Whether the request goes out once more, on a new connection, rather than end as the task did:
    ///
    /// - The answer was `408 Request Timeout`: the server says it did not receive the request
    ///   (RFC 9110, 15.5.9, lets the client repeat it, whatever its method). A server sends one on a
    ///   kept connection it closes after a while idle, unasked, and libcurl sends the next request
    ///   on that connection and reads it as the answer.
    /// - The task failed reading, where its answer's status line should be, bytes that are not
    ///   HTTP (libcurl: "Received HTTP/0.9 when not allowed") before anything of an answer: most
    ///   likely what an earlier answer on a kept connection left there — a body after a `HEAD`
    ///   answer, a `204` or a `304`, more than libcurl read with that head. The server may have
    ///   acted on the request, so only an idempotent one goes out again.
    ///
    /// AsyncHTTPClient, which never reuses such a connection, sends it on a clean one at once. A
    /// server that only ever answers so gets the request twice, and the caller its answer.
    private static func goesOutAgain(_ task: URLSessionTask, after error: (any Error)?, _ record: Record) -> Bool {
        guard !record.headPushed, record.early.isEmpty, !record.isCancelled else { return false }
        if let response = task.response as? HTTPURLResponse {
            return response.statusCode == 408
        }
        guard let error = error as? URLError, error.code == .unsupportedURL,
            let message = error.userInfo[NSLocalizedDescriptionKey] as? String,
            message.hasPrefix("Received HTTP/0.9"), let method = task.originalRequest?.httpMethod
        else { return false }
        return RetryPolicy.idempotentMethods.contains(HTTPMethod(rawValue: method))
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let response = response as? HTTPURLResponse else { return completionHandler(.allow) }
        // An interim response (`100 Continue`, `103 Early Hints`) is skipped, as Apple's URLSession
        // and AsyncHTTPClient skip it: FoundationNetworking reports each head it reads, and the
        // answer's follows. (`101` switches the connection away from HTTP: no answer follows.)
        if Self.isInterim(response) { return completionHandler(.allow) }
        // A `408` that the request answers by going out again is not the answer: its task ends
        // here, and ``finish(_:error:)`` sends the request once more.
        var resends = false
        let record = records.withLock { records -> Record? in
            guard let record = records[dataTask.taskIdentifier], !record.headPushed, !record.bodyAskedAgain else {
                return nil
            }
            resends = response.statusCode == 408 && record.resend != nil
            if !resends { records[dataTask.taskIdentifier]?.headPushed = true }
            return record
        }
        guard let record, !resends else { return completionHandler(resends ? .cancel : .allow) }
        if let refusal = Self.refusal(of: response) {
            record.relay.end(refusal)
            return completionHandler(.cancel)
        }
        Self.keepCookies(of: response, in: record.cookies)
        record.relay.push(ResponseHead(response))
        completionHandler(.allow)
    }

    /// Stores the cookies `response` sets in `cookies`' jar, before the pipeline sees it (a
    /// redirect's next hop carries them). FoundationNetworking joins repeated `Set-Cookie` fields
    /// with commas, which are split again, `Expires` dates aside.
    private static func keepCookies(
        of response: HTTPURLResponse, in cookies: (jar: CookieJar, request: URLRequest)?
    ) {
        guard let cookies, let fields = response.value(forHTTPHeaderField: "Set-Cookie") else { return }
        cookies.jar.store(SetCookie.split(joined: fields), from: cookies.request)
    }

    /// Whether `response` is an interim response, which an answer follows: a `1xx` other than
    /// `101 Switching Protocols`.
    private static func isInterim(_ response: HTTPURLResponse) -> Bool {
        (100..<200).contains(response.statusCode) && response.statusCode != 101
    }

    /// Why a response FoundationNetworking reports must not reach the pipeline, if it must not:
    ///
    /// - A `1xx` response the task ended with: `101 Switching Protocols`, which no request of
    ///   Strata's asks for, or an interim response no answer followed (a loading system of the
    ///   configuration's `protocolClasses` that reported one as its answer).
    /// - A `Content-Length` that is not one length (two that differ, one beyond any integer),
    ///   without `Transfer-Encoding`: the body's end cannot be known, and RFC 9112 (§6.3) has a
    ///   client discard such a response. FoundationNetworking delivers it, with whichever body
    ///   libcurl read; AsyncHTTPClient refuses it.
    static func refusal(of response: HTTPURLResponse) -> SessionError? {
        #if canImport(FoundationNetworking)
            if (100..<200).contains(response.statusCode) {
                return .interimResponseTakenForAnswer(statusCode: response.statusCode)
            }
            if let length = response.value(forHTTPHeaderField: "Content-Length"),
                response.value(forHTTPHeaderField: "Transfer-Encoding") == nil, !HTTPGrammar.isOneLength(length)
            {
                return .invalidContentLength(length)
            }
            return nil
        #else
            return nil
        #endif
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let relay = records.withLock { records -> ResponseRelay? in
            guard let record = records[dataTask.taskIdentifier] else { return nil }
            guard record.headPushed else {
                records[dataTask.taskIdentifier]?.early.append(data)
                return nil
            }
            return record.relay
        }
        relay?.push(data)
    }

    func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        guard let report = records.withLock({ $0[downloadTask.taskIdentifier]?.fileProgress }) else { return }
        report(totalBytesWritten, totalBytesExpectedToWrite)
    }

    /// Takes a download task's file before the loading system deletes it (when this returns).
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        keep(location, of: downloadTask)
    }

    /// A download task made with a completion handler ended (on the delegate queue, as the other
    /// callbacks): its file is kept as ``urlSession(_:downloadTask:didFinishDownloadingTo:)``
    /// keeps it, then the task finishes as ``urlSession(_:task:didCompleteWithError:)`` finishes it.
    func downloadEnded(_ task: URLSessionTask, at location: URL?, error: (any Error)?) {
        if let location, error == nil {
            keep(location, of: task)
        }
        finish(task, error: error)
    }

    /// Moves a download task's file out of the loading system's hands, to be played to its relay.
    private func keep(_ location: URL, of downloadTask: URLSessionTask) {
        guard let relay = records.withLock({ $0[downloadTask.taskIdentifier]?.relay }) else { return }
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("strata-body-\(UUID().uuidString)")
        do {
            try FileManager.default.moveItem(at: location, to: kept)
            let parts = try FileParts(kept, to: relay) { [weak self] in
                self?.records.withLock { $0[downloadTask.taskIdentifier] = nil }
            }
            records.withLock { $0[downloadTask.taskIdentifier]?.downloaded = parts }
        } catch {
            // Not an empty body: the body that came is gone.
            let lost = URLError(.cannotWriteToFile, userInfo: [NSUnderlyingErrorKey: error])
            records.withLock { $0[downloadTask.taskIdentifier]?.fileError = lost }
            try? FileManager.default.removeItem(at: kept)
        }
    }

    #if canImport(FoundationNetworking)
        /// libcurl asks for the request's body again: the kept connection the request went on
        /// closed before a byte of an answer came, and libcurl sends the request once more on a new
        /// one, as it does a request without a body (`StaleConnectionTests`). FoundationNetworking
        /// cannot send a body again: given a stream for a body in memory or in a file it traps, and
        /// given none it sends the head alone, announcing a length or a chunked body whose bytes
        /// never come — the server waits for them, and the request waited until its deadline — and
        /// a stream of the caller's has been read. So the request ends at once with
        /// `URLError(.networkConnectionLost)`, as over AsyncHTTPClient, which does not send a
        /// request with a body twice either; the retriers judge it. The loading system gets no
        /// stream, a stream of the caller's refuses to be read again (libcurl then aborts rather
        /// than end the body there, which a server would take for an empty one), and the task is
        /// cancelled; it ends in ``finish(_:error:)``, as every task does, on the delegate queue
        /// (this is called on the loading system's own queue, inside libcurl's call, where the
        /// pipeline's next steps — a retrier's next request — have no business running).
        func urlSession(
            _ session: URLSession, task: URLSessionTask,
            needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
        ) {
            (task.originalRequest?.httpBodyStream as? CheckedBodyStream)?.refuseFurtherReads()
            completionHandler(nil)
            records.withLock { $0[task.taskIdentifier]?.bodyAskedAgain = true }
            cancel(task, in: session)
        }
    #endif

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        guard let report = records.withLock({ $0[task.taskIdentifier]?.uploadProgress }) else { return }
        report(totalBytesSent, totalBytesExpectedToSend)
    }

    /// Declines every redirect: the task ends with the 3xx response, and the pipeline decides.
    ///
    /// A task cancelled before this callback ran is left alone: on Linux, answering a redirect the
    /// task no longer waits for traps ("Received callback for HTTP redirection, but we're not
    /// waiting for it"), and the cancellation ends the task anyway. The answer is given under the
    /// task's `answering` lock, which ``cancel(_:in:)`` holds to cancel (after flagging the task),
    /// and only if the loading system has not been told to cancel.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let answering = records.withLock { records in
            records[task.taskIdentifier].flatMap { $0.isCancelled ? nil : $0.answering }
        }
        answering?.withLock { cancelled in
            if !cancelled { completionHandler(nil) }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(task, error: error)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            // Linux has no server trust or client certificate challenges; every challenge here is an
            // HTTP authentication scheme answering a 401. Decline it and report the 401 itself.
            let response = challenge.failureResponse ?? task.response
            let answering = records.withLock { records -> Locked<Bool>? in
                records[task.taskIdentifier]?.challengedResponse = response
                return records[task.taskIdentifier]?.answering
            }
            // Not while a cancellation is being handed to the loading system.
            if let answering {
                answering.withLock { _ in completionHandler(.cancelAuthenticationChallenge, nil) }
            } else {
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
            StrataQueue.async(after: challengeTimeout, ending: true) { [weak self] in
                self?.cancel(task, in: session)
            }
        #else
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                let serverTrust
            else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            let trust = challenge.protectionSpace.serverTrust
            let certificates = trust.flatMap { SecTrustCopyCertificateChain($0) as? [SecCertificate] } ?? []
            let chain = ServerTrustChain(
                host: challenge.protectionSpace.host,
                certificates: certificates.map { SecCertificateCopyData($0) as Data },
                trust: trust
            )
            // The thrown type is written out: this branch is not compiled here, and must not rest on
            // inference of a `do` statement's error type.
            do throws(ServerTrustError) {
                try serverTrust.evaluate(chain)
                if let trust {
                    completionHandler(.useCredential, URLCredential(trust: trust))
                } else {
                    completionHandler(.performDefaultHandling, nil)
                }
            } catch {
                records.withLock { $0[task.taskIdentifier]?.trustError = error }
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        #endif
    }
}

/// A downloaded body played to a relay a part at a time, as its consumer takes them; the file is
/// removed once read, or when the exchange ends first.
final class FileParts: @unchecked Sendable {  // Sendable: `lock` guards `handle` and `started`.
    /// The size of each part read.
    static let partSize = 262_144

    let url: URL
    private let relay: ResponseRelay
    private let done: @Sendable () -> Void
    private let lock = PlainLock.make()
    private var handle: FileHandle?
    private var started = false

    init(_ url: URL, to relay: ResponseRelay, done: @escaping @Sendable () -> Void) throws {
        self.url = url
        self.relay = relay
        self.done = done
        handle = try FileHandle(forReadingFrom: url)
    }

    /// The task has ended: the first part goes to the relay.
    func start() {
        lock.lock()
        started = true
        lock.unlock()
        feed()
    }

    /// Reads and pushes the next part, or ends the relay at the end of the file.
    func feed() {
        lock.lock()
        guard started, let handle, !relay.isOver else {
            lock.unlock()
            if started { discard() }
            return
        }
        let part: Data?
        do {
            part = try handle.read(upToCount: Self.partSize)
        } catch {
            lock.unlock()
            discard()
            return relay.end(error)
        }
        lock.unlock()
        guard let part, !part.isEmpty else {
            discard()
            return relay.end(nil)
        }
        relay.push(part)
    }

    /// Closes and removes the file; the task's record goes with it.
    func discard() {
        lock.lock()
        let handle = self.handle
        self.handle = nil
        lock.unlock()
        guard let handle else { return }
        try? handle.close()
        try? FileManager.default.removeItem(at: url)
        done()
    }
}
