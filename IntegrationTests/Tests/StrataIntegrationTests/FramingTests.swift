import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request's body reaches the server framed by the body itself, over either transport, whatever
/// `Content-Length` or `Transfer-Encoding` a caller or an adapter set, and a body's file goes as
/// long as the request announced it or not at all. Over `URLSession` on Linux a request's own
/// fields went on the wire as written: bytes past a short `Content-Length` read as the next request
/// on the connection, a `GET` announcing a body left the server waiting for it, and a stream went
/// framed twice.
@Suite struct FramingTests {
    /// Sets what the test's headers ask for after the request was built, as an adapter of an
    /// app's might: `X-Set-Length` as `Content-Length`, `X-Set-Coding` as `Transfer-Encoding`, and
    /// with `X-As-Stream` the body as a stream of the caller's.
    private static let framing = Changing { request in
        if let length = request.value(forHTTPHeaderField: "X-Set-Length") {
            request.setValue(length, forHTTPHeaderField: "Content-Length")
        }
        if let coding = request.value(forHTTPHeaderField: "X-Set-Coding") {
            request.setValue(coding, forHTTPHeaderField: "Transfer-Encoding")
        }
        if request.value(forHTTPHeaderField: "X-As-Stream") != nil, let body = request.httpBody {
            request.httpBody = nil
            request.httpBodyStream = InputStream(data: body)
        }
    }

    private static let body = Data(TestReply.generatedBody(size: 100))

    @Test(arguments: [
        ["X-Set-Length": "10"], ["X-Set-Length": "1000"], ["X-Set-Length": "abc"], ["X-Set-Length": "-5"],
        ["X-Set-Length": "100, 100"], ["X-Set-Coding": "chunked"], ["X-Set-Coding": "gzip"],
        ["X-Set-Length": "10", "X-Set-Coding": "chunked"],
    ])
    func aBodyInMemoryIsFramedByItsLength(fields: [String: String]) async throws {
        try await Harness.with(timeout: 5, adapters: [Self.framing]) { harness in
            for _ in 0..<2 {  // The second request goes on the same connection: nothing of the first is left on it.
                let echo = try await harness.transfer.request(
                    Endpoint<EchoReply>(
                        path: "echo", method: .post, headerParameters: HTTPHeaders(fields),
                        bodyEncoding: UploadEncoding.data(Self.body)))
                #expect(Data(base64Encoded: echo.bodyBase64) == Self.body, "\(fields)")
                #expect(echo.headers["content-length"] == "100", "\(fields)")
                #expect(echo.headers["transfer-encoding"] == nil, "\(fields)")
            }
            let next = try await harness.transfer.request(Endpoint<EchoReply>(path: "echo"))
            #expect(next.method == "GET" && next.bodySize == 0)
        }
    }

    @Test(arguments: [["X-Set-Length": "5"], ["X-Set-Coding": "chunked"], ["X-Set-Length": "0"]])
    func aRequestWithoutABodyAnnouncesNone(fields: [String: String]) async throws {
        try await Harness.with(timeout: 5, adapters: [Self.framing]) { harness in
            for method in [HTTPMethod.get, .delete] {
                let echo = try await harness.transfer.request(
                    Endpoint<EchoReply>(path: "echo", method: method, headerParameters: HTTPHeaders(fields)))
                #expect(echo.bodySize == 0)
                #expect(echo.headers["content-length"] == nil || echo.headers["content-length"] == "0", "\(fields)")
                #expect(echo.headers["transfer-encoding"] == nil, "\(fields)")
            }
        }
    }

    /// A stream goes whole and framed once, with the length it announced when that is one, not
    /// zero. Announced as empty, it goes with no length: AsyncHTTPClient, given the length, read
    /// none of the stream and sent an empty body, which the server answered `200`.
    @Test(arguments: ["300000", "abc", "1, 1", "0", "000"])
    func aStreamIsFramedOnce(length: String) async throws {
        let body = Data(TestReply.generatedBody(size: 300_000))
        try await Harness.with(timeout: 5, adapters: [Self.framing]) { harness in
            let echo = try await harness.transfer.request(
                Endpoint<EchoReply>(
                    path: "echo", method: .put, headerParameters: ["X-Set-Length": length, "X-As-Stream": "1"],
                    bodyEncoding: UploadEncoding.data(body)))
            #expect(Data(base64Encoded: echo.bodyBase64) == body)
            let fields = [echo.headers["content-length"], echo.headers["transfer-encoding"]].compactMap { $0 }
            #expect(fields.count == 1, "framed by \(fields)")
        }
    }

