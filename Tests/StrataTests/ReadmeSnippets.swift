// Every Swift block of README.md, compiled. `ReadmeTests` checks that each block of the README
// stands here line for line, so the README cannot show code that does not build.

import Foundation
import Strata
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// MARK: - Declarations

struct User: Codable, Sendable {
    let id: Int
    let name: String
}

struct NewUser: Encodable, Sendable {
    let name: String
}

enum UserEndpoints {
    static func search(_ query: String, page: Int) -> Endpoint<[User]> {
        Endpoint(path: "users", queryParameters: ["q": .string(query), "page": .int(page)])
    }

    static func create(_ user: NewUser) -> Endpoint<User> {
        Endpoint(path: "users", method: .post, bodyParametersEncodable: user)
    }

    static func delete(id: Int) -> Endpoint<Void> {
        Endpoint(path: "users/\(id)", method: .delete)
    }
}

struct APIKeyAdapter: RequestAdapter {
    let key: String

    func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        var request = request
        request.setHeaderField("X-API-Key", key)
        completion(.success(request))
    }
}

struct RetryServerErrorsOnce: RequestRetrier {
    func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        let serverError = (failure.statusCode ?? 0) >= 500
        completion(serverError && failure.attemptCount == 1 ? .retryAfter(0.5) : .doNotRetry)
    }
}

struct Token: AuthenticationCredential {
    let access: String
    let refresh: String
    var requiresRefresh: Bool { false }
}

struct TokenAuthenticator: Authenticator {
    let refreshToken: @Sendable (String, @escaping @Sendable (Result<Token, any Error>) -> Void) -> Void

    func apply(_ credential: Token, to request: inout URLRequest) {
        request.setHeaderField("Authorization", "Bearer \(credential.access)")
    }

    func refresh(_ credential: Token, completion: @escaping @Sendable (Result<Token, any Error>) -> Void) {
        refreshToken(credential.refresh, completion)
    }

    func isRequest(_ request: URLRequest, authenticatedWith credential: Token) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.access)"
    }
}

struct APIError: Decodable, Error {
    let code: String
    let message: String
}

final class UserRepository: Sendable {
    private let transfer: any DataTransferService

    init(transfer: any DataTransferService) {
        self.transfer = transfer
    }

    func search(_ query: String) async throws(DataTransferError) -> [User] {
        try await transfer.request(UserEndpoints.search(query, page: 1))
    }
}

// MARK: - Statements (compiled, not run: they would talk to api.example.com)

