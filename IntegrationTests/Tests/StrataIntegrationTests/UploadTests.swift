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

/// Raw uploads from memory and from a file, through every layer.
@Suite struct UploadTests {
    @Test func dataAndFilesAreUploadedIntactWithProgressAndTheFileIsKept() async throws {
        let bytes = Data(TestReply.generatedBody(size: 300_000))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-upload-\(UUID().uuidString).bin")
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await Harness.with { (harness) async throws in
            for encoding in [UploadEncoding.data(bytes), .file(file, contentType: "application/x-test")] {
                let progress = CompletionRecorder<[Int64]>()
                let echo = try await harness.transfer.request(
                    Endpoint<EchoReply>(
                        path: "echo",
                        method: .put,
                        bodyEncoding: encoding,
                        options: RequestOptions(
                            uploadProgress: { progress.record([$0.completedUnitCount, $0.totalUnitCount]) })
                    )
                )
                #expect(echo.bodySize == bytes.count)
                #expect(Data(base64Encoded: echo.bodyBase64) == bytes)
                #expect(progress.values.last == [Int64(bytes.count), Int64(bytes.count)])
            }
        }
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    /// A body in memory reports its progress as it goes, a report for each MiB sent at least, as
    /// one from a file does: over AsyncHTTPClient it went in parts of 4 MiB, one report each (for a
    /// body over a slow network, nothing until 4 MiB had gone). (libcurl may hand the socket more
    /// than a MiB at once on loopback, so the steps are not bounded one by one.)
    @Test func aBodyInMemoryReportsItsProgressAsItGoes() async throws {
        let bytes = Data(TestReply.generatedBody(size: 6 * 1_048_576))
        try await Harness.with { (harness) async throws in
            let progress = CompletionRecorder<Int64>()
            let count = try await harness.transfer.request(
                Endpoint<BodyCount>(
                    path: "count", method: .post, bodyEncoding: UploadEncoding.data(bytes),
                    options: RequestOptions(uploadProgress: { progress.record($0.completedUnitCount) })))
            #expect(count.size == bytes.count)
            let reported = progress.values
            #expect(reported.last == Int64(bytes.count))
            let steps = zip([0] + reported, reported).map { $1 - $0 }
            #expect(steps.allSatisfy { $0 >= 0 })
            #expect(
                Set(reported).count >= bytes.count / 1_048_576, "steps over \(TestTransport.current): \(steps)")
        }
    }

    @Test func aMissingFileIsATypedErrorAndNothingIsSent() async throws {
        try await Harness.with { (harness) async throws in
            let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).bin")
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(
                    Endpoint<Void>(path: "echo", method: .put, bodyEncoding: UploadEncoding.file(missing)))
            }
            guard case .networkFailure(.encoding(.multipart(.unreadableFile)))? = error else {
                Issue.record("expected an unreadable file, got \(String(describing: error))")
                return
            }
        }
    }
}

/// Uploads to a server that stops reading: the request ends at its deadline, or with the answer
/// the server gave before it read the body, never waits on; and the next request to the server
/// succeeds, on a connection of its own.
extension UploadTests {
    enum StopsReading: String, CaseIterable, CustomStringConvertible {
        /// Reads the head, then nothing, and never answers.
        case neverAnswers
        /// Answers `413` at once, reads the body only then, and keeps the connection for the next
        /// request.
        case answersFirst
        /// Answers `413` at once without reading the body, and closes the connection.
        case answersAndCloses
        /// Answers `413` at once with a body that the close of the connection ends (no length, as
        /// an HTTP/1.0 server answers), without reading the body.
        case answersUntilItClosesAndCloses
        /// Answers `413` at once with a chunked body whose last chunk comes a moment later, reads
        /// the body only then, and keeps the connection for the next request.
        case answersChunkedFirst
        /// Resets the connection after the head.
        case resets

        var description: String { rawValue }
    }

