import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `Set-Cookie` read as RFC 6265 §5.2 says, and the jar keeping and sending cookies as §5.3 and
/// §5.4 do, with RFC 6265bis's rules for `Secure` cookies: what FoundationNetworking's own cookie
/// handling gets wrong on Linux (`Secure` over `http`, `Path` ignored, `Max-Age` ignored, a
/// `Domain` of one label accepted) is each shown here not to happen.
@Suite struct CookieJarTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    /// A jar over a storage of its own, empty.
    private func jar() throws -> CookieJar {
        let jar = CookieJar(storage: try #require(URLSessionConfiguration.ephemeral.httpCookieStorage))
        #expect(jar.storage.cookies?.isEmpty ?? true)
        return jar
    }

    private func store(_ fields: [String], from url: String, in jar: CookieJar) throws {
        jar.store(fields, from: URLRequest(url: try self.url(url)))
    }

    private func sent(to url: String, by jar: CookieJar) throws -> String? {
        jar.field(for: URLRequest(url: try self.url(url)))
    }

    // MARK: - Reading a field (§5.2)

    @Test func aFieldIsReadAsItsNameValueAndAttributesWhateverTheirCase() throws {
        let cookie = try #require(
            SetCookie(
                " session = a b ; PATH=/app; domain=.Example.COM; SECURE; httponly; Max-Age=60; "
                    + "Expires=Wed, 21 Oct 2099 07:28:00 GMT; SameSite=Lax; Unknown=1"))
        #expect(cookie.name == "session" && cookie.value == "a b")
        #expect(cookie.path == "/app" && cookie.domain == "example.com")
        #expect(cookie.secure && cookie.httpOnly && cookie.maxAge == 60 && cookie.sameSite == "Lax")
        #expect(cookie.expires == Date(timeIntervalSince1970: 4_096_250_880))
    }

    @Test(arguments: [
        "no-equals-sign", "=value-without-name", " =x", "a\u{0}b=1", "a=b\u{7F}", "a=line\nbreak", "a=\r",
        "n=" + String(repeating: "v", count: 4_096),
    ])
    func aFieldThatSetsNoCookieIsIgnored(field: String) {
        #expect(SetCookie(field) == nil)
    }

    @Test func attributesThatCannotBeReadAreIgnored() throws {
        let long = String(repeating: "a", count: 1_025)
        let cookie = try #require(
            SetCookie("a=1; Max-Age=soon; Path=relative; Domain=; Expires=never; Domain=\(long); Path=/\(long)"))
        #expect(cookie.maxAge == nil && cookie.path == nil && cookie.domain == nil && cookie.expires == nil)
        #expect(SetCookie("a=\tb")?.value == "b", "a tab is whitespace around the value")
    }

    /// §5.1.1: dates as servers write them, read leniently, always in UTC.
    @Test(arguments: [
        ("Wed, 21 Oct 2099 07:28:00 GMT", 4_096_250_880.0), ("Wed, 21-Oct-2099 07:28:00 GMT", 4_096_250_880),
        ("Wednesday, 21-Oct-99 07:28:00 GMT", 940_490_880), ("Thu, 01-Jan-1970 00:00:10 GMT", 10),
        ("Sun Nov  6 08:49:37 1994", 784_111_777), ("6 NOVEMBER 1994 8:49:37", 784_111_777),
        ("Sun, 06 Nov 94 08:49:37 +0100", 784_111_777), ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Tue, 29 Feb 2028 23:59:59 GMT", 1_835_481_599),
    ])
    func aCookieDateIsReadLeniently(text: String, seconds: TimeInterval) {
        #expect(SetCookie.date(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: [
        "", "never", "Wed, 21 Oct 2099", "21 Oct 2099 25:00:00", "31 Feb 2020 00:00:00", "29 Feb 2100 00:00:00",
        "1 Jan 1600 00:00:00", "32 Jan 2020 00:00:00", "1 Foo 2020 00:00:00", "1 Jan 2020 00:60:00",
        "1 Jan 2020 000:00:00", "111 Jan 2020 00:00:00",
    ])
    func aCookieDateWithoutATimeDayMonthAndYearInRangeIsNone(text: String) {
        #expect(SetCookie.date(text) == nil)
    }

    /// A logout as some servers write it: a past date of the dashed form, which `HTTPDate` does
    /// not read.
    @Test func aPastDateOfTheDashedFormRemovesTheCookie() throws {
        let jar = try jar()
        try store(["session=abc; Path=/"], from: "http://example.test/", in: jar)
        try store(["session=; Path=/; Expires=Thu, 01-Jan-1970 00:00:10 GMT"], from: "http://example.test/", in: jar)
        #expect(try sent(to: "http://example.test/", by: jar) == nil)
    }

    @Test(arguments: [("-1", -1), ("0", 0), ("99999999999999999999", Int.max), ("-99999999999999999999", -Int.max)])
    func maxAgeIsAnOptionalMinusAndDigits(field: String, seconds: Int) throws {
        #expect(try #require(SetCookie("a=1; Max-Age=\(field)")).maxAge == seconds)
    }

    @Test func fieldsJoinedWithCommasAreSplitWhereAnotherCookieBegins() {
        let joined = "a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT, b=2; Path=/, c=x,y, d=4"
        #expect(
            SetCookie.split(joined: joined) == [
                "a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT", " b=2; Path=/", " c=x,y", " d=4",
            ])
    }

    // MARK: - Paths and domains (§5.1)

    @Test(arguments: [
        ("https://h.test", "/"), ("https://h.test/", "/"), ("https://h.test/a", "/"), ("https://h.test/a/", "/a"),
        ("https://h.test/a/b/c?q=1", "/a/b"), ("https://h.test/a%2Fb/c", "/a%2Fb"),
    ])
    func aCookieWithoutPathGetsTheRequestPathUpToItsLastSlash(url: String, path: String) throws {
        #expect(SetCookie.defaultPath(of: try self.url(url)) == path)
    }

    @Test(arguments: [
        ("/admin", "/admin", true), ("/admin/x", "/admin", true), ("/admin/x", "/admin/", true),
        ("/administrator", "/admin", false), ("/", "/admin", false), ("/Admin", "/admin", false), ("/a", "/", true),
    ])
    func aPathIsWithinACookiesPathOnlyAtASlash(request: String, cookie: String, matches: Bool) {
        #expect(SetCookie.pathMatches(request, cookie) == matches)
    }

    // MARK: - The order cookies are sent in (§5.4)

    /// Longer paths first, and of equal paths the cookie created first first (RFC 6265 §5.4): the
    /// same order every run, where the storage's own is its dictionary's. Replacing a cookie keeps
    /// its place (its creation time, §5.3 step 11.3); one removed and set again comes last.
    @Test func cookiesGoInOrderOfPathThenOfCreation() throws {
        let jar = try jar()
        let names = (0..<20).map { "c\(19 - $0)" }
        for name in names {
            try store(["\(name)=1"], from: "https://api.strata.test/", in: jar)
        }
        try store(["deep=1; Path=/a/b", "mid=1; Path=/a"], from: "https://api.strata.test/", in: jar)
        let flat = names.map { "\($0)=1" }
        #expect(
            try sent(to: "https://api.strata.test/a/b/c", by: jar)
                == (["deep=1", "mid=1"] + flat).joined(separator: "; "))
        try store(["c19=2", "c0=; Max-Age=0"], from: "https://api.strata.test/", in: jar)
        try store(["c0=3"], from: "https://api.strata.test/", in: jar)
        let changed = ["c19=2"] + flat.dropFirst().dropLast() + ["c0=3"]
        #expect(try sent(to: "https://api.strata.test/", by: jar) == changed.joined(separator: "; "))
        // Domain cookies and host-only ones, in one order.
        let mixed = try self.jar()
        for field in ["z=1; Domain=strata.test", "y=1", "x=1; Domain=strata.test", "w=1"] {
            try store([field], from: "https://api.strata.test/", in: mixed)
        }
        try store(["z=2; Domain=strata.test"], from: "https://api.strata.test/", in: mixed)
        #expect(try sent(to: "https://api.strata.test/", by: mixed) == "z=2; y=1; x=1; w=1")
    }

    // MARK: - What a field does (§5.3)

    @Test func aCookieWithoutDomainIsForItsHostAlone() throws {
        let jar = try jar()
        try store(["a=1"], from: "http://api.example.test/", in: jar)
        #expect(try sent(to: "http://api.example.test/", by: jar) == "a=1")
        #expect(try sent(to: "http://www.api.example.test/", by: jar) == nil)
        #expect(try sent(to: "http://example.test/", by: jar) == nil)
    }

    @Test func aCookieWithADomainGoesToItsHostsTooButOnlyWithinIt() throws {
        let jar = try jar()
        try store(
            ["a=1; Domain=example.test", "b=2; Domain=other.test", "c=3; Domain=www.api.example.test"],
            from: "http://api.example.test/", in: jar)
        #expect(try sent(to: "http://www.example.test/", by: jar) == "a=1")
        #expect(try sent(to: "http://other.test/", by: jar) == nil)
        #expect(try sent(to: "http://www.api.example.test/", by: jar) == "a=1")
    }

    /// Virtual hosts behind one address keep their cookies apart: a `Host` field of the request's
    /// own names the host (RFC 9110 §7.1) its response's cookies are kept for and its request's are
    /// looked up by, as curl does. A field that names no host keeps and sends none.
    @Test func aHostFieldOfTheRequestsOwnNamesTheHostItsCookiesAreKeptForAndSentTo() throws {
        let jar = try jar()
        func request(_ host: String?) throws -> URLRequest {
            var request = URLRequest(url: try url("http://10.0.0.5:8080/items"))
            request.setValue(host, forHTTPHeaderField: "Host")
            return request
        }
        // Cookies of one path go in the storage's order, which varies from run to run.
        func cookies(_ field: String?) -> Set<String> { Set(field?.components(separatedBy: "; ") ?? []) }
        jar.store(["a=1", "wide=2; Domain=a.example"], from: try request("A.example:8080"))
        jar.store(["b=3"], from: try request("b.example"))
        #expect(cookies(jar.field(for: try request("a.example:8080"))) == ["a=1", "wide=2"])
        #expect(jar.field(for: try request("www.a.example")) == "wide=2")
        #expect(jar.field(for: try request("b.example:8080")) == "b=3")
        #expect(jar.field(for: try request(nil)) == nil)
        #expect(cookies(try sent(to: "http://a.example/", by: jar)) == ["a=1", "wide=2"])
        for field in ["a.example/path", "user@a.example", "a.example:port", "", " ", "a example"] {
            jar.store(["c=4"], from: try request(field))
            #expect(jar.field(for: try request(field)) == nil, "\(field)")
        }
        #expect(jar.storage.cookies?.count == 3)
    }

    /// A `Domain` that is the responding host itself makes a domain cookie all the same (RFC 6265
    /// §5.3 step 6), as a site at `example.test` sets one for `api.example.test`; on an IP address or
    /// a host of one label it stays the host's alone.
    @Test func aCookieWhoseDomainIsItsOwnHostGoesToTheHostsWithinItToo() throws {
        let jar = try jar()
        try store(["a=1; Domain=example.test", "b=2; Domain=EXAMPLE.test."], from: "http://example.test/", in: jar)
        #expect(try sent(to: "http://example.test/", by: jar) == "a=1")
        #expect(try sent(to: "http://api.example.test/", by: jar) == "a=1")
        #expect(try sent(to: "http://other.test/", by: jar) == nil)
        try store(["c=3; Domain=127.0.0.1"], from: "http://127.0.0.1/", in: jar)
        try store(["d=4; Domain=localhost"], from: "http://localhost/", in: jar)
        #expect(try sent(to: "http://127.0.0.1/", by: jar) == "c=3")
        #expect(try sent(to: "http://localhost/", by: jar) == "d=4")
        #expect(try sent(to: "http://a.localhost/", by: jar) == nil)
        try store(["a=; Domain=example.test; Max-Age=0"], from: "http://example.test/", in: jar)
        #expect(try sent(to: "http://api.example.test/", by: jar) == nil)
    }

    /// Without a public-suffix list, a domain of one label is what can be refused: `Domain=.test`
    /// from `evil.test` would set a cookie for every `.test` host (cookie tossing).
    @Test func aDomainOfOneLabelIsRefused() throws {
        let jar = try jar()
        try store(["a=1; Domain=.test", "b=2; Domain=test"], from: "http://evil.test/", in: jar)
        #expect(try sent(to: "http://bank.test/", by: jar) == nil)
        #expect(try sent(to: "http://evil.test/", by: jar) == nil)
        // A host of one label may name itself.
        try store(["c=3; Domain=localhost"], from: "http://localhost:8080/", in: jar)
        #expect(try sent(to: "http://localhost:9090/", by: jar) == "c=3")
    }

    @Test func anIPAddressTakesNoDomainButItself() throws {
        let jar = try jar()
        try store(
            ["a=1; Domain=0.0.1", "b=2; Domain=127.0.0.1", "c=3; Domain=example.test"],
            from: "http://127.0.0.1/", in: jar)
        #expect(try sent(to: "http://127.0.0.1/", by: jar) == "b=2")
    }

    @Test func aSecureCookieIsSetOnlyOverHTTPSAndSentOnlyOverHTTPS() throws {
        let jar = try jar()
        try store(["plain=1; Secure"], from: "http://example.test/", in: jar)
        #expect(try sent(to: "https://example.test/", by: jar) == nil)
        try store(["s=1; Secure; Path=/"], from: "https://example.test/", in: jar)
        #expect(try sent(to: "https://example.test/", by: jar) == "s=1")
        #expect(try sent(to: "http://example.test/", by: jar) == nil)
        // Over http, a cookie of the same name does not take the Secure one's place (6265bis).
        try store(["s=from-http; Path=/"], from: "http://example.test/", in: jar)
        #expect(try sent(to: "https://example.test/", by: jar) == "s=1")
    }

    @Test func prefixedNamesNeedWhatTheirPrefixSays() throws {
        let jar = try jar()
        try store(
            [
                "__Secure-a=1", "__Secure-b=2; Secure", "__Host-c=3; Secure; Path=/", "__Host-d=4; Secure",
                "__Host-e=5; Secure; Path=/; Domain=example.test",
            ], from: "https://example.test/x/y", in: jar)
        let sent = try #require(try sent(to: "https://example.test/x/y", by: jar))
        #expect(Set(sent.components(separatedBy: "; ")) == ["__Secure-b=2", "__Host-c=3"])
    }

    @Test func aPathScopesTheCookie() throws {
        let jar = try jar()
        try store(["admin=1; Path=/admin", "all=2; Path=/", "here=3"], from: "http://example.test/docs/page", in: jar)
        #expect(try sent(to: "http://example.test/admin/users", by: jar) == "admin=1; all=2")
        #expect(try sent(to: "http://example.test/administrator", by: jar) == "all=2")
        #expect(try sent(to: "http://example.test/docs/other", by: jar) == "here=3; all=2")
        #expect(try sent(to: "http://example.test/", by: jar) == "all=2")
    }

    /// How a server logs a session out: `Max-Age=0`, or an `Expires` in the past.
    @Test(arguments: [
        "session=; Max-Age=0", "session=x; Max-Age=-1", "session=; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
    ])
    func anExpiryThatHasPassedRemovesTheCookie(field: String) throws {
        let jar = try jar()
        try store(["session=abc; Path=/", "other=1"], from: "http://example.test/", in: jar)
        try store([field], from: "http://example.test/", in: jar)
        #expect(try sent(to: "http://example.test/", by: jar) == "other=1")
    }

    @Test func maxAgeWinsOverExpires() throws {
        let url = try url("http://example.test/")
        let kept = try #require(SetCookie("a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=60"))
        guard case .store(let cookie)? = kept.effect(forResponseFrom: url, at: now) else {
            Issue.record("not stored")
            return
        }
        #expect(cookie.expiresDate == now.addingTimeInterval(60))
        let removed = try #require(SetCookie("a=1; Max-Age=0; Expires=Wed, 21 Oct 2099 07:28:00 GMT"))
        #expect(removed.effect(forResponseFrom: url, at: now) == .remove(name: "a", domain: "example.test", path: "/"))
    }

    @Test func aHostKeepsABoundedNumberOfCookies() throws {
        let jar = try jar()
        try store((0..<250).map { "c\($0)=\($0)" }, from: "http://example.test/", in: jar)
        #expect(jar.storage.cookies?.count == CookieJar.maximumCookiesPerHost)
        // One it has can still be replaced.
        try store(["c0=new"], from: "http://example.test/", in: jar)
        #expect(jar.storage.cookies?.first { $0.name == "c0" }?.value == "new")
    }

    /// The jar keeps a bounded number of cookies in all (RFC 6265 §6.1 has a user agent keep at least
    /// 3,000): a server with a host name for every request (a wildcard domain) cannot grow it, or
    /// the work of every request and response, which read the storage, without bound. New cookies
    /// are ignored once it is full rather than old ones evicted, so that no server can push out
    /// another's session; a replaced or removed cookie still counts as it should.
    @Test func theJarKeepsABoundedNumberOfCookiesInAll() throws {
        let jar = try jar()
        for host in 0..<20 {
            try store((0..<180).map { "c\($0)=\($0)" }, from: "http://h\(host).example.test/", in: jar)
        }
        #expect(jar.storage.cookies?.count == CookieJar.maximumCookies)
        #expect(try sent(to: "http://h19.example.test/", by: jar) == nil)
        // One it has can still be replaced, and one removed makes room for another.
        try store(["c0=new"], from: "http://h0.example.test/", in: jar)
        #expect(try sent(to: "http://h0.example.test/", by: jar)?.contains("c0=new") == true)
        try store(["c1=; Max-Age=0"], from: "http://h0.example.test/", in: jar)
        try store(["late=1", "later=2"], from: "http://h19.example.test/", in: jar)
        #expect(try sent(to: "http://h19.example.test/", by: jar) == "late=1")
        #expect(jar.storage.cookies?.count == CookieJar.maximumCookies)
    }

    /// Cookies that have expired make room when the jar is full. The short-lived ones fill it last,
    /// so that none has expired before it is full, however long filling it takes (half a minute
    /// under a sanitizer).
    @Test func expiredCookiesMakeRoomInAFullJar() async throws {
        let jar = try jar()
        let longLived = CookieJar.maximumCookies - 100
        for host in 0..<(longLived / 100) {
            try store((0..<100).map { "c\($0)=\($0)" }, from: "http://h\(host).example.test/", in: jar)
        }
        try store((0..<100).map { "short\($0)=1; Max-Age=1" }, from: "http://short.example.test/", in: jar)
        #expect(jar.storage.cookies?.count == CookieJar.maximumCookies)
        try await Task.sleep(for: .milliseconds(1_100))
        try store(["late=1"], from: "http://late.example.test/", in: jar)
        #expect(try sent(to: "http://late.example.test/", by: jar) == "late=1")
        #expect(jar.storage.cookies?.count == longLived + 1)
    }

    /// A response's fields come to one effect for each cookie they name — the last — in the order
    /// the cookies were first named: a server repeating one cookie thousands of times costs the
    /// storage one call for it, not one per field (on Linux each call copies and walks every cookie
    /// the storage holds, on the thread that reads the response: AsyncHTTPClient's event loop).
    @Test func aResponsesFieldsComeToTheLastEffectOnEachCookie() throws {
        let url = try url("http://example.test/")
        var fields = (0..<5_000).map { "same=\($0)" }
        fields += [
            "gone=1", "other=1", "gone=; Max-Age=0", "twice=2; Max-Age=0", "twice=3", "Same=case", "same=p; Path=/p",
        ]
        let effects = SetCookie.lastEffects(of: fields, forResponseFrom: url, at: now)
        let described = effects.map { effect -> String in
            switch effect {
            case .store(let cookie): "\(cookie.name)=\(cookie.value) \(cookie.path)"
            case .remove(let name, _, let path): "-\(name) \(path)"
            }
        }
        #expect(described == ["same=4999 /", "-gone /", "other=1 /", "twice=3 /", "Same=case /", "same=p /p"])
    }

    /// What the jar keeps after a response of many fields is what taking them one after another
    /// would leave: the last value of a repeated cookie, removals, and at most
    /// ``CookieJar/maximumCookiesPerHost`` cookies, the first named.
    @Test func aResponseOfManyFieldsLeavesWhatTakingThemInTurnWould() throws {
        let jar = try jar()
        let url = try url("http://example.test/")
        try store(["kept=old", "gone=1", "twice=1"], from: "http://example.test/", in: jar)
        var fields = (0..<5_000).map { "same=\($0)" }
        fields += (0..<5_000).map { "c\($0)=\($0)" }
        fields += ["gone=; Max-Age=0", "twice=2; Max-Age=0", "twice=3"]
        jar.store(fields, from: URLRequest(url: url))
        let stored = Dictionary(
            (jar.storage.cookies(for: url) ?? []).map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        // Three stored, `same`, then `c0` to `c175` fill the 180; `gone` is removed after.
        #expect(CookieJar.maximumCookiesPerHost == 180)
        #expect(stored.count == 179)
        #expect(stored["same"] == "4999")
        #expect(stored["kept"] == "old")
        #expect(stored["twice"] == "3")
        #expect(stored["gone"] == nil)
        #expect(stored["c0"] == "0")
        #expect(stored["c175"] == "175")
        #expect(stored["c176"] == nil)
    }

    @Test func aStoredCookieTheFieldCouldNotCarryIsLeftOut() throws {
        let jar = try jar()
        for (name, value) in [("bad", "a;b=c"), ("nul", "a\u{0}"), ("good", "1")] {
            let cookie = try #require(
                HTTPCookie(properties: [.name: name, .value: value, .domain: "example.test", .path: "/"]))
            jar.storage.setCookie(cookie)
        }
        #expect(try sent(to: "http://example.test/", by: jar) == "good=1")
    }

    /// Whatever fields a server sends, the jar neither traps nor sends a `Cookie` field that HTTP
    /// would refuse: fields of random bytes, names and attributes, over `http` and `https`, to
    /// hosts and paths the cookies may or may not match.
    @Test func randomFieldsNeverMakeAFieldHTTPRefuses() throws {
        var random = SeededGenerator(seed: 0x5e7c_00c1e)
        let pieces = [
            "a", "b", "=", ";", ",", " ", "\t", "\u{0}", "\r\n", "\u{7F}", "é", "\"", "Domain=", "Path=", "Secure",
            "Max-Age=", "Expires=", "HttpOnly", "__Host-", "__Secure-", "example.test", ".test", "/", "/a", "-1", "0",
            "99999999999999999999", "Thu, 01 Jan 1970 00:00:00 GMT", "Wed, 21-Oct-2099 07:28:00 GMT", "127.0.0.1",
            "%00", "..", String(repeating: "x", count: 2_000),
        ]
        let origins = [
            "http://example.test/a/b", "https://www.example.test/", "http://127.0.0.1:8080/a", "https://test/",
        ]
        let jar = try jar()
        for _ in 0..<600 {
            let field = (0..<Int.random(in: 1...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            let origin = try url(origins.randomElement(using: &random)!)
            jar.store([field], from: URLRequest(url: origin))
            let target = try url(origins.randomElement(using: &random)!)
            if let sent = jar.field(for: URLRequest(url: target)) {
                #expect((try? HTTPHeader(name: "Cookie", value: sent).validate()) != nil, "\(sent.debugDescription)")
            }
        }
        #expect((jar.storage.cookies?.count ?? 0) <= CookieJar.maximumCookiesPerHost * origins.count)
    }

    @Test func aRequestsOwnFieldGoesFirstAndOneThatHandlesNoCookiesGetsNone() throws {
        let jar = try jar()
        try store(["a=1"], from: "http://example.test/", in: jar)
        var request = URLRequest(url: try url("http://example.test/"))
        request.setValue("own=1", forHTTPHeaderField: "Cookie")
        #expect(jar.field(for: request) == "own=1; a=1")
        request.httpShouldHandleCookies = false
        #expect(jar.field(for: request) == nil)
        jar.store(["b=2"], from: request)
        #expect(jar.storage.cookies?.count == 1)
    }
}
