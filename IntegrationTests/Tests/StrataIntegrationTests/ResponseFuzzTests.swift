import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers made of random pieces of HTTP — status lines of any code and version, fields that frame
/// the body every way and contradict each other, interim responses before the answer, bodies cut
/// short, a byte changed — each followed by a close, a reset or nothing more, and each sent to one
/// of the kinds of request Strata makes: a value in memory, an upload, a download to a file, a
/// `HEAD`, a stream of events or of bytes. Each request completes exactly once within its bound,
/// and the next request to the same server succeeds: nothing of the answer is left behind.
///
/// Fuzzing this way found a status below 100 trapping AsyncHTTPClient, and a head cut short by a
/// close trapping FoundationNetworking (now fault-matrix cases). The seed is fixed, so CI runs the
/// same cases; `STRATA_FUZZ_SEED` and `STRATA_FUZZ_COUNT` explore others. Over URLSession on Linux
/// the answers that trap inside FoundationNetworking (a head a close cuts short, a trailer: the
/// fault matrix's known issues) are left out.
@Suite struct ResponseFuzzTests {
    /// One answer: its bytes, and what the server does after writing them.
    struct Answer: CustomStringConvertible {
        enum Ending: CaseIterable { case close, reset, keepOpen }
        var bytes: [UInt8]
        var ending: Ending
        var description: String { "\(String(decoding: bytes.prefix(240), as: UTF8.self).debugDescription), \(ending)" }

        /// Whether it may leave bytes on a connection that libcurl uses again: the server keeps the
        /// connection open, or an interim response comes first (whose answer the fuzzed bytes
        /// after it may not end where libcurl reads it to).
        var mayLeaveBytes: Bool { ending == .keepOpen || bytes.starts(with: Array("HTTP/1.1 1".utf8)) }

        /// Whether FoundationNetworking traps on it before any delegate is asked.
        var trapsFoundationNetworking: Bool {
            let text = String(decoding: bytes, as: UTF8.self)
            let afterLastHead = text.components(separatedBy: "\r\n\r\n").last ?? ""
            let cutShort = !text.contains("\r\n\r\n") || afterLastHead.lowercased().contains("http/")
            return (cutShort && ending != .keepOpen) || text.contains("\r\n0\r\nX-Trailer")
        }

