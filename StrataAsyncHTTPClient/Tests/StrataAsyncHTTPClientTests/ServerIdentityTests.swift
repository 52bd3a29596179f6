import NIOSSL
import StrataSession
import Testing

@testable import StrataAsyncHTTPClient

/// The host name check of RFC 6125 §6 that closes NIOSSL's gap (it accepts a certificate issued for
/// the address a name resolved to, whatever the name).
@Suite struct ServerIdentityTests {
    private let identity = ServerIdentity(
        names: ["api.example.com", "*.cdn.example.com", "Mixed.Example.ORG.", "*.com"],
        addresses: [[127, 0, 0, 1], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]])

    private func passes(_ host: String) -> Bool {
        (try? identity.verify(host)) != nil
    }

    @Test func aNameMatchesItsNamesOnlyWithoutCase() {
        #expect(passes("api.example.com"))
        #expect(passes("API.Example.com."))
        #expect(passes("mixed.example.org"))
        #expect(!passes("example.com"))
        #expect(!passes("api.example.com.evil.test"))
        #expect(!passes("xapi.example.com"))
    }

    @Test func aWildcardStandsForExactlyOneWholeLabel() {
        #expect(passes("img.cdn.example.com"))
        #expect(!passes("cdn.example.com"))
        #expect(!passes("a.b.cdn.example.com"))
        #expect(!passes(".cdn.example.com"))
        // `*.com` is no wildcard for every name under a top-level domain.
        #expect(!passes("anything.com"))
    }

    /// The gap itself: a certificate issued for an address does not pass for a name, and a name
    /// in the certificate does not pass for an address.
    @Test func addressesMatchAddressesAndNamesNames() {
        #expect(passes("127.0.0.1"))
        #expect(passes("::1"))
        #expect(passes("[::1]"))
        #expect(!passes("127.0.0.2"))
        #expect(!passes("localhost"))
        let named = ServerIdentity(names: ["localhost"], addresses: [])
        #expect((try? named.verify("127.0.0.1")) == nil)
    }

    @Test func theRefusalSaysWhatTheCertificateIsFor() {
        do {
            try ServerIdentity(names: ["localhost"], addresses: [[127, 0, 0, 1]]).verify("api.strata.test")
            Issue.record("passed")
        } catch {
            #expect(
                error
                    == .refused(
                        host: "api.strata.test",
                        reason: "its certificate was issued for localhost, 127.0.0.1, not for this host"))
        }
    }

    @Test func aCertificateWithoutAlternativeNamesIsLeftToNIOSSL() throws {
        #expect((try? ServerIdentity(names: [], addresses: []).verify("anything.example")) != nil)
    }
}
