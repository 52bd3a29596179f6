import Foundation
import NIOConcurrencyHelpers
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server closes a kept-alive connection as the next request on it arrives — its keep-alive
/// timeout ran out as the request went out — and the request, never answered, is sent again on a
/// new connection, without a retrier: `URLSession` (libcurl) does so, and so does
/// `AsyncHTTPClientTransport` for a request that may be sent twice (no body, an idempotent
/// method). Otherwise an app sees a failure every time a server's keep-alive timeout meets a request.
@Suite struct StaleConnectionTests {
    /// Answers the first request of each connection with `ok`, and closes the connection, without
    /// a word, when the second arrives.
    static func closingOnTheSecondRequest(heads: NIOLockedValueBox<[String]>) throws -> RawServer {
        try RawServer { connection in
            guard let first = connection.readHead() else { return }
            heads.withLockedValue { $0.append(first) }
            // A response to HEAD has no body, whatever its length says.
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n" + (first.hasPrefix("HEAD ") ? "" : "ok"))
            if let second = connection.readHead() {
                heads.withLockedValue { $0.append(second) }
            }
            connection.close()
        }
    }

    static func transfer(_ server: RawServer, timeout: TimeInterval = 5) -> DefaultDataTransferService {
        DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: timeout),
                sessionManager: SessionManager.underTest()),
            completionQueue: DispatchQueue(label: "StaleConnectionTests"))
    }

    /// Downloads `path` with `method` to a file of its own; returns the file's bytes, or the failure.
    ///
    /// Over `URLSession` the download goes on a download task, and one that failed at once — on a
    /// connection that turned out dead, or held bytes an earlier answer left — is sent again on a
    /// new one: neither may leave the file the loading system wrote its body to (on Linux,
    /// `<UUID>.tmp` in the temporary folder).
    static func download(
        _ path: String, method: HTTPMethod = .get, over transfer: DefaultDataTransferService
    ) async -> Result<Data, DataTransferError> {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stale-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let before = loadingFiles()
        let downloaded = await result(
            Endpoint<Data>(path: path, method: method, options: RequestOptions(downloadDestination: file)),
            over: transfer)
        let left = loadingFiles().subtracting(before)
        #expect(left.isEmpty, "the download of \(path) left the loading system's files \(left.sorted())")
        return downloaded.flatMap { _ in (try? Data(contentsOf: file)).map { .success($0) } ?? .failure(.noResponse) }
    }

    /// The names of the files in the temporary folder named as FoundationNetworking names a
    /// download task's: a UUID and `.tmp`.
    static func loadingFiles() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []
        return Set(names.filter { $0.hasSuffix(".tmp") && UUID(uuidString: String($0.dropLast(4))) != nil })
    }

    static func result(
        _ endpoint: Endpoint<Data>, over transfer: DefaultDataTransferService
    ) async -> Result<Data, DataTransferError> {
        do throws(DataTransferError) {
            return .success(try await transfer.request(endpoint))
        } catch {
            return .failure(error)
        }
    }

    @Test(arguments: [HTTPMethod.get, .head, .delete, .put])
    func aRequestDroppedOnAKeptConnectionGoesOutAgainOnANewOne(method: HTTPMethod) async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let server = try Self.closingOnTheSecondRequest(heads: heads)
        defer { server.shutdown() }
        let transfer = Self.transfer(server)
        for index in 0..<4 {
            let result = await Self.result(Endpoint<Data>(path: "items/\(index)", method: method), over: transfer)
            #expect(throws: Never.self, "request \(index): \(result)") { try result.get() }
            if method != .head {
                #expect((try? result.get()) == Data("ok".utf8))
            }
        }
        // Requests 1–3 each went out twice: on the connection the server closed, then on a new one.
        let sent = heads.withLockedValue { $0 }.filter { $0.hasPrefix(method.rawValue + " ") }
        #expect(sent.count == 7, "\(sent.count) requests reached the server")
        #expect(server.connectionCount == 4)
    }

    /// A request that is not idempotent is not sent again: its answer might have been lost after
    /// the server acted on it. (libcurl sends one without a body again over `URLSession`.)
    @Test(.enabled(if: TestTransport.current == .asyncHTTPClient))
    func aPostDroppedOnAKeptConnectionFailsOverAsyncHTTPClient() async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let server = try Self.closingOnTheSecondRequest(heads: heads)
        defer { server.shutdown() }
        let transfer = Self.transfer(server)
        let first = await Self.result(Endpoint<Data>(path: "a", method: .post), over: transfer)
        #expect((try? first.get()) == Data("ok".utf8))
        let second = await Self.result(Endpoint<Data>(path: "b", method: .post), over: transfer)
        guard case .failure(.networkFailure(.transport(let error))) = second else {
            Issue.record("the dropped POST ended with \(second)")
            return
        }
        #expect(error.code == .networkConnectionLost)
        #expect(server.connectionCount == 1)
    }

    /// How a request's body goes: in memory, as a stream of the caller's (with a length, or
    /// without, so chunked), from a file, or in memory with the answer bound for a file.
    enum Body: String, CaseIterable, Sendable { case memory, streamWithLength, streamChunked, file, download }

    /// Sets a stream of the caller's as the body, as an app's encoding might: of `body`, with its
    /// length or without, or `stream` itself, without.
    struct StreamBody: ParameterEncoding, @unchecked Sendable {  // Sendable: `stream` is read by one request.
        private let stream: () -> InputStream
        private let length: Int?
        init(body: Data = Data("hello".utf8), announcesLength: Bool) {
            stream = { InputStream(data: body) }
            length = announcesLength ? body.count : nil
        }
        init(stream: InputStream) {
            self.stream = { stream }
            length = nil
        }
        var writesBodyWithoutParameters: Bool { true }
        func encode(
            _ request: URLRequest, with parameters: [String: ParameterValue]
        ) throws(ParameterEncodingError) -> URLRequest {
            var request = request
            request.httpBodyStream = stream()
            if let length { request.setValue(String(length), forHTTPHeaderField: "Content-Length") }
            return request
        }
    }

    /// A request with a body that a server dropped on a kept connection — it closed the connection
    /// unanswered as the request arrived — is not sent again, whatever its method and its body, and
    /// fails at once. Over `URLSession` libcurl sent it again on a new connection, the head alone
    /// (FoundationNetworking cannot send a body twice), and the server waited for the body, the
    /// caller until the request's deadline; the copy now goes no further than its head, never as a
    /// whole request (a stream ended there would look like an empty body).
    @Test(arguments: Body.allCases, [HTTPMethod.post, .put])
    func aRequestWithABodyDroppedOnAKeptConnectionFailsAtOnce(body: Body, method: HTTPMethod) async throws {
        // Each request the server read: its request line, and whether its body came whole.
        let requests = NIOLockedValueBox<[(line: String, whole: Bool)]>([])
        let server = try RawServer { connection in
            var served = 0
            while let head = connection.readHead() {
                served += 1
                let line = String(head.prefix { $0 != "\r" })
                // The first request of a kept connection is answered; the next one, dropped.
                if served > 1 {
                    requests.withLockedValue { $0.append((line, false)) }
                    return connection.close()
                }
                let whole = UploadTests.readBody(of: head, from: connection) != nil
                requests.withLockedValue { $0.append((line, whole)) }
                guard whole, connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") else { return }
            }
        }
        defer { server.shutdown() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dropped-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let upload = folder.appendingPathComponent("upload")
        try Data(repeating: 0x61, count: 3_000).write(to: upload)
        let endpoint: Endpoint<Data> =
            switch body {
            case .memory: Endpoint(path: "dropped", method: method, bodyParameters: ["a": 1])
            case .streamWithLength:
                Endpoint(path: "dropped", method: method, bodyEncoding: StreamBody(announcesLength: true))
            case .streamChunked:
                Endpoint(path: "dropped", method: method, bodyEncoding: StreamBody(announcesLength: false))
            case .file: Endpoint(path: "dropped", method: method, bodyEncoding: UploadEncoding.file(upload))
            case .download:
                Endpoint(
                    path: "dropped", method: method, bodyParameters: ["a": 1],
                    options: RequestOptions(downloadDestination: folder.appendingPathComponent("answer")))
            }
        let transfer = Self.transfer(server)
        let first = await Self.result(Endpoint<Data>(path: "first"), over: transfer)
        #expect((try? first.get()) == Data("ok".utf8))
        let started = ContinuousClock.now
        let dropped = await Self.result(endpoint, over: transfer)
        let elapsed = ContinuousClock.now - started
        guard case .failure(.networkFailure(.transport(let error))) = dropped else {
            Issue.record("the dropped \(method.rawValue) ended with \(dropped)")
            return
        }
        #expect(error.code == .networkConnectionLost, "\(error)")
        #expect(elapsed < .seconds(2), "it failed after \(elapsed), the request's timeout being 5 s")
        try await Task.sleep(for: .milliseconds(100))
        let copies = requests.withLockedValue { $0 }.filter { $0.line.contains(" /dropped ") }
        #expect(!copies.isEmpty && copies.allSatisfy { !$0.whole }, "\(copies)")
        let next = await Self.result(Endpoint<Data>(path: "next"), over: transfer)
        #expect((try? next.get()) == Data("ok".utf8), "the request after it: \(next)")
    }

    /// A server closes each kept connection idle for 20 ms, as the next request may be on its way
    /// (it lingers, reading what still comes, before it lets the connection go), and `POST`s go
    /// 17–23 ms apart. A `POST` may fail only if it reached the server unanswered — it went out on
    /// the connection as it closed, and may have been acted on — never one the server did not see:
    /// over AsyncHTTPClient one handed to a kept connection that closed before the request was
    /// written on it goes out again on a new one (against nginx closing idle connections after
    /// 50 ms, one `POST` in six failed so before, each sent on no connection). No `POST` is
    /// answered twice.
    @Test func aPostIsNeverFailedUnlessItReachedAServerClosingItsConnection() async throws {
        // Each request the server read: its path, and whether it answered it.
        let requests = NIOLockedValueBox<[(path: String, answered: Bool)]>([])
        let server = try RawServer { connection in
            func note(_ head: String, answered: Bool) {
                let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                requests.withLockedValue { $0.append((path, answered)) }
            }
            while connection.awaitsBytes(within: .milliseconds(20)) {
                guard let head = connection.readHead() else { return }
                guard UploadTests.readBody(of: head, from: connection) != nil else {
                    return note(head, answered: false)
                }
                note(head, answered: true)
                guard connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") else { return }
            }
            connection.finishSending()
            while connection.awaitsBytes(within: .seconds(1)), let head = connection.readHead() {
                note(head, answered: false)
                _ = UploadTests.readBody(of: head, from: connection)
            }
            connection.close()
        }
        defer { server.shutdown() }
        let transfer = Self.transfer(server)
        var random = SeededGenerator(seed: 20)
        var failed: [String] = []
        for index in 0..<80 {
            let path = "/posts/\(index)"
            let result = await Self.result(
                Endpoint<Data>(path: String(path.dropFirst()), method: .post, bodyParameters: ["n": .int(index)]),
                over: transfer)
            if case .failure = result { failed.append(path) }
            try await Task.sleep(for: .microseconds(Int.random(in: 17_000...23_000, using: &random)))
        }
        try await Task.sleep(for: .milliseconds(1_100))
        let seen = requests.withLockedValue { $0 }
        for path in failed {
            #expect(seen.contains { $0.path == path && !$0.answered }, "\(path) failed, and the server never saw it")
        }
        for path in Set(seen.map(\.path)) {
            #expect(seen.filter { $0.path == path && $0.answered }.count <= 1, "\(path) was answered twice")
        }
        print("over \(TestTransport.current): \(failed.count) of 80 POSTs failed, each seen unanswered")
    }

    /// A server that closes every connection unanswered gets the request twice at most, and the
    /// caller the failure.
    @Test func aServerThatNeverAnswersGetsARequestTwiceAtMost() async throws {
        let server = try RawServer { connection in
            connection.readHead()
            connection.close()
        }
        defer { server.shutdown() }
        let result = await Self.result(Endpoint<Data>(path: "items"), over: Self.transfer(server))
        guard case .failure(.networkFailure(.transport)) = result else {
            Issue.record("the unanswered GET ended with \(result)")
            return
        }
        #expect((1...2).contains(server.connectionCount), "\(server.connectionCount) connections")
    }
}

