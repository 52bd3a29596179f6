import Dispatch
import Foundation
import NIOConcurrencyHelpers
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Strata's own work — deadlines, redirects, retry delays, the hand-over to the completion — does
/// not wait for threads a caller can block.
///
/// Each of 64 callers is a `DispatchQueue.global()` work item that starts a request and then
/// blocks on a semaphore until its completion, as command-line tools and server code written
/// before async/await do; the global queue's threads are all theirs, and libdispatch adds one about
/// once a second. Every request must still end when it would with no caller blocked: its deadline
/// fires, its answer arrives, within 100 ms.
@Suite(.serialized) struct BlockedCallerTests {
    /// A kind of request and how long it takes with nothing in its way.
    struct Kind: Sendable {
        let name: String
        let path: String
        let query: [String: ParameterValue]
        let timeout: TimeInterval
        /// Whether it ends with `.timedOut` rather than a value.
        let timesOut: Bool
    }

    /// Deadlines from 0.5 to 2 s on a server that never answers; answers after 300 ms, straight,
    /// after a redirect, and after a retry that waits out a one-second `Retry-After` (its key made
    /// the caller's own, so that each caller's first attempt fails). The requests that never get an
    /// answer go to the server's other listener, so that they hold none of the connections the
    /// answered ones need: the pool would otherwise make those wait, blocked callers or not.
    static func kinds(key: String) -> [Kind] {
        [0.5, 0.75, 1, 1.25, 1.5, 1.75, 2].map {
            Kind(name: "deadline \($0) s", path: "fault/no-answer", query: [:], timeout: $0, timesOut: true)
        } + [
            Kind(name: "answer after 300 ms", path: "delay/300", query: [:], timeout: 10, timesOut: false),
            Kind(
                name: "redirect, then answer after 300 ms", path: "redirect/302", query: ["to": "/delay/300"],
                timeout: 10, timesOut: false),
            Kind(
                name: "503, Retry-After 1 s, then 200", path: "retry-after/503",
                query: ["key": .string(key), "failures": "1", "seconds": "1"], timeout: 10, timesOut: false),
        ]
    }

    /// How long each caller's request took, by kind, and how each ended.
    final class Timings: Sendable {
        private let state = NIOLockedValueBox<[String: [Double]]>([:])
        private let problems = NIOLockedValueBox<[String]>([])

        func add(_ kind: Kind, _ seconds: Double, _ result: Result<Void, DataTransferError>) {
            state.withLockedValue { $0[kind.name, default: []].append(seconds) }
            switch result {
            case .success where kind.timesOut: problems.withLockedValue { $0.append("\(kind.name) answered") }
            case .failure(.networkFailure(.timedOut)) where kind.timesOut: break
            case .failure(let error) where !kind.timesOut:
                problems.withLockedValue { $0.append("\(kind.name) failed: \(error)") }
            default: break
            }
        }

        var byKind: [String: [Double]] { state.withLockedValue { $0 } }
        var issues: [String] { problems.withLockedValue { $0 } }
    }

