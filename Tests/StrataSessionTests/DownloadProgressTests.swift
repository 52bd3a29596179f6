import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `downloadProgress` counts the body of the response the caller gets, whoever takes it: the
/// download's file, or memory.
@Suite struct DownloadProgressTests {
    private let body = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0) })

    private func stub() -> URLProtocolStub {
        let body = body
        return URLProtocolStub { request in
            switch request.url?.path {
            case "/moved":
                .response(statusCode: 302, headers: ["Location": "/items"], body: Data(count: 10_000))
            case "/compressed":
                // As a decoding transport delivers it: more bytes than the coded length announced.
                .response(
                    headers: ["Content-Encoding": "gzip", "Content-Length": "1000"], body: body, chunks: 4)
            case "/missing":
                .response(statusCode: 404, headers: ["Content-Length": "5000"], body: Data(count: 5_000), chunks: 2)
            default:
                .response(headers: ["Content-Length": "\(body.count)"], body: body, chunks: 4)
            }
        }
    }

    /// Sends `path` with a progress closure, and returns its outcome and what was reported.
    private func download(
        _ path: String, from stub: URLProtocolStub, to destination: URL? = nil
    ) async throws -> (
        Outcome, [(completed: Int64, total: Int64)]
    ) {
        let reports = Locked<[(completed: Int64, total: Int64)]>([])
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (outcomes, _) = send(
            URLRequest(url: stub.baseURL.appendingPathComponent(path)), through: manager,
            options: RequestOptions(
                downloadDestination: destination,
                downloadProgress: { progress in
                    reports.withLock { $0.append((progress.completedUnitCount, progress.totalUnitCount)) }
                }))
        return (try #require(await outcomes.first(timeout: 5)), reports.value)
    }

    @Test func aBodyHeldInMemoryIsCountedAsItArrivesAndARedirectsBodyIsNot() async throws {
        let (outcome, reports) = try await download("moved", from: stub())
        #expect(outcome.error == nil)
        #expect(outcome.data == body)
        #expect(reports.count >= 2, "\(reports)")
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed < $1.completed })
        // The 302's 10,000 bytes are not in the count, and the total is the answer's length.
        #expect(reports.allSatisfy { $0.total == Int64(body.count) })
        #expect(reports.last?.completed == Int64(body.count))
    }

    @Test func theBodyOfAnUnacceptableStatusIsCountedToo() async throws {
        let (outcome, reports) = try await download("missing", from: stub())
        #expect((outcome.response as? HTTPURLResponse)?.statusCode == 404)
        #expect(reports.last?.completed == 5_000)
        #expect(reports.last?.total == 5_000)
    }

    /// A compressed body's `Content-Length` counts the coded bytes, and the transport delivers them
    /// decoded: its progress has no total, never one it passes; in memory or to a file.
    @Test(arguments: [false, true])
    func aCompressedBodyIsCountedAgainstNoTotal(toFile: Bool) async throws {
        let destination =
            toFile
            ? FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID().uuidString)") : nil
        defer { destination.map { try? FileManager.default.removeItem(at: $0) } }
        let (outcome, reports) = try await download("compressed", from: stub(), to: destination)
        #expect(outcome.error == nil)
        #expect(reports.last?.completed == Int64(body.count))
        #expect(reports.allSatisfy { $0.total == -1 }, "\(reports)")
    }
}
