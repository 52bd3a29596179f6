import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Security)
    import Security
#endif

/// The delegate of a ``URLSessionTransport``'s session: collects each task's body and reports the
/// outcome once per task. It follows no redirect: each task ends with the 3xx response, and the
/// ``SessionManager`` decides on the next request (see ``/StrataCore/RedirectPolicy``).
///
/// A `401` must reach the caller as an ordinary response with its body. On Apple platforms the
/// challenge gets default handling, which delivers the `401` when no credential is stored. On Linux,
/// default handling of `WWW-Authenticate: Basic` hangs forever, so every challenge is declined;
/// declining ends the task with `URLError.cancelled` although the response and body arrived, and the
/// delegate turns that back into the `401` response. A task that does not finish within
/// ``challengeTimeout`` after a declined challenge is ended the same way.
final class SessionDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, Sendable {
    /// Called once when a task ends, with its body, response and error.
    typealias Handler = @Sendable (Data, URLResponse?, (any Error)?) -> Void
    /// Called with the bytes done so far and the bytes expected (`-1` when unknown).
    typealias ProgressHandler = @Sendable (Int64, Int64) -> Void

    private struct Record: Sendable {
        var data = Data()
        var challengedResponse: URLResponse?
        let handler: Handler
        let uploadProgress: ProgressHandler?
        let download: (destination: URL, progress: ProgressHandler?)?
        var downloadError: (any Error)?
        /// Why the server's certificate chain was refused, if it was.
        var trustError: ServerTrustError?
        /// Set on the delegate queue when the task was cancelled, so later callbacks leave it alone.
        var isCancelled = false
    }

    private let records = Locked<[Int: Record]>([:])
    let challengeTimeout: TimeInterval
    let serverTrust: (any ServerTrustEvaluator)?

    init(challengeTimeout: TimeInterval, serverTrust: (any ServerTrustEvaluator)? = nil) {
        self.challengeTimeout = challengeTimeout
        self.serverTrust = serverTrust
    }

    /// Registers the handler for `task`, before it is resumed, and its progress handlers.
    func register(
        _ task: URLSessionTask,
        uploadProgress: ProgressHandler?,
        download: (destination: URL, progress: ProgressHandler?)? = nil,
        handler: @escaping Handler
    ) {
        let record = Record(handler: handler, uploadProgress: uploadProgress, download: download)
        records.withLock { $0[task.taskIdentifier] = record }
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
        if let trustError = record.trustError {
            record.handler(record.data, task.response, trustError)
        } else if let downloadError = record.downloadError, error == nil {
            record.handler(record.data, task.response, downloadError)
        } else if let challenged = record.challengedResponse, (error as? URLError)?.code == .cancelled {
            record.handler(record.data, challenged, nil)
        } else {
            record.handler(record.data, task.response, error)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        records.withLock { $0[dataTask.taskIdentifier]?.data.append(data) }
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

    func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        guard let report = records.withLock({ $0[downloadTask.taskIdentifier]?.download?.progress }) else { return }
        report(totalBytesWritten, totalBytesExpectedToWrite)
    }

    /// Moves the downloaded file to its destination now (the system deletes it after this returns).
    /// For an unacceptable status the file is the error body: up to 1 MiB of it becomes the reported
    /// body, and nothing is written to the destination.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard let destination = records.withLock({ $0[downloadTask.taskIdentifier]?.download?.destination }) else {
            return
        }
        let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0
        do {
            if !(200..<300).contains(status) {
                let handle = try FileHandle(forReadingFrom: location)
                let body = try handle.read(upToCount: 1_048_576) ?? Data()
                try? handle.close()
                records.withLock { $0[downloadTask.taskIdentifier]?.data = body }
                return
            }
            let manager = FileManager.default
            try manager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            if manager.fileExists(atPath: destination.path) {
                try manager.removeItem(at: destination)
            }
            try manager.moveItem(at: location, to: destination)
        } catch {
            records.withLock { $0[downloadTask.taskIdentifier]?.downloadError = error }
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
