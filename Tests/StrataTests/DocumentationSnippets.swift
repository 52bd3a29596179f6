// Every Swift block of the DocC catalogs (Sources/*/*.docc), compiled. `DocumentationTests` checks
// that each block stands here or in ReadmeSnippets.swift line for line. Declarations the README
// shows too (User, UserEndpoints, Token, TokenAuthenticator, …) live in ReadmeSnippets.swift.

import Foundation
import Strata
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// MARK: - Module landing pages

enum ModuleLandingSnippets {
    static func core() {
        let headers: HTTPHeaders = ["Accept": "application/json"]
        let accept = headers["accept"]  // "application/json"
        let page: [String: ParameterValue] = ["q": "swift", "page": 2, "tags": ["new", "sale"]]
        _ = (accept, page)
    }

    static func configuration() throws {
        let environments = NetworkEnvironments([
            .development: .init(baseURL: "http://localhost:8080"),
            .production: .init(baseURL: "https://api.example.com", headers: ["X-Client": "shop"]),
        ])
        // STRATA_ENVIRONMENT=production ./App
        let configuration = try environments.selectedConfiguration()
        _ = configuration
    }

    static func session(authenticator: TokenAuthenticator, storedToken: Token) {
        let authentication = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: storedToken,
            origins: [Origin(scheme: "https", host: "api.example.com")]
        )
        let manager = SessionManager(
            adapters: [HeadersAdapter(["User-Agent": "Shop/2.1"])],
            retriers: [RetryPolicy(maximumAttempts: 4, deadline: 30)],
            interceptors: [authentication],
            redirectPolicy: .follow
        )
        _ = manager
    }

    enum Endpoints {
        enum UserEndpoints {
            static func search(_ query: String, page: Int) -> Endpoint<[User]> {
                Endpoint(path: "users/search", queryParameters: ["q": .string(query), "page": .int(page)])
            }
            static func delete(id: Int) -> Endpoint<Void> {
                Endpoint(path: "users/\(id)", method: .delete)
            }
        }
    }

    static func service(configuration: NetworkConfiguration) {
        let service = DefaultNetworkService(
            configuration: configuration,
            sessionManager: URLSessionManager(monitors: [ConsoleNetworkLogger(level: .debug)])
        )
        _ = service
    }

    static func transfer(service: any NetworkService) {
        let transfer = DefaultDataTransferService(
            networkService: service,
            errorResolver: JSONErrorBodyResolver<APIError>()
        )
        transfer.request(with: UserEndpoints.search("ann", page: 1)) { result in
            // Result<[User], DataTransferError>, on the main queue
        }
    }

    static func testing() async throws {
        let transfer = MockDataTransferService()
        transfer.enqueue(.value([User(id: 1, name: "Ann")]))
        let users = try await UserRepository(transfer: transfer).search("ann")
        #expect(users.count == 1)
        #expect(transfer.requests.first?.url?.query == "page=1&q=ann")
    }
}

// MARK: - Getting Started

enum GettingStartedSnippets {
    static func run() async throws {
        guard let baseURL = URL(string: "https://api.example.com/v1") else { return }
        let configuration = NetworkConfiguration(
            baseURL: baseURL,
            headers: ["Accept-Language": "en"],
            queryParameters: ["api_version": "2"],
            timeoutInterval: 20
        )

        let sessionManager = URLSessionManager()
        let networkService = DefaultNetworkService(configuration: configuration, sessionManager: sessionManager)
        let transfer = DefaultDataTransferService(networkService: networkService, completionQueue: .main)

        let request = transfer.request(with: UserEndpoints.search("ann", page: 1)) { result in
            switch result {
            case .success(let users): print("found", users.count)
            case .failure(let error): print(error.localizedDescription)
            }
        }
        request.cancel()  // the completion runs once, with .networkFailure(.cancelled)

        let created = try await transfer.request(UserEndpoints.create(NewUser(name: "Ann")))
        try await transfer.request(UserEndpoints.delete(id: created.id))
    }
}

// MARK: - Endpoints and Encodings

struct CSVEncoding: ParameterEncoding {
    func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError) -> URLRequest {
        var request = request
        let line = parameters.keys.sorted().map { "\($0)=\(parameters[$0]?.description ?? "")" }
        request.httpBody = Data(line.joined(separator: ",").utf8)
        request.setHeaderField("Content-Type", "text/csv")
        return request
    }
}

