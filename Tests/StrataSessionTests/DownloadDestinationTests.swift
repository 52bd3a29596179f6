import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download replaces a file at its destination, and nothing else: a careless destination — a
/// folder, a device such as `/dev/null`, a pipe, a path under a file — is a typed error that
/// leaves what is there as it was.
@Suite struct DownloadDestinationTests {
    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: folder.appendingPathComponent("note.txt"))
        return folder
    }

    /// The outcome of downloading "the body" from a stub to `destination`.
    private func download(to destination: URL) async throws -> Outcome {
        let stub = URLProtocolStub { _ in .response(body: Data("the body".utf8)) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (recorder, _) = send(
            URLRequest(url: stub.baseURL), through: manager, options: RequestOptions(downloadDestination: destination))
        return try #require(await recorder.first())
    }

    /// With progress, the body is written part by part as it comes; without, a URLSession download
    /// task's file is moved into place.
    @Test(arguments: [false, true])
    func aFolderAsTheDestinationIsATypedErrorAndTheFolderIsKept(followsProgress: Bool) async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = URLProtocolStub { _ in .response(body: Data("the body".utf8)) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var progress: (@Sendable (Progress) -> Void)?
        if followsProgress { progress = { _ in } }
        let (recorder, _) = send(
            URLRequest(url: stub.baseURL), through: manager,
            options: RequestOptions(downloadDestination: folder, downloadProgress: progress))
        let outcome = try #require(await recorder.first())
        #expect(outcome.error as? RequestValidationError == .downloadDestinationIsAFolder(folder.path))
        #expect(stub.requests.isEmpty)
        let kept = try String(contentsOf: folder.appendingPathComponent("note.txt"), encoding: .utf8)
        #expect(kept == "keep me")
        // Nothing of the download is left beside it.
        let siblings = try FileManager.default.contentsOfDirectory(atPath: folder.deletingLastPathComponent().path)
        #expect(!siblings.contains { $0.hasPrefix(".\(folder.lastPathComponent).") })
    }

    @Test func aDestinationUnderAFileIsATypedErrorAndTheFileIsKept() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("note.txt")
        let outcome = try await download(to: file.appendingPathComponent("report.pdf"))
        #expect(outcome.error != nil)
        #expect(try String(contentsOf: file, encoding: .utf8) == "keep me")
    }

    /// Two bodies placed at one destination at the same moment, as two downloads finishing
    /// together are: each is placed whole, in one step, and neither fails on the other's file.
    @Test func bodiesPlacedAtOnceAtOneDestinationEachReplaceItWhole() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("body.bin")
        let bodies = [Data(repeating: 0x61, count: 4_096), Data(repeating: 0x62, count: 8_192)]
        let failures = Locked<[String]>([])
        for round in 0..<300 {
            let sources = bodies.indices.map { folder.appendingPathComponent("part-\(round)-\($0)") }
            for (source, body) in zip(sources, bodies) { try body.write(to: source) }
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                do {
                    try FileManager.default.placeDownload(sources[index], at: destination)
                } catch {
                    failures.withLock { $0.append("round \(round): \(error)") }
                }
            }
            let placed = try Data(contentsOf: destination)
            #expect(bodies.contains(placed), "round \(round): \(placed.count) bytes")
        }
        #expect(failures.value.count == 0, "\(failures.value.prefix(1))")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["body.bin", "note.txt"])
    }

    @Test func aFileAtTheDestinationIsReplaced() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("note.txt")
        let outcome = try await download(to: file)
        #expect(outcome.error == nil)
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(written == "the body")
    }

    /// What is at `path`, as the path itself is (a link not followed).
    private func type(at path: String) -> FileAttributeType? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
    }

    /// A download to `/dev/null` replaced the device with a file: as root, the system's. A device
    /// (made here when the tests run as root on Linux, with `/dev/null`'s numbers) and a named pipe
    /// are refused before anything is sent, and stay what they were; through the test double too.
    @Test(arguments: ["pipe", "device"], [false, true])
    func aDeviceOrAPipeAsTheDestinationIsATypedErrorAndIsKept(kind: String, followsProgress: Bool) async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(kind).path
        if kind == "pipe" {
            try #require(mkfifo(path, 0o600) == 0)
        } else {
            #if os(Linux)
                guard getuid() == 0 else { return }  // only root makes a device
                try #require(mknod(path, S_IFCHR | 0o600, 0x103) == 0)  // major 1, minor 3: a null device
            #else
                return
            #endif
        }
        let kindBefore = try #require(type(at: path))
        let destination = URL(fileURLWithPath: path)
        let stub = URLProtocolStub { _ in .response(body: Data("the body".utf8)) }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var progress: (@Sendable (Progress) -> Void)?
        if followsProgress { progress = { _ in } }
        let options = RequestOptions(downloadDestination: destination, downloadProgress: progress)
        let (recorder, _) = send(URLRequest(url: stub.baseURL), through: manager, options: options)
        let outcome = try #require(await recorder.first())
        #expect(outcome.error as? RequestValidationError == .downloadDestinationIsNotAFile(path))
        #expect(outcome.error?.localizedDescription.contains("is a device, a pipe or a socket") == true)
        #expect(stub.requests.isEmpty)
        #expect(type(at: path) == kindBefore)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [kind, "note.txt"].sorted())

        let mock = MockNetworkSessionManager(fallback: .success(body: Data("the body".utf8)))
        let mocked = CompletionRecorder<TransportOutcome>()
        mock.send(URLRequest(url: stub.baseURL), options: options, completion: mocked.record)
        #expect(
            try #require(await mocked.first()).error as? RequestValidationError == .downloadDestinationIsNotAFile(path))
        #expect(type(at: path) == kindBefore)
    }

    /// A link at the destination is replaced by the file, and what it names is left as it was.
    @Test func aLinkAtTheDestinationIsReplacedAndWhatItNamesIsKept() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let note = folder.appendingPathComponent("note.txt")
        let pipe = folder.appendingPathComponent("pipe")
        try #require(mkfifo(pipe.path, 0o600) == 0)
        for (name, target) in [
            ("to-note", note), ("to-pipe", pipe), ("to-nothing", folder.appendingPathComponent("gone")),
        ] {
            let link = folder.appendingPathComponent(name)
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            let outcome = try await download(to: link)
            #expect(outcome.error == nil, "\(name)")
            #expect(type(at: link.path) == .typeRegular, "\(name)")
            #expect(try String(contentsOf: link, encoding: .utf8) == "the body", "\(name)")
        }
        #expect(try String(contentsOf: note, encoding: .utf8) == "keep me")
        #expect(type(at: pipe.path) != .typeRegular)
    }
}
