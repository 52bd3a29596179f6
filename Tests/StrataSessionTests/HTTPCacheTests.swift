import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An origin server in memory: answers each request with `answer`, counts what reaches it, and
/// keeps the requests (their conditional headers included).
private final class OriginServer: Transport {
    typealias Answer = @Sendable (URLRequest) -> (status: Int, headers: [String: String], body: String)
    private let answer: Answer
    private let received = Locked<[URLRequest]>([])
    /// The cookies sent with each request, as a transport that keeps cookies sends them.
    let cookieJar: CookieJar?

    init(cookies: CookieJar? = nil, _ answer: @escaping Answer) {
        self.cookieJar = cookies
        self.answer = answer
    }

    var requests: [URLRequest] { received.value }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        var request = attempt.request
        if let field = cookieJar?.field(for: request) {
            request.setValue(field, forHTTPHeaderField: "Cookie")
        }
        received.withLock { $0.append(request) }
        let (status, headers, body) = answer(request)
        let url = attempt.request.url ?? URL(fileURLWithPath: "/")
        let head = ResponseHead(url: url, statusCode: status, httpVersion: "HTTP/1.1", headers: HTTPHeaders(headers))
        return ResponsePlayback.start(head: head, steps: [.part(Data(body.utf8))], to: receiver)
    }
}

/// A clock the test moves.
private final class TestClock: Sendable {
    private let current = Locked(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.value }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

@Suite struct HTTPCacheTests {
    fileprivate let url = URL(string: "https://api.strata.test/items") ?? URL(fileURLWithPath: "/")
    fileprivate let clock = TestClock()
    /// The caches made over a folder: a cache writes its files in the background, and a write that
    /// comes after the test removed the folder makes it again (left in the temporary folder).
    private let cachesOverFolders = Locked<[HTTPCache]>([])

