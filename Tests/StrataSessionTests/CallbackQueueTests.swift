import Dispatch
import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The caller's closures never run on the session's delegate queue: one that blocks holds up no
/// other request of the same manager.
///
/// Each test blocks a thread of the global pool for a moment (as a careless closure would); they run
/// one at a time, so that together they never take the whole pool (two threads on two cores) from
/// the tests running beside them.
@Suite(.serialized) struct CallbackQueueTests {
    private let stub = URLProtocolStub { request in
        request.url?.path == "/fail" ? .response(statusCode: 503) : .response(body: Data(count: 64 * 1024), chunks: 4)
    }

    @Test func aRetrierThatBlocksHoldsUpNoOtherRequest() async throws {
        let gate = DispatchSemaphore(value: 0)
        let blocking = CountingRetrier { _ in
            gate.wait()
            return .doNotRetry
        }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), retriers: [blocking])
        let (blocked, _) = send(URLRequest(url: stub.baseURL.appendingPathComponent("fail")), through: manager)
        while blocking.failures.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        let (other, _) = send(URLRequest(url: stub.baseURL.appendingPathComponent("ok")), through: manager)
        #expect(try #require(await other.first(timeout: 5)).error == nil)
        gate.signal()
        #expect(try #require(await blocked.first(timeout: 5)).error as? SessionError == .unacceptableStatusCode(503))
    }

    /// A transport that, like URLSession, reports everything from one serial queue: upload
    /// progress, then the outcome.
    private struct SerialQueueTransport: Transport {
        let queue = DispatchQueue(label: "strata.test.delegate")
        func send(
            _ attempt: TransportAttempt, completion: @escaping @Sendable (TransportOutcome) -> Void
        )
            -> any NetworkCancellable
        {
            queue.async {
                attempt.uploadProgress?(50, 100)
                attempt.uploadProgress?(100, 100)
                let url = attempt.request.url ?? URL(fileURLWithPath: "/")
                let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
                completion(TransportOutcome(response: response))
            }
            return CancellationToken()
        }
    }

    @Test func aProgressClosureThatBlocksHoldsUpNoOtherRequest() async throws {
        let gate = DispatchSemaphore(value: 0)
        let reports = Locked<[Int64]>([])
        let manager = SessionManager(transport: SerialQueueTransport())
        let (blocked, _) = send(
            URLRequest(url: stub.baseURL), through: manager,
            options: RequestOptions(uploadProgress: { progress in
                let count = reports.withLock { reports in
                    reports.append(progress.completedUnitCount)
                    return reports.count
                }
                if count == 1 { gate.wait() }
            }))
        let (other, _) = send(URLRequest(url: stub.baseURL), through: manager)
        #expect(try #require(await other.first(timeout: 5)).error == nil)
        #expect(try #require(await blocked.first(timeout: 5)).error == nil)
        gate.signal()
        for _ in 0..<200 where reports.value.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(reports.value == [50, 100])
    }

    /// A monitor that blocks until the test lets it go: requests complete meanwhile, since hooks run
    /// on the event queue, not where the transport delivers.
    @Test func aBlockedMonitorHoldsUpNoRequest() async throws {
        struct Blocked: EventMonitor {
            let gate: DispatchSemaphore
            func requestSent(_ request: URLRequest, id: RequestID, attempt: Int) {
                gate.wait()
            }
        }
        let gate = DispatchSemaphore(value: 0)
        let manager = SessionManager(
            transport: SerialQueueTransport(), monitors: [Blocked(gate: gate)])
        for _ in 0..<3 {
            let (recorder, _) = send(
                URLRequest(url: URL(string: "https://api.strata.test/") ?? URL(fileURLWithPath: "/")),
                through: manager)
            #expect(try #require(await recorder.first(timeout: 5)).error == nil)
        }
        for _ in 0..<3 {
            gate.signal()
        }
    }

}
