import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Generated careless endpoints — methods, paths, header fields, query and body parameters,
/// encodings and timeouts as an app's code might get them wrong — sent through the callback API of
/// one stack over the transport under test: each ends once, within its deadline, with a value or a
/// typed error; no field the caller's text could smuggle in (a CR LF in a name, a value or a method)
/// reaches the server as a field of its own; and the stack still answers a plain request after each,
/// so that no request leaves a connection the next one waits on. `STRATA_CALLER_FUZZ_SEED` and
/// `STRATA_CALLER_FUZZ_COUNT` explore other endpoints.
@Suite struct CallerFuzzTests {
    /// The text the generator draws from: about one draw in three is hostile.
    enum Parts {
        static let tame = ["a", "b", "X-Tame", "value", "1", "x-y", "Z"]
        static let hostile: [String] = [
            "", " ", "a b", "%", "%zz", "%00", "ü", "😀", "\u{0}", "a\r\nInjected: 1", "a\nInjected: 1",
            "a\u{0}Injected: 1", "\r\n\r\n", "\t", "\u{7F}", "&", "=", "#", "?", "/", "../..", "+", ";", ",", "\"",
            "<x>", "]]>", "\\", "[]", "\u{FEFF}", "\u{202E}", String(repeating: "x", count: 9_000),
            String(repeating: "é", count: 3_000),
        ]
        /// Names of fields the transports or the framing own.
        static let ownedNames = [
            "Host", "Content-Length", "Transfer-Encoding", "Connection", "Expect", "Upgrade", "TE", "Trailer",
            "Content-Type", "Accept-Encoding", "Cookie", "Authorization",
        ]
        static let methods: [HTTPMethod] = [
            .connect, "connect", .trace, .options, .head, "PURGE", "get", "G ET", "GET\r\nInjected: 1", "", "ÄÖ",
            "P\u{0}", HTTPMethod(rawValue: String(repeating: "X", count: 1_000)),
        ]
        static let timeouts: [TimeInterval] = [0, -1, .nan, .infinity, -.infinity, 1e-9, 1e300]
        static let doubles: [Double] = [0, -0.0, .nan, .infinity, -.infinity, 1e308, .leastNonzeroMagnitude]
        static let dates = [
            Date(timeIntervalSince1970: 0), .distantPast, .distantFuture, Date(timeIntervalSince1970: -1e12),
        ]
    }

    /// Draws endpoints from one seed.
    struct Generator {
        var random: SeededGenerator