    /// Removes `directory` once every cache made over it has written what it stored.
    fileprivate func removeFolder(_ directory: URL) {
        for cache in cachesOverFolders.value {
            cache.flush()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    fileprivate func manager(
        _ origin: OriginServer, shared: Bool = false, directory: URL? = nil, diskCapacity: Int = 64 * 1_048_576,
        acceptable: Set<Int> = Set(200..<300)
    ) -> (SessionManager, HTTPCache) {
        let clock = self.clock
        let cache = HTTPCache(
            memoryCapacity: 1_048_576, directory: directory, diskCapacity: diskCapacity, isShared: shared,
            now: { clock.now })
        if directory != nil {
            cachesOverFolders.withLock { $0.append(cache) }
        }
        return (SessionManager(transport: origin, acceptableStatusCodes: acceptable, cache: cache), cache)
    }

    private func get(
        _ manager: SessionManager, headers: [String: String] = [:], method: String = "GET", url: URL? = nil
    ) async throws -> (status: Int, body: String, error: (any Error)?) {
        let (response, body, error) = try await exchange(manager, headers: headers, method: method, url: url)
        return (response?.statusCode ?? 0, body, error)
    }

    /// ``get(_:headers:method:url:)`` with the response itself, for its header fields.
    fileprivate func exchange(
        _ manager: SessionManager, headers: [String: String] = [:], method: String = "GET", url: URL? = nil
    ) async throws -> (response: HTTPURLResponse?, body: String, error: (any Error)?) {
        var request = URLRequest(url: url ?? self.url)
        request.httpMethod = method
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        let (recorder, _) = send(request, through: manager)
        let outcome = try #require(await recorder.first())
        return (
            outcome.response as? HTTPURLResponse, String(decoding: outcome.data ?? Data(), as: UTF8.self), outcome.error
        )
    }

    @Test func aFreshResponseIsAnsweredFromTheCacheUntilItsMaxAgeRunsOut() async throws {
        let count = Locked(0)
        let origin = OriginServer { _ in
            (200, ["Cache-Control": "max-age=60"], "v\(count.withLock { $0 += 1; return $0 })")
        }
        let (manager, _) = manager(origin)
        #expect(try await get(manager).body == "v1")
        clock.advance(59)
        #expect(try await get(manager).body == "v1")
        #expect(origin.requests.count == 1)
        clock.advance(2)
        #expect(try await get(manager).body == "v2")
        #expect(origin.requests.count == 2)
    }

    @Test func aStaleResponseIsRevalidatedAndA304RefreshesIt() async throws {
        let origin = OriginServer { request in
            request.value(forHTTPHeaderField: "If-None-Match") == #""abc""#
                ? (304, ["Cache-Control": "max-age=30", "ETag": #""abc""#, "X-Refreshed": "yes"], "")
                : (200, ["Cache-Control": "max-age=10", "ETag": #""abc""#, "Content-Type": "text/plain"], "body")
        }
        let (manager, _) = manager(origin)
        #expect(try await get(manager).body == "body")
        clock.advance(11)
        let revalidated = try await get(manager)
        #expect(revalidated.status == 200)
        #expect(revalidated.body == "body")
        #expect(revalidated.error == nil)
        #expect(origin.requests.last?.value(forHTTPHeaderField: "If-None-Match") == #""abc""#)
        // The 304's max-age now applies: fresh for another 30 seconds, without asking.
        clock.advance(29)
        #expect(try await get(manager).body == "body")
        #expect(origin.requests.count == 2)
    }

    @Test func lastModifiedIsRevalidatedWithIfModifiedSince() async throws {
        let modified = "Sat, 01 Nov 2026 10:00:00 GMT"
        let origin = OriginServer { request in
            request.value(forHTTPHeaderField: "If-Modified-Since") == modified
                ? (304, [:], "") : (200, ["Last-Modified": modified], "page")
        }
        let (manager, _) = manager(origin)
        #expect(try await get(manager).body == "page")
        #expect(try await get(manager).body == "page")
        #expect(origin.requests.count == 2)
        #expect(origin.requests.last?.value(forHTTPHeaderField: "If-Modified-Since") == modified)
    }

    /// A validator holding a control character (which libcurl passes on from a server) would go
    /// back to the wire in `If-None-Match` or `If-Modified-Since` past every check a request's own
    /// fields pass: it is not a validator at all.
    @Test func aValidatorThatCannotBeSentBackIsNeverSent() async throws {
        let origin = OriginServer { request in
            switch request.url?.path {
            case "/both": (200, ["ETag": "\"a\u{1}b\"", "Last-Modified": "Sat, 01 Nov 2026 10:00:00 GMT"], "both")
            default: (200, ["ETag": "\"a\u{7F}b\"", "Last-Modified": "Sat, 01 Nov\u{0} 2026"], "none")
            }
        }
        let (manager, _) = manager(origin)
        let both = try #require(URL(string: "https://api.strata.test/both"))
        let none = try #require(URL(string: "https://api.strata.test/none"))
        for url in [both, none, both, none] {
            _ = try await get(manager, url: url)
        }
        let sent = origin.requests.map { ($0.url, $0.allHTTPHeaderFields ?? [:]) }
        #expect(sent.count == 4)
        #expect(sent.allSatisfy { _, fields in fields.values.allSatisfy { HTTPGrammar.isFieldValue($0) } })
        #expect(sent.last { $0.0 == both }?.1["If-Modified-Since"] == "Sat, 01 Nov 2026 10:00:00 GMT")
        #expect(sent.last { $0.0 == both }?.1["If-None-Match"] == nil)
        #expect(sent.last { $0.0 == none }?.1["If-None-Match"] == nil)
    }

    @Test func noStoreIsNeverKeptAndNoCacheIsRevalidatedEveryTime() async throws {
        let origin = OriginServer { request in
            switch request.url?.path {
            case "/no-store": (200, ["Cache-Control": "no-store, max-age=60"], "secret")
            default:
                request.value(forHTTPHeaderField: "If-None-Match") == "e1"
                    ? (304, ["ETag": "e1"], "") : (200, ["Cache-Control": "no-cache, max-age=60", "ETag": "e1"], "x")
            }
        }
        let (manager, _) = manager(origin)
        let noStore = try #require(URL(string: "https://api.strata.test/no-store"))
        _ = try await get(manager, url: noStore)
        _ = try await get(manager, url: noStore)
        #expect(origin.requests.filter { $0.url == noStore }.count == 2)
        let noCache = try #require(URL(string: "https://api.strata.test/no-cache"))
        #expect(try await get(manager, url: noCache).body == "x")
        #expect(try await get(manager, url: noCache).body == "x")
        let conditional = origin.requests.filter { $0.url == noCache }
        #expect(conditional.count == 2)
        #expect(conditional.last?.value(forHTTPHeaderField: "If-None-Match") == "e1")
    }

    @Test func theRequestsOwnDirectivesAreHonoured() async throws {
        let origin = OriginServer { request in
            request.value(forHTTPHeaderField: "If-None-Match") == "e"
                ? (304, [:], "") : (200, ["Cache-Control": "max-age=600", "ETag": "e"], "x")
        }
        let (manager, _) = manager(origin)
        _ = try await get(manager)
        _ = try await get(manager, headers: ["Cache-Control": "no-cache"])
        _ = try await get(manager, headers: ["Cache-Control": "max-age=0"])
        _ = try await get(manager, headers: ["Pragma": "no-cache"])
        #expect(origin.requests.count == 4)
        #expect(origin.requests.dropFirst().allSatisfy { $0.value(forHTTPHeaderField: "If-None-Match") == "e" })
        // no-store in the request: sent as it is, and its response not kept.
        _ = try await get(manager, headers: ["Cache-Control": "no-store"])
        #expect(origin.requests.last?.value(forHTTPHeaderField: "If-None-Match") == nil)
        // A caller's own conditional request reaches the server, and its 304 the caller.
        let own = try await get(manager, headers: ["If-None-Match": "e"])
        #expect(own.status == 304)
        #expect(origin.requests.count == 6)
    }

    @Test func expiresGivesTheLifetimeAndAnInvalidDateIsStale() async throws {
        let date = "Fri, 15 Jan 2027 08:00:00 GMT"
        let origin = OriginServer { request in
            request.url?.path == "/invalid"
                ? (200, ["Expires": "0"], "stale")
                : (200, ["Date": date, "Expires": "Fri, 15 Jan 2027 08:01:00 GMT"], "ok")
        }
        let (manager, _) = manager(origin)
        _ = try await get(manager)
        _ = try await get(manager)
        #expect(origin.requests.count == 1)
        let invalid = try #require(URL(string: "https://api.strata.test/invalid"))
        _ = try await get(manager, url: invalid)
        _ = try await get(manager, url: invalid)
        #expect(origin.requests.count == 3)
    }

    /// A response that varies by a field each request sets differently (a request id) keeps at
    /// most ``HTTPCache/maximumVariants`` variants of its URL: the one stored longest ago goes.
    @Test func aURLKeepsABoundedNumberOfVariants() async throws {
        let origin = OriginServer { request in
            (
                200, ["Cache-Control": "max-age=60", "Vary": "X-Request-ID"],
                request.value(forHTTPHeaderField: "X-Request-ID") ?? ""
            )
        }
        let (manager, _) = manager(origin)
        let count = HTTPCache.maximumVariants + 4
        for id in 0..<count {
            #expect(try await get(manager, headers: ["X-Request-ID": "\(id)"]).body == "\(id)")
        }
        #expect(origin.requests.count == count)
        // The latest are answered from the cache, the first are not.
        #expect(try await get(manager, headers: ["X-Request-ID": "\(count - 1)"]).body == "\(count - 1)")
        #expect(origin.requests.count == count)
        #expect(try await get(manager, headers: ["X-Request-ID": "0"]).body == "0")
        #expect(origin.requests.count == count + 1)
    }

    /// An entry is weighed with its header fields and a fixed overhead, not its body alone: empty
    /// responses fill the cache and the least used go, where they were kept without bound.
    @Test func manyEmptyResponsesFillTheCacheToo() async throws {
        let origin = OriginServer { _ in (204, ["Cache-Control": "max-age=60"], "") }
        let clock = self.clock
        let cache = HTTPCache(memoryCapacity: 16_384, directory: nil, isShared: false, now: { clock.now })
        let manager = SessionManager(transport: origin, cache: cache)
        let urls = (0..<100).compactMap { URL(string: "https://api.strata.test/items/\($0)") }
        for url in urls {
            #expect(try await get(manager, url: url).status == 204)
        }
        #expect(origin.requests.count == 100)
        _ = try await get(manager, url: urls[99])
        #expect(origin.requests.count == 100)
        _ = try await get(manager, url: urls[0])
        #expect(origin.requests.count == 101)
    }

    @Test func varyKeepsOneResponsePerValueAndVaryStarNone() async throws {
        let origin = OriginServer { request in
            request.url?.path == "/star"
                ? (200, ["Cache-Control": "max-age=60", "Vary": "*"], "any")
                : (
                    200, ["Cache-Control": "max-age=60", "Vary": "Accept-Language"],
                    request.value(forHTTPHeaderField: "Accept-Language") ?? "none"
                )
        }
        let (manager, _) = manager(origin)
        #expect(try await get(manager, headers: ["Accept-Language": "fr"]).body == "fr")
        #expect(try await get(manager, headers: ["Accept-Language": "de"]).body == "de")
        #expect(try await get(manager, headers: ["Accept-Language": "fr"]).body == "fr")
        #expect(try await get(manager, headers: ["Accept-Language": "de"]).body == "de")
        #expect(origin.requests.count == 2)
        let star = try #require(URL(string: "https://api.strata.test/star"))
        _ = try await get(manager, url: star)
        _ = try await get(manager, url: star)
        #expect(origin.requests.count == 4)
    }

    @Test func privateAndAuthorizedResponsesAreKeptOnlyByAPrivateCache() async throws {
        let origin = OriginServer { request in
            switch request.url?.path {
            case "/private": (200, ["Cache-Control": "private, max-age=60"], "mine")
            case "/public": (200, ["Cache-Control": "public, max-age=60"], "all")
            default: (200, ["Cache-Control": "max-age=60"], "authorized")
            }
        }
        for shared in [false, true] {
            let (manager, _) = manager(origin, shared: shared)
            for path in ["/private", "/authorized", "/public"] {
                let url = try #require(URL(string: "https://api.strata.test\(path)"))
                let before = origin.requests.count
                _ = try await get(manager, headers: ["Authorization": "Bearer t"], url: url)
                _ = try await get(manager, headers: ["Authorization": "Bearer t"], url: url)
                let sent = origin.requests.count - before
                let kept = !shared || path == "/public"
                #expect(sent == (kept ? 1 : 2), "shared: \(shared), \(path)")
            }
        }
    }

    /// A private cache answers a response to a request with `Authorization` only to requests with
    /// the same credential, as if the response varied by it: an app that signs another user in on
    /// the same manager never gets the first user's response from the cache, nor does a request
    /// without one, nor the other way round. Such a response is kept in memory only, as one that
    /// varies by a credential is.
    @Test func aResponseToAnAuthorizedRequestAnswersOnlyTheSameCredential() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cache-\(UUID())")
        defer { removeFolder(directory) }
        let origin = OriginServer { request in
            (200, ["Cache-Control": "max-age=60"], request.value(forHTTPHeaderField: "Authorization") ?? "anyone")
        }
        let (manager, cache) = manager(origin, directory: directory)
        let me = try #require(URL(string: "https://api.strata.test/me"))
        var answers: [String] = []
        for credential in ["Bearer alice", "Bearer bob", "Bearer alice", nil, "Bearer bob", nil] {
            let headers = credential.map { ["Authorization": $0] } ?? [:]
            answers.append(try await get(manager, headers: headers, url: me).body)
        }
        #expect(answers == ["Bearer alice", "Bearer bob", "Bearer alice", "anyone", "Bearer bob", "anyone"])
        #expect(origin.requests.count == 3)
        cache.flush()
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        #expect(files.count == 1)
        for file in files {
            #expect(!String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("Bearer"))
        }
        // A shared cache keeps such a response only where a directive lets it answer everyone.
        let publicOrigin = OriginServer { request in
            (200, ["Cache-Control": "public, max-age=60"], request.value(forHTTPHeaderField: "Authorization") ?? "")
        }
        let (shared, _) = self.manager(publicOrigin, shared: true)
        #expect(try await get(shared, headers: ["Authorization": "Bearer alice"], url: me).body == "Bearer alice")
        #expect(try await get(shared, headers: ["Authorization": "Bearer bob"], url: me).body == "Bearer alice")
    }

    /// A private cache over a folder does not read an entry that is not keyed by a credential —
    /// one a shared cache wrote, or a Strata that kept responses by URL alone — which would answer
    /// every user.
    @Test func aPrivateCacheDoesNotReadEntriesThatAreNotKeyedByACredential() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cache-\(UUID())")
        defer { removeFolder(directory) }
        let origin = OriginServer { request in
            (
                200, ["Cache-Control": "public, max-age=60"],
                request.value(forHTTPHeaderField: "Authorization") ?? "anyone"
            )
        }
        let (shared, sharedCache) = manager(origin, shared: true, directory: directory)
        #expect(try await get(shared, headers: ["Authorization": "Bearer alice"]).body == "Bearer alice")
        sharedCache.flush()
        let (first, _) = manager(origin, directory: directory)
        #expect(try await get(first, headers: ["Authorization": "Bearer bob"]).body == "Bearer bob")
        let (second, _) = manager(origin, directory: directory)
        #expect(try await get(second).body == "anyone")
        #expect(try await get(second).body == "anyone")
        #expect(origin.requests.count == 3)
    }

    /// The credential the cache keys by is the one an adapter adds: the user signed in when the
    /// request is sent, not the headers the caller wrote.
    @Test func theCredentialAnAdapterAddsKeysWhatIsKept() async throws {
        struct SignedInUser: RequestAdapter {
            let token: Locked<String>
            func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
                var request = request
                request.setValue("Bearer \(token.value)", forHTTPHeaderField: "Authorization")
                completion(.success(request))
            }
        }
        let origin = OriginServer { request in
            (200, ["Cache-Control": "max-age=60"], request.value(forHTTPHeaderField: "Authorization") ?? "")
        }
        let token = Locked("alice")
        let cache = HTTPCache(memoryCapacity: 1_048_576, directory: nil, isShared: false, now: { [clock] in clock.now })
        let manager = SessionManager(transport: origin, adapters: [SignedInUser(token: token)], cache: cache)
        var answers: [String] = []
        for user in ["alice", "alice", "bob", "bob", "alice"] {
            token.withLock { $0 = user }
            answers.append(try await get(manager).body)
        }
        #expect(answers == ["Bearer alice", "Bearer alice", "Bearer bob", "Bearer bob", "Bearer alice"])
        #expect(origin.requests.count == 2)
    }

    @Test func statusesACacheMayNotKeepAndResponsesWithoutLifetimeOrValidatorAreNotKept() async throws {
        let origin = OriginServer { request in
            request.url?.path == "/error" ? (500, ["Cache-Control": "max-age=60"], "oops") : (200, [:], "plain")
        }
        let (manager, _) = manager(origin, acceptable: Set(200..<600))
        for path in ["/error", "/plain"] {
            let url = try #require(URL(string: "https://api.strata.test\(path)"))
            _ = try await get(manager, url: url)
            _ = try await get(manager, url: url)
        }
        #expect(origin.requests.count == 4)
    }

    @Test func aBodyOverAQuarterOfTheMemoryCapacityIsNotKept() async throws {
        let origin = OriginServer { request in
            let size = request.url?.path == "/large" ? 262_145 : 262_144
            return (200, ["Cache-Control": "max-age=60"], String(repeating: "x", count: size))
        }
        let (manager, _) = manager(origin)
        for path in ["/large", "/large", "/quarter", "/quarter"] {
            _ = try await get(manager, url: URL(string: "https://api.strata.test\(path)"))
        }
        #expect(origin.requests.map { $0.url?.path } == ["/large", "/large", "/quarter"])
    }

    /// Monitors can tell an answer from the cache: nothing reached the wire for it.
    @Test func monitorsSeeWhatTheCacheAnswered() async throws {
        final class Flags: EventMonitor {
            let finished = Locked<[Bool]>([])
            func requestFinished(
                _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
            ) {
                finished.withLock { $0.append(outcome.isFromCache) }
            }
        }
        let flags = Flags()
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60"], "x") }
        let clock = self.clock
        let cache = HTTPCache(memoryCapacity: 1_048_576, directory: nil, isShared: false, now: { clock.now })
        let manager = SessionManager(transport: origin, monitors: [flags], cache: cache)
        _ = try await get(manager)
        _ = try await get(manager)
        for _ in 0..<200 where flags.finished.value.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(flags.finished.value == [false, true])
    }

    @Test func anUnsafeMethodInvalidatesWhatWasKeptForItsURL() async throws {
        let count = Locked(0)
        let origin = OriginServer { request in
            request.httpMethod == "GET"
                ? (200, ["Cache-Control": "max-age=60"], "v\(count.withLock { $0 += 1; return $0 })") : (204, [:], "")
        }
        let (manager, _) = manager(origin)
        #expect(try await get(manager).body == "v1")
        #expect(try await get(manager).body == "v1")
        _ = try await get(manager, method: "DELETE")
        #expect(try await get(manager).body == "v2")
    }

    /// The primary key is the request's target URI (RFC 9111 §2), whose authority a `Host` field
    /// of the request's own names (RFC 9110 §7.1): virtual hosts behind one address keep their
    /// responses apart, a field naming the URL's own authority is the same target as none, and a
    /// field that names no authority keeps the request out of the cache.
    @Test func aHostFieldOfTheRequestsOwnNamesTheTargetItsResponseIsKeptFor() async throws {
        let origin = OriginServer { request in
            (200, ["Cache-Control": "max-age=60"], request.value(forHTTPHeaderField: "Host") ?? "none")
        }
        let (manager, _) = manager(origin)
        let address = try #require(URL(string: "https://10.0.0.5/items"))
        #expect(try await get(manager, headers: ["Host": "a.strata.test"], url: address).body == "a.strata.test")
        #expect(try await get(manager, headers: ["Host": "b.strata.test"], url: address).body == "b.strata.test")
        #expect(try await get(manager, headers: ["Host": "A.Strata.Test"], url: address).body == "a.strata.test")
        #expect(try await get(manager, headers: ["Host": "b.strata.test"], url: address).body == "b.strata.test")
        #expect(try await get(manager, url: address).body == "none")
        #expect(origin.requests.count == 3)
        // The target a field names is the target: the URL with that authority, by field or not.
        #expect(try await get(manager, url: URL(string: "https://a.strata.test/items")).body == "a.strata.test")
        #expect(try await get(manager, headers: ["Host": "10.0.0.5"], url: address).body == "none")
        #expect(
            try await get(manager, headers: ["Host": "a.strata.test:8443"], url: address).body == "a.strata.test:8443")
        #expect(origin.requests.count == 4)
        // An unsafe method's answer invalidates the target its field names, and no other.
        _ = try await get(manager, headers: ["Host": "b.strata.test"], method: "DELETE", url: address)
        #expect(try await get(manager, headers: ["Host": "a.strata.test"], url: address).body == "a.strata.test")
        #expect(try await get(manager, headers: ["Host": "b.strata.test"], url: address).body == "b.strata.test")
        #expect(origin.requests.count == 6)
        // No authority, no key: sent every time, kept never.
        for field in ["a.strata.test/path", "user@a.strata.test", "", "a.strata.test:port", "a b"] {
            let before = origin.requests.count
            _ = try await get(manager, headers: ["Host": field], url: address)
            _ = try await get(manager, headers: ["Host": field], url: address)
            #expect(origin.requests.count == before + 2, "Host: \(field)")
        }
    }

    @Test func entriesOnDiskOutliveTheCacheThatWroteThem() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cache-\(UUID())")
        defer { removeFolder(directory) }
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60", "ETag": "d"], "from disk") }
        let (first, firstCache) = manager(origin, directory: directory)
        _ = try await get(first)
        firstCache.flush()
        let (second, secondCache) = manager(origin, directory: directory)
        #expect(try await get(second).body == "from disk")
        #expect(origin.requests.count == 1)
        secondCache.removeAll()
        _ = try await get(second)
        #expect(origin.requests.count == 2)
    }

    /// `removeAll()` removes the cache's entry files and nothing else of the folder it was given —
    /// an app's caches folder, say, with files of its own beside them: it removed the whole folder.
    /// A folder named like an entry file is not one either, and is neither counted nor removed.
    @Test func removeAllRemovesTheEntriesAndNothingElseOfTheFolder() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cache-\(UUID())")
        defer { removeFolder(directory) }
        let lookalike = directory.appendingPathComponent("abc123.json")
        try FileManager.default.createDirectory(at: lookalike, withIntermediateDirectories: true)
        try Data("the user's".utf8).write(to: lookalike.appendingPathComponent("inside"))
        try Data("the user's".utf8).write(to: directory.appendingPathComponent("settings.json"))
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60"], "kept") }
        let (manager, cache) = self.manager(origin, directory: directory)
        for index in 0..<3 { _ = try await get(manager, url: URL(string: "https://api.strata.test/items/\(index)")) }
        cache.flush()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 5)
        cache.removeAll()
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "abc123.json", "settings.json",
            ])
        #expect(FileManager.default.fileExists(atPath: lookalike.appendingPathComponent("inside").path))
        // It goes on storing in the same folder.
        _ = try await get(manager)
        cache.flush()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 3)
        // A cache with room for nothing trims every entry file, and nothing else.
        let (trimming, trimmingCache) = self.manager(origin, directory: directory, diskCapacity: 1)
        _ = try await get(trimming, url: URL(string: "https://api.strata.test/other"))
        trimmingCache.flush()
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "abc123.json", "settings.json",
            ])
        #expect(FileManager.default.fileExists(atPath: lookalike.appendingPathComponent("inside").path))
    }

    /// The folder holds at most `diskCapacity` bytes: the files written longest ago go, those
    /// the folder held before the cache was made included.
    @Test func theFolderKeepsAtMostItsCapacity() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cache-\(UUID())")
        defer { removeFolder(directory) }
        let body = String(repeating: "x", count: 500)
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60"], body) }
        let urls = (0..<30).compactMap { URL(string: "https://api.strata.test/items/\($0)") }
        func folderSize() throws -> Int {
            try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey])
                .reduce(0) { $0 + (try $1.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) }
        }
        func manager(diskCapacity: Int) -> (SessionManager, HTTPCache) {
            self.manager(origin, directory: directory, diskCapacity: diskCapacity)
        }
        // A file of the user's in the folder is neither counted nor removed.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let own = directory.appendingPathComponent("settings.json")
        try Data(repeating: 0x20, count: 100_000).write(to: own)
        let (first, firstCache) = manager(diskCapacity: 1_048_576)
        for url in urls { _ = try await get(first, url: url) }
        firstCache.flush()
        let unbounded = try folderSize() - 100_000
        #expect(unbounded > 30 * 500)
        // A cache with room for a third of that: the next file written trims the folder.
        let (second, secondCache) = manager(diskCapacity: unbounded / 3)
        _ = try await get(second, url: URL(string: "https://api.strata.test/other"))
        secondCache.flush()
        #expect(try folderSize() - 100_000 <= unbounded / 3)
        #expect(FileManager.default.fileExists(atPath: own.path))
        // What is left is the latest: a third cache answers the last URL from disk, not the first.
        let (third, _) = manager(diskCapacity: unbounded / 3)
        #expect(try await get(third, url: urls[29]).body == body)
        #expect(origin.requests.count == 31)
        _ = try await get(third, url: urls[0])
        #expect(origin.requests.count == 32)
    }
}

