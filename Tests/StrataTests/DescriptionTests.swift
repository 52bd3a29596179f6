import Foundation
import Strata
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every public error and response type of Strata describes itself — `String(describing:)` and
/// `String(reflecting:)` alike — without the secrets it carries: secret query values, user
/// information, credential headers, `Set-Cookie`, and the URL a `URLError` keeps.
@Suite(.serialized) struct DescriptionTests {
    static let secrets = ["query-secret", "token-secret", "hunter2", "cookie-secret", "sig-secret", "apikey-secret"]

    /// A stub that answers `/fail` with a transport error keeping the failing URL, `/cookie` with a
    /// `Set-Cookie`, anything else with a `404`.
    private static func stub() -> URLProtocolStub {
        URLProtocolStub { request in
            let url = request.url ?? URL(fileURLWithPath: "/")
            switch url.path {
            case "/fail":
                return .failure(
                    URLError(
                        .cannotConnectToHost,
                        userInfo: [
                            NSURLErrorFailingURLErrorKey: url,
                            NSLocalizedDescriptionKey: "Could not connect to \(url.absoluteString)",
                        ]))
            default:
                return .response(
                    statusCode: 404,
                    headers: ["Set-Cookie": "session=cookie-secret", "X-Api-Key": "apikey-secret"],
                    body: Data(#"{"password": "hunter2"}"#.utf8))
            }
        }
    }

    private static func expectNoSecret(_ value: Any, sourceLocation: SourceLocation = #_sourceLocation) {
        for text in [String(describing: value), String(reflecting: value)] {
            for secret in secrets {
                #expect(!text.contains(secret), "\(secret) in \(text)", sourceLocation: sourceLocation)
            }
        }
    }

    /// The error `endpoint` fails with.
    private static func error(
        of endpoint: Endpoint<[String]>, through transfer: some DataTransferService
    ) async
        -> DataTransferError?
    {
        await withCheckedContinuation { continuation in
            transfer.request(with: endpoint) { continuation.resume(returning: $0.failure) }
        }
    }

    private static func endpoint(_ path: String) -> Endpoint<[String]> {
        Endpoint(
            path: "https://user:hunter2@\(path)?api_key=query-secret&access_token=token-secret&sig=sig-secret&page=2",
            isFullPath: true)
    }

    @Test func errorsAndResponsesOfEveryLayerHideTheirSecrets() async throws {
        let previous = Redaction.standard
        Redaction.standard = Redaction(extraHeaderNames: ["X-Api-Key"], queryKeys: ["sig"])
        defer { Redaction.standard = previous }

        let stub = Self.stub()
        let network = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: stub.baseURL),
            sessionManager: URLSessionManager(configuration: stub.makeSessionConfiguration()))
        let transfer = DefaultDataTransferService(networkService: network, completionQueue: .global())

        // A transport error: the URLError it carries keeps its failing URL only redacted.
        let failed = await Self.error(of: Self.endpoint("\(stub.host)/fail"), through: transfer)
        guard case .networkFailure(.transport(let urlError))? = failed else {
            Issue.record("expected a transport failure, got \(String(describing: failed))")
            return
        }
        #expect(urlError.code == .cannotConnectToHost)
        #expect(urlError.failingURL == nil)
        for value: Any in [failed as Any, urlError, urlError.userInfo, urlError.localizedDescription] {
            Self.expectNoSecret(value)
        }
        #expect(String(reflecting: failed as Any).contains("page=2"))

        // A status error: its response's URL, headers and body.
        let rejected = await Self.error(of: Self.endpoint("\(stub.host)/missing"), through: transfer)
        guard case .networkFailure(let networkError)? = rejected, let response = networkError.response else {
            Issue.record("expected a 404, got \(String(describing: rejected))")
            return
        }
        for value: Any in [rejected as Any, networkError, response, networkError.localizedDescription] {
            Self.expectNoSecret(value)
        }
        #expect(String(reflecting: response).contains("Set-Cookie: <redacted>"))
        #expect(String(reflecting: response).contains("23 bytes"))
        Self.expectNoSecret(DataTransferResponse(value: ["v"], response: response))
        Self.expectNoSecret(response.headers)

        // What a retrier sees.
        var request = URLRequest(url: try #require(response.url))
        request.setValue("Bearer token-secret", forHTTPHeaderField: "Authorization")
        Self.expectNoSecret(
            RequestFailure(
                request: request, response: nil, data: Data("hunter2".utf8), error: urlError, attemptCount: 1))
    }

    @Test func errorsThatKeepURLTextShowItRedacted() throws {
        let text =
            "https://user:hunter2@api.example.com/x?api_key=query-secret&token=token-secret#access_token=token-secret"
        let url = try #require(URL(string: text))
        let errors: [any Error] = [
            RedirectError.loop(url), RedirectError.insecureRedirect(from: url, to: url),
            RedirectError.unsupportedScheme(url), RedirectError.invalidLocation(text),
            RequestGenerationError.invalidURL(text), ParameterEncodingError.invalidURL(text),
            ConfigurationError.invalidBaseURL(environment: .staging, value: text),
            NetworkError.redirect(.loop(url)), DataTransferError.networkFailure(.redirect(.loop(url))),
        ]
        for error in errors {
            Self.expectNoSecret(error)
            Self.expectNoSecret(error.localizedDescription)
        }
    }

    @Test func aMembersRequiredErrorNamesTheKindNotTheValue() {
        #expect(throws: ParameterEncodingError.membersRequired(type: "Array<String>", found: "an array of 1 element")) {
            try ParameterValueEncoder().encodeMembers(["token-secret"])
        }
    }
}

extension Result {
    /// The error, or `nil` for a success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
