import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The service layer's streams, over the real service and a scripted session manager: elements
/// as they come, the end once, errors as `NetworkError`s, and the async form.
@Suite struct NetworkStreamingTests {
    private let configuration = NetworkConfiguration(
        baseURL: URL(string: "https://api.strata.test") ?? MockDefaults.baseURL)

    private func service(_ responses: [MockNetworkSessionManager.Response]) -> DefaultNetworkService {
        DefaultNetworkService(
            configuration: configuration, sessionManager: MockNetworkSessionManager(responses: responses))
    }

    @Test func eventsArriveOneByOneAndTheEndOnce() async throws {
        let script = StreamScript.events(
            [ServerSentEvent(data: "Hel"), ServerSentEvent(event: "done", data: "lo", lastEventID: "2")], every: 0.02)
        let events = Locked<[ServerSentEvent]>([])
        let ends = Locked<[Result<NetworkResponse, NetworkError>]>([])
        service([.stream(script)]).stream(endpoint: Endpoint<Void>(path: "chat"), decoding: .serverSentEvents()) {
            event in
            events.withLock { $0.append(event) }
        } completion: { result in
            ends.withLock { $0.append(result) }
        }
        for _ in 0..<500 where ends.value.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(events.value.map(\.data) == ["Hel", "lo"])
        #expect(events.value.last?.event == "done")
        #expect(ends.value.count == 1)
        let response = try #require(try? ends.value.first?.get())
        #expect(response.statusCode == 200)
        #expect(response.headers["Content-Type"] == "text/event-stream")
    }

    @Test func aCutConnectionEndsTheStreamAfterWhatArrived() async throws {
        let script = StreamScript.lines(["a", "b"]).cut()
        var lines: [String] = []
        do {
            for try await line in service([.stream(script)]).stream(
                endpoint: Endpoint<Void>(path: "export"), decoding: .lines())
            {
                lines.append(line)
            }
            Issue.record("the stream should have failed")
        } catch {
            guard case .transport(let urlError) = error else {
                Issue.record("expected a transport error, got \(error)")
                return
            }
            #expect(urlError.code == .networkConnectionLost)
        }
        #expect(lines == ["a", "b"])
    }

    @Test func anUnacceptableStatusFailsWithItsBody() async throws {
        let script = StreamScript(
            statusCode: 429, headers: ["Retry-After": "1"], steps: [.part(Data("slow down".utf8))])
        do {
            for try await _ in service([.stream(script)]).stream(
                endpoint: Endpoint<Void>(path: "feed"), decoding: .bytes)
            {
                Issue.record("no element of an error response is handed on")
            }
        } catch {
            #expect(error.statusCode == 429)
            #expect(error.response?.bodyText == "slow down")
        }
    }

    @Test func leavingTheLoopCancelsTheStream() async throws {
        let manager = MockNetworkSessionManager(responses: [
            .stream(StreamScript.lines((0..<1000).map(String.init), every: 0.01))
        ])
        let service = DefaultNetworkService(configuration: configuration, sessionManager: manager)
        var seen = 0
        for try await _ in service.stream(endpoint: Endpoint<Void>(path: "feed"), decoding: .lines()) {
            seen += 1
            if seen == 3 { break }
        }
        #expect(seen == 3)
        #expect(manager.requests.count == 1)
    }

    @Test func aLineOverTheLimitEndsTheStreamWithATypedError() async throws {
        let script = StreamScript.chunks(Array(repeating: Data(repeating: 0x61, count: 1024), count: 64))
        do {
            for try await _ in service([.stream(script)]).stream(
                endpoint: Endpoint<Void>(path: "feed"), decoding: .lines(maximumLength: 4096))
            {
                Issue.record("no line ends")
            }
        } catch {
            guard case .stream(.lineTooLong(let limit)) = error else {
                Issue.record("expected lineTooLong, got \(error)")
                return
            }
            #expect(limit == 4096)
        }
    }

    @Test func cancellingCompletesOnceWithCancelled() async throws {
        let ends = Locked(0)
        let last = Locked<NetworkError?>(nil)
        let script = StreamScript.lines((0..<1_000).map(String.init), every: 0.05)
        let call = service([.stream(script)]).stream(endpoint: Endpoint<Void>(path: "feed"), decoding: .lines()) { _ in
        } completion: { result in
            ends.withLock { $0 += 1 }
            if case .failure(let error) = result { last.withLock { $0 = error } }
        }
        try await Task.sleep(for: .milliseconds(120))
        call.cancel()
        call.cancel()
        for _ in 0..<2_000 where ends.value == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(ends.value == 1)
        #expect(last.value?.isCancelled == true)
    }
}

