import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that plays a scripted answer per attempt: the `n`th request gets `script(n)`.
private final class ScriptedTransport: Transport {
    typealias Script = (status: Int, headers: HTTPHeaders, steps: [ResponsePlayback.Step])
    private let script: @Sendable (Int) -> Script
    private let count = Locked(0)
    private let exchanges = Locked<[ResponsePlayback]>([])

    init(_ script: @escaping @Sendable (Int) -> Script) {
        self.script = script
    }

    var attempts: Int { count.value }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let n = count.withLock {
            $0 += 1; return $0
        }
        let (status, headers, steps) = script(n)
        let url = attempt.request.url ?? URL(fileURLWithPath: "/")
        let head = ResponseHead(url: url, statusCode: status, httpVersion: "HTTP/1.1", headers: headers)
        let playback = ResponsePlayback.start(head: head, steps: steps, to: receiver)
        exchanges.withLock { $0.append(playback) }
        return playback
    }
}

/// Records what a stream hands on, and asks for each next part when told to (at once by default).
final class StreamRecorder: ResponseReceiver, @unchecked Sendable {
    enum Event: Equatable {
        case head(Int)
        case part(String)
        case end(String?)
    }

    private let lock = NSLock()
    private var recorded: [Event] = []
    private var ends = 0
    private var error: (any Error)?
    /// Demands made before ``exchange`` is set wait for it here.
    private let slot = ExchangeSlot()
    /// The stream; set once, right after it is started (a head may arrive before).
    var exchange: (any ResponseExchange)? {
        didSet {
            if let exchange, oldValue == nil { slot.set(exchange) }
        }
    }
    let demandsAtOnce: Bool

    init(demandsAtOnce: Bool = true) {
        self.demandsAtOnce = demandsAtOnce
    }

    var events: [Event] { lock.withLock { recorded } }
    var endCount: Int { lock.withLock { ends } }
    var endError: (any Error)? { lock.withLock { error } }

    func receive(_ head: ResponseHead) {
        lock.withLock { recorded.append(.head(head.statusCode)) }
        if demandsAtOnce { slot.demand() }
    }

    func receive(_ part: Data) {
        lock.withLock { recorded.append(.part(String(decoding: part, as: UTF8.self))) }
        if demandsAtOnce { slot.demand() }
    }

    func finish(_ error: (any Error)?) {
        lock.withLock {
            ends += 1
            self.error = error
            recorded.append(.end(error.map { String(describing: type(of: $0)) }))
        }
    }

    /// Waits until the stream has ended, or `seconds` have passed.
    func ended(within seconds: Double = 5) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while endCount == 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return endCount > 0
    }
}

@Suite struct StreamingTests {
    private let url = URL(string: "https://api.strata.test/feed") ?? URL(fileURLWithPath: "/")

    private func stream(
        _ manager: SessionManager, options: RequestOptions = RequestOptions(), recorder: StreamRecorder
    ) -> any ResponseExchange {
        let exchange = manager.stream(URLRequest(url: url), options: options, to: recorder)
        recorder.exchange = exchange
        return exchange
    }

