import Foundation
import NIOConcurrencyHelpers
import Strata
import StrataAsyncHTTPClient
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Note: Codable, Equatable, Sendable {
    let title: String
    let tags: [String]
}

@Suite struct EndToEndTests {
    /// The suite runs over the transport `STRATA_TRANSPORT` names, told apart by what each adds to a
    /// request: `URLSession` on Linux names libcurl in its `User-Agent`; over AsyncHTTPClient the
    /// transport names itself and asks for the codings it decodes: `gzip`, `deflate`, and `br` and
    /// `zstd` where the system has their libraries, as here (libcurl links both).
    @Test func theSuiteRunsOverTheTransportItNames() async throws {
        try await Harness.with { harness in
            let reply = try await harness.transfer.request(Endpoint<EchoReply>(path: "echo"))
            switch TestTransport.current {
            case .urlSession:
                #if canImport(FoundationNetworking)
                    #expect(reply.headers["user-agent"]?.contains("curl") == true, "\(reply.headers)")
                #endif
            case .asyncHTTPClient:
                #expect(reply.headers["user-agent"] == AsyncHTTPClientTransport.defaultUserAgent, "\(reply.headers)")
                #expect(reply.headers["accept-encoding"] == "gzip, deflate, br, zstd")
            }
            // What `URLSession` adds to a request that names none, over either transport.
            #expect(reply.headers["accept"] == "*/*", "\(reply.headers)")
            #expect(reply.headers["user-agent"]?.isEmpty == false)
            let own = try await harness.transfer.request(
                Endpoint<EchoReply>(
                    path: "echo", headerParameters: ["User-Agent": "Reports/2.1", "Accept": "text/csv"]))
            #expect(own.headers["user-agent"] == "Reports/2.1")
            #expect(own.headers["accept"] == "text/csv")
            print("integration suite over \(TestTransport.current)")
        }
    }