    /// Runs `callers` requests over `manager` against `server` and returns their timings: each from
    /// a `DispatchQueue.global()` work item that blocks until its completion when `blocking`, else
    /// from a thread of its own that does not wait. Runs on a thread of its own, synchronously, so
    /// that nothing in it needs the global queue; returns when every request has completed.
    static func run(callers: Int, blocking: Bool, server: TestServer, manager: SessionManager, key: String) -> Timings {
        let completions = DispatchQueue(label: "BlockedCallerTests.completions")
        func transfer(_ base: URL) -> DefaultDataTransferService {
            DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: base), sessionManager: manager),
                completionQueue: completions)
        }
        let (answering, silent) = (transfer(server.baseURL), transfer(server.otherOriginURL))
        let kinds = Self.kinds(key: key)
        let timings = Timings()
        let all = DispatchGroup()
        for index in 0..<callers {
            all.enter()
            let kind = kinds[index % kinds.count]
            let caller: @Sendable () -> Void = {
                let done = DispatchSemaphore(value: 0)
                let started = DispatchTime.now().uptimeNanoseconds
                var query = kind.query
                if case .string(let key)? = query["key"] {
                    query["key"] = .string("\(key)-\(index)")
                }
                let endpoint = Endpoint<Void>(path: kind.path, queryParameters: query, timeoutInterval: kind.timeout)
                (kind.timesOut ? silent : answering).request(with: endpoint) { result in
                    timings.add(kind, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9, result)
                    done.signal()
                    all.leave()
                }
                if blocking {
                    done.wait()
                }
            }
            if blocking {
                DispatchQueue.global().async(execute: caller)
            } else {
                caller()
            }
        }
        all.wait()
        return timings
    }

    /// Blocks the threads of `DispatchQueue.global()` as 64 callers waiting on semaphores do;
    /// returns what lets them go, and waits until they have.
    static func blockGlobalQueue() -> @Sendable () -> Void {
        let release = DispatchSemaphore(value: 0)
        let blocked = DispatchGroup()
        for _ in 0..<64 {
            blocked.enter()
            DispatchQueue.global().async {
                release.wait()
                blocked.leave()
            }
        }
        return {
            for _ in 0..<64 { release.signal() }
            blocked.wait()
        }
    }

    /// Runs `body` on a thread of its own and waits for it without holding a thread of the global
    /// queue meanwhile (the Swift executor's on Linux).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test func sixtyFourBlockedCallersDelayNoDeadlineAndNoCompletion() async throws {
        try await Harness.with { (harness) async throws in
            let server = harness.server
            let manager = SessionManager.underTest(
                retriers: [RetryPolicy(maximumAttempts: 2, retryableURLErrorCodes: [])])
            let baseline = await Self.onThread {
                Self.run(callers: 20, blocking: false, server: server, manager: manager, key: "baseline")
            }
            let blocked = await Self.onThread {
                Self.run(callers: 64, blocking: true, server: server, manager: manager, key: "blocked")
            }
            #expect(baseline.issues.isEmpty, "\(baseline.issues)")
            #expect(blocked.issues.isEmpty, "\(blocked.issues)")
            var lines: [String] = []
            for kind in Self.kinds(key: "") {
                let unblocked = baseline.byKind[kind.name] ?? []
                let times = blocked.byKind[kind.name] ?? []
                let worstUnblocked = unblocked.max() ?? 0
                let worst = times.max() ?? 0
                lines.append(
                    "\(kind.name): none blocked \(Self.ms(unblocked.min() ?? 0))-\(Self.ms(worstUnblocked)), "
                        + "64 blocked \(Self.ms(times.min() ?? 0))-\(Self.ms(worst)) ms over \(times.count)")
                #expect(!times.isEmpty)
                #expect(
                    worst <= worstUnblocked + 0.1,
                    "\(kind.name): \(Self.ms(worst)) ms with 64 callers blocked, \(Self.ms(worstUnblocked)) ms with none"
                )
                if kind.timesOut {
                    #expect((times.min() ?? 0) >= kind.timeout - 0.01, "\(kind.name): a deadline fired early")
                }
            }
            print("blocked callers over \(TestTransport.current):\n  " + lines.joined(separator: "\n  "))
        }
    }

    /// An adapter that, on a request's second attempt, waits on a semaphore for a request of its
    /// own through the same stack, as an app that fetches a token synchronously does: the wait
    /// holds one of Strata's lanes, and the nested request needs another for its answer.
    struct WaitingAdapter: RequestAdapter {
        let transfer: NIOLockedValueBox<DefaultDataTransferService?>
        /// The URLs adapted once, blocked now, most blocked at once, waits that ran out.
        let seen = NIOLockedValueBox<Set<String>>([])
        let blocked = NIOLockedValueBox((now: 0, most: 0))
        let ranOut = NIOLockedValueBox(0)

        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            let url = request.url?.absoluteString ?? ""
            guard request.value(forHTTPHeaderField: "X-Nested") == nil,
                !seen.withLockedValue({ $0.insert(url).inserted }),
                let transfer = transfer.withLockedValue({ $0 })
            else { return completion(.success(request)) }
            blocked.withLockedValue { $0 = (now: $0.now + 1, most: max($0.most, $0.now + 1)) }
            let answered = DispatchSemaphore(value: 0)
            transfer.request(with: Endpoint<Void>(path: "echo", headerParameters: ["X-Nested": "1"])) { _ in
                answered.signal()
            }
            if answered.wait(timeout: .now() + 10) == .timedOut {
                ranOut.withLockedValue { $0 += 1 }
            }
            blocked.withLockedValue { $0.now -= 1 }
            completion(.success(request))
        }
    }

    /// Three hundred requests are answered `503` with `Retry-After: 1`, and on their retry, which
    /// comes for all of them at once, an adapter blocks its lane until a request of its own is
    /// answered. Lanes are replaced while fewer than 128 run (`WorkLanes.limit`), so the adapters
    /// soon hold all of them; the nested requests' answers, which end requests, run beyond the
    /// limit, free a lane each, and every request succeeds. Before, those answers waited for a
    /// lane like any work, as did every deadline: the process hung for good at 300 (at 150 it
    /// went on).
    @Test func adaptersThatWaitForARequestOfTheSameStackHoldEveryLaneAndAllSucceed() async throws {
        let transfer = NIOLockedValueBox<DefaultDataTransferService?>(nil)
        let adapter = WaitingAdapter(transfer: transfer)
        try await Harness.with(
            adapters: [adapter], retriers: [RetryPolicy(maximumAttempts: 2, retryableURLErrorCodes: [])]
        ) { harness in
            transfer.withLockedValue { $0 = harness.transfer }
            let outcomes = await Self.onThread { () -> (ended: Bool, failures: [String]) in
                let failures = NIOLockedValueBox<[String]>([])
                let all = DispatchGroup()
                for index in 0..<300 {
                    all.enter()
                    let query: [String: ParameterValue] = [
                        "key": .string("waiting-adapter-\(index)"), "failures": "1", "seconds": "1",
                    ]
                    harness.transfer.request(with: Endpoint<Void>(path: "retry-after/503", queryParameters: query)) {
                        if case .failure(let error) = $0 { failures.withLockedValue { $0.append("\(error)") } }
                        all.leave()
                    }
                }
                let ended = all.wait(timeout: .now() + 30) == .success
                return (ended, failures.withLockedValue { $0 })
            }
            let most = adapter.blocked.withLockedValue { $0.most }
            print("adapters waiting for a request of their own over \(TestTransport.current): at most \(most) at once")
            #expect(outcomes.ended)
            #expect(outcomes.failures.isEmpty, "\(outcomes.failures.prefix(3))")
            #expect(adapter.ranOut.withLockedValue { $0 } == 0)
            #expect(adapter.seen.withLockedValue { $0.count } == 300)
            // The adapters held every lane the limit allows at some point.
            #expect(most >= 100)
        }
    }

    /// Adapters that hold every lane Strata may start (each blocks on a redirect's next request
    /// until the test lets it go) delay no deadline: a request to a server that never answers ends
    /// with `.timedOut` at its half second, one that is answered ends with its value, and one
    /// whose token refresh never calls back fails at the refresh's half-second timeout, while all
    /// of them are held. Before, each waited for a lane until the adapters returned.
    @Test func deadlinesAndAnswersEndTheirRequestsWhileAdaptersHoldEveryLane() async throws {
        struct Holding: RequestAdapter {
            let release: DispatchSemaphore
            let held: NIOLockedValueBox<Int>
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
                if request.url?.path == "/echo/held" {
                    held.withLockedValue { $0 += 1 }
                    release.wait()
                }
                completion(.success(request))
            }
        }
        let release = DispatchSemaphore(value: 0)
        let held = NIOLockedValueBox(0)
        try await Harness.with(adapters: [Holding(release: release, held: held)]) { harness in
            let auth = AuthenticationInterceptor(
                authenticator: ServerAuthenticator(server: harness.server, neverCallsBack: true),
                credential: try await expiredCredential(harness.server),
                origins: Set([Origin(harness.server.baseURL)].compactMap { $0 }),
                refreshTimeout: 0.5)
            let refreshing = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: harness.server.baseURL),
                    sessionManager: SessionManager.underTest(adapters: [auth], retriers: [auth])),
                completionQueue: DispatchQueue(label: "BlockedCallerTests.refreshing"))
            let outcome = await Self.onThread { () -> [String] in
                let all = DispatchGroup()
                for _ in 0..<150 {
                    all.enter()
                    harness.transfer.request(
                        with: Endpoint<Void>(path: "redirect/302", queryParameters: ["to": "/echo/held"])
                    ) { _ in all.leave() }
                }
                // Lanes are replaced every 2 ms while work waits: 128 are held within a second.
                for _ in 0..<500 where held.withLockedValue({ $0 }) < 128 { usleep(2_000) }
                let lines = NIOLockedValueBox(["held \(held.withLockedValue { $0 })"])
                let ended = DispatchGroup()
                let silent = DefaultDataTransferService(
                    networkService: DefaultNetworkService(
                        configuration: NetworkConfiguration(baseURL: harness.server.otherOriginURL),
                        sessionManager: harness.manager),
                    completionQueue: DispatchQueue(label: "BlockedCallerTests.silent"))
                for (service, path, timeout) in [
                    (silent, "fault/no-answer", 0.5), (harness.transfer, "delay/100", 5),
                    (refreshing, "auth/protected", 5),
                ] {
                    ended.enter()
                    let started = DispatchTime.now().uptimeNanoseconds
                    service.request(with: Endpoint<Void>(path: path, timeoutInterval: timeout)) { result in
                        let ms = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
                        switch result {
                        case .success: lines.withLockedValue { $0.append("\(path) answered after \(ms) ms") }
                        case .failure(.networkFailure(.timedOut)):
                            lines.withLockedValue { $0.append("\(path) timed out after \(ms) ms") }
                        case .failure(.networkFailure(.underlying(let error)))
                        where error as? AuthenticationError == .refreshTimedOut(after: 0.5):
                            lines.withLockedValue { $0.append("\(path) refresh timed out after \(ms) ms") }
                        case .failure(let error):
                            lines.withLockedValue { $0.append("\(path) failed after \(ms) ms: \(error)") }
                        }
                        ended.leave()
                    }
                }
                let endedInTime = ended.wait(timeout: .now() + 3) == .success
                lines.withLockedValue { $0.append(endedInTime ? "all three ended" : "not ended within 3 s") }
                for _ in 0..<150 { release.signal() }
                let allEnded = all.wait(timeout: .now() + 20) == .success
                lines.withLockedValue { $0.append(allEnded ? "all held ended" : "held not ended") }
                return lines.withLockedValue { $0 }
            }
            print("while adapters hold every lane over \(TestTransport.current): \(outcome)")
            #expect(outcome.first == "held 128")
            #expect(outcome.contains("all three ended"))
            #expect(outcome.contains("all held ended"))
            let timedOut = outcome.first { $0.hasPrefix("fault/no-answer timed out after") }
            let ms = timedOut.flatMap { Int($0.split(separator: " ")[4]) } ?? .max
            #expect((490..<1_000).contains(ms), "\(outcome)")
            #expect(outcome.contains { $0.hasPrefix("delay/100 answered after") })
            let refreshEnded = outcome.first { $0.hasPrefix("auth/protected refresh timed out after") }
            let refreshMs = refreshEnded.flatMap { Int($0.split(separator: " ")[5]) } ?? .max
            #expect((490..<1_000).contains(refreshMs), "\(outcome)")
        }
    }

    /// The test doubles' scripted waits run on Strata's queues too: a stub that answers after
    /// 200 ms answers then, in pieces 50 ms apart, with 64 callers blocking the global queue's threads.
    @Test func aStubbedAnswerComesOnTimeWithSixtyFourCallersBlocked() async throws {
        let stub = URLProtocolStub { _ in
            .response(body: Data("{}".utf8), delay: 0.2, chunks: 2, chunkInterval: 0.05)
        }
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: stub.baseURL),
                sessionManager: URLSessionManager(configuration: stub.makeSessionConfiguration())),
            completionQueue: DispatchQueue(label: "BlockedCallerTests.stub"))
        let seconds = await Self.onThread { () -> [Double] in
            let unblock = Self.blockGlobalQueue()
            defer { unblock() }
            let times = NIOLockedValueBox<[Double]>([])
            let answered = DispatchGroup()
            for _ in 0..<4 {
                answered.enter()
                let started = DispatchTime.now().uptimeNanoseconds
                transfer.request(with: Endpoint<Void>(path: "items")) { result in
                    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                    times.withLockedValue { $0.append((try? result.get()) == nil ? -1 : elapsed) }
                    answered.leave()
                }
            }
            answered.wait()
            return times.withLockedValue { $0 }
        }
        print("stubbed answers with 64 callers blocked: \(seconds.map(Self.ms)) ms")
        #expect(seconds.count == 4)
        #expect(seconds.allSatisfy { $0 >= 0.24 && $0 < 0.6 }, "\(seconds.map(Self.ms)) ms")
    }

    /// A download cancelled halfway and started again from its completion resumes: the second
    /// request waits for the first one's file writer to end, which runs on Strata's queues, not
    /// for a thread of the global queue — with 64 callers blocking those, a wait that needed one
    /// would run out (after 2 s) and the body would come whole.
    @Test func aDownloadStartedAgainFromItsCompletionResumesWithSixtyFourCallersBlocked() async throws {
        let size = 3 * 1_048_576 + 123
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-blocked-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("file.bin")
        try await Harness.with { harness in
            let transfer = DefaultDataTransferService(
                networkService: harness.network, completionQueue: DispatchQueue(label: "BlockedCallerTests.resume"))
            @Sendable func endpoint(paced: Bool, progress: (@Sendable (Progress) -> Void)? = nil) -> Endpoint<Empty> {
                Endpoint<Empty>(
                    path: "range/\(size)",
                    headerParameters: HTTPHeaders(
                        ["X-Range-etag": "\"v1\""].merging(paced ? ["X-Range-pace": "10"] : [:]) { $1 }),
                    options: RequestOptions(
                        downloadDestination: target, downloadProgress: progress, resumesDownload: true))
            }
            let (first, second) = await Self.onThread {
                () -> (DataTransferError?, Result<DataTransferResponse<Empty>, DataTransferError>?) in
                let unblock = Self.blockGlobalQueue()
                defer { unblock() }
                let task = NIOLockedValueBox<(any NetworkCancellable)?>(nil)
                let firstEnd = NIOLockedValueBox<DataTransferError?>(nil)
                let secondEnd = NIOLockedValueBox<Result<DataTransferResponse<Empty>, DataTransferError>?>(nil)
                let done = DispatchSemaphore(value: 0)
                let cancelling: @Sendable (Progress) -> Void = { progress in
                    guard progress.completedUnitCount >= Int64(size / 2) else { return }
                    task.withLockedValue { $0 }?.cancel()
                }
                let started = transfer.request(with: endpoint(paced: true, progress: cancelling)) { result in
                    if case .failure(let error) = result { firstEnd.withLockedValue { $0 = error } }
                    transfer.requestResponse(with: endpoint(paced: false)) { result in
                        secondEnd.withLockedValue { $0 = result }
                        done.signal()
                    }
                }
                task.withLockedValue { $0 = started }
                _ = done.wait(timeout: .now() + 20)
                return (firstEnd.withLockedValue { $0 }, secondEnd.withLockedValue { $0 })
            }
            #expect(first?.isCancelled == true)
            let response = try #require(try second?.get()).response
            #expect(response.statusCode == 206, "the download started again came whole")
            let from = response.headers["X-Received-Range"].flatMap { Int($0.dropFirst("bytes=".count).dropLast()) }
            #expect((from ?? 0) >= size / 2)
            #expect(try Data(contentsOf: target) == Data(TestReply.generatedBody(size: size)))
        }
    }

    private static func ms(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }
}
