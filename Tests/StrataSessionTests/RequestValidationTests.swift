import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Nothing that breaks HTTP's grammar reaches the wire: every request is checked after its
/// adapters ran, and fails with a typed error before a task exists. (On Linux, `URLRequest` itself
/// drops a header value holding CR, LF or NUL without a word; Strata's own request building and
/// `HeadersAdapter` check values before they are set, see `RequestableTests`.)
@Suite struct RequestValidationTests {
    private func error(
        of request: URLRequest, adapters: [any RequestAdapter] = []
    ) async throws -> (RequestValidationError?, URLProtocolStub) {
        let stub = URLProtocolStub { _ in .response() }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: adapters)
        var request = request
        request.url = stub.baseURL
        let (recorder, _) = send(request, through: manager)
        let outcome = try #require(await recorder.first())
        return (outcome.error as? RequestValidationError, stub)
    }

    private var base: URLRequest { URLRequest(url: URL(fileURLWithPath: "/")) }

    @Test(arguments: ["X-Evil\r\nHost", "X Evil", "X:Evil", "", "Ä", "X-Evil\u{0}", "(x)"])
    func aHeaderNameThatIsNotATokenIsRefused(name: String) async throws {
        var request = base
        request.setValue("v", forHTTPHeaderField: name)
        guard !(request.allHTTPHeaderFields ?? [:]).isEmpty else { return }  // the platform dropped it itself
        let (error, stub) = try await error(of: request)
        // The platform may have changed the name's case; it is refused whatever it became.
        guard case .invalidHeaderName? = error else {
            Issue.record("expected invalidHeaderName, got \(String(describing: error))")
            return
        }
        #expect(stub.requests.isEmpty)
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "a\nb", "a\rb", "nul\u{0}", "bell\u{7}", "del\u{7F}"])
    func aHeaderValueWithAControlCharacterNeverReachesTheWire(value: String) async throws {
        var request = base
        request.setValue(value, forHTTPHeaderField: "X-Value")
        let kept = request.value(forHTTPHeaderField: "X-Value") != nil
        let (error, stub) = try await error(of: request)
        if kept {
            #expect(error == .invalidHeaderValue(name: "X-Value"))
            #expect(stub.requests.isEmpty)
        } else {
            #expect(stub.requests.first?.value(forHTTPHeaderField: "X-Value") == nil)
        }
    }

    @Test(arguments: ["GET\r\nX-Injected: 1", "GET /x HTTP/1.1", "PO ST", "GE\u{0}T", "(GET)"])
    func aMethodThatIsNotATokenIsRefused(method: String) async throws {
        var request = base
        request.httpMethod = HTTPMethod(rawValue: method).rawValue
        let (error, stub) = try await error(of: request)
        #expect(error == .invalidMethod(request.httpMethod ?? ""))
        #expect(stub.requests.isEmpty)
    }

    /// `CONNECT` asks for a tunnel, whose target is a host and port where Strata sends a URL's path,
    /// and a server that grants it (or only reads it as one, as SwiftNIO's parser does) turns the
    /// connection into the tunnel, so the next request on it never got an answer. Refused unsent,
    /// in any case of letters.
    @Test(arguments: ["CONNECT", "connect", "Connect"])
    func aConnectRequestIsRefusedUnsent(method: String) async throws {
        var request = base
        request.httpMethod = method
        let (error, stub) = try await error(of: request)
        // Foundation writes the standard methods' names in capitals.
        #expect(error == .tunnelMethod(request.httpMethod ?? ""))
        #expect(stub.requests.isEmpty)
        #expect(error?.description.contains("tunnel") == true)
    }

    @Test(arguments: ["CONNECTS", "CONNEC", "C0NNECT", "PURGE"])
    func aMethodThatOnlyLooksLikeConnectIsSent(method: String) async throws {
        var request = base
        request.httpMethod = method
        let (error, stub) = try await error(of: request)
        #expect(error == nil)
        #expect(stub.requests.count == 1)
    }

    /// On Linux, changing a copy of a request without a URL traps inside FoundationNetworking: such
    /// a request — the caller's, or one an adapter returned — fails before any adapter, Strata's own
    /// or the caller's, writes into it.
    @Test func aRequestWithoutAURLReachesNoAdapter() async throws {
        struct Careless: RequestAdapter {
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
                var request = request
                request.url = nil
                completion(.success(request))
            }
        }
        let writes = HeadersAdapter(["X-Client": "strata"])
        var withLength = base
        withLength.setValue("5", forHTTPHeaderField: "Content-Length")
        // One an adapter returned: the last, with a length to reframe, or with an adapter after it.
        for adapters: [any RequestAdapter] in [[Careless()], [Careless(), writes]] {
            let (error, stub) = try await error(of: withLength, adapters: adapters)
            #expect(error == .missingURL)
            #expect(stub.requests.isEmpty)
        }
        let stub = URLProtocolStub { _ in .response() }
        // The caller's own, through a manager with an adapter that writes.
        var withoutURL = withLength
        withoutURL.url = nil
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration(), adapters: [writes])
        let (callers, _) = send(withoutURL, through: manager)
        #expect(try #require(await callers.first()).error as? RequestValidationError == .missingURL)
        #expect(stub.requests.isEmpty)
        // Each adapter refuses one handed to it directly, and a chain stops before the next.
        let recorder = CompletionRecorder<Result<URLRequest, any Error>>()
        writes.adapt(withoutURL) { recorder.record($0) }
        Interceptor(adapters: [Careless(), writes]).adapt(base) { recorder.record($0) }
        _ = await recorder.first()
        for result in recorder.values {
            #expect(throws: RequestValidationError.missingURL) { try result.get() }
        }
        #expect(recorder.callCount == 2)
    }

    @Test func whatAnAdapterAddsIsCheckedToo() async throws {
        let (error, stub) = try await error(of: base, adapters: [HeadersAdapter(["X-Signature": "a\r\nb"])])
        #expect(error == .invalidHeaderValue(name: "X-Signature"))
        #expect(stub.requests.isEmpty)
    }

    @Test func tabsNonASCIITextAndEveryTokenCharacterPass() async throws {
        var request = base
        request.httpMethod = "M-SEARCH"
        request.setValue("a\tb é 日本", forHTTPHeaderField: "X-Text")
        request.setValue("v", forHTTPHeaderField: "!#$%&'*+-.^_`|~09azAZ")
        let (error, stub) = try await error(of: request)
        #expect(error == nil)
        #expect(stub.requests.count == 1)
    }

    /// What a request handed straight to `URLSessionTransport` (not through a manager) fails with,
    /// once, and what the stub received meanwhile; `change` makes the request from one to the stub.
    private func directError(
        _ change: @Sendable (inout URLRequest) -> Void
    ) async throws -> (RequestValidationError?, URLProtocolStub) {
        let stub = URLProtocolStub { _ in .response() }
        let transport = URLSessionTransport(configuration: stub.makeSessionConfiguration())
        var request = URLRequest(url: stub.baseURL)
        change(&request)
        let recorder = CompletionRecorder<TransportOutcome>()
        transport.send(TransportAttempt(request: request)) { recorder.record($0) }
        let outcome = try #require(await recorder.first())
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.callCount == 1)
        return (outcome.error as? RequestValidationError, stub)
    }

    /// Handed straight to the transport, a request is checked as a manager checks it:
    /// FoundationNetworking traps on one without a URL, and libcurl writes a method or a field as
    /// it is (a method holding CR LF would add fields of its own).
    @Test func aRequestHandedStraightToURLSessionTransportIsCheckedToo() async throws {
        let refused: [(@Sendable (inout URLRequest) -> Void, RequestValidationError)] = [
            ({ $0.url = nil }, .missingURL),
            (
                { $0.url = URL(string: "http://127.0.0.1:99999/x") },
                .unsupportedURL("http://127.0.0.1:99999/x", reason: .invalidPort("99999"))
            ),
            ({ $0.httpMethod = "GET\r\nX-Injected: 1" }, .invalidMethod("GET\r\nX-Injected: 1")),
            ({ $0.httpMethod = "PO ST" }, .invalidMethod("PO ST")),
            ({ $0.httpMethod = "CONNECT" }, .tunnelMethod("CONNECT")),
            ({ $0.setValue("v", forHTTPHeaderField: "X Evil") }, .invalidHeaderName("X Evil")),
            ({ $0.setValue("del\u{7F}", forHTTPHeaderField: "X-Value") }, .invalidHeaderValue(name: "X-Value")),
        ]
        for (change, expected) in refused {
            let (error, stub) = try await directError(change)
            #expect(error == expected)
            #expect(stub.requests.isEmpty)
        }
        // One that keeps the grammar is sent.
        let (error, stub) = try await directError { $0.setValue("a\tb é", forHTTPHeaderField: "X-Text") }
        #expect(error == nil)
        #expect(stub.requests.count == 1)
    }

    @Test func theErrorShowsTextEscapedAndNeverAHeaderValue() {
        let value = RequestValidationError.invalidHeaderValue(name: "Authorization")
        #expect(value.description.contains("Authorization"))
        let name = RequestValidationError.invalidHeaderName("X\r\nInjected")
        #expect(name.description.contains(#"X\r\nInjected"#))
        #expect(!name.description.contains("\r"))
    }

    @Test func theGrammarChecksOfTheCoreTypes() throws {
        #expect(HTTPMethod.get.isValid)
        #expect(HTTPMethod("PURGE").isValid)
        #expect(!HTTPMethod("GET\r\n").isValid)
        #expect(!HTTPMethod("").isValid)
        try HTTPHeader(name: "Accept", value: "").validate()
        #expect(throws: RequestValidationError.invalidHeaderName("A B")) {
            try HTTPHeader(name: "A B", value: "v").validate()
        }
    }
}