    /// A stream that holds more or fewer bytes than the length announced for it fails the request as
    /// the caller's fault: over AsyncHTTPClient, which sends the length, not as a lost connection
    /// (`URLError(.networkConnectionLost)` before); over `URLSession` on Linux, which chunks every
    /// stream, before the last chunk (the stream went whole before, answered as a success). The next
    /// request goes out unharmed either way.
    @Test(arguments: [10, 400_000] as [Int64])
    func aStreamThatIsNotTheLengthItAnnouncesFailsAsTheRequestsFault(announced: Int64) async throws {
        let body = Data(TestReply.generatedBody(size: 300_000))
        try await Harness.with(timeout: 5, adapters: [Self.framing]) { harness in
            let result: Result<EchoReply, DataTransferError>
            do throws(DataTransferError) {
                result = .success(
                    try await harness.transfer.request(
                        Endpoint<EchoReply>(
                            path: "echo", method: .put,
                            headerParameters: ["X-Set-Length": "\(announced)", "X-As-Stream": "1"],
                            bodyEncoding: UploadEncoding.data(body))))
            } catch {
                result = .failure(error)
            }
            guard case .failure(.networkFailure(.invalidRequest(let error))) = result else {
                Issue.record("over \(TestTransport.current): \(result)")
                return
            }
            #expect(error == .bodyStreamLengthMismatch(announced: announced))
            #expect(error.description.contains("than the \(announced) its Content-Length announced"))
            let next = try await harness.transfer.request(Endpoint<EchoReply>(path: "echo"))
            #expect(next.method == "GET" && next.bodySize == 0)
        }
    }

    /// Handed straight to the transport, not through a session manager, a request is framed by its
    /// body as the pipeline frames it: a `Content-Length` of 10 on a body of 100 bytes would leave
    /// 90 bytes on the connection for the server to read as the next request, one of -5 on a
    /// stream would go on the wire as it is.
    @Test(arguments: [("10", false), ("1000", false), ("-5", true), ("abc", true)])
    func aRequestHandedStraightToTheTransportIsFramedByItsBody(length: String, asStream: Bool) async throws {
        let server = try await TestServer.start()
        let transport = TestTransport.current.makeTransport()
        for _ in 0..<2 {  // The second goes on the same connection: nothing of the first is left on it.
            var request = URLRequest(url: server.baseURL.appendingPathComponent("echo"))
            request.httpMethod = "POST"
            if asStream {
                request.httpBodyStream = InputStream(data: Self.body)
            } else {
                request.httpBody = Self.body
            }
            request.setValue(length, forHTTPHeaderField: "Content-Length")
            // No pipeline, so no deadline: a server left waiting for a body the request announced
            // would keep the exchange open.
            let outcomes = CompletionRecorder<TransportOutcome>()
            let exchange = transport.send(TransportAttempt(request: request)) { outcomes.record($0) }
            guard let outcome = await outcomes.first(timeout: 10) else {
                exchange.cancel()
                Issue.record("no answer within 10 s to a Content-Length of \(length)")
                break
            }
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            let echo = try JSONDecoder().decode(EchoReply.self, from: outcome.body)
            #expect(Data(base64Encoded: echo.bodyBase64) == Self.body)
            let fields = [echo.headers["content-length"], echo.headers["transfer-encoding"]].compactMap { $0 }
            #expect(fields == (asStream ? ["chunked"] : ["100"]), "framed by \(fields)")
        }
        try await server.shutdown()
    }

