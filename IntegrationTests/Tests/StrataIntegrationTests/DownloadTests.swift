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

    @Test func aBodyIsSavedToTheDestinationWithMonotonicProgress() async throws {
        let size = 8 * 1_048_576
        let target = destination()
        defer { try? FileManager.default.removeItem(at: target.deletingLastPathComponent()) }
        let progress = CompletionRecorder<[Int64]>()
        try await Harness.with { (harness) async throws in
            let response = try await harness.transfer.requestResponse(
                Endpoint<Empty>(
                    path: "stream-bytes/\(size)",
                    options: RequestOptions(
                        downloadDestination: target,
                        downloadProgress: { progress.record([$0.completedUnitCount, $0.totalUnitCount]) }
                    )
                )
            )
            #expect(response.response.fileURL == target)
            #expect(response.response.body.isEmpty)
        }
        #expect(try Data(contentsOf: target) == Data(TestReply.generatedBody(size: size)))
        let reported = progress.values
        #expect(reported.count >= 2)
        #expect(zip(reported, reported.dropFirst()).allSatisfy { $0[0] <= $1[0] })
        #expect(reported.last == [Int64(size), Int64(size)])
    }

    /// The error body is reported like any other (up to 1 MiB of it), and nothing is written to the destination.
    @Test func anUnacceptableStatusFailsWithItsStatusAndBodyAndLeavesNoFile() async throws {
        let target = destination()
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