/// Responses that vary by the cookies a transport adds below the cache.
extension HTTPCacheTests {
    /// A jar of its own, and a cookie for ``HTTPCacheTests/url``'s host to put in it.
    private func jar() -> CookieJar {
        CookieJar(storage: URLSessionConfiguration.ephemeral.httpCookieStorage ?? .shared)
    }

    private func setCookie(_ value: String, in jar: CookieJar) throws {
        let cookie = try #require(
            HTTPCookie(properties: [.name: "session", .value: value, .domain: "api.strata.test", .path: "/"]))
        jar.storage.setCookie(cookie)
    }

    /// An origin whose page varies by `Cookie` and says which cookie it was made for.
    private func pageVaryingByCookie(_ jar: CookieJar, _ cacheControl: String = "max-age=60") -> OriginServer {
        OriginServer(cookies: jar) { request in
            (
                200, ["Cache-Control": cacheControl, "Vary": "Cookie"],
                request.value(forHTTPHeaderField: "Cookie") ?? "none"
            )
        }
    }

    /// §4.1 with the transport's cookies: the cache keys a response on the request as it went on
    /// the wire, so the page stored for no cookie does not answer once the jar holds one, nor one
    /// cookie's page another's.
    @Test func aResponseThatVariesByCookieAnswersOnlyTheCookiesTheTransportSends() async throws {
        let jar = jar()
        let origin = pageVaryingByCookie(jar)
        let (manager, _) = manager(origin)
        #expect(try await get(manager).body == "none")
        try setCookie("alice", in: jar)
        #expect(try await get(manager).body == "session=alice")
        #expect(try await get(manager).body == "session=alice")
        try setCookie("bob", in: jar)
        #expect(try await get(manager).body == "session=bob")
        #expect(origin.requests.count == 3)
        // The request of the caller's own is kept as it was: the jar's cookie went on once.
        #expect(
            origin.requests.map { $0.value(forHTTPHeaderField: "Cookie") } == [nil, "session=alice", "session=bob"])
    }

    /// A stored response that varies by `Cookie` is revalidated with the request as the caller
    /// made it: the transport adds its cookies to the conditional request once.
    @Test func aRevalidationCarriesTheTransportsCookiesOnce() async throws {
        let jar = jar()
        try setCookie("alice", in: jar)
        let origin = OriginServer(cookies: jar) { request in
            request.value(forHTTPHeaderField: "If-None-Match") == "a"
                ? (304, ["ETag": "a"], "")
                : (200, ["Cache-Control": "no-cache", "ETag": "a", "Vary": "Cookie"], "page")
        }
        let (manager, _) = manager(origin)
        #expect(try await get(manager).body == "page")
        #expect(try await get(manager).body == "page")
        #expect(origin.requests.count == 2)
        #expect(origin.requests.last?.value(forHTTPHeaderField: "If-None-Match") == "a")
        #expect(origin.requests.map { $0.value(forHTTPHeaderField: "Cookie") } == ["session=alice", "session=alice"])
    }

    /// A variant kept for a cookie is kept in memory only: on disk, its key would be the cookie,
    /// in a plain file. The variant for no cookie is written as any response is.
    @Test func aVariantKeptForACookieIsNotWrittenToDisk() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cache-\(UUID())")
        defer { removeFolder(directory) }
        let jar = jar()
        let origin = pageVaryingByCookie(jar)
        let (first, firstCache) = manager(origin, directory: directory)
        #expect(try await get(first).body == "none")
        try setCookie("secret-value", in: jar)
        #expect(try await get(first).body == "session=secret-value")
        #expect(try await get(first).body == "session=secret-value")
        firstCache.flush()
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        #expect(files.count == 1)
        for file in files {
            #expect(!String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("secret-value"))
        }
        // A cache over the same folder has the page for no cookie, not the cookie's.
        let (second, _) = manager(origin, directory: directory)
        #expect(try await get(second).body == "session=secret-value")
        #expect(origin.requests.count == 3)
        jar.storage.cookies?.forEach(jar.storage.deleteCookie)
        #expect(try await get(second).body == "none")
        #expect(origin.requests.count == 3)
    }
}

