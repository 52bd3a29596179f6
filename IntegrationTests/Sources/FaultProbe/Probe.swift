import Foundation
import NIOConcurrencyHelpers
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One case of the fault matrix: what the server does, what the client asks for, and how it may end.
struct Scenario {
    /// What the server does with each connection.
    var script: @Sendable (RawConnection) -> Void
    /// How the request ends: the outcomes allowed (see ``Probe/outcome(_:)``).
    var expected: Set<String>
    /// The request's timeout.
    var timeout: TimeInterval = 3
    /// How long the case may take, from the request to its completion.
    var bound: Duration = .seconds(5)
    /// How the response is read.
    var response: ResponseKind = .data
    /// A POST with a body, rather than a GET.
    var posts = false
    /// The size of a POST's body.
    var postedBytes = 4_096
    /// For a streamed response: how long a part may be awaited, and the whole stream may last.
    var streamIdleTimeout: TimeInterval?
    var streamDeadline: TimeInterval?
    /// For a streamed response: the most the consumer may fall behind a transport that cannot hold
    /// the server back; `nil`, the default.
    var streamBufferLimit: Int?
    /// Whether the consumer takes a millisecond over each element.
    var slowConsumer = false
    /// For a body read whole: what it must be when the request succeeds.
    var body: String?
    /// For a streamed response: how many elements must reach the consumer before its end (at
    /// least, before an error; exactly, when the stream ends well).
    var elementsBeforeEnd: Int?
    /// How long after the request the caller cancels it, if it does.
    var cancelAfter: Duration?
    /// For a download: whether the caller follows its progress (over URLSession, a download task
    /// with a delegate; without, one with a completion handler).
    var followsProgress = false

    enum ResponseKind {
        /// The body as it is.
        case data
        /// JSON, into a `ParameterValue`.
        case json
        /// XML, into ``Probe/Note``.
        case xml
        /// Streamed, as Server-Sent Events.
        case events
        /// Streamed, as JSON Lines of ``Probe/Note``.
        case jsonLines
        /// Downloaded to a file, which must hold the body after a success and be gone after a failure.
        case download
    }
}

enum Probe {
    /// What XML cases decode into.
    struct Note: Decodable, Sendable {
        let v: String?
    }

