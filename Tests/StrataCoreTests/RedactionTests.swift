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

    @Test func anyPlaceholderIsSafeEvenWithCharactersAURLCannotHold() throws {
        let url = try #require(URL(string: "https://api.example.com/search?q=a%20b&key=k#top"))
        let text = Redaction(queryKeys: ["KEY"]).redact(url)
        #expect(text == "https://api.example.com/search?q=a%20b&key=<redacted>#top")
    }
}
