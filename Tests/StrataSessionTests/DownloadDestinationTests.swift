import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download replaces a file at its destination, and nothing else: a careless destination — a
/// folder, a path under a file — is a typed error that leaves what is there as it was.
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

    @Test func aFileAtTheDestinationIsReplaced() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("note.txt")
        let outcome = try await download(to: file)
        #expect(outcome.error == nil)
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(written == "the body")
    }
}
