import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Streamed responses over the transport under test, against the loopback server: elements as
/// they are sent, the limits and deadlines of a stream, bounded memory, and cancellation.
@Suite struct StreamingTests {
    @Test func eventsArriveAsTheServerSendsThem() async throws {
        try await Harness.with { (harness) async throws in
            let started = ContinuousClock.now
            var arrivals: [(String, Duration)] = []
            for try await event in harness.network.stream(
                endpoint: Endpoint<Void>(path: "sse", queryParameters: ["count": "4", "interval": "150"]),
                decoding: .serverSentEvents())
            {
                arrivals.append((event.data, ContinuousClock.now - started))
            }
            #expect(arrivals.map(\.0) == ["event 1", "event 2", "event 3", "event 4"])
            // The first came long before the last was sent: nothing waited for the whole body.
            #expect(arrivals[0].1 < .milliseconds(400), "\(arrivals)")
            #expect(arrivals[3].1 >= .milliseconds(400), "\(arrivals)")
        }
    }

    @Test func jsonLinesAreDecodedOneLineAtATime() async throws {
        struct Row: Decodable, Equatable, Sendable { let id: Int }
        try await Harness.with { (harness) async throws in
            var rows: [Row] = []
            for try await row in harness.transfer.stream(
                Endpoint<Row>(path: "jsonl", queryParameters: ["count": "50", "interval": "2"]))
            {
                rows.append(row)
            }
            #expect(rows == (1...50).map(Row.init))
        }
    }

    @Test func aCutStreamEndsWithATransportErrorAfterWhatArrived() async throws {
        try await Harness.with { (harness) async throws in
            var seen: [String] = []
            do {
                for try await event in harness.network.stream(
                    endpoint: Endpoint<Void>(path: "sse", queryParameters: ["count": "2", "cut": "1"]),
                    decoding: .serverSentEvents())
                {
                    seen.append(event.data)
                }
                Issue.record("a cut stream must fail")
            } catch {
                guard case NetworkError.transport = error else {
                    Issue.record("expected a transport error, got \(error)")
                    return
                }
            }
            #expect(seen == ["event 1", "event 2"])
        }
    }