/// RFC 9111 §3–§5, one MUST at a time (the DocC article "Caching" lists each with its test).
extension HTTPCacheTests {
    /// §4 and §5.1: a stored response used without validation carries `Age`, its current age in
    /// whole seconds, replacing the stored one; the received `Age` counts as §5.1 reads it.
    @Test func aResponseFromTheCacheCarriesItsCurrentAge() async throws {
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60", "Age": "10"], "aged") }
        let (manager, _) = manager(origin)
        #expect(try await exchange(manager).response?.value(forHTTPHeaderField: "Age") == "10")
        clock.advance(5)
        let cached = try await exchange(manager)
        #expect(cached.body == "aged")
        #expect(cached.response?.value(forHTTPHeaderField: "Age") == "15")
        #expect(origin.requests.count == 1)
        // Older than its max-age counting the age it came with: revalidated, not reused.
        clock.advance(46)
        _ = try await exchange(manager)
        #expect(origin.requests.count == 2)
    }

    /// §5.1: an `Age` that is not a non-negative integer is ignored (a negative one would make a
    /// response fresh for longer than its server allows); of a list, the first member counts; one
    /// too large to hold is 2³¹.
    @Test(arguments: [
        ("-100000", 0, true), ("1.5e9", 0, true), ("inf", 0, true), ("5, 50", 5, true),
        ("99999999999999999999", 2_147_483_648, false), ("  7 ", 7, true),
    ])
    func anAgeIsReadAsANonNegativeIntegerOrIgnored(field: String, age: Int, fresh: Bool) async throws {
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60", "Age": field], "x") }
        let (manager, _) = manager(origin)
        _ = try await exchange(manager)
        let second = try await exchange(manager)
        #expect(origin.requests.count == (fresh ? 1 : 2), "Age: \(field)")
        if fresh {
            #expect(second.response?.value(forHTTPHeaderField: "Age") == "\(age)")
            clock.advance(61)
            _ = try await exchange(manager)
            #expect(origin.requests.count == 2, "Age: \(field) kept it fresh past its max-age")
        }
    }

