import Foundation
import Strata
import StrataTestServer
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