/// A decoder that tells whether it is still alive: it lives as long as the stream's consumer.
private struct TrackedDecoder: StreamDecoder {
    final class Token: Sendable {}
    let token: Token
    var lines = LineDecoder()

    mutating func decode(_ bytes: Data, _ emit: (String) throws -> Void) throws { try lines.decode(bytes, emit) }
    mutating func finish(_ emit: (String) throws -> Void) throws { try lines.finish(emit) }
}

@Suite struct ResponseStreamLifetimeTests {
    /// Runs `loop` over a stream of 100 lines decoded by a tracked decoder; whether the decoder
    /// (and so the consumer and its buffer) is gone a moment after the loop.
    private func decoderIsReleased(
        _ loop: (ResponseStream<String, NetworkError>) async throws -> Void
    ) async throws -> Bool {
        let network = MockNetworkService()
        network.enqueue(stream: StreamScript.lines((0..<100).map(String.init)))
        weak var tracked: TrackedDecoder.Token?
        do {
            let token = TrackedDecoder.Token()
            tracked = token
            let service: any NetworkService = network
            try await loop(
                service.stream(endpoint: Endpoint<Void>(path: "feed"), decoding: TrackedDecoder(token: token)))
        }
        for _ in 0..<200 where tracked != nil { try await Task.sleep(for: .milliseconds(5)) }
        return tracked == nil
    }

    @Test func nothingOutlivesALoopThatReadToTheEnd() async throws {
        let count = Locked(0)
        let released = try await decoderIsReleased { stream in
            for try await _ in stream { count.withLock { $0 += 1 } }
        }
        #expect(count.value == 100)
        #expect(released)
    }

    @Test func nothingOutlivesALoopLeftEarly() async throws {
        let released = try await decoderIsReleased { stream in
            for try await line in stream where line == "3" { break }
        }
        #expect(released)
    }

    @Test func aCancelledTaskEndsTheLoopWithCancelledAndNothingOutlivesIt() async throws {
        let endedCancelled = Locked(false)
        let released = try await decoderIsReleased { stream in
            let loop = Task {
                do {
                    // The body takes its time, and does not throw when the task is cancelled.
                    for try await _ in stream { try? await Task.sleep(for: .milliseconds(20)) }
                } catch let error as NetworkError {
                    endedCancelled.withLock { $0 = error.isCancelled }
                }
            }
            try await Task.sleep(for: .milliseconds(50))
            loop.cancel()
            _ = try? await loop.value
        }
        #expect(endedCancelled.value)
        #expect(released)
    }
}

/// The reconnecting event source, over scripted connections.
@Suite struct EventSourceTests {
    private func service(_ network: MockNetworkService) -> any NetworkService { network }

    @Test func itReconnectsAfterRetryWithTheLastEventIDAndStopsAtA204() async throws {
        let network = MockNetworkService()
        network.enqueue(
            stream: .events([
                ServerSentEvent(data: "one", lastEventID: "1", retry: 20),
                ServerSentEvent(data: "two", lastEventID: "2"),
            ]))
        network.enqueue(stream: StreamScript.events([ServerSentEvent(data: "three", lastEventID: "3")]).cut())
        network.enqueue(.success(NetworkResponse(statusCode: 204)))
        let events = Locked<[String]>([])
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        // Opened with an hour between connections: the source ends within the minute awaited only
        // if the stream's retry of 20 ms replaced it, for both reconnections.
        network.eventSource(endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 3_600) { event in
            events.withLock { $0.append(event.data) }
        } completion: {
            ends.record($0)
        }
        let end = try #require(await ends.first(timeout: 60))
        #expect((try? end.get()) != nil)
        #expect(events.value == ["one", "two", "three"])
        let requests = network.requests
        #expect(requests.count == 3)
        #expect(requests.map { $0.value(forHTTPHeaderField: "Last-Event-ID") } == [nil, "2", "3"])
        #expect(requests.allSatisfy { $0.value(forHTTPHeaderField: "Accept") == "text/event-stream" })
        try await Task.sleep(for: .milliseconds(50))
        #expect(ends.callCount == 1)
    }