    /// §1.2.2: a `max-age` too large for an integer is 2³¹ seconds (fresh for 68 years), not an
    /// invalid value; a sign, a fraction or text makes it invalid, and the response stale at once.
    @Test(arguments: [
        ("99999999999999999999999", true), ("2147483648", true), ("60", true), ("-60", false), ("+60", false),
        ("1e9", false), ("sixty", false), ("", false),
    ])
    func aMaxAgeIsReadAsDeltaSecondsAndOneTooLargeIsTwoToTheThirtyFirst(value: String, fresh: Bool) async throws {
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=\(value)"], "x") }
        let (manager, _) = manager(origin)
        _ = try await exchange(manager)
        clock.advance(30)
        _ = try await exchange(manager)
        #expect(origin.requests.count == (fresh ? 1 : 2), "max-age=\(value)")
    }

    /// §5.2.1.1 and §5.2.1.3: a request's `max-age` and `min-fresh` are obeyed.
    @Test func aRequestsMaxAgeAndMinFreshAreObeyed() async throws {
        // Every answer comes 20 seconds old, so it is as old again after each request that reaches it.
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60", "Age": "20"], "x") }
        let (manager, _) = manager(origin)
        _ = try await exchange(manager)
        for (directive, reused) in [
            ("max-age=30", true), ("max-age=10", false), ("min-fresh=30", true), ("min-fresh=50", false),
        ] {
            let before = origin.requests.count
            _ = try await exchange(manager, headers: ["Cache-Control": directive])
            #expect(origin.requests.count == before + (reused ? 0 : 1), "\(directive)")
        }
    }