func readmeWalkthrough() async throws {
    let environments = NetworkEnvironments([
        .development: .init(baseURL: "http://localhost:8080"),
        .staging: .init(baseURL: "https://staging.example.com", headers: ["X-Env": "staging"]),
        .production: .init(baseURL: "https://api.example.com", timeoutInterval: 30),
    ])
    // STRATA_ENVIRONMENT=staging selects staging; unset, the default (development).
    let configuration = try environments.selectedConfiguration()

    let login = Endpoint<Void>(
        path: "login",
        method: .post,
        bodyParameters: ["user": "ann", "remember": true],
        bodyEncoding: URLEncoding.httpBody
    )
    let tagged = Endpoint<[User]>(
        path: "users",
        queryParameters: ["tags": ["swift", "linux"]],
        queryEncoding: URLEncoding(destination: .queryString, arrayEncoding: .commaSeparated)
    )

    var form = MultipartFormData()
    form.append(Data("thumbnail bytes".utf8), name: "thumbnail", fileName: "thumb.png")
    let upload = Endpoint<Void>(
        path: "photos",
        method: .post,
        bodyParameters: ["caption": "Sunset", "public": true],
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

    let sessionManager = URLSessionManager(
        adapters: [APIKeyAdapter(key: "secret")],
        retriers: [RetryServerErrorsOnce()]
    )

    let authenticator = TokenAuthenticator { _, completion in
        completion(.failure(URLError(.userAuthenticationRequired)))
    }
    let authentication = AuthenticationInterceptor(
        authenticator: authenticator,
        credential: Token(access: "a", refresh: "r"),
        origins: [Origin(scheme: "https", host: "api.example.com")]
    )
    let protectedManager = URLSessionManager(
        adapters: [HeadersAdapter(["User-Agent": "Shop/2.1"])],
        retriers: [RetryPolicy(maximumAttempts: 4, deadline: 30)],
        interceptors: [authentication],
        redirectPolicy: .follow
    )

    let deviceManager = SessionManager(
        interceptors: [PasswordAuthenticator(user: "admin", password: "secret", for: configuration.baseURL)]
    )

    let episodeURL = FileManager.default.temporaryDirectory.appendingPathComponent("episode-42.mp3")
    let episode = Endpoint<Empty>(
        path: "episodes/42.mp3",
        options: RequestOptions(downloadDestination: episodeURL, resumesDownload: true)
    )

    let cachesFolder = FileManager.default.temporaryDirectory
    let cachedManager = SessionManager(
        cache: HTTPCache(memoryCapacity: 20 * 1_048_576, directory: cachesFolder.appendingPathComponent("api"))
    )

    let certificateDER = Data([0x30, 0x82])
    let pinnedManager = SessionManager(
        transport: URLSessionTransport(serverTrust: PinnedCertificates(pinned: [certificateDER])))

    let loggedManager = URLSessionManager(
        adapters: [HeadersAdapter(["User-Agent": "Shop/2.1"])],
        monitors: [ConsoleNetworkLogger(redaction: Redaction(extraHeaderNames: ["X-Partner-Id"]))]
    )
    let networkService = DefaultNetworkService(configuration: configuration, sessionManager: loggedManager)

    let transfer = DefaultDataTransferService(
        networkService: networkService,
        errorResolver: JSONErrorBodyResolver<APIError>(),
        completionQueue: .main
    )
    let task = transfer.request(with: UserEndpoints.search("ann", page: 1)) { result in
        switch result {
        case .success(let users): print("found", users.count)
        case .failure(let error): print(error.localizedDescription)
        }
    }
    task.cancel()  // completes once with .networkFailure(.cancelled)

    let created = try await transfer.request(UserEndpoints.create(NewUser(name: "Ann")))

    _ = (
        login, tagged, upload, order, created, sessionManager, protectedManager, pinnedManager, cachedManager,
        deviceManager, episode
    )
}

struct PinnedCertificates: ServerTrustEvaluator {
    let pinned: Set<Data>  // the DER bytes of the certificates you trust

    func evaluate(_ chain: ServerTrustChain) throws(ServerTrustError) {
        guard chain.certificates.contains(where: pinned.contains) else {
            throw .refused(host: chain.host, reason: "no pinned certificate")
        }
    }
}

// MARK: - Coming from NetworkingX

struct UserAuthenticationRequest: Encodable, Sendable {
    let userName: String
    let loginPassword: String
}

struct UserAuthenticationResponse: Decodable, Sendable {
    let token: String
}

enum AuthenticationEndpoints {
    static func authenticateUser(request: UserAuthenticationRequest) -> Endpoint<UserAuthenticationResponse> {
        Endpoint(
            path: "path/of/login",
            method: .post,
            bodyParametersEncodable: request,
            bodyEncoding: URLEncoding.default
        )
    }
}

func signIn(baseURL: URL, completionQueue: DispatchQueue) -> any NetworkCancellable {
    let config = NetworkConfiguration(baseURL: baseURL)
    let networkService = DefaultNetworkService(configuration: config)
    let dataTransferService = DefaultDataTransferService(
        networkService: networkService, completionQueue: completionQueue)
    let request = UserAuthenticationRequest(userName: "username", loginPassword: "password")
    let endpoint = AuthenticationEndpoints.authenticateUser(request: request)
    return dataTransferService.request(with: endpoint) { result in
        switch result {
        case .success(let response): print("signed in, token of \(response.token.count) characters")
        case .failure(let error): print(error.localizedDescription)
        }
    }
}

// MARK: - Run

@Suite struct ReadmeExampleTests {
    @Test func theTestingSectionRunsAsWritten() async throws {
        let mock = MockDataTransferService(stubs: [.value([User(id: 1, name: "Ann")])])
        let repository = UserRepository(transfer: mock)
        let users = try await repository.search("ann")
        #expect(users.first?.name == "Ann")
        #expect(mock.requests.first?.url?.query == "page=1&q=ann")
    }

    @Test func theEndpointsSectionBuildsTheRequestsItDescribes() throws {
        let configuration = NetworkConfiguration(baseURL: try #require(URL(string: "https://api.example.com")))
        #expect(
            try UserEndpoints.search("ann", page: 2).urlRequest(with: configuration).url?.absoluteString
                == "https://api.example.com/users?page=2&q=ann")
        let create = try UserEndpoints.create(NewUser(name: "Ann")).urlRequest(with: configuration)
        #expect(create.httpMethod == "POST")
        #expect(create.httpBody == Data(#"{"name":"Ann"}"#.utf8))
        #expect(try UserEndpoints.delete(id: 9).urlRequest(with: configuration).httpMethod == "DELETE")
    }
}

/// The README's NetworkingX example builds the request NetworkingX's does: a form `POST`.
@Suite struct ReadmeNetworkingXTests {
    @Test func theSignInEndpointPostsAForm() throws {
        let configuration = NetworkConfiguration(baseURL: try #require(URL(string: "https://url.to.api/")))
        let request = try AuthenticationEndpoints.authenticateUser(
            request: UserAuthenticationRequest(userName: "ann", loginPassword: "p w")
        ).urlRequest(with: configuration)
        #expect(request.url?.absoluteString == "https://url.to.api/path/of/login")
        #expect(request.httpMethod == "POST")
        #expect(
            request.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)
        #expect(request.httpBody == Data("loginPassword=p%20w&userName=ann".utf8))
    }
}

/// The README's XML section, run as written.
@Suite struct ReadmeXMLTests {
    @Test func theXMLConventionsDecodeAndEncodeAsDescribed() throws {
        struct Price: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case currency = "@currency", amount = "#text" }
            let currency: String
            let amount: Decimal
        }
        struct Slide: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case type = "@type", title }
            let type: String?
            let title: String
        }
        struct Slideshow: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case title = "@title", price, slide }
            let title: String
            let price: Price
            let slide: [Slide]
        }
        let xml = """
            <slideshow title="Sample">
              <price currency="EUR">12.50</price>
              <slide type="all"><title>Wake up</title></slide>
              <slide><title>Overview</title></slide>
            </slideshow>
            """
        let show = try XMLDecoder().decode(Slideshow.self, from: Data(xml.utf8))
        // show.slide.count == 2, show.price.amount == 12.5
        let document = try XMLEncoder(arrayShape: .repeated).encodeDocument(show, rootElement: "slideshow")
        // <slideshow title="Sample"><price currency="EUR">12.5</price><slide type="all">…</slide><slide>…
        #expect(show.slide.count == 2 && show.price.amount == Decimal(string: "12.5"))
        #expect(
            String(decoding: document, as: UTF8.self).hasSuffix(
                #"<slideshow title="Sample"><price currency="EUR">12.5</price><slide type="all"><title>Wake up</title></slide><slide><title>Overview</title></slide></slideshow>"#
            ))
        #expect(try XMLDecoder().decode(Slideshow.self, from: document) == show)
    }
}