        mutating func oneIn(_ n: Int) -> Bool { Int.random(in: 0..<n, using: &random) == 0 }
        mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &random)] }
        mutating func text() -> String { oneIn(3) ? pick(Parts.hostile) : pick(Parts.tame) }
        mutating func name() -> String {
            oneIn(6)
                ? pick(Parts.hostile + Parts.ownedNames)
                : pick(Parts.tame) + "-\(Int.random(in: 0..<9, using: &random))"
        }

        mutating func value(depth: Int = 0) -> ParameterValue {
            switch Int.random(in: 0..<(depth > 2 ? 6 : 9), using: &random) {
            case 0: return .string(text())
            case 1: return .int(pick([0, -1, Int.max, Int.min]))
            case 2: return .double(pick(Parts.doubles))
            case 3: return .bool(oneIn(2))
            case 4: return .date(pick(Parts.dates))
            case 5: return .null
            case 6: return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in value(depth: depth + 1) })
            case 7: return .object(parameters(depth: depth + 1))
            default: return oneIn(4) ? nested() : .null
            }
        }

        /// A value nested 10 to 2,000 levels deep.
        mutating func nested() -> ParameterValue {
            (0..<Int.random(in: 10...2_000, using: &random)).reduce(ParameterValue.null) { inner, _ in
                oneIn(2) ? .array([inner]) : .object(["k": inner])
            }
        }

        mutating func parameters(depth: Int = 0) -> [String: ParameterValue] {
            var parameters: [String: ParameterValue] = [:]
            for _ in 0..<Int.random(in: 0..<4, using: &random) { parameters[name()] = value(depth: depth) }
            return parameters
        }

        mutating func encoding() -> any ParameterEncoding {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: return JSONEncoding.default
            case 1: return URLEncoding.httpBody
            case 2: return URLEncoding.default
            case 3: return XMLEncoding(rootElement: pick(["parameters", "", "a b", "<x>", "xml", "1a", "a:b"]))
            case 4: return XMLEncoding.propertyList
            default: return MultipartEncoding()
            }
        }

        mutating func headers(most: Int) -> HTTPHeaders {
            var headers = HTTPHeaders()
            for _ in 0..<Int.random(in: 0...most, using: &random) { headers.add(name: name(), value: text()) }
            return headers
        }

        /// An endpoint of the echo route (one in five with a path of any text), and the
        /// configuration it is made with.
        mutating func request(base: URL) -> (Endpoint<EchoReply>, NetworkConfiguration) {
            let method = oneIn(4) ? pick(Parts.methods) : pick([.get, .post, .put, .delete, .patch] as [HTTPMethod])
            let endpoint = Endpoint<EchoReply>(
                path: oneIn(5) ? text() : "echo/" + text(), method: method, headerParameters: headers(most: 3),
                queryParameters: parameters(), bodyParameters: parameters(), bodyEncoding: encoding(),
                timeoutInterval: oneIn(5) ? pick(Parts.timeouts) : nil)
            let configuration = NetworkConfiguration(
                baseURL: base, headers: oneIn(4) ? headers(most: 1) : [:],
                queryParameters: oneIn(4) ? parameters() : [:], timeoutInterval: 10)
            return (endpoint, configuration)
        }
    }

    @Test func carelessEndpointsEndOnceWithAValueOrATypedErrorAndLeaveTheStackWorking() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["STRATA_CALLER_FUZZ_SEED"].flatMap(UInt64.init) ?? 1
        let count = environment["STRATA_CALLER_FUZZ_COUNT"].flatMap(Int.init) ?? 300
        let server = try await TestServer.start()
        let manager = SessionManager.underTest()
        // Plain requests over the same manager, so over the same connections.
        let plainTransfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
                sessionManager: manager),
            completionQueue: .global())
        var generator = Generator(random: SeededGenerator(seed: seed))
        var kinds: [String: Int] = [:]
        var recorders: [CompletionRecorder<Result<EchoReply, DataTransferError>>] = []
        for index in 0..<count {
            let (endpoint, configuration) = generator.request(base: server.baseURL)
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(configuration: configuration, sessionManager: manager),
                completionQueue: .global())
            let what =
                "#\(index) (seed \(seed)): \(endpoint.method.rawValue.prefix(24).debugDescription) "
                + "\(endpoint.path.prefix(40).debugDescription), fields \(endpoint.headerParameters.map(\.name))"
            let recorder = CompletionRecorder<Result<EchoReply, DataTransferError>>()
            recorders.append(recorder)
            transfer.request(with: endpoint, completion: recorder.record)
            guard let result = await recorder.first(timeout: 15) else {
                Issue.record("no completion within 15 s for \(what)")
                continue
            }
            switch result {
            case .success(let echo):
                kinds["value", default: 0] += 1
                #expect(!echo.headers.keys.contains { $0.contains("injected") }, "a field was smuggled in: \(what)")
                // Foundation writes the standard methods' names in capitals.
                #expect(echo.method.uppercased() == endpoint.method.rawValue.uppercased(), "\(what)")
            case .failure(let error):
                let kind = "\(error)".components(separatedBy: ":").first ?? ""
                kinds[kind, default: 0] += 1
                #expect(!error.localizedDescription.isEmpty, "\(what)")
            }
            // The stack still answers: no connection was left to a tunnel or a half-read body.
            let plain = CompletionRecorder<Result<EchoReply, DataTransferError>>()
            plainTransfer.request(with: Endpoint<EchoReply>(path: "echo/after"), completion: plain.record)
            if case .success = await plain.first(timeout: 15) {
            } else {
                Issue.record("a plain request after \(what) did not succeed")
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(recorders.allSatisfy { $0.callCount == 1 }, "a request completed more than once")
        #expect(kinds["value", default: 0] > count / 10, "too few requests were sent for the run to mean anything")
        print("Caller fuzz, seed \(seed), \(count) endpoints:", kinds.sorted { $0.key < $1.key })
        try await server.shutdown()
    }
}