    /// §5.2.1.7: `only-if-cached` gets a stored response that suits, or a 504; nothing is sent.
    @Test func onlyIfCachedIsAnsweredFromTheCacheOrWith504() async throws {
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60"], "x") }
        let (manager, _) = manager(origin, acceptable: Set(200..<600))
        let missing = try await exchange(manager, headers: ["Cache-Control": "only-if-cached"])
        #expect(missing.response?.statusCode == 504)
        #expect(origin.requests.isEmpty)
        _ = try await exchange(manager)
        #expect(try await exchange(manager, headers: ["Cache-Control": "only-if-cached"]).body == "x")
        clock.advance(61)
        #expect(try await exchange(manager, headers: ["Cache-Control": "only-if-cached"]).response?.statusCode == 504)
        #expect(origin.requests.count == 1)
    }

    /// §4: when several stored responses suit a request, the most recent by `Date` answers, not the
    /// one stored last.
    @Test(arguments: [true, false])
    func theMostRecentOfSeveralSuitableResponsesAnswers(laterStoredIsNewer: Bool) async throws {
        let (older, newer) = ("Fri, 15 Jan 2027 08:00:00 GMT", "Fri, 15 Jan 2027 08:00:30 GMT")
        let origin = OriginServer { request in
            let second = request.value(forHTTPHeaderField: "Accept-Language") != nil
            let date = second == laterStoredIsNewer ? newer : older
            return (
                200, ["Cache-Control": "max-age=600", "Date": date, "Vary": second ? "Accept-Language" : "Accept"],
                second ? "by language" : "by type"
            )
        }
        let (manager, _) = manager(origin)
        _ = try await exchange(manager, headers: ["Accept": "text/plain"])
        _ = try await exchange(
            manager, headers: ["Accept": "text/plain", "Accept-Language": "en", "Cache-Control": "no-cache"])
        #expect(origin.requests.count == 2)
        let both = try await exchange(manager, headers: ["Accept": "text/plain", "Accept-Language": "en"])
        #expect(origin.requests.count == 2)
        #expect(both.body == (laterStoredIsNewer ? "by language" : "by type"))
    }

