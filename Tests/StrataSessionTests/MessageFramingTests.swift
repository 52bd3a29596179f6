import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every attempt reaches its transport framed by its body, whatever `Content-Length` and
/// `Transfer-Encoding` the caller or an adapter set: the length of a body in memory or in a file,
/// a stream's own length only when it is one and not zero, and none for a request without a body. A body's
/// file that changed size since the request was made is not sent.
@Suite struct MessageFramingTests {
    private let url = URL(string: "https://api.strata.test/upload") ?? URL(fileURLWithPath: "/")

    enum Body: Sendable {
        case none, data, stream
    }

    /// The `Content-Length` and `Transfer-Encoding` the transport is handed for a request with
    /// `body` and the fields `fields`.
    private func framing(of body: Body, fields: [String: String]) async throws -> [String?] {
        let transport = InMemoryTransport { _ in (200, [:], "") }
        var request = URLRequest(url: url)
        request.httpMethod = body == .none ? "GET" : "POST"
        switch body {
        case .none: break
        case .data: request.httpBody = Data(count: 100)
        case .stream: request.httpBodyStream = InputStream(data: Data(count: 100))
        }
        for (name, value) in fields {
            request.setValue(value, forHTTPHeaderField: name)
        }
        let (recorder, _) = send(request, through: SessionManager(transport: transport))
        _ = try #require(await recorder.first())
        let sent = try #require(transport.requests.first)
        return [sent.value(forHTTPHeaderField: "Content-Length"), sent.value(forHTTPHeaderField: "Transfer-Encoding")]
    }

    @Test(arguments: [
        ["Content-Length": "10"], ["Content-Length": "1000"], ["Content-Length": "abc"], ["Content-Length": "-5"],
        ["Content-Length": "100, 100"], ["Content-Length": "100"], ["Transfer-Encoding": "chunked"],
        ["Content-Length": "10", "Transfer-Encoding": "chunked"],
    ])
    func aBodyInMemoryAnnouncesItsOwnLength(fields: [String: String]) async throws {
        #expect(try await framing(of: .data, fields: fields) == ["100", nil])
    }

    @Test(arguments: [["Content-Length": "5"], ["Content-Length": "0"], ["Transfer-Encoding": "chunked"]])
    func aRequestWithoutABodyAnnouncesNone(fields: [String: String]) async throws {
        #expect(try await framing(of: .none, fields: fields) == [nil, nil])
    }

    @Test(arguments: [
        (["Content-Length": "100"], "100"), (["Content-Length": "abc"], nil), (["Content-Length": "1, 1"], nil),
        (["Content-Length": ""], nil), (["Content-Length": "100", "Transfer-Encoding": "chunked"], "100"),
        (["Content-Length": "0"], nil), (["Content-Length": "000"], nil), (["Content-Length": "0100"], "0100"),
    ])
    func aStreamKeepsItsLengthOnlyWhenItIsOne(fields: [String: String], length: String?) async throws {
        #expect(try await framing(of: .stream, fields: fields) == [length, nil])
    }

    @Test(arguments: [Body.none, .data, .stream])
    func aRequestThatNamesNeitherFieldIsLeftToItsTransport(body: Body) async throws {
        #expect(try await framing(of: body, fields: [:]) == [nil, nil])
    }