        static func random(using random: inout SeededGenerator) -> Answer {
            var text = ""
            if Int.random(in: 0..<5, using: &random) == 0 {
                text += [
                    "HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n",
                    "HTTP/1.1 102 Processing\r\n\r\n", "HTTP/1.1 199 Odd\r\n\r\n",
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
                ].pick(using: &random)
            }
            let code = Int.random(in: 0..<1000, using: &random)
            let version = ["HTTP/1.1", "HTTP/1.0", "HTTP/1.1", "HTTP/0.9", "HTTP/2", "HTTP/1.2", "http/1.1", "HTTP/11"]
            let status = [
                String(code), String(format: "%03d", code), "200", "204", "304", "302", "401", "503", "-1", "2000",
                "20", "",
            ]
            text += "\(version.pick(using: &random)) \(status.pick(using: &random))"
            text += ["OK", "", " ", " caf\u{E9}", " a b c"].pick(using: &random) + "\r\n"
            let body = ["{}", "", "hello world", String(repeating: "z", count: 70_000)].pick(using: &random)
            var chunked = false
            for _ in 0..<Int.random(in: 0..<7, using: &random) {
                let field = [
                    "Content-Length: \(body.utf8.count)", "Content-Length: \(Int.random(in: 0..<100, using: &random))",
                    "Content-Length: -1", "Content-Length: 99999999999999999999", "Content-Length: 1, 2",
                    "Transfer-Encoding: chunked", "Transfer-Encoding: gzip, chunked", "Transfer-Encoding: identity",
                    "Connection: close", "Connection: keep-alive", "Connection: upgrade", "Upgrade: websocket",
                    "Location: /answered", "Location: //elsewhere", "Location: http://[::1",
                    "Location: http://127.0.0.1:0/",
                    "Content-Encoding: gzip", "Content-Encoding: deflate", "Content-Encoding: br",
                    "Content-Encoding: zstd", "Content-Encoding: gzip, br",
                    "Set-Cookie: a=b; Domain=127.0.0.1", "Retry-After: 0", "Retry-After: 1e99",
                    "WWW-Authenticate: Basic",
                    "Trailer: X-Trailer", "Content-Type: text/event-stream",
                    "Content-Type: application/json; charset=utf-16",
                    "Cache-Control: max-age=60", "Vary: *", "ETag: \"x\"", "Age: -5", "X-Control: \u{1}", ": no-name",
                    "NoColon", "Keep-Alive: timeout=0", "Content-Range: bytes 0-1/2", "Expect: 100-continue",
                ].pick(using: &random)
                chunked = chunked || field.hasSuffix("chunked")
                text += field + "\r\n"
            }
            text += "\r\n"
            if chunked, Int.random(in: 0..<3, using: &random) != 0 {
                text += [
                    "\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n", "5\r\nabc\r\n0\r\n\r\n", "zz\r\n",
                    "3\r\nabc\r\n0\r\nX-Trailer: y\r\n\r\n", "ffffffffffffffffff\r\n", "3;ext=1\r\nabc\r\n0\r\n\r\n",
                    "",
                ].pick(using: &random)
            } else {
                text += body
            }
            var bytes = Array(text.utf8)
            if Int.random(in: 0..<4, using: &random) == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            }
            if Int.random(in: 0..<6, using: &random) == 0, !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            return Answer(bytes: bytes, ending: Ending.allCases.pick(using: &random))
        }
    }

    /// The kinds of request an answer goes to.
    enum Kind: CaseIterable { case value, upload, download, head, events, bytes }

    @Test func everyRequestCompletesOnceAndLeavesTheServerUsable() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["STRATA_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_F022
        let count = environment["STRATA_FUZZ_COUNT"].flatMap { Int($0) } ?? 120
        var random = SeededGenerator(seed: seed)
        var sent = 0
        for index in 0..<count {
            let answer = Answer.random(using: &random)
            let kind = Kind.allCases.pick(using: &random)
            if TestTransport.current == .urlSession, answer.trapsFoundationNetworking { continue }
            sent += 1
            let outcome = try await send(answer, as: kind)
            let label = "seed \(seed) case \(index), \(kind), answer \(answer)"
            #expect(outcome.calls == 1, "\(label): \(outcome.calls) completions")
            #expect(outcome.elapsed < .seconds(4), "\(label): took \(outcome.elapsed)")
            // Over URLSession, libcurl sends the next request on a connection the answer left bytes
            // on (a body after a `204` or a `HEAD` answer, one past a length it read otherwise, the
            // rest after an interim response and an answer libcurl read differently) and reads
            // them as its answer. Bytes that are not HTTP fail it at once, and it goes out again
            // (`LeftoverBytesTests`); the rest of a response's head is waited for, until the
            // request's deadline. Over AsyncHTTPClient it goes on a clean connection.
            if TestTransport.current == .urlSession, answer.mayLeaveBytes, let next = outcome.next {
                guard case .timedOut = next else {
                    Issue.record("\(label): the next request failed: \(next)")
                    continue
                }
            } else {
                #expect(outcome.next == nil, "\(label): the next request failed: \(String(describing: outcome.next))")
            }
        }
        print("response fuzz over \(TestTransport.current): \(sent) of \(count) answers (seed \(seed))")
    }

    /// Sends a request of `kind` to a server that gives it `answer`, then a plain `GET` that it
    /// answers well.
    private func send(
        _ answer: Answer, as kind: Kind
    ) async throws -> (calls: Int, elapsed: Duration, next: NetworkError?) {
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                guard head.contains(" /fuzzed ") else {
                    guard connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") else { return }
                    continue
                }
                connection.write(answer.bytes)
                switch answer.ending {
                case .close: return connection.close()
                case .reset: return connection.reset()
                case .keepOpen: continue
                }
            }
        }
        defer { server.shutdown() }
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 1),
            sessionManager: SessionManager.underTest())
        let transfer = DefaultDataTransferService(networkService: network, completionQueue: .global())
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let streamed = RequestOptions(streamIdleTimeout: 1)
        let recorder = CompletionRecorder<Void>()
        let done: @Sendable (Any) -> Void = { _ in recorder.record(()) }
        let started = ContinuousClock.now
        switch kind {
        case .value:
            transfer.request(with: Endpoint<Data>(path: "fuzzed"), completion: done)
        case .upload:
            transfer.request(
                with: Endpoint<Data>(
                    path: "fuzzed", method: .post, bodyEncoding: UploadEncoding.data(Data(count: 300_000))),
                completion: done)
        case .download:
            transfer.request(
                with: Endpoint<Empty>(
                    path: "fuzzed", options: RequestOptions(downloadDestination: folder.appendingPathComponent("body"))),
                completion: done)
        case .head:
            transfer.request(with: Endpoint<Data>(path: "fuzzed", method: .head), completion: done)
        case .events:
            transfer.stream(
                Endpoint<Void>(path: "fuzzed", options: streamed), decoding: ServerSentEventDecoder(), on: nil,
                receive: { _ in }, completion: done)
        case .bytes:
            transfer.stream(
                Endpoint<Void>(path: "fuzzed", options: streamed), decoding: ByteChunks(), on: nil,
                receive: { _ in }, completion: done)
        }
        _ = await recorder.first(timeout: 10)
        let elapsed = (recorder.instants.first ?? .now) - started
        try await Task.sleep(for: .milliseconds(50))  // a second completion would come by now
        do {
            _ = try await network.request(endpoint: Endpoint<Data>(path: "next"))
            return (recorder.callCount, elapsed, nil)
        } catch {
            return (recorder.callCount, elapsed, error)
        }
    }
}

extension Array {
    /// One of the elements, drawn from `random`; the array is never empty here.
    fileprivate func pick(using random: inout SeededGenerator) -> Element {
        self[Int.random(in: 0..<count, using: &random)]
    }
}