    /// §4.1: a header the stored request did not have matches only a request without it.
    @Test func aVaryHeaderAbsentFromTheStoredRequestMatchesOnlyItsAbsence() async throws {
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60", "Vary": "X-Flavor"], "x") }
        let (manager, _) = manager(origin)
        _ = try await exchange(manager)
        _ = try await exchange(manager)
        #expect(origin.requests.count == 1)
        _ = try await exchange(manager, headers: ["X-Flavor": "plain"])
        #expect(origin.requests.count == 2)
    }

    /// §4.3.4: a `304` naming a strong validator the stored response lacks refreshes nothing; the
    /// request goes again without conditions, and that answer is the caller's.
    @Test func a304WithAnotherStrongValidatorRefreshesNothing() async throws {
        let origin = OriginServer { request in
            switch request.value(forHTTPHeaderField: "If-None-Match") {
            case #""a""#?: (304, ["ETag": #""b""#, "Cache-Control": "max-age=60"], "")
            default:
                (200, ["ETag": #""b""#, "Cache-Control": "max-age=10"], "new")
            }
        }
        let first = OriginServer { _ in (200, ["ETag": #""a""#, "Cache-Control": "max-age=10"], "old") }
        let clock = self.clock
        let cache = HTTPCache(memoryCapacity: 1_048_576, directory: nil, isShared: false, now: { clock.now })
        _ = try await get(SessionManager(transport: first, cache: cache))
        clock.advance(11)
        let manager = SessionManager(transport: origin, cache: cache)
        let answer = try await exchange(manager)
        #expect(answer.body == "new")
        #expect(answer.response?.statusCode == 200)
        #expect(origin.requests.map { $0.value(forHTTPHeaderField: "If-None-Match") } == [#""a""#, nil])
    }

    /// A `304` whose strong tag is the stored weak one's (`"x"` for `W/"x"`, as nginx answers for a
    /// body it compressed) refreshes the stored response, which keeps its own tag: one request a
    /// revalidation, not two (the second sent without conditions, as for another representation).
    @Test func a304NamingTheStoredWeakTagAsStrongRefreshesIt() async throws {
        let origin = OriginServer { request in
            switch request.value(forHTTPHeaderField: "If-None-Match") {
            case #"W/"x""#?: (304, ["ETag": #""x""#], "")
            default: (200, ["ETag": #"W/"x""#], "stored")
            }
        }
        let manager = SessionManager(
            transport: origin, cache: HTTPCache(memoryCapacity: 1_048_576, directory: nil, isShared: false))
        _ = try await exchange(manager)
        let second = try await exchange(manager)
        let third = try await exchange(manager)
        #expect(second.body == "stored")
        #expect(third.body == "stored")
        #expect(
            origin.requests.map { $0.value(forHTTPHeaderField: "If-None-Match") } == [nil, #"W/"x""#, #"W/"x""#])
    }

    /// §4.4: a non-error answer to any method not known to be safe — `PURGE` too — invalidates the
    /// target URI; a safe one (`OPTIONS`) and an error answer do not.
    @Test func anyUnsafeOrUnknownMethodInvalidates() async throws {
        let count = Locked(0)
        let origin = OriginServer { request in
            switch request.httpMethod {
            case "GET": (200, ["Cache-Control": "max-age=60"], "v\(count.withLock { $0 += 1; return $0 })")
            case "LINK": (500, [:], "")
            default: (204, [:], "")
            }
        }
        let (manager, _) = manager(origin, acceptable: Set(200..<600))
        #expect(try await get(manager).body == "v1")
        _ = try await get(manager, method: "OPTIONS")
        _ = try await get(manager, method: "LINK")
        #expect(try await get(manager).body == "v1")
        _ = try await get(manager, method: "PURGE")
        #expect(try await get(manager).body == "v2")
    }

    /// §3.1: the proxy's fields and the connection's own are not stored.
    @Test func proxyAndConnectionFieldsAreNotStored() async throws {
        let origin = OriginServer { _ in
            (
                200,
                [
                    "Cache-Control": "max-age=60", "Proxy-Authenticate": #"Basic realm="p""#,
                    "Proxy-Authentication-Info": "x", "Connection": "X-Hop", "X-Hop": "1", "X-Kept": "yes",
                ],
                "x"
            )
        }
        let (manager, _) = manager(origin)
        _ = try await exchange(manager)
        let cached = try #require(try await exchange(manager).response)
        #expect(origin.requests.count == 1)
        for name in ["Proxy-Authenticate", "Proxy-Authentication-Info", "Connection", "X-Hop"] {
            #expect(cached.value(forHTTPHeaderField: name) == nil, "\(name) was stored")
        }
        #expect(cached.value(forHTTPHeaderField: "X-Kept") == "yes")
    }

    /// §3.3: a body shorter than its `Content-Length` is never stored, so never answers.
    @Test func aBodyCutShortIsNotStored() async throws {
        let origin = OriginServer { _ in (200, ["Cache-Control": "max-age=60", "Content-Length": "10"], "four") }
        let (manager, _) = manager(origin)
        #expect(try await get(manager).error != nil)
        #expect(try await get(manager).error != nil)
        #expect(origin.requests.count == 2)
    }
}