/// A server answers with bytes the answer's framing does not count — a body (of 70,000 bytes: more
/// than the client reads with the head) after a `HEAD` answer, a `204` or a `304`, as a handler that
/// answers `HEAD` as it answers `GET` writes one — and keeps
/// the connection, or closes it a moment later. The next request must not be failed by them: over
/// `URLSession`, libcurl sends it on that connection and reads the leftover bytes as its answer
/// ("Received HTTP/0.9"), so a request that may be sent twice (no body, an idempotent method) goes
/// out once more on a new connection; over AsyncHTTPClient it goes on a clean connection at once.
@Suite struct LeftoverBytesTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let method: HTTPMethod
        let status: String
        let closes: Bool
        /// The answer's framing fields, each ending in CRLF: a length that counts the bytes after
        /// the head, or none.
        var framing = ""
        var testDescription: String {
            "\(method.rawValue) answered \(status)\(framing.isEmpty ? "" : " with a length")\(closes ? ", then closed" : "")"
        }
    }

    static let cases: [Case] = [
        (HTTPMethod.head, "200 OK", false), (.head, "200 OK", true), (.head, "404 Not Found", true),
        (.head, "401 Unauthorized\r\nWWW-Authenticate: Basic", true), (.head, "647 Odd", true),
        (.get, "204 No Content", false), (.get, "204 No Content", true), (.get, "304 Not Modified", true),
    ].flatMap { method, status, closes in
        ["Content-Length: 70000\r\n", ""].map { Case(method: method, status: status, closes: closes, framing: $0) }
    }

    @Test(arguments: cases)
    func bytesAnAnswerLeftOnItsConnectionFailNoRequestAfterIt(_ answer: Case) async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                heads.withLockedValue { $0.append(head) }
                if head.contains(" /first ") {
                    guard
                        connection.write(
                            "HTTP/1.1 \(answer.status)\r\n\(answer.framing)\r\n"
                                + String(repeating: "z", count: 70_000))
                    else { return }
                    if answer.closes { return connection.close() }
                } else {
                    guard connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") else { return }
                }
            }
        }
        defer { server.shutdown() }
        let transfer = StaleConnectionTests.transfer(server)
        let first = await StaleConnectionTests.result(
            Endpoint<Data>(path: "first", method: answer.method), over: transfer)
        // Its own outcome is its status's (a `401`, a `647` fail the request); the next is the point.
        if answer.status.hasPrefix("2") {
            #expect(throws: Never.self, "the first request: \(first)") { try first.get() }
        }
        // As an app's next request comes: a moment later, the server's close (if any) arrived.
        try await Task.sleep(for: .milliseconds(50))
        for method in [HTTPMethod.get, .head, .delete] {
            let next = await StaleConnectionTests.result(Endpoint<Data>(path: "next", method: method), over: transfer)
            #expect(throws: Never.self, "the \(method.rawValue) after it: \(next)") { try next.get() }
        }
        // Nothing went out more than twice.
        let sent = heads.withLockedValue { $0 }.filter { $0.contains(" /next ") }
        #expect((3...4).contains(sent.count), "\(sent.count) requests after the first reached the server")
        // A download goes out again the same way (over `URLSession`, on a download task).
        _ = await StaleConnectionTests.result(Endpoint<Data>(path: "first", method: answer.method), over: transfer)
        try await Task.sleep(for: .milliseconds(50))
        let download = await StaleConnectionTests.download("next", over: transfer)
        #expect((try? download.get()) == Data("ok".utf8), "a download after it: \(download)")
    }

    /// A request with a body is not sent again: over `URLSession` it fails, as not HTTP (the server
    /// may not even see it: the client's close of a connection with bytes unread resets it), and the
    /// one after it succeeds; over AsyncHTTPClient it goes on a clean connection.
    @Test func aPostAfterLeftoverBytesIsNotSentTwice() async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                heads.withLockedValue { $0.append(head) }
                let reply =
                    head.hasPrefix("HEAD ")
                    ? "HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "z", count: 70_000)
                    : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                guard connection.write(reply) else { return }
            }
        }
        defer { server.shutdown() }
        let transfer = StaleConnectionTests.transfer(server)
        _ = await StaleConnectionTests.result(Endpoint<Data>(path: "first", method: .head), over: transfer)
        let post = await StaleConnectionTests.result(
            Endpoint<Data>(path: "post", method: .post, bodyParameters: ["a": "b"]), over: transfer)
        let posts = heads.withLockedValue { $0 }.filter { $0.hasPrefix("POST ") }
        if TestTransport.current == .urlSession {
            guard case .failure(.networkFailure(.transport(let error))) = post else {
                Issue.record("the POST ended with \(post)")
                return
            }
            #expect(error.code == .badServerResponse)
            #expect(posts.count <= 1, "the POST went out \(posts.count) times")
        } else {
            #expect((try? post.get()) == Data("ok".utf8), "\(post)")
            #expect(posts.count == 1, "the POST went out \(posts.count) times")
        }
        let next = await StaleConnectionTests.result(Endpoint<Data>(path: "next"), over: transfer)
        #expect(throws: Never.self, "the GET after it: \(next)") { try next.get() }
    }

    /// A server answers a kept connection, idle for a while, with `408 Request Timeout` unasked and
    /// closes it. Over `URLSession`, libcurl sent the next request on that connection and read the
    /// `408` as its answer — for a `POST` the server never saw. The server says it did not receive
    /// the request (RFC 9110, 15.5.9): it goes out once more, whatever its method, if its body can
    /// be sent again. Over AsyncHTTPClient it goes on a new connection at once.
    @Test(arguments: [HTTPMethod.get, .post, .delete])
    func anUnaskedRequestTimeoutOnAKeptConnectionDoesNotAnswerTheNextRequest(method: HTTPMethod) async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let server = try RawServer { connection in
            guard let head = connection.readHead() else { return }
            heads.withLockedValue { $0.append(head) }
            // The body comes whole (a request sent again without it would wait here for its deadline).
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
            guard connection.discard(length ?? 0),
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            else { return }
            Thread.sleep(forTimeInterval: 0.1)
            connection.write("HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            connection.close()
        }
        defer { server.shutdown() }
        let transfer = StaleConnectionTests.transfer(server)
        let body: [String: ParameterValue] = method == .post ? ["a": "b"] : [:]
        for index in 0..<3 {
            let result = await StaleConnectionTests.result(
                Endpoint<Data>(path: "items/\(index)", method: method, bodyParameters: body), over: transfer)
            #expect((try? result.get()) == Data("ok".utf8), "request \(index): \(result)")
            try await Task.sleep(for: .milliseconds(300))
        }
        // A download the same (over `URLSession`, on a download task).
        let download = await StaleConnectionTests.download("file", method: method, over: transfer)
        #expect((try? download.get()) == Data("ok".utf8), "the download: \(download)")
        // Each request reached the server once, a POST with its body.
        let received = heads.withLockedValue { $0 }
        #expect(received.count == 4)
        if method == .post {
            let posts = received.filter { $0.contains(" /items/") }
            #expect(posts.count == 3 && posts.allSatisfy { $0.lowercased().contains("content-length: 9") }, "\(posts)")
        }
    }

    /// A server that answers every request with `408` gets each twice over `URLSession` (once over
    /// AsyncHTTPClient), and the caller its answer.
    @Test func aServerThatAlwaysAnswersRequestTimeoutGetsARequestTwiceAtMost() async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let server = try RawServer { connection in
            guard let head = connection.readHead() else { return }
            heads.withLockedValue { $0.append(head) }
            connection.write("HTTP/1.1 408 Request Timeout\r\nContent-Length: 4\r\nConnection: close\r\n\r\nslow")
            connection.close()
        }
        defer { server.shutdown() }
        let result = await StaleConnectionTests.result(
            Endpoint<Data>(path: "items", method: .post, bodyParameters: ["a": "b"]),
            over: StaleConnectionTests.transfer(server))
        guard case .failure(.networkFailure(.unacceptableStatusCode(let response))) = result else {
            Issue.record("the request ended with \(result)")
            return
        }
        #expect(response.statusCode == 408)
        #expect(response.body == Data("slow".utf8))
        #expect((1...2).contains(heads.withLockedValue { $0 }.count))
    }
}