    /// A server for `behaviour` on `PUT`, answering `ok` to a `GET`, on one connection after
    /// another.
    static func server(stopping behaviour: StopsReading) throws -> RawServer {
        try RawServer { connection in
            let tooLarge = "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 3\r\n"
            while let head = connection.readHead() {
                if head.hasPrefix("GET ") {
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    continue
                }
                switch behaviour {
                case .neverAnswers:
                    Thread.sleep(forTimeInterval: 6)
                case .answersFirst:
                    connection.write(tooLarge + "\r\nbig")
                    if connection.discard(Self.bodyLength(head)) { continue }
                case .answersAndCloses:
                    connection.write(tooLarge + "Connection: close\r\n\r\nbig")
                case .answersUntilItClosesAndCloses:
                    connection.write("HTTP/1.0 413 Payload Too Large\r\n\r\nbig")
                    Thread.sleep(forTimeInterval: 0.05)
                case .answersChunkedFirst:
                    connection.write("HTTP/1.1 413 Payload Too Large\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nbig\r\n")
                    Thread.sleep(forTimeInterval: 0.05)
                    connection.write("0\r\n\r\n")
                    if connection.discard(Self.bodyLength(head)) { continue }
                case .resets:
                    connection.reset()
                }
                break
            }
            connection.close()
        }
    }

    /// The `Content-Length` a request head gives; 0 without one.
    static func bodyLength(_ head: String) -> Int {
        let field = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
        return field.flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
    }

    /// 16 MiB, from memory and from a file, four at once: more than the socket buffers hold, so
    /// each upload waits on a server that does not read. (From a file, over URLSession on Linux,
    /// such an upload trapped the process about one run in three: see
    /// `URLSessionTransport.uploadBody(of:)`.)
    @Test(arguments: StopsReading.allCases, [false, true])
    func anUploadToAServerThatStopsReadingEndsAtItsDeadlineOrWithItsAnswer(
        behaviour: StopsReading, fromFile: Bool
    ) async throws {
        let server = try Self.server(stopping: behaviour)
        defer { server.shutdown() }
        let transfer = StaleConnectionTests.transfer(server, timeout: 2)
        let body = Data(repeating: 0x61, count: 16 << 20)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-upload-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        if fromFile { try body.write(to: file) }
        let encoding = fromFile ? UploadEncoding.file(file) : .data(body)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let started = ContinuousClock.now
                    let error = await failure { () async throws(DataTransferError) in
                        try await transfer.request(Endpoint<Data>(path: "upload", method: .put, bodyEncoding: encoding))
                    }
                    Self.check(error, after: ContinuousClock.now - started, for: behaviour)
                }
            }
        }
        let next = try await transfer.request(Endpoint<Data>(path: "next"))
        #expect(next == Data("ok".utf8))
    }

    /// What an upload to a server that stops reading may come to: its deadline; the server's
    /// answer — or, when the server closes at once on a body it has not read, the reset that close
    /// sends, which may reach the client before the answer does; the reset.
    static func check(_ error: DataTransferError?, after elapsed: Duration, for behaviour: StopsReading) {
        switch (behaviour, error) {
        case (.neverAnswers, .networkFailure(.timedOut)?):
            #expect(elapsed >= .seconds(2) && elapsed < .seconds(4), "\(elapsed)")
        case (.answersFirst, .networkFailure(.unacceptableStatusCode(let response))?),
            (.answersAndCloses, .networkFailure(.unacceptableStatusCode(let response))?),
            (.answersUntilItClosesAndCloses, .networkFailure(.unacceptableStatusCode(let response))?),
            (.answersChunkedFirst, .networkFailure(.unacceptableStatusCode(let response))?):
            #expect(response.statusCode == 413 && response.body == Data("big".utf8))
            #expect(elapsed < .seconds(1), "\(elapsed)")
        case (.answersAndCloses, .networkFailure(.transport)?),
            (.answersUntilItClosesAndCloses, .networkFailure(.transport)?),
            (.resets, .networkFailure(.transport)?):
            #expect(elapsed < .seconds(1), "\(elapsed)")
        default:
            Issue.record("over \(TestTransport.current): \(String(describing: error)) after \(elapsed)")
        }
    }
}

/// Uploads a server answers with a success before it reads their bodies — it reads them after, and
/// keeps the connection, as nginx's `return 200` does: the body goes out whole, the answer reaches
/// the caller, and the connection serves the next request. Over AsyncHTTPClient such an exchange
/// could end as its answer arrived, the body half sent, leaving the connection waiting for a body
/// that no longer came (until the server gave up on it, 5 s for nginx, or for ever): each such
/// upload took a connection of the pool with it, and requests after eight of them waited.
extension UploadTests {
    enum EarlySuccess: String, CaseIterable, CustomStringConvertible {
        /// `200` with a body of a `Content-Length`.
        case withLength
        /// `204`, no body.
        case noContent

