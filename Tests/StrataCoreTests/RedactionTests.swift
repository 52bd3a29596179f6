import Foundation
import StrataCore
import Testing

@Suite struct RedactionTests {
    @Test func credentialHeadersAreRedactedByDefaultWhateverTheirCase() {
        let headers: HTTPHeaders = [
            "authorization": "Bearer secret", "Cookie": "session=1", "Set-Cookie": "s=2",
            "Proxy-Authorization": "Basic eA==", "Accept": "application/json",
        ]
        let redacted = Redaction().redact(headers)
        #expect(redacted["Authorization"] == "<redacted>")
        #expect(redacted["cookie"] == "<redacted>")
        #expect(redacted["set-cookie"] == "<redacted>")
        #expect(redacted["proxy-authorization"] == "<redacted>")
        #expect(redacted["Accept"] == "application/json")
        #expect(redacted.map(\.name) == headers.map(\.name))
    }

    @Test(arguments: [
        "X-Api-Key", "api_key", "X-APIKEY", "X-Auth-Token", "x-myapp-token", "X-Amz-Security-Token",
        "Ocp-Apim-Subscription-Key", "X-Session-Id", "X-Client-Secret", "X-Access-Key", "X-Password",
        "X-Credentials",
    ])
    func aHeaderNamedAsACredentialIsRedactedUnnamed(name: String) {
        #expect(Redaction.namesACredential(name))
        #expect(Redaction().redact([name: "k"])[name] == "<redacted>")
    }

    @Test(arguments: [
        "Accept", "X-Request-Id", "X-Tokenizer", "X-Authority-Zone", "Idempotency-Key", "X-Key", "Keep-Alive",
        "WWW-Authenticate", "X-Sessions-Count", "",
    ])
    func otherHeadersAreShown(name: String) {
        #expect(!Redaction.namesACredential(name))
    }

    @Test func configuredHeaderNamesAreRedacted() {
        let redaction = Redaction(extraHeaderNames: ["X-Api-Key"])
        #expect(redaction.redact(["x-api-key": "k"])["X-API-KEY"] == "<redacted>")
    }

    @Test func configuredQueryKeysAndURLCredentialsAreRedacted() throws {
        let url = try #require(URL(string: "https://user:pass@api.example.com/v1?token=abc&page=2&Token=def"))
        let text = Redaction(queryKeys: ["token"], placeholder: "***").redact(url)
        #expect(!text.contains("abc"))
        #expect(!text.contains("def"))
        #expect(!text.contains("pass"))
        #expect(text.contains("page=2"))
        #expect(text.contains("token=***"))
        #expect(text.contains("Token=***"))
        #expect(text == "https://***@api.example.com/v1?token=***&page=2&Token=***")
    }

    /// Query keys named as a credential are hidden whatever their spelling, as headers are: a
    /// pre-signed S3 or Google Cloud Storage URL's signature and credential, an Azure SAS `sig`, a
    /// Google API `key`, a camel-cased `accessToken`.
    @Test func queryKeysNamedAsACredentialAreRedactedUnnamed() throws {
        let url = try #require(
            URL(
                string: "https://bucket.s3.amazonaws.com/a.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                    + "&X-Amz-Credential=AKIA1%2F20261205&X-Amz-Date=20261205T000000Z&X-Amz-Expires=60"
                    + "&X-Amz-Signature=abc123&X-Amz-Security-Token=tok&X-Goog-Signature=def&sig=ghi&key=AIza"
                    + "&accessToken=jkl&user%5BsessionId%5D=mno&page=2&keyword=swift"))
        let text = Redaction().redact(url)
        for secret in ["AKIA1", "abc123", "=tok", "def", "ghi", "AIza", "jkl", "mno"] {
            #expect(!text.contains(secret), "\(secret): \(text)")
        }
        for shown in [
            "X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Date=20261205T000000Z", "X-Amz-Expires=60", "page=2",
            "keyword=swift",
        ] {
            #expect(text.contains(shown), "\(shown): \(text)")
        }
    }

    @Test(arguments: [
        "X-Hub-Signature-256", "X-Goog-Signature", "XAuthToken", "x_access_key", "X-Amz-Credential", "_token",
        "--auth--", "__Secure-session",
    ])
    func aHeaderNamedAsASignatureOrInAnySpellingIsRedacted(name: String) {
        #expect(Redaction.namesACredential(name))
    }

    @Test func anyPlaceholderIsSafeEvenWithCharactersAURLCannotHold() throws {
        let url = try #require(URL(string: "https://api.example.com/search?q=a%20b&key=k#top"))
        let text = Redaction(queryKeys: ["KEY"]).redact(url)
        #expect(text == "https://api.example.com/search?q=a%20b&key=<redacted>#top")
    }
}