enum EndpointSnippets {
    static func run(
        photoURL: URL, backupURL: URL, destinationURL: URL, transfer: any DataTransferService
    ) async throws {
        let search = Endpoint<[User]>(
            path: "users/search?sort=new",
            headerParameters: ["X-Trace": "42"],
            queryParameters: ["q": "ann lee", "tags": ["swift", "linux"], "page": 2]
        )
        // GET …/users/search?sort=new&page=2&q=ann%20lee&tags%5B%5D=swift&tags%5B%5D=linux

        struct Filter: Encodable, Sendable {
            let city: String
            let since: Date
        }
        let filtered = Endpoint<[User]>(
            path: "users",
            queryParametersEncodable: Filter(city: "Zürich", since: Date(timeIntervalSince1970: 0)),
            queryEncoding: URLEncoding(destination: .queryString, dateEncoding: .secondsSince1970)
        )

        let create = Endpoint<User>(path: "users", method: .post, bodyParametersEncodable: NewUser(name: "Ann"))

        let login = Endpoint<Void>(
            path: "login",
            method: .post,
            bodyParameters: ["user": "ann", "remember": true],
            bodyEncoding: URLEncoding.httpBody
        )

        var form = MultipartFormData()
        try form.append(fileURL: photoURL, name: "photo")
        form.append(Data("{\"album\": 7}".utf8), name: "meta", fileName: "meta.json", mimeType: "application/json")
        let upload = Endpoint<Void>(
            path: "photos",
            method: .post,
            bodyParameters: ["caption": "Sunset"],
            bodyEncoding: MultipartEncoding(form: form),
            options: RequestOptions(uploadProgress: { progress in print(progress.fractionCompleted) })
        )

        let order = Endpoint<User>(
            path: "orders",
            method: .post,
            bodyParametersEncodable: NewUser(name: "Ann"),
            bodyEncoding: XMLEncoding(rootElement: "order"),
            responseDecoder: XMLResponseDecoder()
        )
        let quote = Endpoint<User>(
            path: "soap",
            method: .post,
            bodyParameters: ["symbol": "STRA"],
            bodyEncoding: XMLEncoding.soap(.v1_1, operation: "GetQuote", action: "urn:GetQuote"),
            responseDecoder: XMLResponseDecoder(unwrapsSOAPBody: true)
        )

        let backup = Endpoint<Void>(
            path: "backups/latest",
            method: .put,
            bodyEncoding: UploadEncoding.file(backupURL, contentType: "application/octet-stream")
        )

        let archive = Endpoint<Empty>(
            path: "exports/2026.zip",
            options: RequestOptions(
                downloadDestination: destinationURL,
                downloadProgress: { progress in print(progress.completedUnitCount) }
            )
        )

        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let page = Endpoint<[User]>(path: "users", responseDecoder: JSONResponseDecoder(decoder: decoder))
        let response = try await transfer.requestResponse(page)
        print(response.value.count, response.response.headers["X-Total-Count"] ?? "?")

        _ = (search, filtered, create, login, upload, order, quote, backup, archive)
    }
}

// MARK: - Interceptors and Authentication

enum InterceptorSnippets {
    static func run(authenticator: TokenAuthenticator) {
        let manager = URLSessionManager(
            adapters: [APIKeyAdapter(key: "secret"), HeadersAdapter(["User-Agent": "Shop/2.1"])],
            retriers: [RetryServerErrorsOnce()]
        )
        let traced = Endpoint<[User]>(
            path: "users",
            options: RequestOptions(interceptor: Interceptor(adapters: [HeadersAdapter(["X-Trace": "on"])]))
        )

        let retries = RetryPolicy(
            maximumAttempts: 4,
            initialDelay: 0.5,
            multiplier: 2,
            maximumDelay: 20,
            jitter: 0.2,
            deadline: 60
        )

        let authentication = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: nil,
            origins: [Origin(scheme: "https", host: "api.example.com")],
            refreshTimeout: 15,
            refreshWindow: .init(interval: 30, maximumAttempts: 3)
        )
        let protectedManager = URLSessionManager(interceptors: [authentication])
        authentication.credential = Token(access: "a1", refresh: "r1")

