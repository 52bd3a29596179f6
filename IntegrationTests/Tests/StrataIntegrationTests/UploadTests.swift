import Foundation
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
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 2),
                sessionManager: SessionManager.underTest()),
            completionQueue: DispatchQueue(label: "UploadTests"))
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
            (.answersAndCloses, .networkFailure(.unacceptableStatusCode(let response))?):
            #expect(response.statusCode == 413 && response.body == Data("big".utf8))
            #expect(elapsed < .seconds(1), "\(elapsed)")
        case (.answersAndCloses, .networkFailure(.transport)?), (.resets, .networkFailure(.transport)?):
            #expect(elapsed < .seconds(1), "\(elapsed)")
        default:
            Issue.record("over \(TestTransport.current): \(String(describing: error)) after \(elapsed)")
        }
    }
}
