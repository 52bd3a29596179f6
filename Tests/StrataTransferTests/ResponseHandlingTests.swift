import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataSession
import StrataTesting
import StrataTransfer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private struct Member: Decodable, Sendable { let id: Int }
private struct TakenError: Decodable, Error { let code: String }

/// Writes down each request's end as a monitor is told it: the path and the outcome's error.
private final class FinishMonitor: EventMonitor {
    struct Finish: Sendable {
        let path: String
        let error: (any Error)?
    }

    let finishes = CompletionRecorder<Finish>()

    func requestFinished(_ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics) {
        finishes.record(Finish(path: request.url?.path ?? "", error: outcome.error))
    }

    /// The ends told so far, once `count` have been, and a little longer in case more come.
    func settled(_ count: Int) async throws -> [Finish] {
        let deadline = ContinuousClock.now + .seconds(10)
        while finishes.callCount < count, .now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(50))
        return finishes.values
    }
}

/// A monitor sees a request end as its caller did: a body that does not decode, or an error the
/// resolver turned into the app's, is the failure in ``EventMonitor/requestFinished(_:for:id:metrics:)``,
/// on the callback API, the async API and streams, exactly once.
@Suite struct ResponseHandlingTests {
    /// The stub answers only while it lives: the suite keeps it.
    private let stub = URLProtocolStub { request in
        switch request.url?.path ?? "" {
        case "/user": return .response(statusCode: 200, body: Data(#"{"id": 7}"#.utf8))
        case "/garbled": return .response(statusCode: 200, body: Data("<html>oops</html>".utf8))
        case "/taken": return .response(statusCode: 422, body: Data(#"{"code": "taken"}"#.utf8))
        case "/down": return .response(statusCode: 503, body: Data("busy".utf8))
        case "/lines": return .response(statusCode: 200, body: Data("{\"id\": 1}\nnot json\n{\"id\": 3}\n".utf8))
        case "/token": return .response(statusCode: 200, body: Data("t".utf8))
        case "/slow": return .response(statusCode: 200, body: Data(#"{"id": 7}"#.utf8), delay: 2)
        default: return .response(statusCode: 404)
        }
    }

    private func stack(
        adapters: [any RequestAdapter] = [], monitors: [any EventMonitor] = []
    ) -> (DefaultDataTransferService, FinishMonitor) {
        let monitor = FinishMonitor()
        let manager = SessionManager(
            transport: URLSessionTransport(configuration: stub.makeSessionConfiguration()),
            adapters: adapters,
            monitors: [monitor] + monitors
        )
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: stub.baseURL), sessionManager: manager)
        return (
            DefaultDataTransferService(
                networkService: network, errorResolver: JSONErrorBodyResolver<TakenError>(),
                completionQueue: DispatchQueue(label: "completions")),
            monitor
        )
    }

    @Test func aBodyThatDoesNotDecodeEndsAsTheParsingFailureTheCallerGot() async throws {
        let (transfer, monitor) = stack()
        let recorder = CompletionRecorder<Result<Member, DataTransferError>>()
        transfer.request(with: Endpoint<Member>(path: "garbled"), completion: recorder.record)
        guard case .failure(.parsing) = try #require(await recorder.first()) else {
            Issue.record("expected a parsing failure")
            return
        }
        let finishes = try await monitor.settled(1)
        #expect(finishes.count == 1)
        guard case DataTransferError.parsing(_, let body)? = finishes.first?.error else {
            Issue.record("the monitor saw \(String(describing: finishes.first?.error))")
            return
        }
        #expect(body == Data("<html>oops</html>".utf8))
    }

    @Test func aDecodedBodyEndsWithoutError() async throws {
        let (transfer, monitor) = stack()
        #expect(try await transfer.request(Endpoint<Member>(path: "user")).id == 7)
        let finishes = try await monitor.settled(1)
        #expect(finishes.count == 1)
        #expect(finishes.first?.error == nil)
    }

    @Test func theAsyncAPIReportsADecodingFailureToo() async throws {
        let (transfer, monitor) = stack()
        await #expect(throws: DataTransferError.self) { try await transfer.request(Endpoint<Member>(path: "garbled")) }
        let finishes = try await monitor.settled(1)
        #expect(finishes.count == 1)
        guard case DataTransferError.parsing? = finishes.first?.error else {
            Issue.record("the monitor saw \(String(describing: finishes.first?.error))")
            return
        }
    }

    @Test func anErrorTheResolverTurnedIntoTheAppsIsTheOneTheMonitorSees() async throws {
        let (transfer, monitor) = stack()
        let recorder = CompletionRecorder<Result<Member, DataTransferError>>()
        transfer.request(with: Endpoint<Member>(path: "taken"), completion: recorder.record)
        _ = await recorder.first()
        let finishes = try await monitor.settled(1)
        #expect(finishes.count == 1)
        guard case DataTransferError.resolvedNetworkFailure(let error as TakenError)? = finishes.first?.error else {
            Issue.record("the monitor saw \(String(describing: finishes.first?.error))")
            return
        }
        #expect(error.code == "taken")
    }

    @Test func aFailureTheResolverLeftIsTheManagersOwn() async throws {
        let (transfer, monitor) = stack()
        await #expect(throws: DataTransferError.self) { try await transfer.request(Endpoint<Member>(path: "down")) }
        let finishes = try await monitor.settled(1)
        #expect(finishes.count == 1)
        guard case SessionError.unacceptableStatusCode(503)? = finishes.first?.error else {
            Issue.record("the monitor saw \(String(describing: finishes.first?.error))")
            return
        }
    }

    @Test func aMultipartRequestEncodedOnAQueueOfItsOwnReportsToo() async throws {
        let (transfer, monitor) = stack()
        var form = MultipartFormData()
        form.append(Data("hello".utf8), name: "note", fileName: "note.txt")
        let endpoint = Endpoint<Member>(path: "garbled", method: .post, bodyEncoding: MultipartEncoding(form: form))
        await #expect(throws: DataTransferError.self) { try await transfer.request(endpoint) }
        let finishes = try await monitor.settled(1)
        guard case DataTransferError.parsing? = finishes.first?.error else {
            Issue.record("the monitor saw \(String(describing: finishes.first?.error))")
            return
        }
    }

    /// An adapter that sends a request of its own while the caller's starts (a token refresh)
    /// does not take the caller's report: each request ends as it did, the refresh at once.
    @Test func aRequestAnAdapterSendsMeanwhileEndsAsItsOwn() async throws {
        let holder = Locked<(any NetworkSessionManager)?>(nil)
        let (transfer, monitor) = stack(adapters: [RefreshingAdapter(manager: holder)])
        holder.withLock { $0 = (transfer.networkService as? DefaultNetworkService)?.sessionManager }
        await #expect(throws: DataTransferError.self) { try await transfer.request(Endpoint<Member>(path: "garbled")) }
        let finishes = try await monitor.settled(2)
        #expect(finishes.map(\.path) == ["/token", "/garbled"])
        #expect(finishes.first?.error == nil)
        guard case DataTransferError.parsing? = finishes.last?.error else {
            Issue.record("the monitor saw \(String(describing: finishes.last?.error))")
            return
        }
    }

    @Test func aStreamedLineThatDoesNotDecodeEndsAsTheParsingFailure() async throws {
        let (transfer, monitor) = stack()
        var ids: [Int] = []
        await #expect(throws: DataTransferError.self) {
            for try await user in transfer.stream(Endpoint<Member>(path: "lines")) {
                ids.append(user.id)
            }
        }
        #expect(ids == [1])
        let finishes = try await monitor.settled(1)
        #expect(finishes.count == 1)
        guard case DataTransferError.parsing? = finishes.first?.error else {
            Issue.record("the monitor saw \(String(describing: finishes.first?.error))")
            return
        }
    }

    @Test func aRequestCancelledBeforeItsAnswerEndsOnceAsCancelled() async throws {
        let (transfer, monitor) = stack()
        let recorder = CompletionRecorder<Result<Member, DataTransferError>>()
        transfer.request(with: Endpoint<Member>(path: "slow"), completion: recorder.record).cancel()
        #expect(try #require(await recorder.first()).isCancelled)
        let finishes = try await monitor.settled(1)
        #expect(finishes.count == 1)
        #expect((finishes.first?.error as? URLError)?.code == .cancelled)
    }

    /// A layer that said it would report and never does lets the monitors hear the request as the
    /// manager ended it, once the report is gone.
    @Test func aReportDroppedUnsaidLetsTheManagersOutcomeThrough() async throws {
        let (transfer, monitor) = stack()
        let manager = try #require((transfer.networkService as? DefaultNetworkService)?.sessionManager)
        let recorder = CompletionRecorder<Int>()
        var handling: ResponseHandling? = ResponseHandling()
        _ = handling?.run {
            manager.request(URLRequest(url: stub.baseURL.appendingPathComponent("user"))) { _, response, _ in
                recorder.record((response as? HTTPURLResponse)?.statusCode ?? 0)
            }
        }
        #expect(await recorder.first() == 200)
        try await Task.sleep(for: .milliseconds(100))
        #expect(monitor.finishes.callCount == 0)
        handling = nil
        let finishes = try await monitor.settled(1)
        #expect(finishes.count == 1)
        #expect(finishes.first?.error == nil)
    }

    /// A lone request's end is told on the thread that handed the caller its result, after the
    /// caller's completion has returned, as the event queue's work: no thread is woken for it.
    /// Requests overlapping, each end is still told once, one at a time.
    @Test func aLoneRequestsEndIsToldOnTheThreadThatCompletedItAfterTheCaller() async throws {
        let monitor = ThreadMonitor()
        let (transfer, _) = stack(monitors: [monitor])
        for round in 1...3 {
            monitor.completedOn.withLock { $0 = nil }
            let recorder = CompletionRecorder<Bool>()
            transfer.request(with: Endpoint<Member>(path: "user")) { result in
                Thread.sleep(forTimeInterval: 0.02)  // an end told meanwhile, elsewhere, would be seen
                monitor.completedOn.withLock { $0 = pthread_self() }
                recorder.record((try? result.get()) != nil)
            }
            #expect(await recorder.first() == true)
            #expect(try await monitor.settled(round).last?.afterTheCallerHere == true)
        }
        let recorders = (0..<20).map { _ in CompletionRecorder<Bool>() }
        for recorder in recorders {
            transfer.request(with: Endpoint<Member>(path: "user")) { result in
                recorder.record((try? result.get()) != nil)
            }
        }
        for recorder in recorders { #expect(await recorder.first() == true) }
        #expect(try await monitor.settled(23).count == 23)
        #expect(monitor.overlapped.value == false)
    }

    /// A monitor that takes its time delays no caller: three requests one after another complete
    /// (each within the recorder's ten seconds) while the first end told is still held, and the
    /// ends come once it lets go.
    @Test func aSlowMonitorNeverDelaysTheCallersCompletion() async throws {
        let gate = DispatchSemaphore(value: 0)
        let monitor = ThreadMonitor(gate: gate)
        let (transfer, _) = stack(monitors: [monitor])
        for _ in 0..<3 {
            let recorder = CompletionRecorder<Bool>()
            transfer.request(with: Endpoint<Member>(path: "user")) { result in
                recorder.record((try? result.get()) != nil)
            }
            #expect(await recorder.first() == true)
        }
        #expect(try await monitor.settled(0).isEmpty)
        for _ in 0..<3 { gate.signal() }
        #expect(try await monitor.settled(3).count == 3)
        #expect(monitor.overlapped.value == false)
    }

    /// A monitor whose end hook starts another request through the same service and waits for
    /// it, as the end is told in place: the inner request completes (its own end is queued behind
    /// the hook), and every end is told once.
    @Test func aMonitorThatSendsARequestFromItsEndHookAndWaitsForItDoesNotHang() async throws {
        let monitor = ReentrantMonitor()
        let (transfer, _) = stack(monitors: [monitor])
        monitor.transfer.withLock { $0 = transfer }
        let recorder = CompletionRecorder<Bool>()
        transfer.request(with: Endpoint<Member>(path: "user")) { result in recorder.record((try? result.get()) != nil) }
        #expect(await recorder.first() == true)
        let deadline = ContinuousClock.now + .seconds(10)
        while monitor.inner.value.count < 1 || monitor.ends.value < 2, .now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(monitor.inner.value == [true])
        try await Task.sleep(for: .milliseconds(50))
        #expect(monitor.ends.value == 2)
    }
}

/// Writes down, for each request's end it is told, whether the caller's completion had already
/// run on the same thread; and whether two of its hooks ever ran at once.
private final class ThreadMonitor: EventMonitor {
    struct Told: Sendable {
        /// The caller's completion ran on this thread, before the end was told.
        let afterTheCallerHere: Bool
    }

    /// The thread the test's last completion ran on, set as it ends.
    let completedOn = Locked<pthread_t?>(nil)
    let overlapped = Locked(false)
    private let told = Locked<[Told]>([])
    private let running = Locked(0)
    /// What each hook waits for (at most a minute), if anything; otherwise it takes 2 ms.
    private let gate: DispatchSemaphore?

    init(gate: DispatchSemaphore? = nil) {
        self.gate = gate
    }

    func requestFinished(_ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics) {
        let here = completedOn.value.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        let alongside = running.withLock { running in
            running += 1
            return running > 1
        }
        if alongside { overlapped.withLock { $0 = true } }
        if let gate {
            // Long enough that only the test lets it go: in a loaded parallel run three requests
            // one after another took more than ten seconds (the test's task waiting for a thread),
            // and a hook that gave up then was taken for an end told too early.
            _ = gate.wait(timeout: .now() + 60)
        } else {
            Thread.sleep(forTimeInterval: 0.002)
        }
        running.withLock { $0 -= 1 }
        told.withLock { $0.append(Told(afterTheCallerHere: here)) }
    }

    /// The ends told so far, once `count` have been.
    func settled(_ count: Int) async throws -> [Told] {
        let deadline = ContinuousClock.now + .seconds(10)
        while told.value.count < count, .now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        return told.value
    }
}

/// Sends a token request of its own, from inside `adapt`, before letting any other request go.
private struct RefreshingAdapter: RequestAdapter {
    let manager: Locked<(any NetworkSessionManager)?>

    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        guard let manager = manager.value, let url = request.url, url.path != "/token" else {
            return completion(.success(request))
        }
        manager.request(URLRequest(url: url.deletingLastPathComponent().appendingPathComponent("token"))) { _, _, _ in
            completion(.success(request))
        }
    }
}

extension Result where Failure == DataTransferError {
    fileprivate var isCancelled: Bool {
        if case .failure(let error) = self { return error.isCancelled }
        return false
    }
}

/// In the end hook of the first request it sees, sends one more through `transfer` and waits (at
/// most five seconds) for its completion.
private final class ReentrantMonitor: EventMonitor {
    let transfer = Locked<DefaultDataTransferService?>(nil)
    /// Whether each inner request completed, with a value, in time.
    let inner = Locked<[Bool]>([])
    let ends = Locked(0)

    func requestFinished(_ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics) {
        let first = ends.withLock { ends in
            ends += 1
            return ends == 1
        }
        guard first, let transfer = transfer.value else { return }
        let done = DispatchSemaphore(value: 0)
        let succeeded = Locked(false)
        transfer.request(with: Endpoint<Member>(path: "user")) { result in
            succeeded.withLock { $0 = (try? result.get()) != nil }
            done.signal()
        }
        let inTime = done.wait(timeout: .now() + 5) == .success
        inner.withLock { $0.append(inTime && succeeded.value) }
    }
}