    /// A careless limit is a typed error before anything is sent, the same whichever transport
    /// (a buffer limit only URLSession's relay reads would otherwise fail there and be ignored
    /// over AsyncHTTPClient; a timeout that is not a number would silently mean none).
    @Test(arguments: [
        (RequestOptions(streamIdleTimeout: 0), "streamIdleTimeout"),
        (RequestOptions(streamIdleTimeout: -1), "streamIdleTimeout"),
        (RequestOptions(streamIdleTimeout: .nan), "streamIdleTimeout"),
        (RequestOptions(streamDeadline: -.infinity), "streamDeadline"),
        (RequestOptions(streamDeadline: .nan), "streamDeadline"),
        (RequestOptions(streamBufferLimit: 0), "streamBufferLimit"),
        (RequestOptions(streamBufferLimit: .min), "streamBufferLimit"),
        (RequestOptions(maximumBodyLength: -1), "maximumBodyLength"),
    ])
    func anOptionOutOfItsRangeIsATypedErrorAndNothingIsSent(options: RequestOptions, name: String) async throws {
        let transport = ScriptedTransport { _ in (200, [:], [.part(Data("a".utf8))]) }
        let manager = SessionManager(transport: transport)
        let recorder = StreamRecorder()
        _ = stream(manager, options: options, recorder: recorder)
        #expect(await recorder.ended())
        let whole = CompletionRecorder<(any Error)?>()
        manager.request(URLRequest(url: url), options: options) { _, _, error in whole.record(error) }
        for error in [recorder.endError, try #require(await whole.first(timeout: 5)) ?? nil] {
            guard case .invalidOption(let named, _)? = error as? RequestValidationError else {
                Issue.record("expected invalidOption, got \(String(describing: error))")
                continue
            }
            #expect(named == name)
            #expect("\(error!)".contains("RequestOptions.\(name)"))
        }
        #expect(transport.attempts == 0)
    }

    @Test func limitsAtTheEdgesOfTheirRangesAreTaken() async throws {
        let transport = ScriptedTransport { _ in (200, [:], []) }
        let manager = SessionManager(transport: transport)
        let options = RequestOptions(
            streamIdleTimeout: .infinity, streamDeadline: 1e300, streamBufferLimit: 1, maximumBodyLength: 0)
        let recorder = StreamRecorder()
        _ = stream(manager, options: options, recorder: recorder)
        #expect(await recorder.ended())
        #expect(recorder.endError == nil)
        #expect(try RequestOptions(streamIdleTimeout: 0.001).validate() == ())
    }

