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
/// **Back-pressure.** `URLSession` pushes body parts; they are queued in the task's
/// ``ResponseRelay`` until the consumer asks for them. When more than ``highWater`` bytes are
/// queued the task is suspended, and it is resumed once the consumer has taken all but
/// ``lowWater`` of them.
///
/// A `401` must reach the caller as an ordinary response with its body. On Apple platforms the
/// challenge gets default handling, which delivers the `401` when no credential is stored. On Linux,
/// default handling of `WWW-Authenticate: Basic` hangs forever, so every challenge is declined;
/// declining ends the task with `URLError.cancelled` although the response and body arrived, and the
/// delegate turns that back into the `401` response. A task that does not finish within
/// ``challengeTimeout`` after a declined challenge is ended the same way.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// Called with the bytes done so far and the bytes expected (`-1` when unknown).
    typealias ProgressHandler = @Sendable (Int64, Int64) -> Void

    private struct Record: Sendable {
        let relay: ResponseRelay
        let uploadProgress: ProgressHandler?
        /// Whether the head went to the relay; body parts wait for it in `early`.
        var headPushed = false
        var early = Data()
        var challengedResponse: URLResponse?
        /// Why the server's certificate chain was refused, if it was.
        var trustError: ServerTrustError?
        /// Set on the delegate queue when the task was cancelled, so later callbacks leave it alone.
        var isCancelled = false
        /// Whether the task is suspended because its consumer is behind.
        var isSuspended = false
    }

    /// Queued bytes above which a task is suspended.
    static let highWater = 4 * 1_048_576
    /// Queued bytes at or below which a suspended task is resumed.
    static let lowWater = 1_048_576

    private let records = Locked<[Int: Record]>([:])
    let challengeTimeout: TimeInterval
    let serverTrust: (any ServerTrustEvaluator)?

    init(challengeTimeout: TimeInterval, serverTrust: (any ServerTrustEvaluator)? = nil) {
        self.challengeTimeout = challengeTimeout
        self.serverTrust = serverTrust
    }

    /// Registers `task`, before it is resumed, with the relay its response goes to and its upload
    /// progress handler.
    func register(_ task: URLSessionTask, relay: ResponseRelay, uploadProgress: ProgressHandler?) {
        let record = Record(relay: relay, uploadProgress: uploadProgress)
        records.withLock { $0[task.taskIdentifier] = record }
    }

    /// Resumes `task` if it was suspended for back-pressure and its consumer has caught up.
    func consumerTook(_ task: URLSessionTask, stillBuffered: Int, in session: URLSession) {
        guard stillBuffered <= Self.lowWater,
            records.withLock({ $0[task.taskIdentifier]?.isSuspended ?? false })
        else { return }
        session.delegateQueue.addOperation { [self] in
            let resumes = records.withLock { records -> Bool in
                guard let record = records[task.taskIdentifier], record.isSuspended, !record.isCancelled,
                    record.relay.bufferedBytes <= Self.lowWater
                else { return false }
                records[task.taskIdentifier]?.isSuspended = false
                return true
            }
            if resumes { task.resume() }
        }
    }

    /// Cancels `task`, unless its completion was already delivered.
    ///
    /// On Linux, `URLSessionTask.cancel()` races the task's completion: it queues a block that
    /// reports the cancellation, while completion runs `didCompleteWithError` on the delegate queue
    /// and then removes the task from the session's registry; a report that comes after the removal
    /// traps ("task that is not in the registry"). Cancelling from the delegate queue, and holding it
    /// until the task's queue has run the queued report (reading `priority` waits for that queue),
    /// keeps the completion, and so the removal, behind the report.
    func cancel(_ task: URLSessionTask, in session: URLSession) {
        session.delegateQueue.addOperation { [self] in
            let isRunning = records.withLock { records -> Bool in
                guard records[task.taskIdentifier] != nil else { return false }
                records[task.taskIdentifier]?.isCancelled = true
                return true
            }
            guard isRunning else { return }
            task.cancel()
            #if canImport(FoundationNetworking)
                _ = task.priority
            #endif
        }
    }

    private func finish(_ task: URLSessionTask, error: (any Error)?) {
        guard let record = records.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let relay = record.relay
        if let trustError = record.trustError {
            return relay.end(trustError)
        }
        var error = error
        var response = task.response
        if let challenged = record.challengedResponse, (error as? URLError)?.code == .cancelled {
            (response, error) = (challenged, nil)
        }
        if !record.headPushed, let response = response as? HTTPURLResponse {
            relay.push(ResponseHead(response))
        }
        relay.push(record.early)
        relay.end(error.map(URLSessionTransport.classified))
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let response = response as? HTTPURLResponse,
            let relay = records.withLock({ records -> ResponseRelay? in
                guard let record = records[dataTask.taskIdentifier], !record.headPushed else { return nil }
                records[dataTask.taskIdentifier]?.headPushed = true
                return record.relay
            })
        {
            relay.push(ResponseHead(response))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let pushed = records.withLock { records -> (relay: ResponseRelay, suspends: Bool)? in
            guard let record = records[dataTask.taskIdentifier] else { return nil }
            guard record.headPushed else {
                records[dataTask.taskIdentifier]?.early.append(data)
                return nil
            }
            let suspends =
                !record.isSuspended && !record.isCancelled
                && record.relay.bufferedBytes + data.count > Self.highWater
            if suspends { records[dataTask.taskIdentifier]?.isSuspended = true }
            return (record.relay, suspends)
        }
        guard let (relay, suspends) = pushed else { return }
        relay.push(data)
        if suspends { dataTask.suspend() }
    }

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
    /// waiting for it"), and the cancellation ends the task anyway. Both run on the delegate queue,
    /// so the flag set by ``cancel(_:in:)`` is seen here.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard records.withLock({ $0[task.taskIdentifier].map { !$0.isCancelled } ?? false }) else { return }
        completionHandler(nil)
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
            records.withLock { $0[task.taskIdentifier]?.challengedResponse = response }
            completionHandler(.cancelAuthenticationChallenge, nil)
            StrataQueue.async(after: challengeTimeout) { [weak self] in
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