        let sameHostOnly = RedirectPolicy.custom(maximumRedirects: 5) { next, _ in
            next.url?.host == "api.example.com" ? next : nil
        }
        let cautious = URLSessionManager(redirectPolicy: sameHostOnly)
        let raw = Endpoint<Empty>(
            path: "short/abc",
            options: RequestOptions(acceptableStatusCodes: [301, 302], redirectPolicy: .doNotFollow)
        )

        let gated = URLSessionManager(reachability: InterfaceReachability())

        let logger = ConsoleNetworkLogger(
            level: .verbose,
            redaction: Redaction(extraHeaderNames: ["X-Partner-Id"], bodyFields: ["card_number"])
        )
        let logged = URLSessionManager(monitors: [logger])

        let metrics = MetricsMonitor()
        let observed = URLSessionManager(monitors: [metrics, ConsoleNetworkLogger(level: .info)])

        _ = (manager, traced, retries, protectedManager, cautious, raw, gated, logged, observed)
    }
}

final class MetricsMonitor: EventMonitor, @unchecked Sendable {  // Sendable: `lock` guards `snapshot`.
    struct Snapshot: Sendable {
        var finished = 0
        var failed = 0
        var retries = 0
        /// Finished requests by latency: each bucket is named by its upper bound in milliseconds.
        var histogram: [Int: Int] = [:]
    }

    static let bucketBounds = [10, 25, 50, 100, 250, 500, 1_000, 5_000, Int.max]
    private let lock = NSLock()
    private var snapshot = Snapshot()

    var current: Snapshot { lock.withLock { snapshot } }

    func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID) {
        lock.withLock { snapshot.retries += 1 }
    }

    func requestFinished(
        _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
    ) {
        let milliseconds = metrics.duration / .milliseconds(1)
        let bucket = Self.bucketBounds.first { Double($0) >= milliseconds } ?? Int.max
        lock.withLock {
            snapshot.finished += 1
            snapshot.failed += outcome.error == nil ? 0 : 1
            snapshot.histogram[bucket, default: 0] += 1
        }
    }
}

/// The article's metrics monitor, over real requests: it counts what finished, failed and was
/// retried, and files each request's latency in its bucket.
@Suite struct MetricsMonitorSnippetTests {
    @Test func theMetricsMonitorCountsRequestsAndFilesTheirLatency() async throws {
        let calls = Locked(0)
        let stub = URLProtocolStub { request in
            if request.url?.path == "/slow" { return .response(delay: 0.3) }
            if request.url?.path == "/missing" { return .response(statusCode: 404) }
            return calls.withLock {
                $0 += 1; return $0
            } == 1 ? .response(statusCode: 503) : .response()
        }
        let metrics = MetricsMonitor()
        let manager = URLSessionManager(
            configuration: stub.makeSessionConfiguration(),
            retriers: [RetryPolicy(maximumAttempts: 2, initialDelay: 0, jitter: 0)],
            monitors: [metrics]
        )
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: stub.baseURL), sessionManager: manager)
        _ = try await service.request(endpoint: Endpoint<Void>(path: "fast"))
        _ = try await service.request(endpoint: Endpoint<Void>(path: "slow"))
        _ = try? await service.request(endpoint: Endpoint<Void>(path: "missing"))
        for _ in 0..<100 where metrics.current.finished < 3 {
            try await Task.sleep(for: .milliseconds(10))
        }
        let snapshot = metrics.current
        #expect(snapshot.finished == 3)
        #expect(snapshot.retries == 1)
        #expect(snapshot.failed == 1)
        #expect(snapshot.histogram.values.reduce(0, +) == 3)
        #expect(snapshot.histogram.keys.contains { $0 >= 500 })
        #expect(snapshot.histogram.keys.contains { $0 <= 250 })
    }
}

// MARK: - Testing with Strata

enum TestingSnippets {
    static func run(configuration: NetworkConfiguration) async throws {
        let mock = MockDataTransferService(stubs: [.value([User(id: 1, name: "Ann")])])
        let repository = UserRepository(transfer: mock)
        let users = try await repository.search("ann")
        #expect(users.first?.name == "Ann")
        #expect(mock.requests.first?.url?.query == "page=1&q=ann")

        let failing = MockDataTransferService(stubs: [.failure(.networkFailure(.notConnected))])
        await #expect(throws: DataTransferError.self) {
            try await UserRepository(transfer: failing).search("ann")
        }