    /// `TE` offers transfer codings for the response besides `chunked`; neither transport decodes
    /// one (a server that took up `gzip` would answer with a body nobody can read), and HTTP/2
    /// forbids any but `trailers` (AsyncHTTPClient failed such a request unsent). So only
    /// `trailers` goes on, whatever else the field offers.
    @Test(
        arguments: [
            ("gzip", nil), ("gzip;q=0.5, deflate", nil), ("trailers", "trailers"), ("gzip, Trailers", "trailers"),
            ("trailers;q=1", "trailers"), ("", nil), ("trailersX", nil), ("trailers\r\nX-Injected: 1", nil),
            ("gzip, trailers\u{0}", nil),
        ] as [(String, String?)])
    func onlyTrailersIsOfferedInATEField(offered: String, sent: String?) async throws {
        for body in [Body.none, .data, .stream] {
            let transport = InMemoryTransport { _ in (200, [:], "") }
            var request = URLRequest(url: url)
            request.httpMethod = body == .none ? "GET" : "POST"
            if body == .data { request.httpBody = Data(count: 10) }
            if body == .stream { request.httpBodyStream = InputStream(data: Data(count: 10)) }
            request.setValue(offered, forHTTPHeaderField: "TE")
            let (recorder, _) = send(request, through: SessionManager(transport: transport))
            _ = try #require(await recorder.first())
            #expect(try #require(transport.requests.first).value(forHTTPHeaderField: "TE") == sent, "\(body)")
        }
    }

    @Test func aBodysFileAnnouncesItsLengthAndIsNotSentOnceItChanged() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString).bin")
        try Data(count: 1_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let transport = InMemoryTransport { _ in (200, [:], "") }
        let manager = SessionManager(transport: transport)
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.httpBodyStream = try FileBodyStream(fileURL: file)
        request.setValue("10", forHTTPHeaderField: "Content-Length")
        _ = try #require(await send(request, through: manager).0.first())
        #expect(transport.requests.first?.value(forHTTPHeaderField: "Content-Length") == "1000")

        try Data(count: 1_001).write(to: file)
        let outcome = try #require(await send(request, through: manager).0.first())
        let reason = "it held 1000 bytes when the request was made and holds 1001 now"
        #expect(outcome.error as? RequestValidationError == .unusableBodyFile(path: file.path, reason: reason))
        #expect(transport.requests.count == 1)
    }
}

/// A body read from a stream of the caller's goes once: a retry would send what is left of it —
/// nothing — as if it were the body. Once a transport has opened the stream, the failure is the
/// request's outcome and no retrier is asked; a stream never opened (the attempt failed before
/// its body was read) may still go.
@Suite struct OneShotBodyTests {
    /// The outcome of a `PUT` whose body is a stream, over `transport`, with `retrier` asked.
    private func putStreaming(through transport: InMemoryTransport, retrier: CountingRetrier) async throws -> Outcome {
        var request = URLRequest(url: URL(string: "https://api.strata.test/items") ?? URL(fileURLWithPath: "/"))
        request.httpMethod = "PUT"
        request.httpBodyStream = InputStream(data: Data(count: 100))
        return try #require(
            await send(request, through: SessionManager(transport: transport, retriers: [retrier])).0.first())
    }

    @Test func aStreamThatWasReadIsNotSentAgain() async throws {
        let transport = InMemoryTransport { request in
            if let stream = request.httpBodyStream {
                stream.open()
                var buffer = [UInt8](repeating: 0, count: 64)
                while stream.read(&buffer, maxLength: buffer.count) > 0 {}
                stream.close()
            }
            return (503, [:], "busy")
        }
        let retrier = CountingRetrier(decision: .retry)
        let outcome = try await putStreaming(through: transport, retrier: retrier)
        #expect(outcome.error as? SessionError == .unacceptableStatusCode(503))
        #expect(outcome.data == Data("busy".utf8))
        #expect(transport.requests.count == 1)
        #expect(retrier.calls == 0)
    }

    @Test func aStreamNeverOpenedMayGoOnARetry() async throws {
        let attempts = Locked(0)
        let transport = InMemoryTransport { _ in
            attempts.withLock {
                $0 += 1; return $0
            } == 1 ? (503, [:], "busy") : (200, [:], "ok")
        }
        let retrier = CountingRetrier(decision: .retry)
        let outcome = try await putStreaming(through: transport, retrier: retrier)
        #expect(outcome.error == nil)
        #expect(transport.requests.count == 2)
        #expect(retrier.calls == 1)
    }
}