@Suite struct URLTextRedactionTests {
    @Test func textThatIsNotAURLIsRedactedAsFarAsItReads() {
        let redaction = Redaction()
        #expect(
            redaction.redact(urlText: "ht tp://u:p@host/a b?token=t0k&x=1")
                == "ht tp://<redacted>@host/a b?token=<redacted>&x=1")
        #expect(
            redaction.redact(urlText: "/callback#access_token=abc&state=s")
                == "/callback#access_token=<redacted>&state=s")
        #expect(redaction.redact(urlText: "?user%5Btoken%5D=x") == "?user%5Btoken%5D=<redacted>")
        #expect(redaction.redact(urlText: "") == "")
    }

    /// The delimiters are read as bytes: text around them, whatever its characters, is kept as it
    /// is, and a delimiter a combining mark follows still delimits (a secret behind it is hidden).
    @Test func delimitersAreFoundWhateverTheCharactersAroundThem() {
        let redaction = Redaction()
        #expect(
            redaction.redact(urlText: "https://ü:p@hôst.example/päth?tökén=1&token=s3cr3t#token=x&é")
                == "https://<redacted>@hôst.example/päth?tökén=1&token=<redacted>#token=<redacted>&é")
        #expect(
            redaction.redact(urlText: "https://h/p?\u{301}x=1&token=s3cr3t")
                == "https://h/p?\u{301}x=1&token=<redacted>")
        #expect(redaction.redact(urlText: "a:b://c") == "a:b://c")
        #expect(redaction.redact(urlText: "::://u@h") == "::://<redacted>@h")
        #expect(redaction.redact(urlText: "https://h?&&=&token") == "https://h?&&=&token=<redacted>")
    }

    @Test func aURLErrorKeepsItsCodeAndOnlyARedactedFailingURL() throws {
        let url = try #require(URL(string: "https://api.example.com/x?api_key=s3cret"))
        let error = URLError(
            .timedOut,
            userInfo: [
                NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: "Timed out: \(url.absoluteString)",
            ])
        let redacted = Redaction().redact(error)
        #expect(redacted.code == .timedOut)
        #expect(redacted.failingURL == nil)
        for text in [String(describing: redacted), redacted.localizedDescription] {
            #expect(!text.contains("s3cret"), "\(text)")
        }
        #expect(redacted.localizedDescription.contains("api_key=<redacted>"))
    }
}

@Suite struct OriginTests {
    @Test func schemeHostAndPortMakeAnOriginWithDefaultPortsAndCaseIgnored() throws {
        let api = Origin(scheme: "https", host: "api.example.com")
        #expect(api.contains(URL(string: "https://API.example.com:443/v1/users")))
        #expect(!api.contains(URL(string: "http://api.example.com/v1/users")))
        #expect(!api.contains(URL(string: "https://api.example.com:8443/")))
        #expect(!api.contains(URL(string: "https://example.com/")))
        #expect(!api.contains(nil))
        #expect(Origin(try #require(URL(string: "http://[::1]:8080/x")))?.description == "http://[::1]:8080")
        #expect(Origin(try #require(URL(string: "mailto:someone@example.com"))) == nil)
        #expect(
            Origin(try #require(URL(string: "HTTP://Example.COM")))
                == Origin(scheme: "http", host: "example.com", port: 80))
    }
}