    @Test func partsArriveAsTheyComeAndOnlyAsAskedFor() async throws {
        let transport = ScriptedTransport { _ in
            (200, [:], [.part(Data("a".utf8)), .pause(0.05), .part(Data("b".utf8)), .part(Data("c".utf8))])
        }
        let recorder = StreamRecorder(demandsAtOnce: false)
        let exchange = stream(SessionManager(transport: transport), recorder: recorder)
        for _ in 0..<200 where recorder.events.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(100))
        // The head comes unasked; nothing else until asked.
        #expect(recorder.events == [.head(200)])
        exchange.demand()
        for _ in 0..<200 where recorder.events.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(recorder.events == [.head(200), .part("a")])
        exchange.demand()
        exchange.demand()
        exchange.demand()
        #expect(await recorder.ended())
        #expect(recorder.events == [.head(200), .part("a"), .part("b"), .part("c"), .end(nil)])
    }

    @Test func aPartTakenIsNotKeptAliveByThePartsQueuedBehindIt() {
        let released = Locked(0)
        /// A part whose memory tells when it is freed.
        func part() -> Data {
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: 1_024, alignment: 1)
            bytes.initializeMemory(as: UInt8.self, repeating: 0x61, count: 1_024)
            return Data(
                bytesNoCopy: bytes, count: 1_024,
                deallocator: .custom { bytes, _ in
                    bytes.deallocate()
                    released.withLock { $0 += 1 }
                })
        }
        let recorder = StreamRecorder(demandsAtOnce: false)
        let relay = ResponseRelay(to: recorder)
        recorder.exchange = relay
        relay.push(ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:]))
        for _ in 0..<3 { relay.push(part()) }
        relay.demand()
        #expect(recorder.events.count == 2)
        #expect(released.value == 1)
        relay.cancel()
        #expect(released.value == 3)
    }

    @Test func aConsumerFallingBehindPastTheLimitGetsWhatCameThenATypedEndAndTheNetworkStops() {
        let stops = Locked(0)
        let recorder = StreamRecorder(demandsAtOnce: false)
        // Room for ten bytes in three parts.
        let limit = 10 + 3 * ResponseRelay.partOverhead
        let relay = ResponseRelay(to: recorder, bufferLimit: limit, stop: { stops.withLock { $0 += 1 } })
        recorder.exchange = relay
        relay.push(ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:]))
        for piece in ["abcd", "efgh", "ij"] { relay.push(Data(piece.utf8)) }
        // Ten bytes in three parts queued: at the limit, not past it.
        #expect(stops.value == 0)
        #expect(!relay.isOver)
        relay.push(Data("k".utf8))
        #expect(stops.value == 1)
        #expect(relay.isOver)
        // Whatever comes from the network afterwards is not kept.
        relay.push(Data("lmnop".utf8))
        relay.end(nil)
        for _ in 0..<5 { relay.demand() }
        #expect(
            recorder.events == [
                .head(200), .part("abcd"), .part("efgh"), .part("ij"), .part("k"), .end("StreamError"),
            ])
        #expect(recorder.endError as? StreamError == .consumerFellBehind(limit: limit))
        relay.cancel()
        #expect(stops.value == 1)
        #expect(recorder.endCount == 1)
    }

    @Test func aRelayJoiningSmallPartsHandsOnThoseQueuedTogetherAsOneAndLargeOnesAsTheyCame() {
        let recorder = StreamRecorder(demandsAtOnce: false)
        let relay = ResponseRelay(to: recorder, joiningSmallParts: true)
        recorder.exchange = relay
        relay.push(ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:]))
        // A receiver that keeps up gets each part as it came.
        for piece in ["a", "b"] {
            relay.push(Data(piece.utf8))
            relay.demand()
        }
        #expect(recorder.events == [.head(200), .part("a"), .part("b")])
        // Queued while it is behind: small parts are joined up to the limit, a large one is not,
        // and nothing is joined across it.
        let small = ResponseRelay.smallPart - 1
        let large = String(repeating: "L", count: ResponseRelay.smallPart)
        let pieces = (0..<70).map { String(repeating: String(UnicodeScalar(UInt8(65 + $0 % 26))), count: small) }
        let queued: [String] = pieces[..<3] + [large] + pieces[3...]
        for piece in queued { relay.push(Data(piece.utf8)) }
        #expect(relay.bufferedBytes == 70 * small + large.utf8.count)
        var sizes: [Int] = []
        while relay.bufferedBytes > 0 {
            relay.demand()
            guard case .part(let text)? = recorder.events.last else { break }
            sizes.append(text.utf8.count)
        }
        let perJoin = ResponseRelay.joinedPartLimit / small
        let joinedAfterTheLargeOne = stride(from: 67, to: 0, by: -perJoin).map { min($0, perJoin) * small }
        let expected: [Int] = [3 * small, large.utf8.count] + joinedAfterTheLargeOne
        #expect(sizes == expected)
        let texts = recorder.events.compactMap { event -> String? in
            guard case .part(let text) = event else { return nil }
            return text
        }
        #expect(texts.joined() == "ab" + queued.joined())
        relay.end(nil)
        relay.demand()
        #expect(recorder.events.last == .end(nil))

        // A relay that does not join (a test double's playback) hands on each part as it came.
        let apart = StreamRecorder(demandsAtOnce: false)
        let plain = ResponseRelay(to: apart)
        apart.exchange = plain
        plain.push(ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:]))
        for piece in ["a", "b", "c"] { plain.push(Data(piece.utf8)) }
        plain.end(nil)
        for _ in 0..<4 { plain.demand() }
        #expect(apart.events == [.head(200), .part("a"), .part("b"), .part("c"), .end(nil)])
    }

    @Test func aServerSendingAByteAPartCannotQueueMorePartsThanTheLimitHasRoomFor() {
        let recorder = StreamRecorder(demandsAtOnce: false)
        let relay = ResponseRelay(to: recorder, bufferLimit: 65_536)
        recorder.exchange = relay
        relay.push(ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:]))
        var pushed = 0
        while !relay.isOver, pushed < 65_536 {
            relay.push(Data("x".utf8))
            pushed += 1
        }
        // Counted by their bytes alone, 65,536 parts would fit; each slot costs more than its byte.
        #expect(relay.isOver)
        #expect(pushed == 65_536 / (1 + ResponseRelay.partOverhead) + 1)
    }

    @Test func aBodyFileOfferedToAnExchangeThatIsOverIsDeclinedSoTheTransportRemovesIt() {
        let decisions = Locked<[Bool]>([])
        let recorder = StreamRecorder(demandsAtOnce: false)
        let relay = ResponseRelay(to: recorder)
        recorder.exchange = relay
        relay.push(ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:]))
        // Queued, not yet asked for, when the exchange is cancelled.
        relay.offer(bodyFile: URL(fileURLWithPath: "/tmp/a")) { taken in decisions.withLock { $0.append(taken) } }
        #expect(decisions.value.isEmpty)
        relay.cancel()
        #expect(decisions.value == [false])
        // Offered after the end.
        relay.offer(bodyFile: URL(fileURLWithPath: "/tmp/b")) { taken in decisions.withLock { $0.append(taken) } }
        #expect(decisions.value == [false, false])
        #expect(recorder.endCount == 1)
    }

    @Test func aStreamsAttemptCarriesItsBufferLimitAndNoOtherRequestHasOne() async throws {
        final class Recording: Transport {
            let limits = Locked<[Int?]>([])
            func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
                limits.withLock { $0.append(attempt.bufferLimit) }
                let head = ResponseHead(
                    url: attempt.request.url ?? URL(fileURLWithPath: "/"), statusCode: 200, httpVersion: "HTTP/1.1",
                    headers: [:])
                return ResponsePlayback.start(head: head, steps: [.part(Data("x".utf8))], to: receiver)
            }
        }
        let transport = Recording()
        let manager = SessionManager(transport: transport)
        let streamed = StreamRecorder()
        _ = stream(manager, options: RequestOptions(streamBufferLimit: 4_096), recorder: streamed)
        #expect(await streamed.ended())
        let byDefault = StreamRecorder()
        _ = stream(manager, recorder: byDefault)
        #expect(await byDefault.ended())
        let whole = CompletionRecorder<Int>()
        manager.request(URLRequest(url: url), options: RequestOptions()) { data, _, _ in
            whole.record(data?.count ?? -1)
        }
        #expect(await whole.first(timeout: 5) == 1)
        #expect(transport.limits.value == [4_096, RequestOptions.defaultStreamBufferLimit, nil])
    }

    @Test func aFailureBeforeTheHeadIsRetriedButNothingAfter() async throws {
        let transport = ScriptedTransport { n in
            n == 1
                ? (503, ["Retry-After": "0"], [.part(Data("busy".utf8))])
                : (200, [:], [.part(Data("x".utf8)), .fail(URLError(.networkConnectionLost))])
        }
        let retrier = CountingRetrier(decision: .retry)
        let recorder = StreamRecorder()
        _ = stream(SessionManager(transport: transport, retriers: [retrier]), recorder: recorder)
        #expect(await recorder.ended())
        #expect(transport.attempts == 2)
        #expect(retrier.calls == 1)
        #expect(recorder.events == [.head(200), .part("x"), .end("URLError")])
        #expect((recorder.endError as? URLError)?.code == .networkConnectionLost)
    }

    @Test func anUnacceptableStatusEndsWithItsHeadAndBodyAndHandsNothingOn() async throws {
        let transport = ScriptedTransport { _ in (404, ["Content-Type": "text/plain"], [.part(Data("gone".utf8))]) }
        let recorder = StreamRecorder()
        _ = stream(SessionManager(transport: transport), recorder: recorder)
        #expect(await recorder.ended())
        #expect(recorder.events == [.end("FailedResponse")])
        let failure = try #require(recorder.endError as? FailedResponse)
        #expect(failure.head.statusCode == 404)
        #expect(failure.body == Data("gone".utf8))
        #expect(failure.error as? SessionError == .unacceptableStatusCode(404))
    }

    @Test func theIdleTimeoutFiresOnlyWhileAPartIsAwaited() async throws {
        let transport = ScriptedTransport { _ in
            (200, [:], [.part(Data("1".utf8)), .pause(0.05), .part(Data("2".utf8)), .pause(5), .part(Data("3".utf8))])
        }
        let recorder = StreamRecorder()
        _ = stream(
            SessionManager(transport: transport), options: RequestOptions(streamIdleTimeout: 0.3), recorder: recorder)
        #expect(await recorder.ended())
        #expect(recorder.events == [.head(200), .part("1"), .part("2"), .end("StreamError")])
        #expect(recorder.endError as? StreamError == .idleTimeout(0.3))

        // A consumer slower than the timeout is not idleness: the timer runs only while a part is awaited.
        let slow = ScriptedTransport { _ in (200, [:], [.part(Data("1".utf8)), .part(Data("2".utf8))]) }
        let patient = StreamRecorder(demandsAtOnce: false)
        let exchange = stream(
            SessionManager(transport: slow), options: RequestOptions(streamIdleTimeout: 0.2), recorder: patient)
        for _ in 0..<200 where patient.events.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(400))
        exchange.demand()
        for _ in 0..<200 where patient.events.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(400))
        exchange.demand()
        exchange.demand()
        #expect(await patient.ended())
        #expect(patient.events == [.head(200), .part("1"), .part("2"), .end(nil)])
    }

    @Test func theStreamDeadlineEndsAnEndlessStream() async throws {
        // A tick every 20 ms for over half an hour: only the deadline ends it (a stream that ran out
        // would end without an error). Under ThreadSanitizer, with every suite starting at once on
        // 2 cores, the first seconds of a run are slow for all of them; the bound allows for that.
        let transport = ScriptedTransport { _ in
            (
                200, [:],
                Array(repeating: [ResponsePlayback.Step.part(Data("tick".utf8)), .pause(0.02)], count: 100_000)
                    .flatMap { $0 }
            )
        }
        let recorder = StreamRecorder()
        let started = ContinuousClock.now
        _ = stream(
            SessionManager(transport: transport), options: RequestOptions(streamDeadline: 0.3), recorder: recorder)
        #expect(await recorder.ended(within: 60))
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(recorder.endError as? StreamError == .deadlineExceeded(0.3))
        #expect(recorder.events.first == .head(200))
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.endCount == 1)
    }

    /// A head that comes after the stream's deadline has passed (a slow server, a busy machine)
    /// is still handed on, then the deadline ends the stream: never an end before the head of a
    /// response that was accepted. Forty streams at once, so that a deadline armed before the head
    /// is passed on gets a chance to win the race.
    @Test func aHeadThatComesAfterTheStreamDeadlineIsHandedOnBeforeTheEnd() async throws {
        final class LateHead: Transport {
            func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
                let slot = ExchangeSlot()
                let url = attempt.request.url ?? URL(fileURLWithPath: "/")
                DispatchQueue(label: "late head").asyncAfter(deadline: .now() + 0.15) {
                    let head = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:])
                    slot.set(
                        ResponsePlayback.start(
                            head: head, steps: [.part(Data("tick".utf8)), .pause(60)], to: receiver))
                }
                return slot
            }
        }
        let manager = SessionManager(transport: LateHead())
        let recorders = (0..<40).map { _ in StreamRecorder() }
        for recorder in recorders {
            _ = stream(manager, options: RequestOptions(streamDeadline: 0.05), recorder: recorder)
        }
        for recorder in recorders {
            #expect(await recorder.ended(within: 30))
            #expect(recorder.events.first == .head(200), "\(recorder.events)")
            #expect(recorder.endError as? StreamError == .deadlineExceeded(0.05))
        }
    }

    @Test func cancellingEndsTheStreamOnceAtAnyPoint() async throws {
        for delay in [0, 1, 5, 20, 60] {
            // 1,000 seconds of ticks, far longer than any wait for the cancellation: on a loaded
            // machine (the whole suite in parallel under ThreadSanitizer) the test's task once
            // waited some 20 seconds to run, and a shorter stream had ended by itself.
            let ticks = [ResponsePlayback.Step.part(Data("t".utf8)), .pause(0.05)]
            let steps = Array(Array(repeating: ticks, count: 20_000).joined())
            let transport = ScriptedTransport { _ in (200, [:], steps) }
            let recorder = StreamRecorder()
            let exchange = stream(SessionManager(transport: transport), recorder: recorder)
            try await Task.sleep(for: .milliseconds(delay))
            exchange.cancel()
            exchange.cancel()
            #expect(await recorder.ended())
            try await Task.sleep(for: .milliseconds(50))
            #expect(recorder.endCount == 1)
            #expect((recorder.endError as? URLError)?.code == .cancelled)
            #expect(recorder.events.last == .end("URLError"))
        }
    }

    @Test func aManagerWithoutAStreamOfItsOwnPlaysTheWholeResponse() async throws {
        let mock = MockNetworkSessionManager(responses: [.success(body: Data("whole".utf8))])
        let recorder = StreamRecorder()
        let exchange = mock.stream(URLRequest(url: url), options: RequestOptions(), to: recorder)
        recorder.exchange = exchange
        #expect(await recorder.ended())
        #expect(recorder.events == [.head(200), .part("whole"), .end(nil)])
    }
}