    @Test func aFileIsUploadedThroughASymbolicLinkWithTheLengthOfTheFileItNames() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-framing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = Data(TestReply.generatedBody(size: 3_000))
        let file = folder.appendingPathComponent("file.bin")
        try bytes.write(to: file)
        let link = folder.appendingPathComponent("link.bin")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        try await Harness.with(timeout: 5) { harness in
            for _ in 0..<2 {
                let echo = try await harness.transfer.request(
                    Endpoint<EchoReply>(path: "echo", method: .put, bodyEncoding: UploadEncoding.file(link)))
                #expect(Data(base64Encoded: echo.bodyBase64) == bytes)
                #expect(echo.headers["content-length"] == "3000")
            }
        }
    }

    @Test(arguments: [5_000, 10, 0])
    func aFileWhoseSizeChangedAfterTheRequestWasMadeIsNotSent(newSize: Int) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-framing-\(UUID().uuidString)")
        try Data(TestReply.generatedBody(size: 1_000)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        // Adapters run after the body was encoded: this one stands for another writer of the file.
        let rewrite = Changing { _ in try? Data(count: newSize).write(to: file) }
        try await Harness.with(timeout: 5, adapters: [rewrite]) { harness in
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(
                    Endpoint<Void>(
                        path: "retry-after/200", method: .put, queryParameters: ["key": "changed", "failures": "0"],
                        bodyEncoding: UploadEncoding.file(file)))
            }
            guard case .networkFailure(.invalidRequest(.unusableBodyFile(let path, let reason)))? = error else {
                Issue.record("expected an unusable body file, got \(String(describing: error))")
                return
            }
            #expect(path == file.path)
            #expect(reason.contains("1000 bytes") && reason.contains("\(newSize) now"), "\(reason)")
            #expect(harness.server.state.attemptCount(for: "changed") == 0)
        }
    }

    @Test func aFileThatIsNotARegularFileIsRefusedBeforeAnythingIsSent() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-framing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipe = folder.appendingPathComponent("pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        try await Harness.with(timeout: 5) { harness in
            for url in [folder, pipe, URL(fileURLWithPath: "/dev/zero"), URL(fileURLWithPath: "/dev/null")] {
                let error = await failure { () async throws(DataTransferError) in
                    try await harness.transfer.request(
                        Endpoint<Void>(
                            path: "retry-after/200", method: .put,
                            queryParameters: ["key": "special", "failures": "0"], bodyEncoding: UploadEncoding.file(url)
                        ))
                }
                guard case .networkFailure(.encoding(.multipart(.unreadableFile(_, let reason))))? = error else {
                    Issue.record("\(url.path): expected an unreadable file, got \(String(describing: error))")
                    continue
                }
                #expect(reason.hasSuffix("not a regular file"), "\(reason)")
            }
            #expect(harness.server.state.attemptCount(for: "special") == 0)
        }
    }
}

/// A body stream of the caller's whose reads do as `next` says, given the most a read may take:
/// hand out that many bytes (`x`), end (0) or fail (-1).
private final class ScriptedStream: InputStream {
    private let next: @Sendable (_ maxLength: Int) -> Int
    private let lock = NSLock()
    private var status = Stream.Status.notOpen

    init(_ next: @escaping @Sendable (_ maxLength: Int) -> Int) {
        self.next = next
        super.init(data: Data())
    }

    /// Hands out `good` bytes, then fails, as a source that breaks mid-read.
    static func failing(after good: Int) -> ScriptedStream {
        let sent = NSLock()
        nonisolated(unsafe) var count = 0  // guarded by `sent`
        return ScriptedStream { maxLength in
            sent.withLock {
                let next = min(maxLength, good - count)
                count += next
                return next > 0 ? next : -1
            }
        }
    }

    /// Waits until `released` is signalled (or ten seconds), as a producer with nothing to give
    /// yet; then ends.
    static func waiting(until released: DispatchSemaphore) -> ScriptedStream {
        ScriptedStream { _ in
            if released.wait(timeout: .now() + 10) == .success { released.signal() }
            return 0
        }
    }

    override func open() { lock.withLock { status = .open } }
    override func close() { lock.withLock { status = .closed } }
    override var hasBytesAvailable: Bool { lock.withLock { status == .open } }
    override var streamStatus: Stream.Status { lock.withLock { status } }
    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool { false }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        let count = next(len)
        lock.withLock { status = count > 0 ? .open : count == 0 ? .atEnd : .error }
        if count > 0 { buffer.update(repeating: UInt8(ascii: "x"), count: count) }
        return count
    }
}