    /// A source cancelled while it waits to reconnect is released at once, with the closures it
    /// holds, not when the wait the stream asked for (a day, here) has passed.
    @Test func aSourceCancelledWhileItWaitsToReconnectIsReleasedAtOnce() async throws {
        final class Canary: Sendable {}
        struct Watch: @unchecked Sendable { weak var canary: Canary? }
        let network = MockNetworkService()
        network.enqueue(stream: .events([ServerSentEvent(data: "one", retry: 86_400_000)]))
        let events = CompletionRecorder<String>()
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        var watch = Watch()
        var source: EventSource?
        do {
            let canary = Canary()
            watch.canary = canary
            source = network.eventSource(endpoint: Endpoint<Void>(path: "feed")) { event in
                _ = canary
                events.record(event.data)
            } completion: {
                ends.record($0)
            }
        }
        #expect(await events.first(timeout: 10) == "one")
        // The stream has ended: the source waits to reconnect.
        try await Task.sleep(for: .milliseconds(100))
        source?.cancel()
        source = nil
        guard case .failure(.cancelled) = try #require(await ends.first(timeout: 10)) else {
            Issue.record("expected the source to end as cancelled")
            return
        }
        for _ in 0..<200 where watch.canary != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(watch.canary == nil)
        #expect(network.requests.count == 1)
    }

    /// A limit out of range ends the source before anything is sent, saying which.
    @Test func aLimitOutOfRangeEndsTheSourceBeforeItConnects() async throws {
        for (size, reconnections, name) in [
            (0, nil, "maximumEventSize"), (-1, 3, "maximumEventSize"), (1024, -1, "maximumReconnections"),
        ] {
            let network = MockNetworkService()
            let ends = CompletionRecorder<Result<Void, NetworkError>>()
            network.eventSource(
                endpoint: Endpoint<Void>(path: "feed"), maximumReconnections: reconnections, maximumEventSize: size,
                onEvent: { _ in }
            ) { ends.record($0) }
            guard
                case .failure(.invalidRequest(.invalidOption(let named, _))) = try #require(
                    await ends.first(timeout: 5))
            else {
                Issue.record("expected \(name) refused")
                continue
            }
            #expect(named == name)
            #expect(network.requests.isEmpty)
        }
    }

    @Test func aWrongTypeOrAnErrorStatusStopsItWithoutReconnecting() async throws {
        let network = MockNetworkService()
        network.enqueue(stream: StreamScript.lines(["not events"]))
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        network.eventSource(endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 0.01, onEvent: { _ in }) {
            ends.record($0)
        }
        guard case .failure(.underlying(let error)) = try #require(await ends.first(timeout: 5)) else {
            Issue.record("expected the wrong type")
            return
        }
        #expect(error as? EventSourceError == .notAnEventStream(contentType: "text/plain"))

        let failing = MockNetworkService()
        failing.enqueue(.failure(.unacceptableStatusCode(NetworkResponse(statusCode: 500))))
        let failed = CompletionRecorder<Result<Void, NetworkError>>()
        failing.eventSource(endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 0.01, onEvent: { _ in }) {
            failed.record($0)
        }
        let end = try #require(await failed.first(timeout: 5))
        #expect((try? end.get()) == nil)
        try await Task.sleep(for: .milliseconds(100))
        #expect(failing.requests.count == 1)
    }

    @Test func connectionsInARowThatBringNoEventBackOffThoughTheStreamSaysRetryZero() async throws {
        // Each connection sets `retry: 0` and ends without an event, as a broken or hostile server
        // may: the source waits 0 s, then 0.2, 0.4 and 0.8 s, not 0 s each time.
        let network = MockNetworkService(fallback: .success(NetworkResponse(statusCode: 200)))
        for _ in 0..<5 {
            network.enqueue(
                stream: StreamScript.chunks([Data("retry: 0\n\n".utf8)], headers: ["Content-Type": "text/event-stream"])
            )
        }
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        let started = ContinuousClock.now
        network.eventSource(
            endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 0, maximumReconnections: 4, onEvent: { _ in }
        ) { ends.record($0) }
        guard case .failure(.underlying(let error)) = try #require(await ends.first(timeout: 30)) else {
            Issue.record("expected too many reconnections")
            return
        }
        #expect(error as? EventSourceError == .tooManyReconnections(4))
        #expect(network.requests.count == 5)
        // Only a lower bound: a busy machine makes the waits longer, never shorter.
        #expect(ContinuousClock.now - started >= .seconds(1.4))
    }

    @Test func aConnectionThatBroughtAnEventIsNotCountedAmongTheFruitlessOnes() async throws {
        // With at most one fruitless reconnection: an event, none, an event, none, none. Each
        // connection that brought an event starts the count again, so the source stops at the
        // fifth, the second fruitless one in a row. (It stopped at the second: the connection that
        // brought the event was counted as one that brought none.)
        let network = MockNetworkService(fallback: .success(NetworkResponse(statusCode: 200)))
        let eventStream = ["Content-Type": "text/event-stream"]
        for brings in [true, false, true, false, false] {
            network.enqueue(
                stream: StreamScript.chunks(
                    [Data((brings ? "data: x\n\n" : ": nothing\n\n").utf8)], headers: eventStream))
        }
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        let events = CompletionRecorder<ServerSentEvent>()
        network.eventSource(
            endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 0, maximumReconnections: 1,
            onEvent: { events.record($0) }
        ) { ends.record($0) }
        guard case .failure(.underlying(let error)) = try #require(await ends.first(timeout: 30)) else {
            Issue.record("expected too many reconnections")
            return
        }
        #expect(error as? EventSourceError == .tooManyReconnections(1))
        #expect(network.requests.count == 5)
        #expect(events.callCount == 2)
        #expect(error.localizedDescription == "The event source connected 2 times in a row without receiving an event.")
    }

    @Test func aLastEventIDOfTheEndpointsOwnIsWhereTheSourceResumesFromUntilTheStreamNamesAnother() async throws {
        // An app that kept the last ID of an earlier run names it on the endpoint: the first
        // connection sends it, events without an ID carry it, and a reconnection sends it again
        // until the stream sets one. (The source dropped it: the first request went without it.)
        let network = MockNetworkService()
        let eventStream = ["Content-Type": "text/event-stream"]
        network.enqueue(stream: StreamScript.chunks([Data("data: a\n\n".utf8)], headers: eventStream))
        network.enqueue(stream: StreamScript.chunks([Data("id: 42\ndata: b\n\n".utf8)], headers: eventStream))
        network.enqueue(.success(NetworkResponse(statusCode: 204)))
        let service: any NetworkService = network
        var received: [ServerSentEvent] = []
        for try await event in service.eventSource(
            endpoint: Endpoint<Void>(path: "feed", headerParameters: ["Last-Event-ID": "41"]), reconnectionTime: 0)
        {
            received.append(event)
        }
        #expect(received.map(\.lastEventID) == ["41", "42"])
        #expect(network.requests.map { $0.value(forHTTPHeaderField: "Last-Event-ID") } == ["41", "41", "42"])
    }

    /// A `Last-Event-ID` of the endpoint's own that cannot go back as one is no ID to resume from:
    /// one longer than the 4 KiB an ID sent back may have is left out of every request, and one
    /// that breaks a header line ends the source with the endpoint's invalid header, unsent.
    @Test func aLastEventIDOfTheEndpointsOwnThatCannotBeSentIsNoIDToResumeFrom() async throws {
        let network = MockNetworkService()
        let eventStream = ["Content-Type": "text/event-stream"]
        network.enqueue(stream: StreamScript.chunks([Data("data: a\n\n".utf8)], headers: eventStream))
        network.enqueue(.success(NetworkResponse(statusCode: 204)))
        let service: any NetworkService = network
        let long = String(repeating: "7", count: 4_097)
        var received: [ServerSentEvent] = []
        for try await event in service.eventSource(
            endpoint: Endpoint<Void>(path: "feed", headerParameters: ["Last-Event-ID": long]), reconnectionTime: 0)
        {
            received.append(event)
        }
        #expect(received.map(\.lastEventID) == [""])
        #expect(network.requests.map { $0.value(forHTTPHeaderField: "Last-Event-ID") } == [nil, nil])

        let broken = MockNetworkService()
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        broken.eventSource(
            endpoint: Endpoint<Void>(path: "feed", headerParameters: ["Last-Event-ID": "41\r\nX-Injected: 1"]),
            reconnectionTime: 0, onEvent: { _ in }
        ) { ends.record($0) }
        let end = try #require(await ends.first(timeout: 5))
        guard case .failure(.invalidRequest) = end else {
            Issue.record("expected the endpoint's header refused, got \(end)")
            return
        }
        #expect(broken.requests.isEmpty)
    }

    @Test func theAsyncSequenceReadsTheNextPartOnlyOnceTheLoopTookTheEvents() async throws {
        let network = MockNetworkService()
        let events = (0..<50).map { ServerSentEvent(data: "\($0)", lastEventID: "\($0)") }
        network.enqueue(stream: StreamScript.events(events).cut())
        network.enqueue(.success(NetworkResponse(statusCode: 204)))
        let service: any NetworkService = network
        var received: [String] = []
        for try await event in service.eventSource(endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 0) {
            received.append(event.data)
            if received.count == 3 {
                // The loop is slow: the source waits for it, so the stream is still at its start.
                try await Task.sleep(for: .milliseconds(200))
                #expect(network.requests.count == 1)
            }
        }
        #expect(received == events.map(\.data))
        #expect(network.requests.last?.value(forHTTPHeaderField: "Last-Event-ID") == "49")
    }

    @Test func connectionsThatBringNothingStopItAtTheLimitAndCancellingEndsItOnce() async throws {
        let network = MockNetworkService(
            fallback: .failure(.transport(URLError(.cannotConnectToHost))))
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        network.eventSource(
            endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 0.01, maximumReconnections: 3, onEvent: { _ in }
        ) { ends.record($0) }
        guard case .failure(.transport) = try #require(await ends.first(timeout: 5)) else {
            Issue.record("expected the last transport error")
            return
        }
        #expect(network.requests.count == 4)

        let open = MockNetworkService()
        open.enqueue(stream: StreamScript.events([ServerSentEvent(data: "x")]).cut())
        let cancelled = CompletionRecorder<Result<Void, NetworkError>>()
        let events = CompletionRecorder<ServerSentEvent>()
        // The source cancelled while it waits to reconnect: the wait is long enough that no busy
        // machine reaches its end (where the mock's plain 200 would fail the source instead).
        let source = open.eventSource(
            endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 60, onEvent: { events.record($0) }
        ) { cancelled.record($0) }
        _ = try #require(await events.first(timeout: 5))
        try await Task.sleep(for: .milliseconds(20))
        source.cancel()
        source.cancel()
        guard case .failure(.cancelled) = try #require(await cancelled.first(timeout: 5)) else {
            Issue.record("expected cancelled")
            return
        }
        try await Task.sleep(for: .milliseconds(150))
        #expect(cancelled.callCount == 1)
    }

    @Test(arguments: [TimeInterval.nan, -1])
    func aReconnectionTimeThatIsNotANumberOrNegativeNeitherHangsNorFloods(reconnectionTime: TimeInterval) async throws {
        // Every connection ends at once without an event: the source backs off (0, 0.2 s, 0.4 s…
        // for a negative time, counted as 0; from the default 3 s for one that is not a number)
        // and stops at the limit, where a wait that is not a number never reconnected.
        let network = MockNetworkService(fallback: .failure(.transport(URLError(.networkConnectionLost))))
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        let started = ContinuousClock.now
        network.eventSource(
            endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: reconnectionTime, maximumReconnections: 2,
            onEvent: { _ in }
        ) { ends.record($0) }
        guard case .failure(.transport) = try #require(await ends.first(timeout: 30)) else {
            Issue.record("expected the last transport error")
            return
        }
        let elapsed = ContinuousClock.now - started
        #expect(network.requests.count == 3)
        #expect(elapsed >= (reconnectionTime.isNaN ? .seconds(3 + 6) : .milliseconds(200)), "\(elapsed)")
    }

    /// An endpoint of the caller's own whose request comes out without a URL ends the source with
    /// an error, unsent: FoundationNetworking traps on changing a copy of such a request, as adding
    /// the fields an event stream is asked for with would.
    @Test func anEndpointWhoseRequestHasNoURLEndsItUnsent() async throws {
        /// Hands out a request it keeps, as an endpoint wrapping a prebuilt request does.
        struct LosesItsURL: Requestable {
            let kept: URLRequest
            var path: String { "feed" }
            var method: HTTPMethod { .get }
            func urlRequest(with configuration: any NetworkConfigurable) throws(RequestGenerationError) -> URLRequest {
                kept
            }
        }
        var kept = URLRequest(url: MockDefaults.baseURL)
        kept.url = nil
        let transport = RecordsEventStreamRequests(connections: [])
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: MockDefaults.baseURL),
            sessionManager: SessionManager(transport: transport))
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        network.eventSource(endpoint: LosesItsURL(kept: kept), reconnectionTime: 0.01, onEvent: { _ in }) {
            ends.record($0)
        }
        let end = try #require(await ends.first(timeout: 5))
        #expect((try? end.get()) == nil, "\(end)")
        try await Task.sleep(for: .milliseconds(100))
        #expect(ends.callCount == 1)
        #expect(transport.lastEventIDs.isEmpty)
    }

    @Test func aConnectionEndedInTheMiddleOfAnEventResumesFromTheEventBeforeIt() async throws {
        // The first connection ends after event 2's `id` line but before its blank line: event 2
        // was never delivered, so the source asks for what follows event 1 and gets event 2 again.
        // The second ends after an event of an `id` alone, which counts.
        let (events, lastEventIDs) = try await Self.source(over: [
            "id: 1\ndata: one\n\nid: 2\ndata: two\n",
            "id: 2\ndata: two\n\nid: 3\n\nid: 4\n",
        ])
        #expect(events.map(\.data) == ["one", "two"])
        #expect(events.map(\.lastEventID) == ["1", "2"])
        #expect(lastEventIDs == [nil, "1", "3"])
    }

    @Test func anIDThatCannotGoInAHeaderIsReportedButTheLastOneThatCanIsSent() async throws {
        // A hostile or careless server sets IDs with control characters, or too long for a header
        // line a server takes: each event still reports its ID, and each reconnection resumes
        // from the last ID a header can carry, rather than failing to build its request, or
        // being refused, and ending the source.
        let long = String(repeating: "z", count: 4097)
        let (events, lastEventIDs) = try await Self.source(over: [
            "id: 7\ndata: one\n\nid: a\u{1}b\ndata: two\n\n",
            "id: x\u{7F}\ndata: three\n\nretry: 10\n\n",
            "id: \(long)\ndata: long\n\n",
            "id\ndata: four\n\nid: 9\tz\ndata: five\n\n",
        ])
        #expect(events.map(\.data) == ["one", "two", "three", "long", "four", "five"])
        #expect(events.map(\.lastEventID) == ["7", "a\u{1}b", "x\u{7F}", long, "", "9\tz"])
        // Connections: the first, after "a\u{1}b" (unsendable: "7"), after "x\u{7F}" (still "7"),
        // after the long one (still "7"), after "9\tz" (a tab may stand in a field value), which
        // ends the source with a 204.
        #expect(lastEventIDs == [nil, "7", "7", "7", "9\tz"])
    }

    /// What an event source delivered, and the `Last-Event-ID` of each connection's request.
    private typealias SourceRun = (events: [ServerSentEvent], lastEventIDs: [String?])

    /// Runs an event source to its end over `connections` (see ``RecordsEventStreamRequests``),
    /// expecting it to end once, with success.
    private static func source(over connections: [String]) async throws -> SourceRun {
        let transport = RecordsEventStreamRequests(connections: connections)
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: MockDefaults.baseURL),
            sessionManager: SessionManager(transport: transport))
        let events = Locked<[ServerSentEvent]>([])
        let ends = CompletionRecorder<Result<Void, NetworkError>>()
        network.eventSource(endpoint: Endpoint<Void>(path: "feed"), reconnectionTime: 0.01) { event in
            events.withLock { $0.append(event) }
        } completion: {
            ends.record($0)
        }
        let end = try #require(await ends.first(timeout: 20))
        #expect((try? end.get()) != nil, "\(end)")
        try await Task.sleep(for: .milliseconds(50))
        #expect(ends.callCount == 1)
        return (events.value, transport.lastEventIDs)
    }
}

/// Answers each request with the next scripted event stream, then with `204 No Content`; keeps
/// each request's `Last-Event-ID`.
private final class RecordsEventStreamRequests: Transport {
    private let connections: [String]
    private let sent = Locked<[String?]>([])

    init(connections: [String]) {
        self.connections = connections
    }

    var lastEventIDs: [String?] { sent.value }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let n = sent.withLock { sent in
            sent.append(attempt.request.value(forHTTPHeaderField: "Last-Event-ID"))
            return sent.count - 1
        }
        let url = attempt.request.url ?? URL(fileURLWithPath: "/")
        guard n < connections.count else {
            return ResponsePlayback.start(
                head: ResponseHead(url: url, statusCode: 204, httpVersion: "HTTP/1.1", headers: [:]), steps: [],
                to: receiver)
        }
        let head = ResponseHead(
            url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: ["Content-Type": "text/event-stream"])
        return ResponsePlayback.start(head: head, steps: [.part(Data(connections[n].utf8))], to: receiver)
    }
}
