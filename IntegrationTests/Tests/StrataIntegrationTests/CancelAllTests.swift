import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `SessionManager.cancelAllRequests()` against the loopback server, as an app signing out uses it:
/// a GET the server is slow to answer, a download under way, a request waiting to be retried, a
/// byte stream and an event source mid-stream all end at once, each once, as cancelled — no file
/// left, no event after — and the manager answers the next request.
@Suite struct CancelAllTests {
    @Test func everythingUnderWayEndsCancelledAndTheNextRequestIsAnswered() async throws {
        try await Harness.with(timeout: 60, retriers: [RetryPolicy(maximumAttempts: 3, maximumDelay: 60)]) {
            harness in
            let transfer = harness.transfer
            let slow = CompletionRecorder<Result<Void, DataTransferError>>()
            transfer.request(with: Endpoint<Void>(path: "delay/60000"), completion: slow.record)

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            let download = CompletionRecorder<Result<Void, DataTransferError>>()
            let downloadProgress = CompletionRecorder<Void>()
            transfer.request(
                with: Endpoint<Void>(
                    path: "drip", queryParameters: ["size": 100_000, "chunks": 100, "interval": 500],
                    options: RequestOptions(
                        downloadDestination: file,
                        downloadProgress: { if $0.completedUnitCount > 0 { downloadProgress.record(()) } })),
                completion: download.record)

            let retried = CompletionRecorder<Result<Void, DataTransferError>>()
            let key = UUID().uuidString
            transfer.request(
                with: Endpoint<Void>(path: "retry-after/503", queryParameters: ["key": .string(key), "seconds": 30]),
                completion: retried.record)

            let parts = CompletionRecorder<Void>()
            let stream = CompletionRecorder<Result<Void, DataTransferError>>()
            transfer.stream(
                Endpoint<Data>(path: "trickle", queryParameters: ["interval": 50]), decoding: .bytes, on: nil,
                receive: { _ in parts.record(()) }, completion: stream.record)

            let events = CompletionRecorder<ServerSentEvent>()
            let source = CompletionRecorder<Result<Void, NetworkError>>()
            let eventSource = harness.network.eventSource(
                endpoint: Endpoint<Void>(path: "sse", queryParameters: ["count": 100, "interval": 500]),
                onEvent: events.record, completion: source.record)
            defer { eventSource.cancel() }

            #expect(await downloadProgress.first() != nil)
            #expect(await parts.first() != nil)
            #expect(await events.first() != nil)
            // The 503 has come back and the retry waits its 30 seconds.
            for _ in 0..<200 where harness.server.state.attemptCount(for: key) == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(200))

            let cancelledAt = ContinuousClock.now
            harness.manager.cancelAllRequests()
            for recorder in [slow, download, retried, stream] {
                let result = try #require(await recorder.first(timeout: 5))
                #expect(result.failure?.isCancelled == true, "\(result)")
            }
            let sourceResult = try #require(await source.first(timeout: 5))
            #expect(sourceResult.failure?.isCancelled == true, "\(sourceResult)")
            #expect(ContinuousClock.now - cancelledAt < .seconds(3))

            let eventsAtEnd = events.callCount
            try await transfer.request(Endpoint<Void>(path: "echo"))
            try await Task.sleep(for: .milliseconds(600))
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(events.callCount == eventsAtEnd, "no event after the end")
            #expect(harness.server.state.attemptCount(for: key) == 1, "not retried")
            for recorder in [slow, download, retried, stream] {
                #expect(recorder.callCount == 1)
            }
            #expect(source.callCount == 1)
        }
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