extension FramingTests {
    /// A body stream that cannot be opened (a file that is not there) or that fails mid-read fails
    /// the request as the request's fault, over either transport, and the next request on the
    /// connection goes out unharmed. Over `URLSession` the unopened stream went as an empty body
    /// and came back a success; over AsyncHTTPClient it failed as a response body that could not
    /// be decoded (`URLError(.cannotDecodeRawData)`).
    @Test(arguments: ["unopened", "failing mid-read"])
    func aBodyStreamThatCannotBeReadFailsTheRequest(kind: String) async throws {
        let broken = Changing { request in
            request.setHeaderField("Content-Length", nil)  // the length of the body the stream replaces
            request.httpBodyStream =
                kind == "unopened"
                ? InputStream(url: URL(fileURLWithPath: "/nonexistent/strata-body"))
                : ScriptedStream.failing(after: 70_000)
        }
        try await Harness.with(timeout: 5, adapters: [broken]) { harness in
            let started = ContinuousClock.now
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(
                    Endpoint<EchoReply>(path: "echo", method: .put, bodyEncoding: UploadEncoding.data(Data("x".utf8))))
            }
            guard case .networkFailure(.invalidRequest(.unreadableBodyStream))? = error else {
                Issue.record("over \(TestTransport.current): \(String(describing: error))")
                return
            }
            #expect(ContinuousClock.now - started < .seconds(3))
        }
        try await Harness.with(timeout: 5) { harness in
            let next = try await harness.transfer.request(Endpoint<EchoReply>(path: "echo"))
            #expect(next.method == "GET")
        }
    }
}

