import Foundation
import NIOConcurrencyHelpers
import Strata
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Starlette server `STRATA_STARLETTE` names.
private let starlette = ProcessInfo.processInfo.environment["STRATA_STARLETTE"].flatMap(URL.init(string:))

/// Strata's streaming API against servers nobody here wrote: Starlette's streamed responses and
/// sse-starlette's event streams, under uvicorn (`IntegrationTests/Interop/streaming_app.py`).
/// The loopback server's event streams were written with the parser that reads them; here the
/// framing is the libraries' own — `CRLF`-ended event fields, comments sent as pings, a `retry`
/// field, bodies chunked and gzipped as they are produced, a server that sends the request body
/// back as it reads it, and one that answers before it has read the body.
///
/// Runs when `STRATA_STARLETTE` names the server (`scripts/interop.sh` installs and starts one, and
/// `scripts/test.sh` runs it over both transports); otherwise the suite is skipped.
@Suite(.enabled(if: starlette != nil, "STRATA_STARLETTE names no Starlette server"))
struct StarletteStreamingTests {
    private var base: URL { starlette ?? URL(fileURLWithPath: "/") }

    private func services() -> (network: DefaultNetworkService, transfer: DefaultDataTransferService) {
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: base, timeoutInterval: 10),
            sessionManager: SessionManager.underTest())
        let transfer = DefaultDataTransferService(
            networkService: network, completionQueue: DispatchQueue(label: "StarletteStreamingTests"))
        return (network, transfer)
    }

    /// What the server saw of the client under `key`.
    private struct ServerState: Decodable, Sendable {
        /// How many endless streams ended by the client's leaving.
        let left: Int
        /// The `Last-Event-ID` of each connection of an event source (`nil` for none).
        let lastEventIDs: [String?]
    }

    private func state(_ key: String, over transfer: DefaultDataTransferService) async throws -> ServerState {
        try await transfer.request(Endpoint<ServerState>(path: "state", queryParameters: ["key": .string(key)]))
    }

    @Test func eventsFramedBySSEStarletteArriveWholeWithTheirFields() async throws {
        var events: [ServerSentEvent] = []
        for try await event in services().transfer.events(Endpoint<Void>(path: "events")) {
            events.append(event)
        }
        #expect(events.count == 50)
        #expect(events.allSatisfy { $0.event == "tick" })
        #expect(events.map(\.lastEventID) == (0..<50).map(String.init))
        #expect(events.last?.data == "line one 49\nline two 49")
    }

    @Test func eventsWithPingsBetweenThemComeThroughTheCallbackAPI() async throws {
        let received = NIOLockedValueBox<[ServerSentEvent]>([])
        let ended = CompletionRecorder<Result<Void, DataTransferError>>()
        // An event every 1.2 s, with a ping (a comment) every second between them.
        services().transfer.events(
            with: Endpoint<Void>(path: "events", queryParameters: ["count": 3, "interval": 1.2]),
            receive: { event in received.withLockedValue { $0.append(event) } },
            completion: ended.record)
        let end = try #require(await ended.first(timeout: 10))
        #expect(throws: Never.self) { try end.get() }
        #expect(received.withLockedValue { $0.map(\.data) } == (0..<3).map { "line one \($0)\nline two \($0)" })
        try await Task.sleep(for: .milliseconds(50))
        #expect(ended.callCount == 1)
    }

    @Test func anEventStreamBehindARedirectIsRead() async throws {
        var count = 0
        for try await _ in services().transfer.events(Endpoint<Void>(path: "redirect")) {
            count += 1
        }
        #expect(count == 5)
    }

    @Test func anEventSourceReconnectsAfterTheServersRetryWithTheLastEventIDUntilA204() async throws {
        let (network, transfer) = services()
        let key = UUID().uuidString
        var ids: [String] = []
        let started = ContinuousClock.now
        for try await event in network.eventSource(
            endpoint: Endpoint<Void>(path: "reconnecting", queryParameters: ["key": .string(key)]))
        {
            ids.append(event.lastEventID)
        }
        #expect(ids == (0..<9).map(String.init))
        // Three waits of the server's `retry: 100`, not of the default reconnection time.
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(try await state(key, over: transfer).lastEventIDs == [nil, "2", "5", "8"])
    }

    @Test func leavingTheLoopOfAnEndlessStreamClosesItAtTheServer() async throws {
        let (_, transfer) = services()
        let key = UUID().uuidString
        var taken = 0
        for try await _ in transfer.events(Endpoint<Void>(path: "endless", queryParameters: ["key": .string(key)])) {
            taken += 1
            if taken == 5 { break }
        }
        let deadline = ContinuousClock.now + .seconds(3)
        var left = 0
        while left == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            left = try await state(key, over: transfer).left
        }
        #expect(left == 1, "the server still streams to a loop that has left")
    }

    private struct Row: Decodable, Sendable, Equatable {
        let id: Int
        let name: String
    }

    @Test func jsonLinesStreamedChunkedAndGzippedDecodeInOrder() async throws {
        var rows: [Row] = []
        for try await row in services().transfer.stream(Endpoint<Row>(path: "json-lines")) {
            rows.append(row)
        }
        #expect(rows == (0..<500).map { Row(id: $0, name: "item \($0)") })
    }

    @Test func linesOfAGzippedStreamComeWhole() async throws {
        let (network, transfer) = services()
        var lines: [String] = []
        for try await line in network.stream(endpoint: Endpoint<Void>(path: "text"), decoding: .lines()) {
            lines.append(line)
        }
        let expected = (0..<2000).map { String(format: "row %05d ", $0) + String(repeating: "x", count: 90) }
        #expect(lines == expected)
        // The same body whole, through the data-transfer layer.
        let whole = try await transfer.request(Endpoint<Data>(path: "text"))
        #expect(whole == Data(expected.map { $0 + "\n" }.joined().utf8))
    }

    @Test func sixtyFourMebibytesStreamedInChunksArriveInOrder() async throws {
        // The server repeats the bytes 0 to 255; each part is compared with the run it should hold.
        let run = Data((0..<(1 << 16) + 256).map { UInt8(truncatingIfNeeded: $0) })
        var received = 0
        var inOrder = true
        for try await chunk in services().network.stream(
            endpoint: Endpoint<Void>(path: "octets", queryParameters: ["mib": 64]), decoding: .bytes)
        {
            var piece = chunk.startIndex
            while piece < chunk.endIndex {
                let count = min(1 << 16, chunk.endIndex - piece)
                let start = (received + piece - chunk.startIndex) % 256
                inOrder = inOrder && chunk[piece..<piece + count] == run[start..<start + count]
                piece += count
            }
            received += chunk.count
        }
        #expect(received == 64 << 20)
        #expect(inOrder)
    }

    @Test func anUploadSentBackAsTheServerReadsItArrivesWhole() async throws {
        let payload = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let body = try await services().transfer.request(
            Endpoint<Data>(
                path: "echo", method: .post,
                bodyEncoding: UploadEncoding.data(payload, contentType: "application/octet-stream")))
        #expect(body == payload)
    }

    @Test(arguments: ["chunked", "length"])
    func anUploadAnsweredBeforeItIsReadGetsTheAnswerAndTheStackGoesOn(framing: String) async throws {
        let transfer = services().transfer
        let payload = Data(repeating: 0x61, count: 3_000_000)
        for _ in 0..<3 {
            let started = ContinuousClock.now
            let answer = try await transfer.request(
                Endpoint<Data>(
                    path: "answer-early", method: .post, queryParameters: ["framing": .string(framing)],
                    bodyEncoding: UploadEncoding.data(payload, contentType: "application/octet-stream")))
            #expect(answer == Data("early".utf8))
            _ = try await state("none", over: transfer)
            #expect(ContinuousClock.now - started < .seconds(2))
        }
    }
}
