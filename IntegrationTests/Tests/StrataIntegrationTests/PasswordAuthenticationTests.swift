import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `PasswordAuthenticator` against the loopback server, over each transport: `Digest` challenges
/// checked by the server with swift-crypto's hashes (an implementation Strata does not share), and
/// `Basic` ones — answered once asked, answered from the start after, never to another origin, never
/// over the caller's own `Authorization`, and a refused password ends with its `401`.
@Suite struct PasswordAuthenticationTests {
    /// A stack over the server whose manager answers challenges as `ann` with `secret` for the
    /// server's origin, or for its other origin only.
    private static func with(
        forOtherOrigin: Bool = false, _ body: (TestServer, DefaultDataTransferService) async throws -> Void
    ) async throws {
        let server = try await TestServer.start()
        let authenticator = PasswordAuthenticator(
            user: "ann", password: "secret", for: forOtherOrigin ? server.otherOriginURL : server.baseURL)
        let manager = SessionManager.underTest(interceptors: [authenticator])
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 10),
                sessionManager: manager),
            completionQueue: .global())
        do {
            try await body(server, transfer)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    private struct Authenticated: Decodable, Equatable, Sendable {
        let authenticated: Bool
        let user: String?
    }

    private static func protected(
        _ path: String, key: String, query: [String: ParameterValue] = [:]
    )
        -> Endpoint<Authenticated>
    {
        Endpoint(path: path, queryParameters: query.merging(["key": .string(key)]) { $1 })
    }

    @Test(arguments: ["auth/MD5", "auth/SHA-256", "auth/MD5-sess", "auth/SHA-256-sess", "none/MD5"])
    func aDigestChallengeIsAnsweredThenEveryRequestCarriesTheAnswer(kind: String) async throws {
        try await Self.with { server, transfer in
            let (qop, algorithm) = (kind.split(separator: "/")[0], kind.split(separator: "/")[1])
            let key = UUID().uuidString
            // A query with escapes: the answer's `uri` must be the target as the transport sends it.
            let endpoint = Self.protected(
                "digest-auth/\(qop)/ann/secret/\(algorithm)", key: key, query: ["q": "a b/ç?", "n": 1])
            for _ in 0..<3 {
                let answer = try await transfer.request(endpoint)
                #expect(answer == Authenticated(authenticated: true, user: "ann"))
            }
            // One challenge, then the answer sent from the start: three requests in four.
            #expect(server.state.attemptCount(for: key) == 4)
        }
    }

    /// `auth-int` alone: the body is hashed into each answer — none, or one in memory; a body read
    /// from a file as it is sent cannot be, and its `401` comes back unanswered.
    @Test func anAuthIntChallengeIsAnsweredForABodyInMemory() async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            let path = "digest-auth/auth-int/ann/secret/SHA-256"
            let get = Self.protected(path, key: key)
            let answer = try await transfer.request(get)
            #expect(answer.authenticated)
            let post = Endpoint<Authenticated>(
                path: path, method: .post, queryParameters: ["key": .string(key)],
                bodyParameters: ["item": "book", "count": 2, "note": "ä ✓"])
            let posted = try await transfer.request(post)
            #expect(posted.authenticated)
            #expect(server.state.attemptCount(for: key) == 3)

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
            try Data(repeating: 7, count: 100_000).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let uploadKey = UUID().uuidString
            let upload = Endpoint<Authenticated>(
                path: path, method: .post, queryParameters: ["key": .string(uploadKey)],
                bodyEncoding: UploadEncoding.file(file))
            await #expect(throws: DataTransferError.self) { _ = try await transfer.request(upload) }
            #expect(server.state.attemptCount(for: uploadKey) == 1)
        }
    }

    @Test func concurrentRequestsEachCountOnAndAreAccepted() async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            let endpoint = Self.protected("digest-auth/auth/ann/secret/SHA-256", key: key)
            _ = try await transfer.request(endpoint)
            try await withThrowingTaskGroup(of: Authenticated.self) { group in
                for _ in 0..<24 { group.addTask { try await transfer.request(endpoint) } }
                for try await answer in group { #expect(answer.authenticated) }
            }
            // Each answer took a nonce count of its own: the server refuses a count it has seen.
            #expect(server.state.attemptCount(for: key) == 26)
        }
    }

    @Test func aStaleNonceIsAnsweredAgain() async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            let endpoint = Self.protected("digest-auth/auth/ann/secret/MD5", key: key, query: ["nonce-uses": 1])
            for _ in 0..<3 {
                let answer = try await transfer.request(endpoint)
                #expect(answer.authenticated)
            }
            // The first: challenged, then answered; each after: its answer's nonce is stale, then answered.
            #expect(server.state.attemptCount(for: key) == 6)
        }
    }

    /// A server that retires a nonce without calling it stale: the answer made from an earlier
    /// request's challenge is refused, and the request answers the new one.
    @Test func aNonceRetiredWithoutBeingCalledStaleIsAnsweredAgain() async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            let endpoint = Self.protected(
                "digest-auth/auth/ann/secret/SHA-256", key: key, query: ["nonce-uses": 1, "quiet-stale": 1])
            for _ in 0..<3 {
                let answer = try await transfer.request(endpoint)
                #expect(answer.authenticated)
            }
            #expect(server.state.attemptCount(for: key) == 6)
        }
    }

    /// A server that calls every answer stale is answered until the request's attempts run out.
    @Test func aServerThatFindsEveryNonceStaleIsAnsweredABoundedNumberOfTimes() async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            let endpoint = Self.protected("digest-auth/auth/ann/secret/MD5", key: key, query: ["nonce-uses": 0])
            await #expect(throws: DataTransferError.self) { _ = try await transfer.request(endpoint) }
            #expect(server.state.attemptCount(for: key) == PasswordAuthenticator.maximumAttempts)
        }
    }

    @Test func digestIsChosenOverBasicOfferedInAFieldBefore() async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            let endpoint = Self.protected("digest-auth/auth/ann/secret/MD5", key: key, query: ["basic-too": 1])
            let answer = try await transfer.request(endpoint)
            #expect(answer.authenticated)
            #expect(server.state.attemptCount(for: key) == 2)
        }
    }

    @Test(arguments: ["digest-auth/auth/ann/other/SHA-256", "digest-auth/none/ann/other/MD5", "basic-auth/ann/other"])
    func aRefusedPasswordEndsWithThe401(path: String) async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            do throws(DataTransferError) {
                _ = try await transfer.request(Self.protected(path, key: key))
                Issue.record("a wrong password was accepted")
            } catch {
                guard case .networkFailure(.unacceptableStatusCode(let response)) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(response.statusCode == 401)
            }
            if path.hasPrefix("digest") { #expect(server.state.attemptCount(for: key) == 2) }
        }
    }

    @Test func aBasicChallengeIsAnswered() async throws {
        try await Self.with { _, transfer in
            let answer = try await transfer.request(Self.protected("basic-auth/ann/secret", key: "b"))
            #expect(answer.authenticated)
        }
    }

    @Test func anotherOriginsChallengeIsNotAnswered() async throws {
        try await Self.with(forOtherOrigin: true) { server, transfer in
            let key = UUID().uuidString
            await #expect(throws: DataTransferError.self) {
                _ = try await transfer.request(Self.protected("digest-auth/auth/ann/secret/MD5", key: key))
            }
            #expect(server.state.attemptCount(for: key) == 1)
        }
    }

    @Test func theCallersOwnAuthorizationIsLeftAlone() async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            let endpoint = Endpoint<Authenticated>(
                path: "digest-auth/auth/ann/secret/MD5", headerParameters: ["Authorization": "Bearer mine"],
                queryParameters: ["key": .string(key)])
            await #expect(throws: DataTransferError.self) { _ = try await transfer.request(endpoint) }
            #expect(server.state.attemptCount(for: key) == 1)
        }
    }

    @Test func aRedirectWithinTheOriginIsAnsweredForItsOwnTarget() async throws {
        try await Self.with { server, transfer in
            let key = UUID().uuidString
            let target = "/digest-auth/auth/ann/secret/SHA-256?key=\(key)"
            let endpoint = Endpoint<Authenticated>(path: "redirect/302", queryParameters: ["to": .string(target)])
            for _ in 0..<2 {
                let answer = try await transfer.request(endpoint)
                #expect(answer.authenticated)
            }
            #expect(server.state.attemptCount(for: key) == 3)
        }
    }
}