// MARK: - Streaming responses

struct Order: Decodable, Sendable {
    let id: Int
}

enum StreamingSnippets {
    static func callbacks(network: DefaultNetworkService) {
        let call = network.stream(endpoint: Endpoint<Void>(path: "chat"), decoding: .serverSentEvents()) { event in
            print(event.data)
        } completion: { result in
            print("ended:", result)
        }
        call.cancel()  // the completion runs once, with .cancelled
    }

    static func sequences(network: DefaultNetworkService, transfer: DefaultDataTransferService) async throws {
        for try await line in network.stream(endpoint: Endpoint<Void>(path: "export"), decoding: .lines()) {
            print(line)
        }
        for try await order in transfer.stream(Endpoint<Order>(path: "orders/export")) {
            print(order.id)
        }
    }

    static func eventSource(network: DefaultNetworkService) {
        let source = network.eventSource(endpoint: Endpoint<Void>(path: "feed")) { event in
            print(event.lastEventID, event.data)
        } completion: { result in
            print("stopped:", result)
        }
        _ = source
    }

    static func doubles() {
        let network = MockNetworkService()
        network.enqueue(
            stream: StreamScript.events([ServerSentEvent(data: "Hel"), ServerSentEvent(data: "lo")], every: 0.05).cut())
    }
}
