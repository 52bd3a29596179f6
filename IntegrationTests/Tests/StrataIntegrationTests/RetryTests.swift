import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// RetryPolicy against the loopback server: attempts counted by the server, delays measured.
@Suite struct RetryTests {
    private func transfer(_ server: TestServer, _ policy: RetryPolicy) -> DefaultDataTransferService {
        DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
                sessionManager: SessionManager.underTest(retriers: [policy])
            ),
            completionQueue: .global()
        )
    }

    private func timedRequest(
        _ transfer: DefaultDataTransferService,
        _ endpoint: Endpoint<Void>
    ) async -> (error: DataTransferError?, elapsed: Duration) {
        let started = ContinuousClock.now
        do {
            try await transfer.request(endpoint)
            return (nil, ContinuousClock.now - started)
        } catch {
            return (error, ContinuousClock.now - started)
        }
    }

    @Test(arguments: [(503, false), (429, false), (429, true)])
    func retryAfterIsHonouredInSecondsAndAsAnHTTPDate(status: Int, asDate: Bool) async throws {
        try await Harness.with { (harness) async throws in
            let key = "ra-\(status)-\(asDate)"
            let outcome = await timedRequest(
                transfer(harness.server, RetryPolicy()),
                Endpoint(
                    path: "retry-after/\(status)",
                    queryParameters: ["key": .string(key), "seconds": 2, "date": asDate ? "1" : "0"])
            )
            #expect(outcome.error == nil)
            #expect(harness.server.state.attemptCount(for: key) == 2)
            // An HTTP date has whole seconds, so "2 s from now" may arrive as a little over 1 s.
            #expect(outcome.elapsed >= .seconds(asDate ? 1 : 2))
            #expect(outcome.elapsed < .seconds(4))
        }
    }

    /// A body read from a stream of the caller's goes once: a retry would send what is left of
    /// it, nothing (over `URLSession` the server stored an empty body and answered `200`). The
    /// first failure is the outcome; a body from a file or in memory is sent again whole.
    @Test func aBodyFromAStreamIsNotSentAgainOnARetry() async throws {
        let asStream = Changing { request in
            if request.value(forHTTPHeaderField: "X-As-Stream") != nil, let body = request.httpBody {
                request.httpBody = nil
                request.httpBodyStream = InputStream(data: body)
            }
        }
        try await Harness.with { (harness) async throws in
            let manager = SessionManager.underTest(adapters: [asStream], retriers: [RetryPolicy(initialDelay: 0.05)])
            let network = DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: harness.server.baseURL, timeoutInterval: 10),
                sessionManager: manager)
            for (key, streamed) in [("streamed", true), ("in-memory", false)] {
                let endpoint = Endpoint<Void>(
                    path: "retry-after/503", method: .put, headerParameters: streamed ? ["X-As-Stream": "1"] : [:],
                    queryParameters: ["key": .string(key), "seconds": 0],
                    bodyEncoding: UploadEncoding.data(Data(TestReply.generatedBody(size: 1_000))))
                let result: Result<NetworkResponse, NetworkError>
                do throws(NetworkError) {
                    result = .success(try await network.request(endpoint: endpoint))
                } catch {
                    result = .failure(error)
                }
                if streamed {
                    #expect(result.failureStatus == 503, "\(result)")
                    #expect(harness.server.state.attemptCount(for: key) == 1)
                } else {
                    #expect(result.failureStatus == nil, "\(result)")
                    #expect(harness.server.state.attemptCount(for: key) == 2)
                }
            }
        }
    }

    @Test func a500IsRetriedWithExponentialBackoff() async throws {
        try await Harness.with { (harness) async throws in
            let policy = RetryPolicy(maximumAttempts: 4, initialDelay: 0.2, multiplier: 2, jitter: 0)
            let outcome = await timedRequest(
                transfer(harness.server, policy),
                Endpoint(path: "retry-after/500", queryParameters: ["key": "backoff", "failures": 2, "header": "0"])
            )
            #expect(outcome.error == nil)
            #expect(harness.server.state.attemptCount(for: "backoff") == 3)
            #expect(outcome.elapsed >= .milliseconds(600))  // 0.2 s, then 0.4 s
            #expect(outcome.elapsed < .seconds(3))
        }
    }

    /// Resetting a `Progress` traps on Linux, so each attempt reports through a new one, which
    /// runs from zero to the whole body.
    @Test func eachAttemptOfARetriedUploadReportsANewProgress() async throws {
        try await Harness.with { (harness) async throws in
            let bytes = Data(TestReply.generatedBody(size: 200_000))
            let reports = CompletionRecorder<(Progress, Int64, Int64)>()  // kept alive, so identities are distinct
            try await transfer(harness.server, RetryPolicy(initialDelay: 0.05, jitter: 0)).request(
                Endpoint<Void>(
                    path: "retry-after/503",
                    method: .put,
                    queryParameters: ["key": "upload-progress", "failures": 2, "header": "0"],
                    bodyEncoding: UploadEncoding.data(bytes),
                    options: RequestOptions(
                        uploadProgress: { reports.record(($0, $0.completedUnitCount, $0.totalUnitCount)) })
                )
            )
            #expect(harness.server.state.attemptCount(for: "upload-progress") == 3)
            let perAttempt = Dictionary(grouping: reports.values) { ObjectIdentifier($0.0) }
            #expect(perAttempt.count == 3)
            for progress in perAttempt.values {
                let completed = progress.map(\.1)
                #expect(completed == completed.sorted())
                #expect(progress.last?.1 == Int64(bytes.count) && progress.last?.2 == Int64(bytes.count))
            }
        }
    }

    @Test func retriesStopAfterTheMaximumWithTheLastFailure() async throws {
        try await Harness.with { (harness) async throws in
            let policy = RetryPolicy(maximumAttempts: 3, initialDelay: 0.05, jitter: 0)
            let outcome = await timedRequest(
                transfer(harness.server, policy),
                Endpoint(path: "retry-after/503", queryParameters: ["key": "exhaust", "failures": 10, "header": "0"])
            )
            guard case .networkFailure(.unacceptableStatusCode(let response))? = outcome.error else {
                Issue.record("expected the last 503, got \(String(describing: outcome.error))")
                return
            }
            #expect(response.statusCode == 503)
            #expect(harness.server.state.attemptCount(for: "exhaust") == 3)
        }
    }

    @Test func aConnectionResetIsRetried() async throws {
        try await Harness.with { (harness) async throws in
            let outcome = await timedRequest(
                transfer(harness.server, RetryPolicy(initialDelay: 0.05)),
                Endpoint(path: "flaky-close", queryParameters: ["key": "reset", "failures": 2])
            )
            #expect(outcome.error == nil)
            #expect(harness.server.state.attemptCount(for: "reset") == 3)
        }
    }

    @Test func aPostIsNotRetriedByDefault() async throws {
        try await Harness.with { (harness) async throws in
            let outcome = await timedRequest(
                transfer(harness.server, RetryPolicy(initialDelay: 0.05)),
                Endpoint(path: "retry-after/503", method: .post, queryParameters: ["key": "post", "header": "0"])
            )
            #expect(outcome.error != nil)
            #expect(harness.server.state.attemptCount(for: "post") == 1)
        }
    }

    @Test func aRequestCancelledWhileWaitingToRetryIsNotRetried() async throws {
        try await Harness.with { (harness) async throws in
            try await expectCancellation(
                of: Endpoint(path: "retry-after/503", queryParameters: ["key": "cancel", "seconds": 2]),
                through: transfer(harness.server, RetryPolicy()), settle: .milliseconds(2_500))
            #expect(harness.server.state.attemptCount(for: "cancel") == 1)
        }
    }
}
