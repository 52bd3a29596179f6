import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// No credential reaches an origin the caller did not address, whatever adds it — the request
/// itself, the configuration, an adapter, an interceptor, a redirect decision, a URL's user
/// information — over every redirect status, along chains, back at the first origin, and from
/// `https` down to `http`; one bound to an origin by the caller reaches that origin.
@Suite struct CredentialOriginTests {
    /// What each hop of a chain saw, as the listener that answered it recorded it.
    final class HopLog: Sendable {
        struct Entry: Sendable {
            let origin: String
            let headers: [String: String]
            /// The `api_key` query item, as the request's query carried it.
            let apiKey: String?
        }
        private let entries = NIOLockedValueBox<[Entry]>([])

        var all: [Entry] { entries.withLockedValue { $0 } }

        /// Adds `/hop` to `server`'s listeners: it records the request, then redirects with `code`
        /// to `next` when the query names one, and answers `204` otherwise.
        func install(on server: TestServer) {
            server.router.add(nil, "/hop") { [entries] request in
                var headers: [String: String] = [:]
                for (name, value) in request.headers {
                    headers[name.lowercased()] = value
                }
                entries.withLockedValue {
                    $0.append(
                        Entry(
                            origin: request.server.current.absoluteString, headers: headers,
                            apiKey: request.queryValue("api_key")))
                }
                guard let next = request.queryValue("next") else { return .response(status: 204) }
                return .response(status: Int(request.queryValue("code") ?? "") ?? 302, headers: [("Location", next)])
            }
        }
    }

    /// The credential fields every source below adds, by the redaction's names (`X-Auth-Token` by
    /// its name alone: ``/StrataCore/Redaction/namesACredential(_:)``).
    static let redaction = Redaction(extraHeaderNames: ["X-Api-Key", "X-Policy-Token", "X-Bound-Token"])
    static let credentialNames = [
        "authorization", "cookie", "proxy-authorization", "x-api-key", "x-policy-token", "x-auth-token",
    ]