        var description: String { rawValue }

        var response: String {
            switch self {
            case .withLength: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            case .noContent: "HTTP/1.1 204 No Content\r\n\r\n"
            }
        }
    }

    /// 16 MiB, more than the socket buffers hold, so that the answer arrives while the body is
    /// going out; from memory, from a file, and from a stream of the caller's with its length.
    @Test(arguments: EarlySuccess.allCases, ["memory", "file", "stream"])
    func anUploadAnsweredWithASuccessBeforeItsBodyWasReadGoesOutWholeAndKeepsItsConnection(
        answer: EarlySuccess, source: String
    ) async throws {
        let length = 16 << 20
        let bodiesRead = NIOLockedValueBox<[Int]>([])
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                guard !head.hasPrefix("GET ") else {
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext")
                    continue
                }
                connection.write(answer.response)
                // Until the client is well into the body, and held by the socket buffers.
                Thread.sleep(forTimeInterval: 0.1)
                let read = Self.readBody(of: head, from: connection)
                bodiesRead.withLockedValue { $0.append(read ?? -1) }
                guard read != nil else { break }
            }
            connection.close()
        }
        defer { server.shutdown() }
        let transfer = StaleConnectionTests.transfer(server, timeout: 10)
        let body = Data(repeating: 0x62, count: length)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-upload-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        let encoding: any ParameterEncoding
        switch source {
        case "file":
            try body.write(to: file)
            encoding = UploadEncoding.file(file)
        case "stream":
            encoding = StaleConnectionTests.StreamBody(body: body, announcesLength: true)
        default:
            encoding = UploadEncoding.data(body)
        }
        for round in 0..<3 {
            let started = ContinuousClock.now
            let answered = await StaleConnectionTests.result(
                Endpoint<Data>(path: "upload", method: .put, bodyEncoding: encoding), over: transfer)
            #expect(
                (try? answered.get()) == (answer == .withLength ? Data("ok".utf8) : Data()),
                "round \(round) over \(TestTransport.current): \(answered)")
            let next = await StaleConnectionTests.result(Endpoint<Data>(path: "next"), over: transfer)
            #expect((try? next.get()) == Data("next".utf8), "round \(round) over \(TestTransport.current): \(next)")
            #expect(ContinuousClock.now - started < .seconds(3), "round \(round) over \(TestTransport.current)")
        }
        // The last body may still be on its way to the server when the next request went on a
        // connection of its own.
        let deadline = ContinuousClock.now + .seconds(2)
        while bodiesRead.withLockedValue({ $0.count }) < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(bodiesRead.withLockedValue { $0 } == [length, length, length], "over \(TestTransport.current)")
        // A connection is handed back to the pool a moment after its exchange ended, so the next
        // request may open one of its own; one left waiting for a body would make it one a round.
        #expect(server.connectionCount <= 2, "over \(TestTransport.current)")
    }

    /// A server streams its answer as it reads the body — each 64 KiB it reads, written back as a
    /// chunk, its writes blocking — so that once the socket buffers are full it reads no more of
    /// the body until the client reads its answer: the client must read on as it sends, or each
    /// waits for the other until the deadline.
    @Test func anUploadEchoedAsItIsReadEndsWhole() async throws {
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                var left = Self.bodyLength(head)
                while left > 0 {
                    guard let bytes = connection.read(min(left, 65_536)) else { return }
                    left -= bytes.count
                    connection.write(String(bytes.count, radix: 16) + "\r\n")
                    connection.write(bytes)
                    connection.write("\r\n")
                }
                connection.write("0\r\n\r\n")
            }
            connection.close()
        }
        defer { server.shutdown() }
        let transfer = StaleConnectionTests.transfer(server, timeout: 10)
        let body = Data((0..<(32 << 20)).map { UInt8(truncatingIfNeeded: $0 / 7) })
        let started = ContinuousClock.now
        let echoed = await StaleConnectionTests.result(
            Endpoint<Data>(path: "echo", method: .put, bodyEncoding: UploadEncoding.data(body)), over: transfer)
        #expect((try? echoed.get()) == body, "over \(TestTransport.current): \(echoed.map(\.count))")
        // A client that held the answer back until the body was out would wait here until the deadline.
        #expect(ContinuousClock.now - started < .seconds(5), "over \(TestTransport.current)")
    }

    /// A stream of the caller's, written a little at a time for two seconds, is echoed by the
    /// server as it reads it — a full-duplex exchange — and the caller reads the echo as it comes,
    /// not only once its upload has ended.
    @Test func aStreamedUploadEchoedAsItIsReadIsReadAsItComes() async throws {
        let server = try RawServer { connection in
            guard connection.readHead() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            // Echoes each chunk of the chunked upload as a chunk of the answer, to the last.
            while true {
                var line: [UInt8] = []
                while line.suffix(2) != [13, 10] {
                    guard let byte = connection.read(1) else { return }
                    line += byte
                }
                guard let size = Int(String(decoding: line.dropLast(2), as: UTF8.self), radix: 16),
                    let chunk = connection.read(size + 2)
                else { return }
                connection.write(line + chunk)
                if size == 0 { break }
            }
            connection.close()
        }
        defer { server.shutdown() }
        let pipe = Pipe()
        let writing = Thread {
            for _ in 0..<20 {
                pipe.fileHandleForWriting.write(Data(repeating: 0x65, count: 1_000))
                Thread.sleep(forTimeInterval: 0.1)
            }
            try? pipe.fileHandleForWriting.close()
        }
        let upload = try #require(InputStream(fileAtPath: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)"))
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
            sessionManager: SessionManager.underTest())
        let started = ContinuousClock.now
        writing.start()
        var echoed = 0
        var echoedInTheFirstSecond = 0
        for try await chunk in network.stream(
            endpoint: Endpoint<Void>(
                path: "echo", method: .post, bodyEncoding: StaleConnectionTests.StreamBody(stream: upload)),
            decoding: .bytes)
        {
            echoed += chunk.count
            if ContinuousClock.now - started < .seconds(1) { echoedInTheFirstSecond += chunk.count }
        }
        #expect(echoed == 20_000, "over \(TestTransport.current)")
        // Of the ten or so parts written in the first second of the two the upload takes.
        #expect(echoedInTheFirstSecond >= 5_000, "over \(TestTransport.current): \(echoedInTheFirstSecond)")
    }

    /// A server answers with a success and closes the connection without reading the body (and
    /// without saying `Connection: close`): the upload ends at once, with the answer or a failure
    /// of the connection, never at its deadline.
    @Test func anUploadAnsweredAndDroppedUnreadEndsAtOnce() async throws {
        let server = try RawServer { connection in
            guard connection.readHead() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            Thread.sleep(forTimeInterval: 0.05)
            connection.close()
        }
        defer { server.shutdown() }
        let transfer = StaleConnectionTests.transfer(server, timeout: 10)
        let started = ContinuousClock.now
        let answered = await StaleConnectionTests.result(
            Endpoint<Data>(path: "upload", method: .put, bodyEncoding: UploadEncoding.data(Data(count: 16 << 20))),
            over: transfer)
        switch answered {
        case .success(let body): #expect(body == Data("ok".utf8))
        case .failure(.networkFailure(.transport)): break
        case .failure(let error): Issue.record("over \(TestTransport.current): \(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(3), "over \(TestTransport.current)")
    }

    /// Reads the body `head` announces — by its length, or chunked to its last chunk — and returns
    /// its length, or `nil` if the connection closed first.
    static func readBody(of head: String, from connection: RawConnection) -> Int? {
        guard head.lowercased().contains("transfer-encoding: chunked") else {
            return connection.discard(bodyLength(head)) ? bodyLength(head) : nil
        }
        var total = 0
        while true {
            var line: [UInt8] = []
            while line.suffix(2) != [13, 10] {
                guard let byte = connection.read(1) else { return nil }
                line += byte
            }
            guard let size = Int(String(decoding: line.dropLast(2), as: UTF8.self), radix: 16) else { return nil }
            guard connection.discard(size), connection.read(2) != nil else { return nil }
            if size == 0 { return total }
            total += size
        }
    }
}
