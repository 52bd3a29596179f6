import Foundation
import Strata
import StrataTestServer
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads to a file through every layer.
@Suite struct DownloadTests {
    private func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("strata-download-\(UUID().uuidString)/file.bin")
    }

    /// Gets `path` through every layer, to `destination` or into memory, with a progress closure;
    /// the response, and each report as `[completed, total]`.
    private func download(
        _ path: String, to destination: URL?
    ) async throws -> (response: NetworkResponse, reported: [[Int64]]) {
        let progress = CompletionRecorder<[Int64]>()
        let response = try await Harness.with { (harness) async throws in
            try await harness.transfer.requestResponse(
                Endpoint<Empty>(
                    path: path,
                    options: RequestOptions(
                        downloadDestination: destination,
                        downloadProgress: { progress.record([$0.completedUnitCount, $0.totalUnitCount]) })))
        }
        return (response.response, progress.values)
    }

    @Test func aBodyIsSavedToTheDestinationWithMonotonicProgress() async throws {
        let size = 8 * 1_048_576
        let target = destination()
        defer { try? FileManager.default.removeItem(at: target.deletingLastPathComponent()) }
        let (response, reported) = try await download("stream-bytes/\(size)", to: target)
        #expect(response.fileURL == target)
        #expect(response.body.isEmpty)
        #expect(try Data(contentsOf: target) == Data(TestReply.generatedBody(size: size)))
        #expect(reported.count >= 2)
        #expect(zip(reported, reported.dropFirst()).allSatisfy { $0[0] <= $1[0] })
        #expect(reported.last == [Int64(size), Int64(size)])
    }

    /// A compressed body's `Content-Length` counts the coded bytes, and both transports deliver it
    /// decoded: its progress is counted against no total, in memory or to a file, and ends at the
    /// decoded length.
    @Test(arguments: [false, true])
    func aCompressedBodyIsCountedAgainstNoTotal(toFile: Bool) async throws {
        let target = destination()
        defer { try? FileManager.default.removeItem(at: target.deletingLastPathComponent()) }
        let (response, reported) = try await download("deflate", to: toFile ? target : nil)
        let body = toFile ? try Data(contentsOf: target) : response.body
        #expect(body.starts(with: Data(#"{"deflated": true"#.utf8)))
        #expect(reported.last == [Int64(body.count), -1], "\(reported)")
        #expect(reported.allSatisfy { $0[1] == -1 })
    }

    /// A progress closure may cancel its own request, through the callback API, mid-body: the
    /// completion comes once, cancelled, without waiting for the rest of the body; nothing is
    /// reported after it, and a download leaves no file.
    @Test(arguments: [false, true])
    func aProgressClosureThatCancelsItsOwnRequestEndsItOnce(toFile: Bool) async throws {
        let target = destination()
        defer { try? FileManager.default.removeItem(at: target.deletingLastPathComponent()) }
        let task = CompletionRecorder<any NetworkCancellable>()
        let outcomes = CompletionRecorder<DataTransferError?>()
        let reportsAfterCompletion = CompletionRecorder<Int64>()
        try await Harness.with { (harness) async throws in
            let started = ContinuousClock.now
            // 2 s of body: 40 pieces, 50 ms apart.
            let endpoint = Endpoint<Empty>(
                path: "drip", queryParameters: ["size": 40_960, "chunks": 40, "interval": 50],
                options: RequestOptions(
                    downloadDestination: toFile ? target : nil,
                    downloadProgress: { progress in
                        if outcomes.callCount > 0 { reportsAfterCompletion.record(progress.completedUnitCount) }
                        // The task is handed back as `request` returns, which may be after the first report.
                        for _ in 0..<500 where task.values.isEmpty { Thread.sleep(forTimeInterval: 0.002) }
                        task.values.first?.cancel()
                    }))
            task.record(
                harness.transfer.request(with: endpoint) { result in
                    if case .failure(let error) = result { outcomes.record(error) } else { outcomes.record(nil) }
                })
            let outcome = try #require(await outcomes.first(timeout: 5))
            #expect(outcome?.isCancelled == true, "\(String(describing: outcome))")
            #expect(ContinuousClock.now - started < .seconds(1.5), "it waited for the body")
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(outcomes.callCount == 1)
        #expect(reportsAfterCompletion.values.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    /// Without progress to report, `URLSessionTransport` downloads through a task with a completion
    /// handler (no delegate call per part written): the body, a redirect the pipeline follows and a
    /// `401` answering a Basic challenge come out as they do with progress.
    @Test func aDownloadNobodyFollowsIsSavedWholeAfterARedirect() async throws {
        let size = 3 * 1_048_576 + 17
        let target = destination()
        defer { try? FileManager.default.removeItem(at: target.deletingLastPathComponent()) }
        try await Harness.with { (harness) async throws in
            let response = try await harness.transfer.requestResponse(
                Endpoint<Empty>(
                    path: "redirect/302", queryParameters: ["to": .string("/stream-bytes/\(size)?chunked=1")],
                    options: RequestOptions(downloadDestination: target)))
            #expect(response.response.fileURL == target)
            #expect(response.response.statusCode == 200)
            #expect(response.response.url?.path == "/stream-bytes/\(size)")
        }
        #expect(try Data(contentsOf: target) == Data(TestReply.generatedBody(size: size)))
    }

    /// A careless destination — the folder rather than a file in it, or a named pipe (as a device
    /// such as `/dev/null` would be) — is refused before anything is sent, with or without
    /// progress, and stays as it was: a download replaced a pipe with a file, as it replaced
    /// `/dev/null` itself when run as root.
    @Test(arguments: ["folder", "pipe"], [false, true])
    func aFolderOrAPipeAsTheDestinationIsRefusedAndKept(kind: String, followsProgress: Bool) async throws {
        let folder = destination().deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("keep me".utf8).write(to: folder.appendingPathComponent("note.txt"))
        let pipe = folder.appendingPathComponent("pipe")
        try #require(mkfifo(pipe.path, 0o600) == 0)
        let target = kind == "folder" ? folder : pipe
        var progress: (@Sendable (Progress) -> Void)?
        if followsProgress { progress = { _ in } }
        try await Harness.with { (harness) async throws in
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(
                    Endpoint<Void>(
                        path: "stream-bytes/1024",
                        options: RequestOptions(downloadDestination: target, downloadProgress: progress)))
            }
            switch error {
            case .networkFailure(.invalidRequest(.downloadDestinationIsAFolder(let path)))? where kind == "folder",
                .networkFailure(.invalidRequest(.downloadDestinationIsNotAFile(let path)))? where kind == "pipe":
                #expect(path == target.path)
            default:
                Issue.record("expected the \(kind) to be refused, got \(String(describing: error))")
            }
        }
        #expect(try String(contentsOf: folder.appendingPathComponent("note.txt"), encoding: .utf8) == "keep me")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["note.txt", "pipe"])
        #expect(
            try FileManager.default.attributesOfItem(atPath: pipe.path)[.type] as? FileAttributeType != .typeRegular)
    }

    @Test func aDownloadAnsweredByABasicChallengeFailsWithTheUnauthorizedResponse() async throws {
        let target = destination()
        defer { try? FileManager.default.removeItem(at: target.deletingLastPathComponent()) }
        try await Harness.with { (harness) async throws in
            let started = ContinuousClock.now
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(
                    Endpoint<Void>(path: "basic-auth/user/secret", options: RequestOptions(downloadDestination: target))
                )
            }
            guard case .networkFailure(.unacceptableStatusCode(let response))? = error else {
                Issue.record("expected a 401, got \(String(describing: error))")
                return
            }
            #expect(response.statusCode == 401)
            // Not the challenge timeout (10 s): the declined challenge ends the task at once.
            #expect(ContinuousClock.now - started < .seconds(8))
        }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    /// The error body is reported like any other (up to 1 MiB of it), and nothing is written to the destination.
    @Test func anUnacceptableStatusFailsWithItsStatusAndBodyAndLeavesNoFile() async throws {
        let target = destination()
        defer { try? FileManager.default.removeItem(at: target.deletingLastPathComponent()) }
        try await Harness.with { (harness) async throws in
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(
                    Endpoint<Void>(path: "status/404", options: RequestOptions(downloadDestination: target)))
            }
            guard case .networkFailure(.unacceptableStatusCode(let response))? = error else {
                Issue.record("expected a 404, got \(String(describing: error))")
                return
            }
            #expect(response.statusCode == 404)
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"status": 404}"#)
        }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test func cancellingMidDownloadCompletesOnceAndLeavesNoFile() async throws {
        let target = destination()
        defer { try? FileManager.default.removeItem(at: target.deletingLastPathComponent()) }
        try await Harness.with { (harness) async throws in
            try await expectCancellation(
                of: Endpoint(
                    path: "drip", queryParameters: ["size": 2_000, "chunks": 20, "interval": 100],
                    options: RequestOptions(downloadDestination: target)),
                through: harness.transfer, settle: .milliseconds(2_200))
        }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }
}