    /// An interceptor bound to no origin that adds a cookie, as a session store might.
    struct CookieInterceptor: RequestInterceptor {
        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            var request = request
            request.setValue("session=s3cret-cookie", forHTTPHeaderField: "Cookie")
            completion(.success(request))
        }
    }

    /// `/hop` on each listener of `chain` in turn, redirecting with `code`; the URL of the first.
    static func chainURL(_ chain: [URL], code: Int) -> URL? {
        var next: String?
        for listener in chain.reversed() {
            var components = URLComponents(url: listener.appendingPathComponent("hop"), resolvingAgainstBaseURL: false)
            if let target = next {
                components?.queryItems = [
                    URLQueryItem(name: "code", value: "\(code)"), URLQueryItem(name: "next", value: target),
                ]
            }
            next = components?.url?.absoluteString
        }
        return next.flatMap(URL.init(string:))
    }

    /// An adapter bound to no origin that puts an API key in the query, as many services ask.
    struct QueryKeyAdapter: RequestAdapter {
        func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            var request = request
            if let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) {
                components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "api_key", value: "qk3y")]
                request.url = components.url
            }
            completion(.success(request))
        }
    }

    /// How a request takes its answer: whole, to a file, or as a stream (each its own way through
    /// `URLSession`: a data task, a download task, a data task whose body is read as it comes).
    enum Kind: CaseIterable, Sendable { case value, download, stream }

    /// Sends a `GET` of `kind` along `chain` with every source of credentials at work, and returns
    /// what each hop saw.
    static func run(
        _ chain: [URL], code: Int, main: URL, other: URL, server: TestServer,
        allowsInsecureRedirects: Bool = false, transport: (any Transport)? = nil, kind: Kind = .value
    ) async throws -> (log: [HopLog.Entry], result: Result<NetworkResponse, NetworkError>) {
        let log = HopLog()
        log.install(on: server)
        let policy = RedirectPolicy.custom(allowsInsecureRedirects: allowsInsecureRedirects) { next, _ in
            var next = next
            next.setValue("p0licy", forHTTPHeaderField: "X-Policy-Token")
            return next
        }
        let manager = SessionManager(
            transport: transport ?? TestTransport.current.makeTransport(),
            adapters: [
                HeadersAdapter(["Authorization": "Bearer t0ken", "X-Auth-Token": "aut0"]),
                HeadersAdapter(["X-Bound-Token": "b0und"], origins: [try #require(Origin(other))]),
                QueryKeyAdapter(),
            ],
            interceptors: [CookieInterceptor()],
            redirectPolicy: policy,
            redaction: redaction
        )
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: main, headers: ["X-Api-Key": "k3y"], timeoutInterval: 10),
            sessionManager: manager)
        let start = try #require(chainURL(chain, code: code))
        let file = FileManager.default.temporaryDirectory.appending(path: "hop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let endpoint = Endpoint<Void>(
            path: String(start.path.dropFirst()),
            headerParameters: ["Proxy-Authorization": "Basic cHJveHk=", "Host": authority(of: main)],
            queryParameters: (URLComponents(url: start, resolvingAgainstBaseURL: false)?.queryItems ?? []).reduce(
                into: [String: ParameterValue]()
            ) { $0[$1.name] = .string($1.value ?? "") },
            options: RequestOptions(downloadDestination: kind == .download ? file : nil)
        )
        let recorder = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
        switch kind {
        case .value, .download: service.request(endpoint: endpoint, completion: recorder.record)
        case .stream:
            service.stream(endpoint: endpoint, decoding: .bytes, receive: { _ in }, completion: recorder.record)
        }
        let result = try #require(await recorder.first(timeout: 20))
        return (log.all, result)
    }

    /// The `Host` of `url`'s origin. The request sets it itself, as a caller naming a virtual host
    /// does: it must reach `main` and no other.
    static func authority(of url: URL) -> String {
        "\(url.host(percentEncoded: false) ?? ""):\(url.port ?? 0)"
    }

    /// Checks that hops at `other` got no credential but the one bound to it, and hops at `main`
    /// got every one.
    static func expectCredentialsStayed(_ log: [HopLog.Entry], main: URL, other: URL, hops: Int) {
        #expect(log.count == hops)
        for (index, entry) in log.enumerated() {
            if entry.origin == other.absoluteString {
                for name in credentialNames {
                    #expect(entry.headers[name] == nil, "hop \(index) to \(entry.origin) got \(name)")
                }
                #expect(entry.headers["x-bound-token"] == "b0und", "hop \(index): the bound adapter's token")
                #expect(entry.apiKey == nil, "hop \(index) to \(entry.origin) got the query's api_key")
                #expect(entry.headers["host"] == authority(of: other), "hop \(index): the Host of another origin")
            } else {
                #expect(entry.origin == main.absoluteString)
                #expect(entry.headers["authorization"] == "Bearer t0ken", "hop \(index)")
                #expect(entry.headers["host"] == authority(of: main), "hop \(index)")
                #expect(entry.headers["x-auth-token"] == "aut0", "hop \(index)")
                #expect(entry.headers["cookie"] == "session=s3cret-cookie", "hop \(index)")
                #expect(entry.headers["x-api-key"] == "k3y", "hop \(index)")
                #expect(entry.headers["proxy-authorization"] == "Basic cHJveHk=", "hop \(index)")
                #expect(entry.headers["x-bound-token"] == nil, "hop \(index)")
                #expect(entry.apiKey == "qk3y", "hop \(index)")
            }
        }
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func noCredentialFollowsARedirectToAnotherOrigin(code: Int) async throws {
        try await Harness.with { (harness) async throws in
            let (main, other) = (harness.server.baseURL, harness.server.otherOriginURL)
            let (log, result) = try await Self.run(
                [main, other], code: code, main: main, other: other, server: harness.server)
            #expect(result.failureStatus == nil, "\(result)")
            Self.expectCredentialsStayed(log, main: main, other: other, hops: 2)
        }
    }

    /// A download and a stream follow redirects as a request answered whole does, and no
    /// credential follows them to another origin either.
    @Test(arguments: [Kind.download, .stream], [302, 307])
    func noCredentialFollowsADownloadOrAStreamToAnotherOrigin(kind: Kind, code: Int) async throws {
        try await Harness.with { (harness) async throws in
            let (main, other) = (harness.server.baseURL, harness.server.otherOriginURL)
            let (log, result) = try await Self.run(
                [main, other, main], code: code, main: main, other: other, server: harness.server, kind: kind)
            #expect(result.failureStatus == nil, "\(kind): \(result)")
            Self.expectCredentialsStayed(log, main: main, other: other, hops: 3)
        }
    }

    /// Chains that leave the first origin and come back: the caller's credentials reach the origin
    /// it addressed on every hop there, and never the other one.
    @Test(arguments: [[0, 1, 0], [0, 1, 1, 0], [0, 0, 1], [0, 1, 0, 1]])
    func aChainGivesCredentialsOnlyToTheAddressedOrigin(path: [Int]) async throws {
        try await Harness.with { (harness) async throws in
            let (main, other) = (harness.server.baseURL, harness.server.otherOriginURL)
            for code in [302, 307] {
                let (log, result) = try await Self.run(
                    path.map { $0 == 0 ? main : other }, code: code, main: main, other: other, server: harness.server)
                #expect(result.failureStatus == nil, "\(result)")
                Self.expectCredentialsStayed(log, main: main, other: other, hops: path.count)
            }
        }
    }

    /// User information in the URL the caller gave goes as a Basic credential to that origin and
    /// nowhere else, over either transport (AsyncHTTPClient alone would drop it).
    @Test func userInformationIsACredentialOfTheAddressedOrigin() async throws {
        try await Harness.with { (harness) async throws in
            let log = HopLog()
            log.install(on: harness.server)
            let (main, other) = (harness.server.baseURL, harness.server.otherOriginURL)
            var components = try #require(URLComponents(url: main, resolvingAgainstBaseURL: false))
            components.user = "ann"
            components.password = "pa55"
            let service = DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: try #require(components.url), timeoutInterval: 10),
                sessionManager: SessionManager(transport: TestTransport.current.makeTransport()))
            let start = try #require(Self.chainURL([main, other, main], code: 302))
            let recorder = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
            service.request(
                endpoint: Endpoint<Void>(
                    path: "hop",
                    queryParameters: [
                        "code": "302",
                        "next": .string(
                            URLComponents(url: start, resolvingAgainstBaseURL: false)?.queryItems?.last?.value ?? ""),
                    ]),
                completion: recorder.record)
            let result = try #require(await recorder.first(timeout: 20))
            #expect(result.failureStatus == nil, "\(result)")
            let entries = log.all
            #expect(entries.map(\.origin) == [main, other, main].map(\.absoluteString))
            let basic = "Basic " + Data("ann:pa55".utf8).base64EncodedString()
            #expect(entries.map { $0.headers["authorization"] } == [basic, nil, basic])
        }
    }

    /// From `https` down to `http`: refused by default; allowed, the `http` origin gets nothing.
    /// Over AsyncHTTPClient only, whose TLS trusts the test authority (FoundationNetworking on
    /// Linux takes no custom roots); the pipeline's decision is the same over every transport.
    @Test func aDowngradeToHTTPIsRefusedOrStripped() async throws {
        guard TestTransport.current == .asyncHTTPClient else { return }
        let secure = try await TestServer.start(tls: try TestServer.tlsConfiguration())
        let plain = try await TestServer.start()
        defer {
            Task {
                try? await secure.shutdown()
                try? await plain.shutdown()
            }
        }
        HopLog().install(on: plain)
        let (refusedLog, refused) = try await Self.run(
            [secure.baseURL, plain.baseURL], code: 302, main: secure.baseURL, other: plain.baseURL, server: secure)
        guard case .failure(.redirect(.insecureRedirect)) = refused else {
            Issue.record("expected an insecure redirect error, got \(refused)")
            return
        }
        #expect(refusedLog.count == 1)
        let log = HopLog()
        log.install(on: plain)
        let (secureLog, allowed) = try await Self.run(
            [secure.baseURL, plain.baseURL], code: 307, main: secure.baseURL, other: plain.baseURL, server: secure,
            allowsInsecureRedirects: true)
        #expect(allowed.failureStatus == nil, "\(allowed)")
        #expect(secureLog.count == 1)
        let downgraded = try #require(log.all.first)
        for name in Self.credentialNames {
            #expect(downgraded.headers[name] == nil, "the http hop got \(name)")
        }
    }
}