    @Test func aTrickleHitsTheIdleTimeout() async throws {
        try await Harness.with { (harness) async throws in
            let started = ContinuousClock.now
            let result = await collect(
                harness.network.stream(
                    endpoint: Endpoint<Void>(
                        path: "trickle", queryParameters: ["interval": "1000"],
                        options: RequestOptions(streamIdleTimeout: 0.4)),
                    decoding: .bytes))
            guard case .failure(.stream(.idleTimeout(let seconds))) = result else {
                Issue.record("expected an idle timeout, got \(result)")
                return
            }
            #expect(seconds == 0.4)
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }

    /// A stream in a content coding is decoded as its bytes come, not once the coding's data
    /// ends: each event of a gzip member arrives before the server sends the next, over both
    /// transports alike.
    @Test func eventsInACompressedStreamArriveAsTheyCome() async throws {
        try await Harness.with { (harness) async throws in
            let started = ContinuousClock.now
            var arrivals: [(data: String, after: Duration)] = []
            for try await event in harness.network.stream(
                endpoint: Endpoint<Void>(
                    path: "sse", queryParameters: ["count": "3", "interval": "1000", "gzip": "1"]),
                decoding: .serverSentEvents())
            {
                arrivals.append((event.data, ContinuousClock.now - started))
            }
            #expect(arrivals.map(\.data) == ["event 1", "event 2", "event 3"])
            // The server sends the events at about 0, 1 and 2 seconds.
            for (index, arrival) in arrivals.enumerated() {
                #expect(arrival.after < .milliseconds(1_000 * index + 800), "event \(index + 1): \(arrival.after)")
            }
        }
    }

    /// A decompression bomb ends a stream as it ends a request, over both transports alike.
    @Test func aDecompressionBombEndsTheStream() async throws {
        try await Harness.with { (harness) async throws in
            let result = await collect(
                harness.network.stream(endpoint: Endpoint<Void>(path: "gzip-bomb"), decoding: .bytes))
            guard case .failure(.transport(let error)) = result, error.code == .cannotDecodeContentData else {
                Issue.record("expected cannotDecodeContentData, got \(result)")
                return
            }
        }
    }

    /// Once its head is accepted, a stream is bounded by its own deadlines, not by the request's
    /// `timeoutInterval`, which bounds the wait for the head — neither as a whole (AsyncHTTPClient's
    /// deadline) nor between parts (`URLSession`'s idle timeout): over every transport.
    @Test func aStreamOutlivesItsRequestTimeout() async throws {
        try await Harness.with { (harness) async throws in
            let started = ContinuousClock.now
            var events: [String] = []
            for try await event in harness.network.stream(
                endpoint: Endpoint<Void>(
                    path: "sse", queryParameters: ["count": "3", "interval": "1300"], timeoutInterval: 1),
                decoding: .serverSentEvents())
            {
                events.append(event.data)
            }
            #expect(events == ["event 1", "event 2", "event 3"])
            #expect(ContinuousClock.now - started >= .milliseconds(2_600))
        }
    }

    @Test func anEndlessStreamEndsAtItsDeadline() async throws {
        try await Harness.with { (harness) async throws in
            let started = ContinuousClock.now
            let result = await collect(
                harness.network.stream(
                    endpoint: Endpoint<Void>(
                        path: "endless", queryParameters: ["piece": "1024"],
                        options: RequestOptions(streamDeadline: 0.5)),
                    decoding: .bytes))
            guard case .failure(.stream(.deadlineExceeded)) = result else {
                Issue.record("expected the deadline, got \(result)")
                return
            }
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }

    @Test func aLineThatNeverEndsIsCutAtTheLimitInBoundedMemory() async throws {
        try await Harness.with { (harness) async throws in
            // `/endless` sends generated bytes, which hold a line feed (10) every 251 bytes; `/trickle`
            // would take too long. A line limit under 251 bytes is crossed by the first line.
            let result = await collect(
                harness.network.stream(
                    endpoint: Endpoint<Void>(path: "endless", queryParameters: ["piece": "65536"]),
                    decoding: .lines(maximumLength: 200)))
            guard case .failure(.stream(.lineTooLong(200))) = result else {
                Issue.record("expected lineTooLong, got \(result)")
                return
            }
        }
    }

    /// Back-pressure: over AsyncHTTPClient, a consumer slower than the network holds the server
    /// back — what the server has written beyond what the consumer has taken stays within the
    /// socket buffers and the transport's read-ahead, however long the stream. `URLSession` cannot
    /// be held back (its data tasks push, and `suspend()`/`resume()` restarts them): there the
    /// stream's buffer limit bounds what is kept — the consumer gets every byte received, in
    /// order, then the typed end, and the request is cancelled, so the server stops sending.
    /// (The resident memory of a slow consumer is measured in a process of its own:
    /// `UploadMemoryCheck --stream`.)
    @Test func aSlowConsumerOfAnEndlessStreamHoldsTheServerBackOrEndsAtItsBufferLimit() async throws {
        try await Harness.with { (harness) async throws in
            let key = UUID().uuidString
            let piece = TestReply.generatedBody(size: 65_536)
            let limit = 4 * 1_048_576
            var received = 0
            var mostAhead = 0
            var inOrder = true
            var ending: NetworkError?
            let stream = harness.network.stream(
                endpoint: Endpoint<Void>(
                    path: "endless", queryParameters: ["piece": "65536", "key": .string(key)],
                    options: RequestOptions(streamBufferLimit: limit)),
                decoding: .bytes)
            // Over AsyncHTTPClient the stream never ends: it is read for 3 s. Over URLSession it
            // ends at its buffer limit, once the network has got that far ahead of the consumer,
            // which takes longer on a slow machine (under ThreadSanitizer, 3 s was not enough).
            // A server 256 MiB ahead ends the reading too: the bound has failed by then, and a
            // minute more of an unbounded buffer over loopback would take gigabytes.
            let reading: Duration = TestTransport.current == .asyncHTTPClient ? .seconds(3) : .seconds(60)
            let started = ContinuousClock.now
            do {
                for try await chunk in stream {
                    for (index, byte) in chunk.enumerated() where byte != piece[(received + index) % piece.count] {
                        inOrder = false
                        break
                    }
                    received += chunk.count
                    try await Task.sleep(for: .milliseconds(2))
                    mostAhead = max(mostAhead, harness.server.state.streamedBytes(for: key) - received)
                    if ContinuousClock.now - started > reading || mostAhead > 256 * 1_048_576 { break }
                }
            } catch {
                ending = error as? NetworkError
            }
            #expect(received > 1_048_576)
            #expect(inOrder, "the bytes did not arrive as sent over \(TestTransport.current)")
            if TestTransport.current == .asyncHTTPClient {
                #expect(ending == nil)
                // Unbounded, a loopback server would be gigabytes ahead in 3 s.
                #expect(
                    mostAhead < 48 * 1_048_576,
                    "the server got \(mostAhead >> 20) MiB ahead, \(received >> 20) MiB taken")
            } else {
                guard case .stream(.consumerFellBehind(limit: limit))? = ending else {
                    Issue.record("expected the buffer limit to end the stream, got \(String(describing: ending))")
                    return
                }
                // Every byte queued reached the consumer before the end: the limit is passed by the
                // bytes queued and 64 more for each part queued (`ResponseRelay`'s slot overhead), so
                // by at least the limit less the slots of parts of 4 KiB or more (libcurl's loopback
                // reads bring up to 16 KiB).
                #expect(received > limit - limit / 64)
                // The request was cancelled: once what was in flight has drained, nothing more is sent.
                try await Task.sleep(for: .milliseconds(500))
                let sent = harness.server.state.streamedBytes(for: key)
                try await Task.sleep(for: .milliseconds(500))
                #expect(harness.server.state.streamedBytes(for: key) == sent)
            }
        }
    }

    @Test func cancellingAtAnyPointEndsOnce() async throws {
        try await Harness.with { (harness) async throws in
            for delay in [0, 2, 10, 50, 150] {
                let ends = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
                let call = harness.network.stream(
                    endpoint: Endpoint<Void>(path: "sse", queryParameters: ["count": "20", "interval": "20"]),
                    decoding: .serverSentEvents(), receive: { _ in }, completion: ends.record)
                try await Task.sleep(for: .milliseconds(delay))
                call.cancel()
                let end = try #require(await ends.first(timeout: 5))
                guard case .failure(let error) = end, error.isCancelled else {
                    Issue.record("expected cancelled after \(delay) ms, got \(end)")
                    continue
                }
                try await Task.sleep(for: .milliseconds(50))
                #expect(ends.callCount == 1)
            }
        }
    }

    @Test func aFailureBeforeTheHeadIsRetriedThenTheStreamFlows() async throws {
        try await Harness.with(retriers: [RetryPolicy(maximumAttempts: 3, initialDelay: 0.01)]) {
            (harness) async throws in
            let key = UUID().uuidString
            var seen: [String] = []
            // `/retry-after/503` answers 503 once, then the echo: a JSON body, read here as lines.
            for try await line in harness.network.stream(
                endpoint: Endpoint<Void>(
                    path: "retry-after/503", queryParameters: ["key": .string(key), "seconds": "0"]),
                decoding: .lines())
            {
                seen.append(line)
            }
            #expect(harness.server.state.attemptCount(for: key) == 2)
            #expect(!seen.isEmpty)
        }
    }

    /// Collects a stream to its end: the elements' count, or the error.
    private func collect<Element: Sendable>(
        _ stream: ResponseStream<Element, NetworkError>
    ) async -> Result<Int, NetworkError> {
        var count = 0
        do {
            for try await _ in stream { count += 1 }
            return .success(count)
        } catch {
            return .failure(error)
        }
    }
}
