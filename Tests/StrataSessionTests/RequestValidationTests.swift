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

    @Test func anAdapterThatRemovesTheURLFailsTheRequestRatherThanTheProcess() async throws {
        struct Careless: RequestAdapter {
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
                var request = request
                request.url = nil
                completion(.success(request))
            }
        }
        let (error, stub) = try await error(of: base, adapters: [Careless()])
        #expect(error == .missingURL)
        #expect(stub.requests.isEmpty)
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