    /// Requests to one URL — many at once, each with its own method, headers and body — reach the
    /// server each as it was made, and so do more distinct URLs than a transport keeps parsed
    /// (AsyncHTTPClientTransport keeps 64).
    @Test func requestsToTheSameURLsCarryTheirOwnMethodHeadersAndBodies() async throws {
        try await Harness.with { (harness) async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let method: HTTPMethod = [.get, .post, .put, .delete][index % 4]
                        let hasBody = method == .post || method == .put
                        let endpoint = Endpoint<EchoReply>(
                            path: "echo", method: method, headerParameters: ["X-Index": "\(index)"],
                            queryParameters: ["url": .int(index % 100)],
                            bodyParametersEncodable: hasBody ? Note(title: "note \(index)", tags: []) : nil)
                        let echo = try await harness.transfer.request(endpoint)
                        #expect(echo.method == method.rawValue)
                        #expect(echo.headers["x-index"] == "\(index)")
                        #expect(echo.query == [["url", "\(index % 100)"]])
                        if hasBody {
                            #expect(
                                try JSONDecoder().decode(Note.self, from: Data((echo.body ?? "").utf8)).title
                                    == "note \(index)")
                        } else {
                            #expect(echo.bodySize == 0)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test(arguments: [HTTPMethod.get, .delete])
    func queryParametersReachTheServerAsSent(method: HTTPMethod) async throws {
        try await Harness.with { (harness) async throws in
            let endpoint = Endpoint<EchoReply>(
                path: "echo",
                method: method,
                queryParameters: ["q": "a+b&c=d", "page": 2, "tags": ["x", "y"], "flag": true]
            )
            let echo = try await harness.transfer.request(endpoint)
            #expect(echo.method == method.rawValue)
            #expect(
                echo.query == [["flag", "1"], ["page", "2"], ["q", "a+b&c=d"], ["tags[]", "x"], ["tags[]", "y"]])
        }
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch])
    func jsonBodiesReachTheServerAsSent(method: HTTPMethod) async throws {
        try await Harness.with { (harness) async throws in
            let endpoint = Endpoint<EchoReply>(
                path: "echo", method: method, bodyParametersEncodable: Note(title: "Ünïcode ✓", tags: ["a"]))
            let echo = try await harness.transfer.request(endpoint)
            #expect(echo.method == method.rawValue)
            #expect(echo.headers["content-type"] == "application/json")
            #expect(
                try JSONDecoder().decode(Note.self, from: Data(try #require(echo.body).utf8))
                    == Note(title: "Ünïcode ✓", tags: ["a"])
            )
        }
    }

    @Test func formBodiesReachTheServerAsSent() async throws {
        try await Harness.with { (harness) async throws in
            let endpoint = Endpoint<EchoReply>(
                path: "echo",
                method: .post,
                bodyParameters: ["name": "Ann Lee", "note": "1+1=2 & more"],
                bodyEncoding: URLEncoding.httpBody
            )
            let echo = try await harness.transfer.request(endpoint)
            #expect(echo.headers["content-type"] == "application/x-www-form-urlencoded; charset=utf-8")
            #expect(echo.body == "name=Ann%20Lee&note=1%2B1%3D2%20%26%20more")
            var components = URLComponents()
            components.percentEncodedQuery = echo.body
            #expect(components.queryItems?.map { $0.value ?? "" } == ["Ann Lee", "1+1=2 & more"])
        }
    }

    /// A body over the request's `maximumBodyLength` fails the request, and the transfer stops;
    /// one within it arrives whole.
    @Test func aBodyOverTheRequestsMaximumLengthFailsAndOneWithinArrives() async throws {
        try await Harness.with { (harness) async throws in
            let error = await failure { () async throws(DataTransferError) in
                _ = try await harness.transfer.request(
                    Endpoint<Data>(
                        path: "stream-bytes/\(8 << 20)", options: RequestOptions(maximumBodyLength: 65_536)))
            }
            guard case .networkFailure(.transport(let urlError))? = error else {
                Issue.record("expected the body to be refused, got \(String(describing: error))")
                return
            }
            #expect(urlError.code == .dataLengthExceedsMaximum)
            let body = try await harness.transfer.request(
                Endpoint<Data>(path: "stream-bytes/65536", options: RequestOptions(maximumBodyLength: 65_536)))
            #expect(body == Data(TestReply.generatedBody(size: 65_536)))
        }
    }

    /// The test server resolves no dot segment (the path `/x/../echo` names no route of its), and
    /// libcurl resolves them where SwiftNIO does not: Strata resolves them before either transport
    /// sends, so every transport reaches `/echo`. A path that climbs above the base URL's is refused
    /// before anything is sent.
    @Test func dotSegmentsReachTheServerResolvedAndAPathAboveTheBaseIsNotSent() async throws {
        try await Harness.with { (harness) async throws in
            for path in ["x/../echo", "./x/./../echo", "x/%2E%2E/echo"] {
                let echo = try await harness.transfer.request(Endpoint<EchoReply>(path: path))
                #expect(echo.path == "/echo", "\(path)")
            }
            let hits = NIOLockedValueBox(0)
            harness.server.router.add(nil, "/admin") { (_: TestRequest) -> TestReply in
                hits.withLockedValue { $0 += 1 }
                return .json("{}")
            }
            for path in ["../admin", "echo/../../admin", "%2e%2e/admin"] {
                do throws(DataTransferError) {
                    try await harness.transfer.request(Endpoint<Void>(path: path))
                    Issue.record("\(path) was sent")
                } catch {
                    guard case .networkFailure(.urlGeneration(let refusal)) = error else {
                        Issue.record("\(path): \(error)")
                        continue
                    }
                    #expect(refusal == .pathLeavesBaseURL(path))
                }
            }
            #expect(hits.withLockedValue { $0 } == 0)
        }
    }

    /// A body in a content coding nobody asked for and the transport cannot decode fails the
    /// request, as a `.transport` error: it is not handed on as if decoded (a download would be a
    /// file of compressed bytes), and nor is one that is not data of the coding it names (`br`).
    /// libcurl fails every coding it cannot decode; over AsyncHTTPClient the transport fails them
    /// with `cannotDecodeContentData`. Over AsyncHTTPClient a request that names its own
    /// `Accept-Encoding` takes the body as it comes, and an error status keeps its body.
    @Test func aBodyInACodingTheTransportCannotDecodeFails() async throws {
        try await Harness.with { (harness) async throws in
            harness.server.router.add(nil, "/coded") { (request: TestRequest) -> TestReply in
                let coding = request.queryValue("coding") ?? "xyz"
                return .response(
                    status: Int(request.queryValue("status") ?? "") ?? 200,
                    headers: [("Content-Type", "application/octet-stream"), ("Content-Encoding", coding)],
                    body: Array("not really \(coding)".utf8))
            }
            for coding in ["br", "xyz", "compress"] {
                do throws(DataTransferError) {
                    let body = try await harness.transfer.request(
                        Endpoint<Data>(path: "coded", queryParameters: ["coding": .string(coding)]))
                    Issue.record("\(coding): \(body.count) bytes handed on")
                } catch {
                    guard case .networkFailure(.transport(let failure)) = error else {
                        Issue.record("\(coding): \(error)")
                        continue
                    }
                    #expect(failure.code == .cannotDecodeContentData, "\(coding): \(failure)")
                }
            }
            let plain = try await harness.transfer.request(
                Endpoint<Data>(path: "coded", queryParameters: ["coding": "identity"]))
            #expect(plain == Data("not really identity".utf8))
            guard TestTransport.current == .asyncHTTPClient else { return }
            let asked = try await harness.transfer.request(
                Endpoint<Data>(
                    path: "coded", headerParameters: ["Accept-Encoding": "xyz"], queryParameters: ["coding": "xyz"]))
            #expect(asked == Data("not really xyz".utf8))
            do throws(DataTransferError) {
                _ = try await harness.transfer.request(
                    Endpoint<Data>(path: "coded", queryParameters: ["coding": "xyz", "status": 404]))
                Issue.record("a 404 succeeded")
            } catch {
                guard case .networkFailure(.unacceptableStatusCode(let response)) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(response.body == Data("not really xyz".utf8))
            }
        }
    }

    /// A gzip body with bytes after its member — a second member (gzip's "series of members",
    /// which libcurl does not read), zeros, or garbage — fails with `cannotDecodeContentData` over
    /// both transports, whether its length is given or it comes in chunks. (Over URLSession, a
    /// chunked one failed with `.unknown`: libcurl words the failure as its chunked reader's.)
    @Test func bytesAfterAGzipMemberFailTheBodyAlikeInEveryFraming() async throws {
        try await Harness.with { (harness) async throws in
            harness.server.router.add(nil, "/gzip-and-more") { (request: TestRequest) -> TestReply in
                let member = Gzip.stored(Array("first".utf8))
                let after: [UInt8] =
                    switch request.queryValue("after") {
                    case "member": Gzip.stored(Array("second".utf8))
                    case "zeros": [UInt8](repeating: 0, count: 8)
                    default: Array("garbage".utf8)
                    }
                let body = member + after
                var head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n"
                guard request.queryValue("framing") == "chunked" else {
                    head += "Content-Length: \(body.count)\r\n\r\n"
                    return .raw(Array(head.utf8) + body, thenClose: true)
                }
                head += "Transfer-Encoding: chunked\r\n\r\n"
                let chunk = Array("\(String(body.count, radix: 16))\r\n".utf8) + body + Array("\r\n0\r\n\r\n".utf8)
                return .raw(Array(head.utf8) + chunk, thenClose: true)
            }
            for framing in ["length", "chunked"] {
                for after in ["member", "zeros", "garbage"] {
                    let endpoint = Endpoint<Data>(
                        path: "gzip-and-more", queryParameters: ["framing": .string(framing), "after": .string(after)])
                    do throws(DataTransferError) {
                        let body = try await harness.transfer.request(endpoint)
                        Issue.record("\(framing), \(after): \(body.count) bytes handed on")
                    } catch {
                        guard case .networkFailure(.transport(let failure)) = error else {
                            Issue.record("\(framing), \(after): \(error)")
                            continue
                        }
                        #expect(failure.code == .cannotDecodeContentData, "\(framing), \(after): \(failure)")
                    }
                }
            }
        }
    }

    @Test func headRequestsSucceedWithoutABody() async throws {
        try await Harness.with { (harness) async throws in
            let response = try await harness.transfer.requestResponse(Endpoint<Empty>(path: "echo", method: .head))
            #expect(response.statusCode == 200)
            #expect(response.response.body.isEmpty)
        }
    }

    @Test func configurationAndEndpointHeadersArriveWithTheEndpointWinning() async throws {
        try await Harness.with(headers: ["X-Client": "strata", "X-Override": "config"]) { (harness) async throws in
            let echo = try await harness.transfer.request(
                Endpoint<EchoReply>(path: "echo", headerParameters: ["x-override": "endpoint"]))
            #expect(echo.headers["x-client"] == "strata")
            #expect(echo.headers["x-override"] == "endpoint")
        }
    }

    @Test func anUnacceptableStatusFailsWithTheServersBody() async throws {
        try await Harness.with { (harness) async throws in
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(Endpoint<Void>(path: "status/404"))
            }
            guard case .networkFailure(.unacceptableStatusCode(let response)) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(response.statusCode == 404)
            #expect(response.bodyText == #"{"status": 404}"#)
            let accepted = try await harness.transfer.requestResponse(
                Endpoint<ServerStatus>(path: "status/404", options: RequestOptions(acceptableStatusCodes: [404])))
            #expect(accepted.value == ServerStatus(status: 404))
        }
    }