        do {
            let body = Data(#"{"code": "taken", "message": "Name taken"}"#.utf8)
            let rejected = NetworkResponse(statusCode: 422, body: body)
            let network = MockNetworkService(results: [.failure(.unacceptableStatusCode(rejected))])
            let service = DefaultDataTransferService(
                networkService: network,
                errorResolver: JSONErrorBodyResolver<APIError>(),
                completionQueue: .global()
            )
            do {
                _ = try await service.request(UserEndpoints.create(NewUser(name: "Ann")))
            } catch .resolvedNetworkFailure(let error as APIError) {
                #expect(error.code == "taken")
            }
        }

        do {
            let manager = MockNetworkSessionManager(responses: [.failure(URLError(.timedOut))])
            let network = DefaultNetworkService(configuration: configuration, sessionManager: manager)
            let result = await withCheckedContinuation { continuation in
                network.request(endpoint: UserEndpoints.delete(id: 7)) { continuation.resume(returning: $0) }
            }
            #expect(manager.requests.first?.httpMethod == "DELETE")
            guard case .failure(.timedOut) = result else { return }
        }

        let stub = URLProtocolStub { request in
            request.value(forHTTPHeaderField: "X-API-Key") == "secret"
                ? .response(statusCode: 200) : .response(statusCode: 401)
        }
        let stubbed = URLSessionManager(
            configuration: stub.makeSessionConfiguration(),
            adapters: [APIKeyAdapter(key: "secret")]
        )
        _ = stubbed

        let recorder = CompletionRecorder<Result<[User], DataTransferError>>()
        let pending = MockDataTransferService(stubs: [.pending])
        let task = pending.request(with: UserEndpoints.search("ann", page: 1), completion: recorder.record)
        task.cancel()
        task.cancel()
        _ = await recorder.first()
        #expect(recorder.callCount == 1)
    }
}

// MARK: - Running on Linux

enum LinuxSnippets {
    static func run(networkService: any NetworkService) {
        let serverTransfer = DefaultDataTransferService(
            networkService: networkService, completionQueue: DispatchQueue(label: "api.completions"))
        _ = serverTransfer
    }
}

// MARK: - Reading and writing XML

@Suite struct ReadingAndWritingXMLSnippets {
    @Test func attributesAndText() throws {
        struct Price: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case currency = "@currency", amount = "#text" }
            let currency: String
            let amount: Decimal
        }
        let price = try XMLDecoder().decode(Price.self, from: Data(#"<price currency="EUR">12.50</price>"#.utf8))
        // Price(currency: "EUR", amount: 12.5)
        #expect(price == Price(currency: "EUR", amount: Decimal(string: "12.5") ?? 0))
    }

    @Test func aShapePerKey() throws {
        struct Bucket: Codable, Equatable { let Name: String }
        struct Buckets: Codable, Equatable { let Buckets: [Bucket] }
        let decoder = XMLDecoder(arrayShapes: ["Buckets": .wrapped(itemName: "Bucket")])
        let xml = Data("<r><Buckets><Bucket><Name>a</Name></Bucket></Buckets></r>".utf8)
        let one = try decoder.decode(Buckets.self, from: xml)
        // Buckets(Buckets: [Bucket(Name: "a")])
        #expect(one == Buckets(Buckets: [Bucket(Name: "a")]))
    }

    @Test func soapFaults() throws {
        struct Quote: Decodable { let price: Decimal }
        let envelope = """
            <env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><env:Fault>
            <env:Code><env:Value>env:Receiver</env:Value></env:Code>
            <env:Reason><env:Text xml:lang="en">Market closed</env:Text></env:Reason>
            </env:Fault></env:Body></env:Envelope>
            """
        do {
            _ = try XMLDecoder().decode(Quote.self, fromSOAPEnvelope: Data(envelope.utf8))
        } catch let fault as SOAPFault {
            print(fault.code, fault.reason)  // Receiver Market closed
        }
        let fault = SOAPFault(from: Data(envelope.utf8))
        #expect(fault?.code == "Receiver" && fault?.reason == "Market closed")
    }
}