    static func run(_ fault: FaultCase) async -> FaultReport {
        if fault == .downgrade {
            return await downgrade()
        }
        let scenario = scenario(for: fault)
        let server: RawServer
        do {
            server = try RawServer(script: scenario.script)
        } catch {
            return FaultReport(
                fault: fault, outcome: "none", elapsedMilliseconds: 0, calls: 0, boundMilliseconds: 0,
                problems: ["the raw server did not start: \(error)"])
        }
        defer { server.shutdown() }
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: scenario.timeout),
                sessionManager: SessionManager.underTest()
            ),
            completionQueue: .global()
        )
        let method: HTTPMethod = scenario.posts ? .post : .get
        let body: [String: ParameterValue] =
            scenario.posts ? ["payload": .string(String(repeating: "x", count: scenario.postedBytes))] : [:]
        switch scenario.response {
        case .data:
            let result = await measure(Endpoint<Data>(path: "fault", method: method, bodyParameters: body), transfer)
            var report = report(fault, scenario, result)
            if let expected = scenario.body, case .success(let data) = result.result, data != Data(expected.utf8) {
                report.problems.append(
                    "the body was \(String(decoding: data, as: UTF8.self).debugDescription), not \(expected.debugDescription)"
                )
            }
            return report
        case .json:
            return report(fault, scenario, await measure(Endpoint<ParameterValue>(path: "fault"), transfer))
        case .download:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fault-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = folder.appendingPathComponent("body")
            var progress: (@Sendable (Progress) -> Void)?
            if scenario.followsProgress {
                progress = { _ in }
            }
            let result = await measure(
                Endpoint<Empty>(
                    path: "fault", options: RequestOptions(downloadDestination: destination, downloadProgress: progress)
                ),
                transfer, cancellingAfter: scenario.cancelAfter)
            var report = report(fault, scenario, result)
            let saved = FileManager.default.contents(atPath: destination.path)
            switch (result.result, saved) {
            case (.success, let saved?):
                if let expected = scenario.body, saved != Data(expected.utf8) {
                    report.problems.append(
                        "the file held \(saved.count) bytes, not the \(expected.utf8.count) of the body")
                }
            case (.success, nil): report.problems.append("a download succeeded without its file")
            case (_, let saved?): report.problems.append("a failed download left a file of \(saved.count) bytes")
            case (_, nil): break
            }
            let others = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
                $0 != destination.lastPathComponent
            }
            if !others.isEmpty {
                report.problems.append("the download left \(others) next to its destination")
            }
            return report
        case .events, .jsonLines:
            let endpoint = Endpoint<Note>(
                path: "fault",
                options: RequestOptions(
                    streamIdleTimeout: scenario.streamIdleTimeout, streamDeadline: scenario.streamDeadline,
                    streamBufferLimit: scenario.streamBufferLimit ?? RequestOptions.defaultStreamBufferLimit))
            return report(
                fault, scenario,
                await measureStream(
                    endpoint, events: scenario.response == .events, slow: scenario.slowConsumer, transfer))
        case .xml:
            let endpoint = Endpoint<Note>(path: "fault", responseDecoder: XMLResponseDecoder())
            let result = await measure(endpoint, transfer)
            var report = report(fault, scenario, result)
            let secret = (try? String(contentsOfFile: "/etc/hostname", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if case .success(let note) = result.result, let secret, !secret.isEmpty, note.v?.contains(secret) == true {
                report.problems.append("an external entity was resolved: the value holds a local file")
            }
            return report
        }
    }

    // MARK: - The scenarios

    static func scenario(for fault: FaultCase) -> Scenario {
        switch fault {
        case .closeBeforeAnyByte:
            return Scenario(
                script: {
                    $0.readHead(); $0.close()
                }, expected: ["transport"])
        case .resetBeforeBody:
            return Scenario(
                script: { connection in
                    connection.readHead()
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n")
                    Thread.sleep(forTimeInterval: 0.05)
                    connection.reset()
                }, expected: ["transport"])
        case .resetMidBody:
            return Scenario(
                script: { connection in
                    connection.readHead()
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n")
                    connection.write(String(repeating: "a", count: 40))
                    Thread.sleep(forTimeInterval: 0.1)
                    connection.reset()
                }, expected: ["transport"])
        case .contentLengthLongerThanBody:
            return answer(head: "HTTP/1.1 200 OK\r\nContent-Length: 1000", body: "0123456789", expected: ["transport"])
        case .contentLengthShorterThanBody:
            return answer(
                head: "HTTP/1.1 200 OK\r\nContent-Length: 5", body: "0123456789", expected: ["value"], value: "01234")
        case .conflictingContentLengths:
            return answer(
                head: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 10", body: "0123456789",
                expected: ["transport"])
        case .hugeContentLength:
            return answer(
                head: "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999", body: "ok", expected: ["transport"])
        case .negativeContentLength:
            return answer(head: "HTTP/1.1 200 OK\r\nContent-Length: -5", body: "whatever", expected: ["transport"])
        case .chunkedWithContentLength:
            return answer(
                head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3",
                body: "5\r\nhello\r\n0\r\n\r\n", expected: ["value", "transport"], value: "hello")
        case .repeatedContentLength:
            return answer(
                head: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2", body: "ok",
                expected: read(byAsyncHTTPClient: false, byFoundationNetworking: true), value: "ok")
        case .contentLengthList:
            return answer(
                head: "HTTP/1.1 200 OK\r\nContent-Length: 2, 2", body: "ok",
                expected: read(byAsyncHTTPClient: false, byFoundationNetworking: true), value: "ok")
        case .signedContentLength:
            return answer(head: "HTTP/1.1 200 OK\r\nContent-Length: +2", body: "ok", expected: ["transport"])
        case .chunkSizeOverflow:
            return raw(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                    + "fffffffffffffffffffff\r\nhello\r\n0\r\n\r\n", expected: ["transport"])
        case .unknownTransferCoding:
            return raw(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: x-custom\r\nConnection: close\r\n\r\nraw bytes",
                expected: ["transport"])
        case .gzipTransferCoding:
            return Scenario(
                script: { connection in
                    connection.readHead()
                    let size = String(squaresGzip.count, radix: 16)
                    connection.write(
                        Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\(size)\r\n".utf8)
                            + squaresGzip + Array("\r\n0\r\n\r\n".utf8))
                    connection.close()
                }, expected: ["value"], body: squares)
        case .unaskedSwitchingProtocols:
            return raw(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x-other\r\nConnection: Upgrade\r\n\r\n"
                    + "\u{1}\u{2}bytes of another protocol",
                expected: outcome(overAsyncHTTPClient: "status 101", overFoundationNetworking: "transport"))
        case .malformedStatusLine:
            return raw("HTTP/1.1 two hundred OK?\r\nbroken header line\r\n\r\nbody", expected: ["transport"])
        case .http09Garbage:
            return raw("I am not HTTP at all, only bytes\r\nand more bytes\r\n\r\n", expected: ["transport"])
        case .status999:
            return answer(head: "HTTP/1.1 999 Strange", body: "odd", expected: ["status 999"])
        case .headCutShort:
            return raw("HTTP/1.1 200 OK\r\nX-Partial: yes\r\n", expected: ["transport"])
        // AsyncHTTPClient alone takes these for interim responses and traps at their end or body.
        case .statusZero:
            return answer(head: "HTTP/1.1 000 None\r\nContent-Length: 0", body: "", expected: ["transport"])
        case .statusBelow100WithBody:
            return answer(
                head: "HTTP/1.1 099 Odd\r\nTransfer-Encoding: chunked", body: "4\r\nodd!\r\n0\r\n\r\n",
                expected: ["transport"])
        case .statusBelow100UntilClose:
            return raw("HTTP/1.1 099 Odd\r\nConnection: close\r\n\r\nodd", expected: ["transport"])
        case .statusWithoutReason:
            return raw(
                "HTTP/1.1 200\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                expected: read(byAsyncHTTPClient: true, byFoundationNetworking: false), body: "ok")
        case .emptyReasonPhrase:
            return raw(
                "HTTP/1.1 200 \r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", expected: ["value"], body: "ok")
        case .latin1FieldValue:
            return Scenario(
                script: { connection in
                    connection.readHead()
                    connection.write(
                        Array("HTTP/1.1 200 OK\r\nX-Name: caf".utf8) + [0xE9]
                            + Array("\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8))
                    connection.close()
                }, expected: read(byAsyncHTTPClient: true, byFoundationNetworking: false), body: "ok")
        case .bareLFLineEnds:
            return raw(
                "HTTP/1.1 200 OK\nContent-Length: 2\nConnection: close\n\nok",
                expected: read(byAsyncHTTPClient: false, byFoundationNetworking: false), body: "ok")
        case .obsFoldedField:
            return answer(
                head: "HTTP/1.1 200 OK\r\nX-Folded: one\r\n two\r\nContent-Length: 2", body: "ok",
                expected: read(byAsyncHTTPClient: false, byFoundationNetworking: true), value: "ok")
        case .spaceBeforeColon:
            return answer(
                head: "HTTP/1.1 200 OK\r\nX-Spaced : yes\r\nContent-Length: 2", body: "ok",
                expected: read(byAsyncHTTPClient: false, byFoundationNetworking: false), value: "ok")
        case .continueThenNothing:
            return Scenario(
                script: { connection in
                    connection.readHead()
                    connection.write("HTTP/1.1 100 Continue\r\n\r\n")
                    connection.waitForClose()
                    // The interim response is no answer: the request waits for one, to its deadline.
                }, expected: ["timedOut"], timeout: 1,
                bound: .milliseconds(2_500), posts: true)
        case .answerBeforeBody:
            return refusedUpload(expected: ["status 413"]) { $0.waitForClose(limit: .seconds(10)) }
        case .closeWithBodyUnread:
            return refusedUpload(expected: ["status 413", "transport"]) { $0.close() }
        case .earlyHintsThenAnswer:
            return raw(
                "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                    + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhints",
                expected: ["value"], body: "hints")
        case .unaskedContinuesThenAnswer:
            return raw(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
                    + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nfinal",
                expected: ["value"], body: "final")
        case .badChunkSize:
            return raw(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
                expected: ["transport"])
        case .closeDelimitedBody:
            return raw(
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close", expected: ["value"],
                body: "until the close")
        case .closeDelimitedBodyReset:
            return Scenario(
                script: { connection in
                    connection.readHead()
                    connection.write("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\npart of the bo")
                    Thread.sleep(forTimeInterval: 0.1)
                    connection.reset()
                }, expected: ["transport"])
        case .chunkExtensions:
            return raw(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                    + "5;name=value\r\nhello\r\n1;q=\"quoted\"\r\n!\r\n0\r\n\r\n",
                expected: ["value"], body: "hello!")
        case .chunkedWithTrailers:
            return raw(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\nConnection: close\r\n\r\n"
                    + "5\r\nhello\r\n0\r\nX-Checksum: 5d41402a\r\n\r\n",
                expected: ["value"], body: "hello")
        case .downloadCutShort:
            var scenario = answer(
                head: "HTTP/1.1 200 OK\r\nContent-Length: 100000", body: String(repeating: "d", count: 40_000),
                expected: ["transport"])
            scenario.response = .download
            return scenario
        case .downloadResetMidBody:
            var scenario = Scenario(
                script: { connection in
                    connection.readHead()
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                    connection.write(String(repeating: "d", count: 40_000))
                    Thread.sleep(forTimeInterval: 0.1)
                    connection.reset()
                }, expected: ["transport"], response: .download)
            scenario.followsProgress = true
            return scenario
        case .downloadCancelledMidBody:
            var scenario = Scenario(
                script: { connection in
                    connection.readHead()
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                    connection.write(String(repeating: "d", count: 40_000))
                    connection.waitForClose()
                }, expected: ["cancelled"], response: .download)
            scenario.cancelAfter = .milliseconds(300)
            scenario.followsProgress = true
            return scenario
        case .downloadNotFound:
            var scenario = answer(
                head: "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 40000",
                body: String(repeating: "n", count: 40_000), expected: ["status 404"])
            scenario.response = .download
            scenario.followsProgress = true
            return scenario
        case .downloadCloseDelimited:
            var scenario = raw(
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + String(repeating: "d", count: 40_000),
                expected: ["value"], body: String(repeating: "d", count: 40_000))
            scenario.response = .download
            return scenario
        case .neverAnswers:
            return Scenario(
                script: {
                    $0.readHead(); $0.waitForClose()
                }, expected: ["timedOut"], timeout: 1,
                bound: .milliseconds(2_500))
        case .slowDrip:
            return Scenario(
                script: { connection in
                    connection.readHead()
                    guard connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n") else { return }
                    while connection.write("x") {
                        Thread.sleep(forTimeInterval: 0.1)
                    }
                }, expected: ["timedOut"], timeout: 2, bound: .milliseconds(3_500))
        case .megabyteOfHeaders:
            let filler = (0..<10_000).map { "X-Filler-\($0): " + String(repeating: "f", count: 84) }
            return answer(
                head: (["HTTP/1.1 200 OK"] + filler + ["Content-Length: 2"]).joined(separator: "\r\n"), body: "ok",
                expected: ["transport"])
        case .headerLineFlood:
            // Over URLSession, FoundationNetworking copies the lines read so far for each line
            // (about 3 s for these, on its session's queue): the request's deadline ends it
            // meanwhile, or on a machine fast enough, the value arrives. AsyncHTTPClient refuses a
            // head over 80 KB.
            var scenario = answer(
                head: (["HTTP/1.1 200 OK"] + (0..<20_000).map { "X-\($0): v" } + ["Content-Length: 2"])
                    .joined(separator: "\r\n"), body: "ok", expected: ["transport", "timedOut", "value"],
                value: "ok")
            scenario.timeout = 1
            scenario.bound = .milliseconds(2_500)
            return scenario
        case .invalidGzip:
            return answer(
                head: "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 24",
                body: "this is not gzip at all!", expected: ["transport"])
        case .gzipCutShort:
            return gzipped(Array(squaresGzip.prefix(74)), expected: ["transport"])
        case .brotliCutShort:
            return gzipped(Array(squaresBrotli.prefix(60)), coding: "br", expected: ["transport"])
        case .gzipWithoutTrailer:
            return gzipped(
                Array(squaresGzip.dropLast(8)), expected: read(byAsyncHTTPClient: false, byFoundationNetworking: true))
        case .gzipThenGarbage:
            return gzipped(squaresGzip + Array("not gzip".utf8), expected: ["transport"])
        case .invalidJSON:
            return document(#"{"a": [1, 2"#, type: "application/json", response: .json)
        case .deepJSON:
            let depth = 100_000
            return document(
                String(repeating: "[", count: depth) + String(repeating: "]", count: depth), type: "application/json",
                response: .json)
        case .invalidXML:
            return document("<note><v>x</note>", type: "application/xml", response: .xml)
        case .deepXML:
            let depth = 100_000
            return document(
                String(repeating: "<v>", count: depth) + String(repeating: "</v>", count: depth),
                type: "application/xml", response: .xml)
        case .entityExpansion:
            var entities = #"<!ENTITY l0 "lol">"#
            for level in 1...9 {
                entities += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">"
            }
            return document(
                #"<?xml version="1.0"?><!DOCTYPE note [\#(entities)]><note><v>&l9;</v></note>"#,
                type: "application/xml", response: .xml)
        case .externalEntity:
            var scenario = document(
                #"<?xml version="1.0"?><!DOCTYPE note [<!ENTITY x SYSTEM "file:///etc/hostname">]><note><v>&x;</v></note>"#,
                type: "application/xml", response: .xml)
            scenario.expected = ["value", "parsing"]
            return scenario
        case .redirectToFile:
            return answer(
                head: "HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd", body: "",
                expected: ["redirect.unsupportedScheme"])
        case .redirectToFTP:
            return answer(
                head: "HTTP/1.1 302 Found\r\nLocation: ftp://files.example.com/pub/x", body: "",
                expected: ["redirect.unsupportedScheme"])
        case .invalidLocation:
            return answer(
                head: "HTTP/1.1 301 Moved\r\nLocation: http://[::1", body: "", expected: ["redirect.invalidLocation"])
        case .redirectLoop:
            return answer(head: "HTTP/1.1 302 Found\r\nLocation: /fault", body: "", expected: ["redirect.loop"])
        case .unparsableRedirectHost:
            return answer(
                head: "HTTP/1.1 302 Found\r\nLocation: //ex%20ample.com/x", body: "",
                expected: ["redirect.unsupportedLocation", "redirect.invalidLocation", "transport"])
        case .downgrade:
            return Scenario(script: { $0.close() }, expected: ["redirect.insecureRedirect"])
        case .streamCutMidEvent:
            return stream(["data: one\n\ndata: tw"], then: { $0.reset() }, expected: ["transport"])
        case .streamEndlessLine:
            return stream(
                ["data: "],
                then: { connection in
                    let bytes = [UInt8](repeating: 0x78, count: 65_536)
                    while connection.write(bytes) {}
                }, expected: ["stream.lineTooLong"], bound: .seconds(20))
        case .streamEndlessEvent:
            return stream(
                [],
                then: { connection in
                    let line = "data: " + String(repeating: "y", count: 1_000) + "\n"
                    while connection.write(line) {}
                }, expected: ["stream.eventTooLarge"], bound: .seconds(20))
        case .streamTrickle:
            var scenario = stream(
                [],
                then: { connection in
                    while connection.write(":") { Thread.sleep(forTimeInterval: 1) }
                }, expected: ["stream.idleTimeout"], bound: .milliseconds(2_500))
            scenario.streamIdleTimeout = 0.5
            return scenario
        case .streamSilentAfterHead:
            var scenario = stream([], then: { $0.waitForClose() }, expected: ["stream.idleTimeout"], bound: .seconds(2))
            scenario.streamIdleTimeout = 0.5
            return scenario
        case .streamEndless:
            var scenario = stream(
                [],
                then: { connection in
                    while connection.write("data: tick\n\n") {}
                }, expected: ["stream.deadlineExceeded"], bound: .seconds(3))
            scenario.streamDeadline = 1
            return scenario
        case .streamFloodToSlowConsumer:
            // AsyncHTTPClient holds the server back until the stream's deadline; URLSession cannot,
            // and its buffer limit ends the stream first.
            let event = "data: " + String(repeating: "z", count: 65_536) + "\n\n"
            var scenario = stream(
                [], then: { connection in while connection.write(event) {} },
                expected: [
                    TestTransport.current == .asyncHTTPClient ? "stream.deadlineExceeded" : "stream.consumerFellBehind"
                ], bound: .seconds(5))
            scenario.streamDeadline = 2
            scenario.streamBufferLimit = 8 << 20
            scenario.slowConsumer = true
            return scenario
        case .streamShorterThanItsLength:
            return rawStream(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\n\r\n"
                    + "data: one\n\ndata: two\n\n", expected: ["transport"], elementsBeforeEnd: 2)
        case .streamBadChunkAfterAnEvent:
            // The event comes in a read of its own: AsyncHTTPClient forwards body parts once a
            // read has been handled, and drops those of a read that ends in a parse error.
            var scenario = Scenario(
                script: { connection in
                    connection.readHead()
                    connection.write(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                            + "b\r\ndata: one\n\n\r\n")
                    Thread.sleep(forTimeInterval: 0.1)
                    connection.write("zz\r\ndata: two\n\n\r\n0\r\n\r\n")
                    connection.close()
                }, expected: ["transport"], response: .events)
            scenario.elementsBeforeEnd = 1
            return scenario
        case .streamChunkedWithoutItsLastChunk:
            return rawStream(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "b\r\ndata: one\n\n\r\nb\r\ndata: two\n\n\r\n", expected: ["transport"],
                elementsBeforeEnd: 2)
        case .streamInvalidGzip:
            return rawStream(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
                    + "Connection: close\r\n\r\nthis is not gzip at all, and it goes on for a while\n\n",
                expected: ["transport"])
        case .streamOneByteChunks:
            let events = (0..<5_000).map { "id: \($0)\ndata: event \($0)\n\n" }.joined()
            var scenario = Scenario(
                script: { connection in
                    connection.readHead()
                    var bytes = Array(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                    for byte in events.utf8 { bytes += [0x31, 0x0D, 0x0A, byte, 0x0D, 0x0A] }
                    bytes += Array("0\r\n\r\n".utf8)
                    connection.write(bytes)
                    connection.waitForClose()
                }, expected: ["value"], bound: .seconds(20), response: .events)
            scenario.elementsBeforeEnd = 5_000
            return scenario
        case .streamInvalidJSONLine:
            var scenario = stream(["{\"v\":\"1\"}\n{\"v\":\n"], then: { $0.close() }, expected: ["parsing"])
            scenario.response = .jsonLines
            return scenario
        case .redirectToPortOutOfRange, .redirectToZoneIdentifier, .redirectToEmptyHost, .redirectToNULHost,
            .redirectToIPvFuture:
            let location =
                [
                    .redirectToPortOutOfRange: "http://127.0.0.1:99999/x",
                    .redirectToZoneIdentifier: "http://[fe80::1%25eth0]:8080/x",
                    .redirectToEmptyHost: "http://[]/x",
                    .redirectToNULHost: "http://127.0.0.1%00.example/x",
                    .redirectToIPvFuture: "http://[v1.fe80::a+en1]/x",
                ][fault] ?? ""
            return answer(
                head: "HTTP/1.1 302 Found\r\nLocation: \(location)", body: "",
                expected: ["redirect.unsupportedLocation"])
        }
    }

    /// An 8 MiB POST answered `413` as soon as its head arrives; then `after` ends the connection.
    private static func refusedUpload(
        expected: Set<String>, after: @escaping @Sendable (RawConnection) -> Void
    ) -> Scenario {
        Scenario(
            script: { connection in
                connection.readHead()
                connection.write("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                after(connection)
            }, expected: expected, posts: true, postedBytes: 8 << 20)
    }

    /// A `200` streamed until the connection ends, its body `pieces` and then whatever `then`
    /// writes; read as Server-Sent Events.
    private static func stream(
        _ pieces: [String], then: @escaping @Sendable (RawConnection) -> Void, expected: Set<String>,
        bound: Duration = .seconds(5)
    ) -> Scenario {
        Scenario(
            script: { connection in
                connection.readHead()
                guard
                    connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
                else { return }
                for piece in pieces where !connection.write(piece) { return }
                then(connection)
            }, expected: expected, bound: bound, response: .events)
    }

    /// How a case on which the transports differ ends over the transport under test; over
    /// URLSession on Apple platforms (CFNetwork, not measured here), either.
    private static func outcome(overAsyncHTTPClient: String, overFoundationNetworking: String) -> Set<String> {
        switch TestTransport.current {
        case .asyncHTTPClient:
            return [overAsyncHTTPClient]
        case .urlSession:
            #if canImport(FoundationNetworking)
                return [overFoundationNetworking]
            #else
                return [overAsyncHTTPClient, overFoundationNetworking]
            #endif
        }
    }

    /// ``outcome(overAsyncHTTPClient:overFoundationNetworking:)`` for a response outside HTTP's
    /// strict grammar: `value` where the transport reads it, `transport` where it refuses it.
    private static func read(byAsyncHTTPClient: Bool, byFoundationNetworking: Bool) -> Set<String> {
        outcome(
            overAsyncHTTPClient: byAsyncHTTPClient ? "value" : "transport",
            overFoundationNetworking: byFoundationNetworking ? "value" : "transport")
    }

    /// The squares of 0 to 59, separated by spaces, as gzip (253 bytes in 148).
    private static let squaresGzip: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x15, 0x8e, 0xc1, 0x01, 0xc0, 0x30,
        0x08, 0x02, 0x57, 0x61, 0x04, 0x51, 0x6b, 0x74, 0xff, 0xc5, 0x0a, 0x2f, 0x12, 0x05, 0xbc, 0x00,
        0xd1, 0x38, 0x70, 0x90, 0x1f, 0x6a, 0xd0, 0x87, 0x69, 0x2c, 0xc1, 0x08, 0x30, 0xa5, 0xdd, 0xda,
        0xca, 0x71, 0xb2, 0xc8, 0x93, 0x9f, 0x74, 0x0f, 0x95, 0x2d, 0xbf, 0xd2, 0xf2, 0x75, 0x4b, 0xb7,
        0xf1, 0xe5, 0xe1, 0x7b, 0x83, 0x91, 0x6f, 0xa4, 0x4f, 0xff, 0xa7, 0xf9, 0x6a, 0x7f, 0xf2, 0xdd,
        0xb8, 0x57, 0x41, 0x86, 0x1a, 0x48, 0x55, 0xd1, 0x9d, 0x4c, 0x95, 0xb3, 0x7c, 0xa5, 0x7d, 0xee,
        0xf3, 0xdd, 0x31, 0xc0, 0x98, 0xe4, 0x89, 0x88, 0xdb, 0x66, 0x10, 0x61, 0x86, 0x29, 0x68, 0xe2,
        0x8c, 0x43, 0x56, 0x34, 0xb2, 0x83, 0x22, 0x53, 0x22, 0xc7, 0xaf, 0xe7, 0xd9, 0x7a, 0x7b, 0xf2,
        0x95, 0x13, 0xa5, 0x7e, 0x43, 0x8b, 0xbc, 0xd4, 0x57, 0xbd, 0xfc, 0x01, 0x40, 0xdc, 0xce, 0x24,
        0xfd, 0x00, 0x00, 0x00,
    ]

    /// The squares as ``squaresGzip`` holds them, compressed by brotli 1.2 at quality 11 (Python's
    /// `brotli` package).
    private static let squaresBrotli: [UInt8] = [
        0x1b, 0xfc, 0x00, 0xf8, 0x05, 0xdc, 0x70, 0xa9, 0x2e, 0x44, 0x41, 0xf4, 0xb7, 0x34, 0x41, 0x2e,
        0x04, 0x68, 0x2b, 0x44, 0x38, 0xb4, 0x78, 0xe8, 0x25, 0xc7, 0x86, 0x2f, 0x54, 0x85, 0x2c, 0x94,
        0xa0, 0x3d, 0x74, 0x8b, 0x3d, 0x78, 0x16, 0xff, 0xa3, 0x1d, 0x7a, 0x45, 0xaa, 0x48, 0x44, 0x7e,
        0x18, 0x1f, 0xf3, 0x96, 0xf5, 0xb0, 0x6f, 0x79, 0x3e, 0xde, 0x0f, 0x3f, 0xe2, 0xaa, 0xb8, 0x15,
        0x2a, 0x07, 0xd5, 0x3f, 0xa4, 0x59, 0x64, 0x0f, 0xf2, 0x2d, 0xea, 0x3d, 0x94, 0x04, 0x8d, 0x85,
        0xb6, 0x0a, 0xed, 0x17, 0x7a, 0x1b, 0xf4, 0x73, 0xe8, 0x7a, 0x71, 0x79, 0xb0, 0xb4, 0xd8, 0x75,
        0xb8, 0x2b, 0x38, 0x25, 0x3c, 0x55, 0x78, 0x4b, 0xf8, 0x55, 0xf0, 0xaf, 0xc3, 0xa7, 0xa5, 0xcb,
        0x43, 0xab, 0x97, 0x76, 0x8e, 0xee, 0x8d, 0x7c, 0x01,
    ]

    /// The squares as ``squaresGzip`` holds them, uncompressed.
    static let squares = (0..<60).map { String($0 * $0) }.joined(separator: " ")

    /// `Content-Encoding: gzip` (or `coding`) over `body`, with its length; a value must be the
    /// squares whole.
    private static func gzipped(_ body: [UInt8], coding: String = "gzip", expected: Set<String>) -> Scenario {
        Scenario(
            script: { connection in
                connection.readHead()
                connection.write(
                    Array(
                        ("HTTP/1.1 200 OK\r\nContent-Encoding: \(coding)\r\nContent-Length: \(body.count)\r\n"
                            + "Connection: close\r\n\r\n").utf8) + body)
                connection.close()
            }, expected: expected, body: squares)
    }

    /// These bytes exactly, then the connection closes; read as Server-Sent Events.
    private static func rawStream(_ bytes: String, expected: Set<String>, elementsBeforeEnd: Int = 0) -> Scenario {
        var scenario = raw(bytes, expected: expected)
        scenario.response = .events
        scenario.elementsBeforeEnd = elementsBeforeEnd
        return scenario
    }

    /// These bytes exactly, then the connection closes; `body`, what a value read from them must be.
    private static func raw(_ bytes: String, expected: Set<String>, body: String? = nil) -> Scenario {
        Scenario(
            script: { connection in
                connection.readHead()
                connection.write(bytes)
                connection.close()
            }, expected: expected, body: body)
    }

    /// A response with this head (the status line and headers) and body, then the connection
    /// closes; `value`, what a value read from it must be.
    private static func answer(head: String, body: String, expected: Set<String>, value: String? = nil) -> Scenario {
        raw(head + "\r\nConnection: close\r\n\r\n" + body, expected: expected, body: value)
    }

    /// A `200` with a document of `type` that cannot be decoded into what is asked for.
    private static func document(_ text: String, type: String, response: Scenario.ResponseKind) -> Scenario {
        var scenario = answer(
            head: "HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nContent-Length: \(text.utf8.count)", body: text,
            expected: ["parsing"])
        scenario.response = response
        return scenario
    }

    /// `https` down to `http`. Over AsyncHTTPClient, a real `https` server of the test authority
    /// redirects to a plain `http` one; over `URLSession`, which on Linux takes no custom roots, the
    /// `https` origin is a stub answering every request with the redirect.
    private static func downgrade() async -> FaultReport {
        let scenario = scenario(for: .downgrade)
        if TestTransport.current == .asyncHTTPClient {
            do {
                return try await downgradeOverTLS(scenario)
            } catch {
                return FaultReport(
                    fault: .downgrade, outcome: "setup failed", elapsedMilliseconds: 0, calls: 0,
                    boundMilliseconds: Int(scenario.bound / .milliseconds(1)), problems: ["\(error)"])
            }
        }
        let stub = URLProtocolStub { _ in .response(statusCode: 302, headers: ["Location": "http://127.0.0.1:9/plain"])
        }
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: stub.baseURL, timeoutInterval: scenario.timeout),
                sessionManager: URLSessionManager(configuration: stub.makeSessionConfiguration())
            ),
            completionQueue: .global()
        )
        var report = report(.downgrade, scenario, await measure(Endpoint<Data>(path: "fault"), transfer))
        if stub.requests.contains(where: { $0.url?.scheme == "http" }) {
            report.problems.append("a request went out over plain http")
        }
        return report
    }

    private static func downgradeOverTLS(_ scenario: Scenario) async throws -> FaultReport {
        let secure = try await TestServer.start(standardRoutes: false, tls: try TestServer.tlsConfiguration())
        let plain = try await TestServer.start(standardRoutes: false)
        let plainRequests = NIOLockedValueBox(0)
        plain.router.add(nil, "/plain") { _ in
            plainRequests.withLockedValue { $0 += 1 }
            return .json("{}")
        }
        secure.router.add(nil, "/fault") { _ in
            .response(status: 302, headers: [("Location", plain.url("/plain").absoluteString)])
        }
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: secure.baseURL, timeoutInterval: scenario.timeout),
                sessionManager: SessionManager.underTest()
            ),
            completionQueue: .global()
        )
        var report = report(.downgrade, scenario, await measure(Endpoint<Data>(path: "fault"), transfer))
        if plainRequests.withLockedValue({ $0 }) > 0 {
            report.problems.append("a request went out over plain http")
        }
        try await secure.shutdown()
        try await plain.shutdown()
        return report
    }

    // MARK: - Measuring

    struct Measured<Value: Sendable> {
        var result: Result<Value, DataTransferError>?
        var elapsed: Duration
        var calls: Int
        /// For a stream: the elements handed to the consumer before its end.
        var elements: Int? = nil
    }

    /// Runs `endpoint` and counts its completions for a while after the first.
    static func measure<Response: Decodable & Sendable>(
        _ endpoint: Endpoint<Response>, _ transfer: DefaultDataTransferService, cancellingAfter delay: Duration? = nil
    ) async -> Measured<Response> {
        let recorder = CompletionRecorder<Result<Response, DataTransferError>>()
        let started = ContinuousClock.now
        let request = transfer.request(with: endpoint, completion: recorder.record)
        if let delay {
            let milliseconds = Int(delay / .milliseconds(1))
            DispatchQueue(label: "FaultProbe.cancel").asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                request.cancel()
            }
        }
        let result = await recorder.first(timeout: 30)
        let elapsed = ContinuousClock.now - started
        try? await Task.sleep(for: .milliseconds(300))
        return Measured(result: result, elapsed: elapsed, calls: recorder.callCount)
    }

    /// Streams `endpoint` — as events, or as JSON Lines — and counts its completions for a while
    /// after the first.
    static func measureStream(
        _ endpoint: Endpoint<Note>, events: Bool, slow: Bool, _ transfer: DefaultDataTransferService
    ) async -> Measured<Int> {
        let recorder = CompletionRecorder<Result<Int, DataTransferError>>()
        let elements = NIOLockedValueBox(0)
        let started = ContinuousClock.now
        let count: @Sendable () -> Void = {
            elements.withLockedValue { $0 += 1 }
            if slow { Thread.sleep(forTimeInterval: 0.001) }
        }
        let end: @Sendable (Result<Void, DataTransferError>) -> Void = { result in
            recorder.record(result.map { elements.withLockedValue { $0 } })
        }
        if events {
            transfer.events(with: endpoint, receive: { _ in count() }, completion: end)
        } else {
            transfer.stream(with: endpoint, receive: { _ in count() }, completion: end)
        }
        let result = await recorder.first(timeout: 30)
        let elapsed = ContinuousClock.now - started
        try? await Task.sleep(for: .milliseconds(300))
        return Measured(
            result: result, elapsed: elapsed, calls: recorder.callCount, elements: elements.withLockedValue { $0 })
    }

    static func report<Value>(_ fault: FaultCase, _ scenario: Scenario, _ measured: Measured<Value>) -> FaultReport {
        let outcome = measured.result.map(outcome) ?? "none within 30 s"
        var problems: [String] = []
        if !scenario.expected.contains(outcome) {
            problems.append("ended with \(outcome), not \(scenario.expected.sorted().joined(separator: " or "))")
        }
        if measured.elapsed > scenario.bound {
            problems.append("took \(measured.elapsed), more than \(scenario.bound)")
        }
        if measured.calls != 1 {
            problems.append("the completion ran \(measured.calls) times")
        }
        if let least = scenario.elementsBeforeEnd, let elements = measured.elements,
            elements < least || (outcome == "value" && elements != least)
        {
            problems.append("\(elements) elements reached the consumer before the end, not \(least)")
        }
        return FaultReport(
            fault: fault, outcome: outcome, elapsedMilliseconds: Int(measured.elapsed / .milliseconds(1)),
            calls: measured.calls, boundMilliseconds: Int(scenario.bound / .milliseconds(1)), problems: problems)
    }

    /// `value`, or the kind of the error: `transport`, `timedOut`, `parsing`, `status 999`, `redirect.loop`…
    static func outcome<Value>(_ result: Result<Value, DataTransferError>) -> String {
        switch result {
        case .success: return "value"
        case .failure(.parsing): return "parsing"
        case .failure(.noResponse): return "noResponse"
        case .failure(.resolvedNetworkFailure(let error)): return "resolved \(type(of: error))"
        case .failure(.networkFailure(let error)):
            switch error {
            case .transport: return "transport"
            case .timedOut: return "timedOut"
            case .cancelled: return "cancelled"
            case .notConnected: return "notConnected"
            case .invalidResponse: return "invalidResponse"
            case .unacceptableStatusCode(let response): return "status \(response.statusCode)"
            case .redirect(let redirect): return "redirect." + kind(of: redirect)
            case .serverTrust: return "serverTrust"
            case .urlGeneration, .encoding, .invalidRequest: return "request"
            case .underlying(let underlying): return "underlying \(type(of: underlying))"
            case .stream(let error): return "stream." + kind(of: error)
            }
        }
    }

    private static func kind(of error: StreamError) -> String {
        switch error {
        case .idleTimeout: return "idleTimeout"
        case .deadlineExceeded: return "deadlineExceeded"
        case .lineTooLong: return "lineTooLong"
        case .eventTooLarge: return "eventTooLarge"
        case .consumerFellBehind: return "consumerFellBehind"
        }
    }

    private static func kind(of error: RedirectError) -> String {
        switch error {
        case .tooManyRedirects: return "tooManyRedirects"
        case .loop: return "loop"
        case .insecureRedirect: return "insecureRedirect"
        case .unsupportedScheme: return "unsupportedScheme"
        case .invalidLocation: return "invalidLocation"
        case .unsupportedLocation: return "unsupportedLocation"
        case .bodyNotReplayable: return "bodyNotReplayable"
        }
    }
}