/// A transport that keeps only weak references to what it hands out, so a test can tell that
/// nothing of a finished exchange stays alive.
private final class WatchedTransport: Transport {
    private struct Watched: @unchecked Sendable {
        weak var receiver: (any ResponseReceiver)?
        weak var exchange: ResponseRelay?
    }

    private let watched = Locked<[Watched]>([])

    var alive: Int {
        watched.value.filter { $0.receiver != nil || $0.exchange != nil }.count
    }

    /// Which exchanges, in the order sent, are still alive, and whether by receiver or relay.
    var aliveDescription: String {
        watched.value.enumerated().filter { $0.element.receiver != nil || $0.element.exchange != nil }
            .map { "#\($0.offset) receiver: \($0.element.receiver != nil) relay: \($0.element.exchange != nil)" }
            .joined(separator: ", ")
    }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let relay = ResponseRelay(to: receiver)
        watched.withLock { $0.append(Watched(receiver: receiver, exchange: relay)) }
        let url = attempt.request.url ?? URL(fileURLWithPath: "/")
        DispatchQueue.global().async {
            relay.push(ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headers: [:]))
            relay.push(Data("body".utf8))
            relay.end(nil)
        }
        return relay
    }
}

/// No finished request leaves anything alive: the exchanges and receivers of whole, cached,
/// downloaded, streamed and cancelled requests are all released.
@Suite struct ExchangeLifetimeTests {
    private let url = URL(string: "https://api.strata.test/items") ?? URL(fileURLWithPath: "/")

    @Test func finishedExchangesAndTheirReceiversAreReleased() async throws {
        let transport = WatchedTransport()
        let manager = SessionManager(transport: transport, cache: HTTPCache())
        let (whole, _) = send(URLRequest(url: url), through: manager)
        _ = try #require(await whole.first())
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let (download, _) = send(
            URLRequest(url: url), through: manager, options: RequestOptions(downloadDestination: destination))
        _ = try #require(await download.first())
        let recorder = StreamRecorder()
        recorder.exchange = manager.stream(URLRequest(url: url), options: RequestOptions(), to: recorder)
        #expect(await recorder.ended())
        let cancelled = StreamRecorder()
        cancelled.exchange = manager.stream(URLRequest(url: url), options: RequestOptions(), to: cancelled)
        cancelled.exchange?.cancel()
        #expect(await cancelled.ended())
        recorder.exchange = nil
        cancelled.exchange = nil
        for _ in 0..<200 where transport.alive > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(transport.alive == 0, "\(transport.aliveDescription)")
    }
}
