import Dispatch
import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Redirects as Strata's pipeline follows them, between two stubs that are two origins.
@Suite struct RedirectPolicyTests {
    /// A stub that redirects every request to `location(other)` with `status`, and the other stub.
    private func stubs(
        status: Int = 302, location: @escaping @Sendable (URLProtocolStub) -> String
    ) -> (origin: URLProtocolStub, target: URLProtocolStub) {
        let target = URLProtocolStub { _ in .response(body: Data("landed".utf8)) }
        let origin = URLProtocolStub { _ in .response(statusCode: status, headers: ["Location": location(target)]) }
        return (origin, target)
    }

    private func outcome(
        _ request: URLRequest, manager: URLSessionManager, options: RequestOptions = RequestOptions()
    ) async throws -> Outcome {
        let (recorder, _) = send(request, through: manager, options: options)
        return try #require(await recorder.first(timeout: 10))
    }

    @Test func aDowngradeFromHTTPSToHTTPIsRefusedUnlessThePolicyAllowsIt() async throws {
        let (origin, target) = stubs { "http://\($0.host)/plain" }
        let manager = URLSessionManager(configuration: origin.makeSessionConfiguration())
        let refused = try await outcome(URLRequest(url: origin.baseURL), manager: manager)
        guard case .insecureRedirect(let from, let to)? = refused.error as? RedirectError else {
            Issue.record("expected an insecure redirect, got \(String(describing: refused.error))")
            return
        }
        #expect(from.scheme == "https" && to.scheme == "http")
        #expect(target.requests.isEmpty)

        let allowing = URLSessionManager(
            configuration: origin.makeSessionConfiguration(),
            redirectPolicy: .custom(allowsInsecureRedirects: true) { next, _ in next })
        #expect(try await outcome(URLRequest(url: origin.baseURL), manager: allowing).error == nil)
        #expect(target.requests.first?.url?.scheme == "http")
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://files.example.com/x", "data:text/plain,hi", "javascript:alert(1)"])
    func aRedirectToAnotherSchemeIsRefused(location: String) async throws {
        let origin = URLProtocolStub { _ in .response(statusCode: 302, headers: ["Location": location]) }
        let manager = URLSessionManager(configuration: origin.makeSessionConfiguration())
        let error = try await outcome(URLRequest(url: origin.baseURL), manager: manager).error
        guard case .unsupportedScheme? = error as? RedirectError else {
            Issue.record("expected an unsupported scheme, got \(String(describing: error))")
            return
        }
    }

    @Test(arguments: ["http://[::1", "https://", "http://exa mple.com/"])
    func aLocationThatIsNotAURLIsATypedError(location: String) async throws {
        let origin = URLProtocolStub { _ in .response(statusCode: 301, headers: ["Location": location]) }
        let manager = URLSessionManager(configuration: origin.makeSessionConfiguration())
        let error = try await outcome(URLRequest(url: origin.baseURL), manager: manager).error
        switch error as? RedirectError {
        case .invalidLocation?, .unsupportedLocation(_, reason: .missingHost)?: break
        default: Issue.record("expected an invalid location, got \(String(describing: error))")
        }
    }

    @Test func doNotFollowDeliversTheRedirectWhateverItsLocation() async throws {
        let origin = URLProtocolStub { _ in .response(statusCode: 302, headers: ["Location": "file:///etc/passwd"]) }
        let manager = URLSessionManager(
            configuration: origin.makeSessionConfiguration(), acceptableStatusCodes: [302], redirectPolicy: .doNotFollow
        )
        let outcome = try await outcome(URLRequest(url: origin.baseURL), manager: manager)
        #expect(outcome.error == nil)
        #expect((outcome.response as? HTTPURLResponse)?.statusCode == 302)
    }

    /// Across origins only what the caller set for this request goes on: no credential header, no
    /// header the redaction registers as secret, no configuration header; adapters run again, so a
    /// header bound to the first origin is not added at the second.
    @Test(arguments: [301, 302, 303, 307, 308])
    func aCrossOriginRedirectCarriesOnlyWhatTheCallerSetForThisRequest(status: Int) async throws {
        let (origin, target) = stubs(status: status) { "https://\($0.host)/landed" }
        let manager = URLSessionManager(
            configuration: origin.makeSessionConfiguration(),
            adapters: [
                HeadersAdapter(["X-Api-Key": "adapter-key"], origins: [try #require(Origin(origin.baseURL))]),
                HeadersAdapter(["User-Agent": "Strata-Tests"]),
            ],
            redaction: Redaction(extraHeaderNames: ["X-Secret"])
        )
        var request = URLRequest(url: origin.baseURL)
        for (name, value) in [
            ("Authorization", "Bearer t"), ("Proxy-Authorization", "Basic p"), ("Cookie", "c=1"),
            ("X-Secret", "registered"), ("X-Config", "shared"), ("X-Trace", "kept"), ("Host", "api.strata.test"),
        ] {
            request.setValue(value, forHTTPHeaderField: name)
        }
        let options = RequestOptions(originBoundHeaderNames: ["x-config"])
        #expect(try await outcome(request, manager: manager, options: options).error == nil)
        let first = try #require(origin.requests.first)
        #expect(first.value(forHTTPHeaderField: "X-Api-Key") == "adapter-key")
        #expect(first.value(forHTTPHeaderField: "X-Config") == "shared")
        let landed = try #require(target.requests.first)
        #expect(first.value(forHTTPHeaderField: "Host") == "api.strata.test")
        for name in ["Authorization", "Proxy-Authorization", "Cookie", "X-Secret", "X-Config", "X-Api-Key", "Host"] {
            #expect(landed.value(forHTTPHeaderField: name) == nil, "\(name) crossed to another origin")
        }
        #expect(landed.value(forHTTPHeaderField: "X-Trace") == "kept")
        #expect(landed.value(forHTTPHeaderField: "User-Agent") == "Strata-Tests")
    }

    /// Writes its `Authorization` under a name in another case, bound to no origin.
    struct LowercaseAuthorizationAdapter: RequestAdapter {
        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            var request = request
            request.setHeaderField("authorization", "Bearer unbound")
            completion(.success(request))
        }
    }

    /// On a hop to another origin, what an unbound adapter does to a credential is undone whatever
    /// the case of the name it writes: the credential an adapter bound to that origin gave stays.
    @Test func anUnboundAdapterCannotReplaceABoundOnesCredentialByChangingItsNamesCase() async throws {
        let (origin, target) = stubs { "https://\($0.host)/landed" }
        let manager = URLSessionManager(
            configuration: origin.makeSessionConfiguration(),
            adapters: [
                HeadersAdapter(["Authorization": "Bearer bound"], origins: [try #require(Origin(target.baseURL))]),
                LowercaseAuthorizationAdapter(),
            ])
        #expect(try await outcome(URLRequest(url: origin.baseURL), manager: manager).error == nil)
        #expect(origin.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer unbound")
        let landed = try #require(target.requests.first)
        #expect(landed.value(forHTTPHeaderField: "Authorization") == "Bearer bound")
        #expect((landed.allHTTPHeaderFields ?? [:]).keys.filter { $0.lowercased() == "authorization" }.count == 1)
    }

    /// A header named as a credential — an API key, a token, a session — is one, registered or
    /// not: what an adapter bound to no origin puts there stays at the origin the caller
    /// addressed, as an `Authorization` does; other headers go on.
    @Test(arguments: [302, 307])
    func aCredentialHeaderByItsNameDoesNotFollowARedirectToAnotherOrigin(status: Int) async throws {
        let (origin, target) = stubs(status: status) { "https://\($0.host)/landed" }
        let credentials = [
            "X-Api-Key", "Api-Key", "X-API_KEY", "X-Auth-Token", "X-MyApp-Token", "X-Access-Token",
            "X-Amz-Security-Token", "Ocp-Apim-Subscription-Key", "X-Session-Id", "X-Client-Secret",
        ]
        let others = ["X-Request-Id", "Accept-Language", "X-Keyboard", "X-Tokenizer", "X-Authority-Zone"]
        let fields = Dictionary(uniqueKeysWithValues: (credentials + others).map { ($0, "v-\($0)") })
        let manager = URLSessionManager(
            configuration: origin.makeSessionConfiguration(), adapters: [HeadersAdapter(HTTPHeaders(fields))])
        #expect(try await outcome(URLRequest(url: origin.baseURL), manager: manager).error == nil)
        let first = try #require(origin.requests.first)
        let landed = try #require(target.requests.first)
        for name in credentials {
            #expect(first.value(forHTTPHeaderField: name) == "v-\(name)")
            #expect(landed.value(forHTTPHeaderField: name) == nil, "\(name) crossed to another origin")
        }
        for name in others {
            #expect(landed.value(forHTTPHeaderField: name) == "v-\(name)", "\(name) was dropped")
        }
    }

    /// Adds query items (percent-encoded) to every request, replacing those of the same names, as
    /// an adapter that puts an API key in the query does.
    struct QueryAdapter: RequestAdapter {
        let items: [URLQueryItem]
        let origins: Set<Origin>?
        var credentialOrigins: Set<Origin>? { origins }

        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            var request = request
            if let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) {
                components.percentEncodedQueryItems =
                    (components.percentEncodedQueryItems ?? []).filter { item in
                        !items.contains { $0.name == item.name }
                    } + items
                request.url = components.url
            }
            completion(.success(request))
        }
    }

    /// A secret query item an adapter adds (a key the redaction hides: `api_key`, `access_token`,
    /// one registered) stays at the origins the adapter is bound to, as a credential header does;
    /// what the redirect's own `Location` carries, and other items, go on.
    @Test(arguments: [302, 307])
    func aSecretQueryItemAnAdapterAddsDoesNotFollowARedirectToAnotherOrigin(status: Int) async throws {
        let (origin, target) = stubs(status: status) { "https://\($0.host)/landed?page=2&token=from-the-server" }
        let bound = try #require(Origin(origin.baseURL))
        let manager = URLSessionManager(
            configuration: origin.makeSessionConfiguration(),
            adapters: [
                QueryAdapter(
                    items: [
                        URLQueryItem(name: "api_key", value: "k3y"),
                        URLQueryItem(name: "user%5BAccess_Token%5D", value: "t"),
                        URLQueryItem(name: "sig", value: "registered"), URLQueryItem(name: "lang", value: "en"),
                        URLQueryItem(name: "token", value: "from-the-adapter"),
                    ], origins: nil),
                QueryAdapter(items: [URLQueryItem(name: "client_secret", value: "bound")], origins: [bound]),
            ],
            redaction: Redaction(queryKeys: ["sig"])
        )
        #expect(try await outcome(URLRequest(url: origin.baseURL), manager: manager).error == nil)
        let first = try #require(origin.requests.first?.url)
        let sent = URLComponents(url: first, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(sent.map(\.name) == ["api_key", "user[Access_Token]", "sig", "lang", "token", "client_secret"])
        let landed = try #require(target.requests.first?.url)
        let items = URLComponents(url: landed, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(
            items == [
                URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "token", value: "from-the-server"),
                URLQueryItem(name: "lang", value: "en"),
            ])
    }

    /// The `Location`'s query is kept as the server wrote it, however it is written, when an
    /// adapter's secret item is taken out of it.
    @Test(arguments: [
        "page=2&token=a%2Fb%3D&&=&flag&x=%E2%9C%93;y&x=1", "=&&", "a=b=c&token", "%41%20=%2B+&TOKEN=%00",
    ])
    func theLocationsOwnQueryIsKeptAsWritten(query: String) async throws {
        let (origin, target) = stubs { "https://\($0.host)/landed?\(query)" }
        let manager = URLSessionManager(
            configuration: origin.makeSessionConfiguration(),
            adapters: [QueryAdapter(items: [URLQueryItem(name: "api_key", value: "k3y")], origins: nil)])
        #expect(try await outcome(URLRequest(url: origin.baseURL), manager: manager).error == nil)
        let landed = try #require(target.requests.first?.url)
        #expect(landed.query(percentEncoded: true) == query)
    }

    /// An absolute `Location` is taken as written, dot segments and all (a relative one comes
    /// resolved): they are resolved before the next hop goes out, as libcurl would resolve them and
    /// SwiftNIO would not, so the hop goes to the same path over every transport.
    @Test(arguments: [
        ("a/../landed/./x", "/landed/x"), ("%2E%2E/landed/", "/landed/"), ("landed/x/..", "/landed/"),
        ("landed.v2/x..y", "/landed.v2/x..y"),
    ])
    func anAbsoluteLocationsDotSegmentsAreResolved(path: String, expected: String) async throws {
        let (origin, target) = stubs { "https://\($0.host)/\(path)?q=../x" }
        let manager = URLSessionManager(configuration: origin.makeSessionConfiguration())
        #expect(try await outcome(URLRequest(url: origin.baseURL), manager: manager).error == nil)
        let landed = try #require(target.requests.first?.url)
        #expect(landed.path(percentEncoded: true) == expected)
        #expect(landed.query(percentEncoded: true) == "q=../x")
    }

    @Test func aCredentialTheDecisionAddsForAnotherOriginIsRemovedToo() async throws {
        let (origin, target) = stubs { "https://\($0.host)/landed" }
        let policy = RedirectPolicy.custom { next, _ in
            var next = next
            next.setValue("Bearer from-the-policy", forHTTPHeaderField: "Authorization")
            next.setValue("kept", forHTTPHeaderField: "X-From-Policy")
            return next
        }
        let manager = URLSessionManager(configuration: origin.makeSessionConfiguration(), redirectPolicy: policy)
        #expect(try await outcome(URLRequest(url: origin.baseURL), manager: manager).error == nil)
        let landed = try #require(target.requests.first)
        #expect(landed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(landed.value(forHTTPHeaderField: "X-From-Policy") == "kept")
    }

    @Test func aSameOriginRedirectKeepsEveryHeaderAndRunsTheAdaptersAgain() async throws {
        let count = Locked(0)
        let stub = URLProtocolStub { request in
            count.withLock { $0 += 1 }
            return request.url?.path == "/start"
                ? .response(statusCode: 302, headers: ["Location": "/next"]) : .response()
        }
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(), adapters: [HeadersAdapter(["X-Adapted": "yes"])])
        var request = URLRequest(url: stub.baseURL.appendingPathComponent("start"))
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        #expect(try await outcome(request, manager: manager).error == nil)
        let landed = try #require(stub.requests.last)
        #expect(landed.url?.path == "/next")
        #expect(landed.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(landed.value(forHTTPHeaderField: "X-Adapted") == "yes")
        #expect(count.value == 2)
    }

    @Test func aPostRedirectedWith303ToTheSameURLIsNotALoop() async throws {
        let stub = URLProtocolStub { request in
            request.httpMethod == "POST"
                ? .response(statusCode: 303, headers: ["Location": request.url?.absoluteString ?? ""])
                : .response(body: Data("done".utf8))
        }
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        var request = URLRequest(url: stub.baseURL)
        request.httpMethod = "POST"
        request.httpBody = Data("form".utf8)
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        let outcome = try await outcome(request, manager: manager)
        #expect(outcome.error == nil)
        #expect(outcome.data == Data("done".utf8))
        let followed = try #require(stub.requests.last)
        #expect(followed.httpMethod == "GET")
        #expect(followed.httpBody == nil)
        #expect(followed.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func a307WithABodyThatCannotBeReadAgainIsATypedError() async throws {
        let (origin, _) = stubs(status: 307) { "https://\($0.host)/" }
        let manager = URLSessionManager(configuration: origin.makeSessionConfiguration())
        var request = URLRequest(url: origin.baseURL)
        request.httpMethod = "PUT"
        request.httpBodyStream = InputStream(data: Data("once".utf8))
        #expect(try await outcome(request, manager: manager).error as? RedirectError == .bodyNotReplayable)
    }

    /// A manager for `origin` whose redirect decisions start a request on that same manager, inside
    /// `hop` (which may run it at once, or on another queue), and the recorder of those requests.
    private func managerWhoseDecisionsStartRequests(
        _ origin: URLProtocolStub, hop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) -> (URLSessionManager, CompletionRecorder<Outcome>) {
        let inner = CompletionRecorder<Outcome>()
        let managerBox = Locked<URLSessionManager?>(nil)
        let policy = RedirectPolicy.custom { next, _ in
            hop {
                _ = managerBox.value?.request(
                    URLRequest(url: origin.baseURL), options: .init(redirectPolicy: .doNotFollow)
                ) {
                    inner.record(($0, $1, $2))
                }
            }
            return next
        }
        let manager = URLSessionManager(
            configuration: origin.makeSessionConfiguration(), acceptableStatusCodes: Set(200..<400),
            redirectPolicy: policy)
        managerBox.withLock { $0 = manager }
        return (manager, inner)
    }

    /// A decision that itself starts a request on the same manager finishes: Strata holds no lock
    /// while the policy decides.
    @Test func aRedirectDecisionThatStartsARequestOnTheSameManagerFinishes() async throws {
        let (origin, target) = stubs { "https://\($0.host)/" }
        let (manager, inner) = managerWhoseDecisionsStartRequests(origin) { $0() }
        #expect(try await outcome(URLRequest(url: origin.baseURL), manager: manager).error == nil)
        #expect(await inner.first(timeout: 10) != nil)
        #expect(target.requests.count == 1)
    }

    /// A decision that hops synchronously to another queue, busy starting requests on the same
    /// manager, and starts one there itself, finishes too.
    @Test func aRedirectDecisionThatHopsSynchronouslyToAQueueStartingRequestsFinishes() async throws {
        let (origin, _) = stubs { "https://\($0.host)/" }
        let queue = DispatchQueue(label: "redirect-decision-hop")
        let (manager, inner) = managerWhoseDecisionsStartRequests(origin) { queue.sync(execute: $0) }
        let outer = (0..<20).map { _ in CompletionRecorder<Outcome>() }
        for recorder in outer {
            queue.async {
                _ = manager.request(URLRequest(url: origin.baseURL), options: RequestOptions()) {
                    recorder.record(($0, $1, $2))
                }
            }
        }
        for recorder in outer {
            #expect(try #require(await recorder.first(timeout: 10)).error == nil)
        }
        #expect(await inner.first(timeout: 10) != nil)
    }
}
