import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ``Transport`` over `URLSession`, on Apple platforms and on Linux.
///
/// It owns one long-lived, delegate-based session (short-lived sessions can crash at teardown on
/// Linux) and invalidates it once, after the transport is released and its last attempt has
/// finished. Its delegate follows no redirect, collects each body, writes downloads to their
/// destination and reports progress; what differs on Linux (FoundationNetworking) is handled here
/// and in that delegate, nowhere else:
///
/// - The loading system gets the longest timeout it takes (a year; it traps on one too large):
///   its timer is an idle timer, which would end a stream whose parts come further apart than the
///   request's timeout. The ``SessionManager`` enforces the request's exact timeout itself.
/// - Every authentication challenge is declined and the `401` reported with its body (default
///   handling of `WWW-Authenticate: Basic` hangs forever there).
/// - A task is cancelled only while its completion is pending, and its completion waits for the
///   cancellation to be reported (a cancellation racing completion traps there); the session has no
///   `URLCache`.
/// - libcurl sends a request on a kept connection that the server has answered unasked (a `408`
///   it sends before closing a connection idle too long) or where an earlier answer left bytes (a
///   body after a `HEAD` answer), and reads them as the answer: a request whose body can be sent
///   again goes out once more (after leftover bytes, only an idempotent one).
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let delegate: SessionDelegate
    private let serverTrust: (any ServerTrustEvaluator)?
    /// Whether a body bound for a file goes through a download task. On Linux, FoundationNetworking's
    /// download tasks write only what its own protocols load: over a `URLProtocol` of someone
    /// else's (a test stub such as `URLProtocolStub`) the file came out empty, so such a session
    /// writes the body from a data task.
    private let usesDownloadTasks: Bool
    /// The configuration's cookies, kept by Strata on Linux (see ``CookieJar``); `nil` where the
    /// loading system keeps them (Apple platforms) or the configuration keeps none.
    private let cookies: CookieJar?
    /// The configuration's cookies, which go with each request whoever adds them (Strata on
    /// Linux, the loading system on Apple platforms); `nil` if the configuration keeps none.
    public let cookieJar: CookieJar?

    /// Creates a transport.
    /// - Parameters:
    ///   - configuration: The session configuration; copied, so later changes have no effect.
    ///   - authenticationChallengeTimeout: How long a task may run after an authentication challenge
    ///     was declined before it is ended with the `401` response (a guard for a Linux hang).
    ///   - serverTrust: Decides whether to trust each `https` server's certificate chain; `nil` (the
    ///     default) leaves it to the system. On Linux no chain can be evaluated, and with an evaluator
    ///     every `https` request fails with ``ServerTrustError/evaluationUnavailable`` unsent.
    public init(
        configuration: URLSessionConfiguration = .default,
        authenticationChallengeTimeout: TimeInterval = 10,
        serverTrust: (any ServerTrustEvaluator)? = nil
    ) {
        #if canImport(FoundationNetworking)
            let delegateQueue: OperationQueue = SerialDelegateQueue(label: "Strata.URLSessionTransport.delegate")
            // URLCache never stores on Linux, and with one a task's protocol is created after an
            // asynchronous cache lookup, which lets a cancellation race the task's start.
            let configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration
            configuration.urlCache = nil
            // FoundationNetworking ignores `httpShouldHandleCookies` and replaces a `Cookie` field of
            // the request's own: Strata keeps the configuration's cookies itself, as it does over
            // AsyncHTTPClient.
            cookies = configuration.httpShouldSetCookies ? configuration.httpCookieStorage.map(CookieJar.init) : nil
            cookieJar = cookies
            configuration.httpCookieStorage = nil
            configuration.httpShouldSetCookies = false
            usesDownloadTasks = (configuration.protocolClasses ?? []).allSatisfy {
                String(reflecting: $0).hasPrefix("FoundationNetworking.")
            }
            if usesDownloadTasks {
                configuration.protocolClasses = [LoadingFileHook.self] + (configuration.protocolClasses ?? [])
            }
        #else
            usesDownloadTasks = true
            cookies = nil
            cookieJar = configuration.httpShouldSetCookies ? configuration.httpCookieStorage.map(CookieJar.init) : nil
            let delegateQueue = OperationQueue()
            delegateQueue.name = "Strata.URLSessionTransport.delegate"
            delegateQueue.maxConcurrentOperationCount = 1
        #endif
        self.serverTrust = serverTrust
        delegate = SessionDelegate(challengeTimeout: authenticationChallengeTimeout, serverTrust: serverTrust)
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Why `request`'s body cannot go: `URLSession` sends no body with `GET` (on Apple platforms and
    /// on Linux, where it fails the request as "resource exceeds maximum size", -1103) or `HEAD`
    /// (on Linux it announces the body's length and sends none, and the server waits for the body
    /// until the request's deadline). `nil` for a request with no body, or an empty one; a stream
    /// not of a file may hold bytes.
    static func unsendableBody(of request: URLRequest) -> RequestValidationError? {
        guard let method = request.httpMethod?.uppercased(), Self.methodsWithoutBody.contains(method) else {
            return nil
        }
        let hasBody =
            if let file = request.httpBodyStream as? FileBodyStream {
                file.length > 0
            } else {
                request.httpBodyStream != nil || request.httpBody?.isEmpty == false
            }
        guard hasBody else { return nil }
        return .bodyNotSendable(
            method: method,
            reason: "URLSession sends no body with a \(method) request; put its parameters in the query, "
                + "or send it over a transport that does (AsyncHTTPClientTransport)")
    }

    /// Prepares a body stream of the caller's (not a file's) for the loading system, and returns
    /// where a failure of it is noted (on Linux; `nil` elsewhere, or for no such stream).
    private static func preparingBodyStream(of request: inout URLRequest) -> Locked<RequestValidationError?>? {
        guard let stream = request.httpBodyStream, !(stream is FileBodyStream) else { return nil }
        // It sends every stream chunked, and a `Content-Length` of the request's beside it: a
        // message framed twice, which a server and a proxy may each read their own way (RFC 9112
        // §6.1). (Dropped once the stream has been given the length it announces.)
        defer { request.setHeaderField("Content-Length", nil) }
        #if canImport(FoundationNetworking)
            // FoundationNetworking sends a stream that fails as an empty or a cut body, answered as a
            // success, and one that holds another length than it announced whole. (Not on Apple
            // platforms, whose loading system reports a failed stream itself, and takes an
            // `InputStream` subclass only with private CFStream methods of its own.)
            let announced = request.headerField("Content-Length").flatMap { Int64($0) }
            let checked = CheckedBodyStream(stream, announced: announced)
            request.httpBodyStream = checked
            return checked.failure
        #else
            return nil
        #endif
    }

    /// How a body on disk goes to the loading system.
    enum UploadBody {
        case inMemory(Data)
        case fromFile(URL)
        case unreadable(RequestValidationError)
    }

    /// The largest body on disk sent from memory on Linux (see ``uploadBody(of:)``): 16 MiB.
    static let largestUploadFromMemory: UInt64 = 16 * 1_048_576

    /// How `file` goes: from the file, or — on Linux, up to ``largestUploadFromMemory`` — read
    /// into memory first. FoundationNetworking reads an upload's file ahead, on a queue of its own,
    /// and tells libcurl each time a read fills an empty buffer; when a read ends after the exchange
    /// has (an answer before the whole body, a reset, a deadline, a cancellation), libcurl refuses
    /// (`curl_easy_pause` of a transfer without its connection) and FoundationNetworking traps the
    /// process (`try!`). A body in memory is read as libcurl asks for it, and never traps. A larger
    /// file is still sent from its file, with that risk (see the README's Linux notes).
    static func uploadBody(of file: FileBodyStream) -> UploadBody {
        // FoundationNetworking does not finish an upload from a symbolic link: it gets the file's path.
        let url = file.fileURL.resolvingSymlinksInPath()
        #if canImport(FoundationNetworking)
            guard file.length <= largestUploadFromMemory else { return .fromFile(url) }
            do {
                // Read, not mapped: a file cut short while mapped would fault as its pages are copied.
                let body = try Data(contentsOf: url)
                // Read once more, its length is checked again: the request announces the one it had.
                try file.checkLength(UInt64(body.count))
                return .inMemory(body)
            } catch let error as RequestValidationError {
                return .unreadable(error)
            } catch {
                return .unreadable(.unusableBodyFile(path: file.fileURL.path, reason: error.localizedDescription))
            }
        #else
            return .fromFile(url)
        #endif
    }

    /// The methods `URLSession` sends no body with.
    private static let methodsWithoutBody: Set<String> = [HTTPMethod.get.rawValue, HTTPMethod.head.rawValue]

    /// Sends `attempt` as one `URLSession` task: an upload from its file for a
    /// ``/StrataCore/FileBodyStream`` body; a download task when the body is bound for a file
    /// (``TransportAttempt/bodyIsBoundForFile``), played from the file it wrote as the consumer
    /// asks; else a data task, whose parts are relayed as they arrive (`URLSession` cannot be held
    /// back: its data tasks push, and `suspend()` restarts them).
    public func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        var request = attempt.request
        // A request handed here directly, not through a session manager, is checked and framed as
        // the manager does it: FoundationNetworking traps on one without a URL, and libcurl writes
        // a method, a field or a `Content-Length` as it is.
        do {
            guard let url = request.url else { throw RequestValidationError.missingURL }
            try validateForSending(url)
            try request.validateMethodAndHeaders()
        } catch {
            return ResponsePlayback.start(head: nil, steps: [.fail(error)], to: receiver)
        }
        request = request.framedByItsBody()
        if let refusal = Self.unsendableBody(of: request) {
            return ResponsePlayback.start(head: nil, steps: [.fail(refusal)], to: receiver)
        }
        #if canImport(FoundationNetworking)
            // FoundationNetworking shows no certificate chain: an evaluator could not be asked, and an
            // `https` request sent anyway would trust what nobody checked.
            if serverTrust != nil, request.url?.scheme?.lowercased() == "https" {
                return ResponsePlayback.start(
                    head: nil, steps: [.fail(ServerTrustError.evaluationUnavailable)], to: receiver)
            }
        #endif
        // Deadlines are the pipeline's (an attempt's `timeoutInterval` on its own timer, then a
        // stream's deadlines). `URLSession`'s timeout is one between packets, which would end a
        // stream whose events come further apart than its request's timeout: it gets the longest
        // the loading system takes, always assigned (FoundationNetworking takes one given at
        // creation for unset, and traps on one too large for its integer milliseconds).
        request.timeoutInterval = Self.longestTimeout
        if let field = cookies?.field(for: request) {
            request.setHeaderField("Cookie", field)
        }
        let bodyStreamFailure = Self.preparingBodyStream(of: &request)
        let task: URLSessionTask
        let isUpload = request.httpBodyStream is FileBodyStream
        if let file = request.httpBodyStream as? FileBodyStream {
            // A body on disk is uploaded from its file: a known length, and readable again on a retry.
            request.httpBodyStream = nil
            switch Self.uploadBody(of: file) {
            case .inMemory(let body):
                task = session.uploadTask(with: request, from: body)
            case .fromFile(let url):
                task = session.uploadTask(with: request, fromFile: url)
            case .unreadable(let error):
                return ResponsePlayback.start(head: nil, steps: [.fail(error)], to: receiver)
            }
        } else {
            task = self.task(for: request, attempt)
        }
        let current = CurrentTask(task)
        // A data task cannot be held back: what a consumer leaves is kept up to the attempt's limit,
        // and libcurl hands on each chunk of a chunked body as a part of its own, however small.
        let relay = ResponseRelay(
            to: receiver, bufferLimit: attempt.bufferLimit, joiningSmallParts: true,
            onTaken: { [delegate] stillBuffered in
                delegate.consumerTook(current.task, stillBuffered: stillBuffered)
            },
            // Holding the transport keeps its session alive while the task can still be cancelled.
            stop: { [self] in delegate.cancel(current.stop(), in: session) })
        // A body in memory (or none) can be sent again; a stream of the caller's, or a file, cannot.
        var sendAgain: (@Sendable () -> Bool)?
        if !isUpload, request.httpBodyStream == nil {
            sendAgain = { @Sendable [self] in resend(attempt, to: relay, replacing: current) }
        }
        start(
            task, of: attempt, relay: relay, request: request, bodyStreamFailure: bodyStreamFailure, resend: sendAgain)
        return relay
    }

    /// A task for `request`, which has no body on disk: a download task when the body is bound for a
    /// file, else a data task.
    private func task(for request: URLRequest, _ attempt: TransportAttempt) -> URLSessionTask {
        guard attempt.bodyIsBoundForFile, usesDownloadTasks else { return session.dataTask(with: request) }
        guard attempt.fileProgress == nil, attempt.uploadProgress == nil else {
            return session.downloadTask(with: request)
        }
        // Nobody follows the progress: a completion handler, for which the loading system makes
        // no delegate call per part written (65,537 for a gigabyte, each a hop to the delegate
        // queue), and still asks the delegate about redirects and challenges.
        let made = Locked<URLSessionTask?>(nil)
        let task = session.downloadTask(with: request) { [delegate] location, _, error in
            guard let task = made.withLock({ $0 }) else { return }
            delegate.downloadEnded(task, at: location, error: error)
        }
        made.withLock { $0 = task }
        return task
    }

    /// Registers `task` with the delegate and resumes it.
    private func start(
        _ task: URLSessionTask, of attempt: TransportAttempt, relay: ResponseRelay, request: URLRequest,
        bodyStreamFailure: Locked<RequestValidationError?>? = nil, resend: (@Sendable () -> Bool)? = nil
    ) {
        delegate.register(
            task, relay: relay, uploadProgress: attempt.uploadProgress,
            fileProgress: attempt.bodyIsBoundForFile ? attempt.fileProgress : nil,
            cookies: cookies.map { ($0, request) }, bodyStreamFailure: bodyStreamFailure, resend: resend)
        if task is URLSessionDownloadTask {
            delegate.resumeWatchingLoadingFile(task)
        } else {
            task.resume()
        }
    }

    /// Sends the current task's request once more, on a task of its own that answers to the same
    /// relay, unless the exchange was cancelled meanwhile; see ``SessionDelegate`` for when.
    /// - Returns: Whether it went out again.
    private func resend(_ attempt: TransportAttempt, to relay: ResponseRelay, replacing current: CurrentTask) -> Bool {
        // The task keeps the request as it was handed over, body and all: nothing else need keep it.
        guard let request = current.task.originalRequest else { return false }
        return current.replace {
            let task = task(for: request, attempt)
            start(task, of: attempt, relay: relay, request: request)
            return task
        }
    }

    /// Throws unless `url` passes ``/StrataCore/HTTPURLCheck``; on Linux, also for an IPv6 address
    /// literal (`http://[::1]/`), which FoundationNetworking fails with `URLError(.badURL)` unsent.
    public func validate(_ url: URL) throws(UnsupportedURLReason) {
        try HTTPURLCheck.validate(url)
        #if canImport(FoundationNetworking)
            if HTTPURLCheck.isBracketed(url) {
                throw .unsupportedByTransport(
                    "FoundationNetworking on Linux cannot send to an IPv6 address; use AsyncHTTPClientTransport")
            }
        #endif
    }

    /// `error` with the code Apple's `URLSession` (and ``AsyncHTTPClientTransport``) gives for the
    /// same failure, curl's message kept. FoundationNetworking gives libcurl's own reading:
    /// - a refused certificate, and any other failed TLS handshake, is `URLError(.unknown)` ("SSL
    ///   certificate problem: unable to get local issuer certificate", "OpenSSL/3.0.19:
    ///   error:0A00010B:SSL routines::wrong version number" for plain HTTP on the port);
    /// - a connection reset as it was made is `URLError(.unknown)` ("Failed to connect to …");
    /// - a connection cut or reset after the answer began ("transfer closed with 1000 bytes
    ///   remaining to read", "Recv failure: Connection reset by peer"), or as the request was being
    ///   written ("Send failure: Broken pipe"), is `URLError(.unknown)`, and
    ///   one closed before any byte of it ("Empty reply from server", what a reused connection the
    ///   server had closed gives) `URLError(.badServerResponse)`, where Apple's say
    ///   `URLError(.networkConnectionLost)` — which a retrier retries, and a download that resumes
    ///   resumes;
    /// - an answer that is not HTTP — a status line it cannot read, a status code out of range, or
    ///   bytes a previous answer left on the connection — is `URLError(.unsupportedURL)`
    ///   ("Unsupported HTTP version in response", "Received HTTP/0.9 when not allowed"), as if the
    ///   URL were at fault, and a bad chunk, a head past libcurl's limit, or one it or
    ///   FoundationNetworking cannot read ("Header without colon", "Nul byte in header", "Invalid
    ///   Content-Length: value", "Failed writing header") `URLError(.unknown)`;
    /// - a body in a content coding libcurl does not know, or cannot decode, is `URLError(.unknown)`
    ///   ("Unrecognized content encoding type", "Error while processing content unencoding: …",
    ///   and for bytes after a gzip member "Failed writing received data to disk/application", or
    ///   "Failed reading the chunked-encoded stream" in a chunked body).
    static func classified(_ error: any Error) -> any Error {
        guard let error = error as? URLError, let message = error.userInfo[NSLocalizedDescriptionKey] as? String,
            let code = appleCode(for: error.code, saying: message)
        else { return error }
        return URLError(code, userInfo: error.userInfo)
    }

    /// The code Apple's `URLSession` gives for what FoundationNetworking reports as `code` with
    /// curl's `message`; `nil` where the two agree.
    private static func appleCode(for code: URLError.Code, saying message: String) -> URLError.Code? {
        switch code {
        case .unknown:
            if tlsMessages.contains(where: message.hasPrefix) {
                return message.contains("certificate") || message.contains("subject name")
                    ? .serverCertificateUntrusted : .secureConnectionFailed
            }
            if message.hasPrefix("Failed to connect to ") { return .cannotConnectToHost }
            if connectionLostMessages.contains(where: message.hasPrefix) { return .networkConnectionLost }
            if message.hasSuffix("in chunked-encoding") || malformedHeadMessages.contains(where: message.hasPrefix) {
                return .badServerResponse
            }
            if contentCodingMessages.contains(where: message.hasPrefix) { return .cannotDecodeContentData }
            return nil
        case .unsupportedURL:
            return notHTTPMessages.contains(where: message.hasPrefix) ? .badServerResponse : nil
        case .badServerResponse:
            return message.hasPrefix("Empty reply from server") ? .networkConnectionLost : nil
        default:
            return nil
        }
    }

    /// How libcurl's messages begin for a failed TLS handshake or a refused certificate: `SSL
    /// certificate problem: …`, `OpenSSL/3.0.19: error:…:wrong version number` (plain HTTP on the
    /// port), `OpenSSL SSL_connect: SSL_ERROR_SYSCALL …` (a close), and `TLS connect error: …` in
    /// later curls.
    private static let tlsMessages = ["SSL", "OpenSSL", "TLS "]

    /// How libcurl's messages begin for a connection that ended, or was reset, mid-answer, or
    /// closed under a request still being written (a server that answered, or closed, before
    /// reading a body: "Send failure: Broken pipe").
    private static let connectionLostMessages = [
        "transfer closed with ", "Recv failure: Connection reset by peer", "Send failure: ",
    ]

    /// How libcurl's messages begin for a head it cannot read (the second, FoundationNetworking's
    /// refusal of a line libcurl handed it: an empty field name, an unknown version, `HTTP/2` on
    /// an HTTP/1 connection).
    private static let malformedHeadMessages = [
        "Too large response headers", "Failed writing header", "Header without colon", "Nul byte in header",
        "Invalid Content-Length",
    ]

    /// How libcurl's messages begin for an answer it cannot read as HTTP.
    private static let notHTTPMessages = [
        "Unsupported HTTP version", "Unsupported response code", "Received HTTP/0.9",
    ]

    /// How libcurl's messages begin for a body it cannot decode: the third, its own words for the
    /// error where the decoder gave none (a brotli body that is not brotli); the last two, a
    /// decoder's refusal as libcurl words it in a body of known length and in a chunked one (bytes
    /// after a gzip member: a second member, which libcurl does not read, zeros, garbage). Only
    /// its decoders refuse what libcurl writes on: FoundationNetworking takes every part.
    private static let contentCodingMessages = [
        "Unrecognized content encoding", "Error while processing content unencoding",
        "Unrecognized or bad HTTP Content or Transfer-Encoding", "Failed writing received data to disk/application",
        "Failed reading the chunked-encoded stream",
    ]

    /// A year: the longest timeout handed to the loading system.
    static let longestTimeout: TimeInterval = 31_536_000
}

/// The task an exchange runs on now: its first, or the one it was sent again on. Copies share it.
struct CurrentTask: Sendable {
    private let state: Locked<(task: URLSessionTask, stopped: Bool)>

    init(_ task: URLSessionTask) {
        state = Locked((task, false))
    }

    var task: URLSessionTask { state.withLock { $0.task } }

    /// Marks the exchange stopped and returns the task to cancel: no task replaces it afterwards.
    func stop() -> URLSessionTask {
        state.withLock { state in
            state.stopped = true
            return state.task
        }
    }

    /// Makes and starts the next task with `start`, unless the exchange was stopped: under the
    /// lock, so that a cancellation finds the new task resumed, never one about to be.
    /// - Returns: Whether a task was started.
    func replace(_ start: () -> URLSessionTask) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.task = start()
            return true
        }
    }
}