extension FramingTests {
    /// Streams of the caller's that wait for their bytes hold up no other upload: over
    /// AsyncHTTPClient they were read on SwiftNIO's thread pool (a thread per core), so two such
    /// streams held every file upload of the process until they gave something. (Over `URLSession`
    /// on Linux a stream is read on the session's one work queue, and every request of the session
    /// waits for it: FoundationNetworking's, and said in the README.)
    @Test(.enabled(if: TestTransport.current == .asyncHTTPClient))
    func streamsThatWaitForTheirBytesHoldUpNoOtherUpload() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-framing-\(UUID().uuidString)")
        try Data(TestReply.generatedBody(size: 100_000)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let released = DispatchSemaphore(value: 0)
        let waiting = Changing { request in
            guard request.value(forHTTPHeaderField: "X-Waits") != nil else { return }
            request.setHeaderField("Content-Length", nil)
            request.httpBodyStream = ScriptedStream.waiting(until: released)
        }
        try await Harness.with(timeout: 20, adapters: [waiting]) { harness in
            let waits = (0..<4).map { _ in
                Task {
                    try? await harness.transfer.request(
                        Endpoint<EchoReply>(
                            path: "echo", method: .put, headerParameters: ["X-Waits": "1"],
                            bodyEncoding: UploadEncoding.data(Data("x".utf8))))
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            let started = ContinuousClock.now
            let upload = try await harness.transfer.request(
                Endpoint<EchoReply>(path: "echo", method: .put, bodyEncoding: UploadEncoding.file(file)))
            #expect(upload.bodySize == 100_000)
            #expect(ContinuousClock.now - started < .seconds(3))
            released.signal()
            for wait in waits { #expect(await wait.value?.bodySize == 0) }
        }
    }
}

extension FramingTests {
    /// A stream from a pipe whose writer pauses between its parts (the output of a process, say)
    /// goes whole, with or without a length announced: a pause is not taken for the stream's end,
    /// nor, with a length, for a stream shorter than it announced.
    @Test(arguments: [nil, "3000"])
    func aStreamFromAPipeWhoseWriterPausesGoesWhole(length: String?) async throws {
        let pipe = Pipe()
        let part = Data(repeating: UInt8(ascii: "p"), count: 1_000)
        let fromPipe = Changing { request in
            request.setHeaderField("Content-Length", length)
            request.httpBodyStream = InputStream(
                url: URL(fileURLWithPath: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)"))
        }
        let writer = Thread {
            for index in 0..<3 {
                if index > 0 { Thread.sleep(forTimeInterval: 0.3) }
                pipe.fileHandleForWriting.write(part)
            }
            try? pipe.fileHandleForWriting.close()
        }
        try await Harness.with(timeout: 10, adapters: [fromPipe]) { harness in
            writer.start()
            let echo = try await harness.transfer.request(
                Endpoint<EchoReply>(path: "echo", method: .put, bodyEncoding: UploadEncoding.data(Data("x".utf8))))
            #expect(echo.bodySize == 3_000)
        }
    }

    /// A stream from a pipe whose writer gives nothing, with a length announced: read through its
    /// wait, it holds the request until the request's deadline, which ends it, and nothing after.
    @Test func aStreamFromAPipeThatGivesNothingEndsAtTheDeadline() async throws {
        let pipe = Pipe()
        defer { try? pipe.fileHandleForWriting.close() }  // Ends the read the loading system waits in.
        let fromPipe = Changing { request in
            request.setHeaderField("Content-Length", "10")
            request.httpBodyStream = InputStream(
                url: URL(fileURLWithPath: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)"))
        }
        try await Harness.with(timeout: 1, adapters: [fromPipe]) { harness in
            let started = ContinuousClock.now
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(
                    Endpoint<EchoReply>(path: "echo", method: .put, bodyEncoding: UploadEncoding.data(Data("x".utf8))))
            }
            guard case .networkFailure(.timedOut)? = error else {
                Issue.record("over \(TestTransport.current): \(String(describing: error))")
                return
            }
            #expect(ContinuousClock.now - started < .seconds(4))
        }
    }
}

extension FramingTests {
    /// A `GET` or `HEAD` with a body — the search APIs some servers offer take one — goes with it
    /// over AsyncHTTPClient. `URLSession` sends no body with either (on Apple platforms as on Linux):
    /// it failed a `GET` with one as "resource exceeds maximum size" (`URLError` -1103), which
    /// Strata described as a body too large for the transport, and sent a `HEAD` announcing the
    /// body's length without the body, so that the server waited for it until the deadline. Both are
    /// refused unsent with an error that says why; with an empty body each goes as one without. (A
    /// method is sent in capitals.)
    @Test(arguments: ["GET", "get", "HEAD"], [false, true])
    func aGETOrHEADWithABodyGoesOverAsyncHTTPClientAndIsRefusedUnsentOverURLSession(
        method: String, asStream: Bool
    ) async throws {
        let streamed = Changing { request in
            if asStream, let body = request.httpBody, !body.isEmpty {
                request.httpBody = nil
                request.httpBodyStream = InputStream(data: body)
            }
        }
        try await Harness.with(timeout: 5, adapters: [streamed]) { harness in
            let expected = method.uppercased()
            let endpoint = Endpoint<Data>(
                path: "echo", method: HTTPMethod(rawValue: method),
                bodyEncoding: UploadEncoding.data(Data("{\"query\":{}}".utf8)))
            do {
                let response = try await harness.network.request(endpoint: endpoint)
                #expect(TestTransport.current == .asyncHTTPClient)
                #expect(response.statusCode == 200)
                if expected == "GET" {  // a `HEAD` answer has no body to echo the request in
                    let echo = try JSONDecoder().decode(EchoReply.self, from: response.body)
                    #expect(echo.method == "GET" && echo.body == "{\"query\":{}}")
                }
            } catch {
                guard case .invalidRequest(.bodyNotSendable(let refused, _)) = error as? NetworkError else {
                    Issue.record("over \(TestTransport.current): \(error)")
                    return
                }
                #expect(TestTransport.current == .urlSession)
                #expect(refused == expected)
                #expect(error.localizedDescription.contains("URLSession sends no body with a \(expected) request"))
            }
            let started = ContinuousClock.now
            let empty = try await harness.network.request(
                endpoint: Endpoint<Data>(
                    path: "echo", method: HTTPMethod(rawValue: method), bodyEncoding: UploadEncoding.data(Data())))
            #expect(empty.statusCode == 200)
            #expect(ContinuousClock.now - started < .seconds(2))
        }
    }
}