    @Test func errorBodiesReachTheErrorResolver() async throws {
        try await Harness.with(errorResolver: JSONErrorBodyResolver<ServerStatus>()) { (harness) async throws in
            let error = await failure { () async throws(DataTransferError) in
                try await harness.transfer.request(Endpoint<Void>(path: "status/503"))
            }
            guard case .resolvedNetworkFailure(let resolved) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(resolved as? ServerStatus == ServerStatus(status: 503))
        }
    }

    @Test(arguments: [204, 205])
    func emptyBodiesSucceedAsVoidAndEmpty(status: Int) async throws {
        try await Harness.with { (harness) async throws in
            try await harness.transfer.request(Endpoint<Void>(path: "status/\(status)"))
            #expect(try await harness.transfer.request(Endpoint<Empty>(path: "status/\(status)")) == Empty())
        }
    }

    @Test func gzipBodiesAreDecoded() async throws {
        struct Gzipped: Decodable { let gzipped: Bool }
        try await Harness.with { (harness) async throws in
            #expect(try await harness.transfer.request(Endpoint<Gzipped>(path: "gzip")).gzipped)
        }
    }

    /// A response without a body — to `HEAD`, a `204` or a `304`, or one whose `Content-Length` is 0,
    /// a redirect among them — whose fields name a content coding (a server sends the fields of the
    /// body a `GET` would get) has nothing to decode: it ends as any bodiless response does, and a
    /// cached body revalidated by such a `304` is served. Over AsyncHTTPClient its decompressor
    /// failed each as a compressed body cut short (`cannotDecodeContentData`).
    @Test(arguments: ["gzip", "deflate"])
    func aResponseWithoutABodyInAContentCodingHasNothingToDecode(coding: String) async throws {
        let json = Array(#"{"fresh":true}"#.utf8)
        let coded = coding == "gzip" ? Gzip.stored(json) : Gzip.zlibStored(json)
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                let target = head.split(separator: " ").dropFirst().first ?? ""
                let fields = "Content-Encoding: \(coding)\r\nContent-Type: application/json\r\n"
                let reply: [UInt8]
                switch target {
                case "/no-content": reply = Array("HTTP/1.1 204 No Content\r\n\(fields)\r\n".utf8)
                case "/empty": reply = Array("HTTP/1.1 200 OK\r\n\(fields)Content-Length: 0\r\n\r\n".utf8)
                case "/moved":
                    reply = Array("HTTP/1.1 302 Found\r\nLocation: /empty\r\n\(fields)Content-Length: 0\r\n\r\n".utf8)
                case "/cached" where head.lowercased().contains("if-none-match: \"v1\""):
                    let answer = "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\(fields)Content-Length: 40\r\n\r\n"
                    reply = Array(answer.utf8)
                case "/cached":
                    reply =
                        Array(
                            "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nCache-Control: no-cache\r\n\(fields)"
                                .appending("Content-Length: \(coded.count)\r\n\r\n").utf8) + coded
                default:  // a HEAD of what a GET would get coded
                    reply = Array("HTTP/1.1 200 OK\r\n\(fields)Content-Length: \(coded.count)\r\n\r\n".utf8)
                }
                guard connection.write(reply) else { return }
            }
        }
        defer { server.shutdown() }
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.url("/"), timeoutInterval: 5),
                sessionManager: SessionManager.underTest(acceptableStatusCodes: [200, 204], cache: HTTPCache())),
            completionQueue: DispatchQueue(label: "EndToEndTests.bodiless"))
        for (path, method) in [("items", HTTPMethod.head), ("no-content", .get), ("empty", .get), ("moved", .get)] {
            let result = await StaleConnectionTests.result(Endpoint<Data>(path: path, method: method), over: transfer)
            #expect((try? result.get()) == Data(), "\(method.rawValue) /\(path): \(result)")
        }
        for round in 0..<2 {
            let result = await StaleConnectionTests.result(Endpoint<Data>(path: "cached"), over: transfer)
            #expect((try? result.get()) == Data(json), "GET /cached, round \(round): \(result)")
        }
    }

    /// 1,051 bytes of gzip that decode to 1 MiB: a decompression bomb fails the request, in memory
    /// and to a file, over both transports alike (libcurl decodes without a limit of its own), and
    /// leaves no file.
    @Test(arguments: [false, true])
    func aDecompressionBombFails(toFile: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bomb-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("body.bin")
        try await Harness.with { (harness) async throws in
            _ = await #expect {
                _ = try await harness.transfer.request(
                    Endpoint<Data>(
                        path: "gzip-bomb", options: RequestOptions(downloadDestination: toFile ? destination : nil)))
            } throws: { error in
                guard case .networkFailure(.transport(let error)) = error as? DataTransferError else { return false }
                return error.code == .cannotDecodeContentData
            }
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    /// HTTP's `deflate` (a zlib stream), which AsyncHTTPClient's decompressor and libcurl both decode.
    @Test func deflateBodiesAreDecoded() async throws {
        struct Deflated: Decodable {
            let deflated: Bool
            let message: String
        }
        try await Harness.with { (harness) async throws in
            let reply = try await harness.transfer.request(Endpoint<Deflated>(path: "deflate"))
            #expect(reply.deflated)
            #expect(reply.message == String(repeating: "Strata decodes deflate. ", count: 4_000))
        }
    }

    /// Content codings as servers send them, decoded alike over both transports (libcurl decodes
    /// each; over AsyncHTTPClient the transport does): `deflate` as raw deflate data (no zlib
    /// header), `x-gzip`, a coding named in capitals, `identity` listed before `gzip`, two codings
    /// applied in turn, `br` and `zstd`. A body with bytes after the end of its gzip data fails
    /// over both.
    @Test func contentCodingsAsServersSendThemAreDecoded() async throws {
        let json = Array(#"{"fresh":true}"#.utf8)
        let type = "Content-Type: application/json\r\n"
        let answers: [String: (fields: String, body: [UInt8])] = [
            "/raw-deflate": ("Content-Encoding: deflate\r\n" + type, Gzip.rawStored(json)),
            "/x-gzip": ("Content-Encoding: x-gzip\r\n" + type, Gzip.stored(json)),
            "/capitals": ("Content-Encoding: GZip\r\n" + type, Gzip.stored(json)),
            "/identity-first": ("Content-Encoding: identity, gzip\r\n" + type, Gzip.stored(json)),
            "/stacked": ("Content-Encoding: deflate, gzip\r\n" + type, Gzip.stored(Gzip.zlibStored(json))),
            "/trailing-bytes": ("Content-Encoding: gzip\r\n" + type, Gzip.stored(json) + Array("garbage".utf8)),
            // `printf '{"fresh":true}' | brotli -c` (and `zstd -c`): the bytes kept as they are,
            // in a brotli stream and in a zstd frame with its checksum.
            "/br": ("Content-Encoding: br\r\n" + type, [0x8B, 0x06, 0x80] + json + [0x03]),
            "/zstd": (
                "Content-Encoding: zstd\r\n" + type,
                [0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x58, 0x71, 0x00, 0x00] + json + [0xBB, 0xE6, 0x52, 0x6E]
            ),
            "/zstd-gzip": (
                "Content-Encoding: zstd, gzip\r\n" + type,
                Gzip.stored([0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x58, 0x71, 0x00, 0x00] + json + [0xBB, 0xE6, 0x52, 0x6E])
            ),
        ]
        try await Self.answering(answers) { (transfer) async throws in
            for path in answers.keys.sorted() {
                let result = await StaleConnectionTests.result(
                    Endpoint<Data>(path: String(path.dropFirst())), over: transfer)
                if path == "/trailing-bytes" {
                    #expect(throws: DataTransferError.self, "GET \(path)") { try result.get() }
                } else {
                    #expect((try? result.get()) == Data(json), "GET \(path): \(result)")
                }
            }
        }
    }

    /// A `String` endpoint reads the text in the charset its response names, as Alamofire's
    /// `responseString` does: ISO-8859-1 and windows-1252 from a server that still sends them.
    @Test func textArrivesInTheCharsetItsResponseNames() async throws {
        let answers: [String: (fields: String, body: [UInt8])] = [
            "/latin1": ("Content-Type: text/plain; charset=ISO-8859-1\r\n", [0x63, 0x61, 0x66, 0xE9]),
            "/windows": ("Content-Type: text/html;charset=\"windows-1252\"\r\n", [0x63, 0x61, 0x66, 0xE9, 0x20, 0x80]),
            "/utf8": ("Content-Type: text/plain\r\n", Array("café".utf8)),
        ]
        try await Self.answering(answers) { (transfer) async throws in
            for (path, text) in [("latin1", "café"), ("windows", "café €"), ("utf8", "café")] {
                #expect(try await transfer.request(Endpoint<String>(path: path)) == text, "GET /\(path)")
            }
        }
    }

    /// Runs `body` with a data-transfer stack over a server that answers each path of `answers`
    /// with `200`, the answer's fields and its body.
    private static func answering(
        _ answers: [String: (fields: String, body: [UInt8])],
        _ body: (DefaultDataTransferService) async throws -> Void
    ) async throws {
        let server = try RawServer { connection in
            while let head = connection.readHead() {
                let target = String(head.split(separator: " ").dropFirst().first ?? "")
                guard let (fields, body) = answers[target] else { return }
                let reply = "HTTP/1.1 200 OK\r\n\(fields)Content-Length: \(body.count)\r\n\r\n"
                guard connection.write(Array(reply.utf8) + body) else { return }
            }
        }
        defer { server.shutdown() }
        try await body(
            DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.url("/"), timeoutInterval: 5),
                    sessionManager: SessionManager.underTest()),
                completionQueue: DispatchQueue(label: "EndToEndTests.answering")))
    }

    @Test func aLargeStreamedBodyArrivesWholeAndIntact() async throws {
        try await Harness.with { (harness) async throws in
            let size = 8 * 1_048_576
            let expected = Data(TestReply.generatedBody(size: size))
            for chunked in ["0", "1"] {
                let body = try await harness.transfer.request(
                    Endpoint<Data>(path: "stream-bytes/\(size)", queryParameters: ["chunked": .string(chunked)])
                )
                #expect(body.count == size)
                #expect(body == expected)
            }
        }
    }

    @Test func cancellingMidTransferCompletesOnceWithCancelled() async throws {
        try await Harness.with { (harness) async throws in
            try await expectCancellation(
                of: Endpoint(path: "drip", queryParameters: ["size": 2_000, "chunks": 20, "interval": 100]),
                through: harness.transfer, settle: .seconds(2))
        }
    }

    @Test func aSlowServerTimesOutWithTimedOut() async throws {
        try await Harness.with { (harness) async throws in
            let outcome = await timed(
                Endpoint<Void>(path: "delay/5000", timeoutInterval: 0.5), through: harness.network)
            guard case .failure(.timedOut) = outcome.result else {
                Issue.record("expected timedOut, got \(outcome.result)")
                return
            }
            // Linux's URLSession has whole-second timeouts; Strata rounds 0.5 s up to 1 s.
            #expect(outcome.elapsed < .seconds(3))
            #expect(outcome.calls == 1)
        }
    }

    @Test func aSameOriginRedirectIsFollowed() async throws {
        try await Harness.with { (harness) async throws in
            let echo = try await harness.transfer.request(Endpoint<EchoReply>(path: "redirect-chain/3"))
            #expect(echo.path == "/redirect-chain/0")
        }
    }
}
