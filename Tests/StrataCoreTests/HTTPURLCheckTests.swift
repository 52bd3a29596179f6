import Foundation
import StrataCore
import Testing

/// What ``HTTPURLCheck`` lets through to a transport, and why it refuses the rest.
@Suite struct HTTPURLCheckTests {
    private func reason(_ text: String) throws -> UnsupportedURLReason? {
        let url = try #require(URL(string: text), "Foundation does not parse \(text)")
        do {
            try HTTPURLCheck.validate(url)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        "http://127.0.0.1:8080/x", "https://api.example.com", "HTTP://API.example.com:443/v1?q=1#f",
        "http://[::1]:1/", "http://[::ffff:127.0.0.1]/", "http://[2001:db8::8a2e:370:7334]/", "http://localhost:65535/",
        "http://under_score.example/", "http://u:p@example.com/", "http://xn--bcher-kva.de/",
        "http://[1:2:3:4:5:6:7:8]/", "http://[::]/",
    ])
    func acceptsWhatATransportCanConnectTo(url: String) throws {
        #expect(try reason(url) == nil)
    }

    @Test func refusesPortsOutOfRange() throws {
        #expect(try reason("http://127.0.0.1:99999/x") == .invalidPort("99999"))
        #expect(try reason("http://example.com:65536/") == .invalidPort("65536"))
        #expect(try reason("http://example.com:0/") == .invalidPort("0"))
        #expect(try reason("http://u:p@[::1]:70000/") == .invalidPort("70000"))
        // `URL.port` reads one too large for an integer as no port: a transport would connect to 80.
        #expect(try reason("http://127.0.0.1:9223372036854775808/") == .invalidPort("9223372036854775808"))
        #expect(try reason("http://127.0.0.1:/") == nil)
        #expect(try reason("http://127.0.0.1:00080/") == nil)
    }

    @Test func refusesOtherSchemes() throws {
        #expect(try reason("ftp://example.com/") == .unsupportedScheme("ftp"))
        #expect(try reason("file:///etc/passwd") == .unsupportedScheme("file"))
        #expect(try reason("ws://example.com/") == .unsupportedScheme("ws"))
        #expect(try reason("//example.com/x") == .unsupportedScheme(""))
    }

    @Test func refusesMissingHosts() throws {
        for text in ["http:///x", "http://:80/", "http://[]/", "http://u@/x"] {
            #expect(try reason(text) == .missingHost, "\(text)")
        }
    }

    @Test func refusesBracketedHostsThatAreNotIPv6Addresses() throws {
        #expect(try reason("http://[fe80::1%25eth0]:80/x") == .ipv6ZoneIdentifier("fe80::1%eth0"))
        for text in ["http://[v1.x]/", "http://[::1::2]/", "http://[1:2:3:4:5:6:7:8:9]/", "http://[12345::]/"] {
            guard let reason = try reason(text) else {
                Issue.record("\(text) passed")
                continue
            }
            guard case .invalidIPv6Address = reason else {
                Issue.record("\(text): \(reason)")
                continue
            }
        }
    }

    @Test func refusesHostsNoResolverShouldSee() throws {
        #expect(try reason("http://ex%20ample.com/x") == .invalidHost("ex ample.com"))
        #expect(try reason("http://h%00.com/x") == .invalidHost("h\0.com"))
        #expect(try reason("http://a%0D%0Ab/") == .invalidHost("a\r\nb"))
        let long = String(repeating: "a", count: 254)
        #expect(try reason("http://\(long)/") == .invalidHost(long))
    }

    @Test func theReasonSaysWhatIsWrongWithControlCharactersEscaped() {
        #expect(
            UnsupportedURLReason.invalidPort("99999").description == "its port 99999 is not a number from 1 to 65535")
        let host = UnsupportedURLReason.invalidHost("h\0.com\r\n").description
        #expect(host.contains(#"h\0.com\r\n"#))
        #expect(!host.contains("\r"))
        let error = RequestValidationError.unsupportedURL("http://127.0.0.1:99999/x", reason: .invalidPort("99999"))
        #expect(
            error.description
                == #"The URL "http://127.0.0.1:99999/x" cannot be sent: its port 99999 is not a number from 1 to 65535; the request was not sent."#
        )
    }

    /// The check runs on the URL's bytes; here it is written plainly, with `String`'s own
    /// operations, and the two must agree on every URL of a product of awkward parts.
    @Test func agreesWithTheCheckWrittenPlainlyOnEveryCombinationOfAwkwardParts() {
        let schemes = ["http", "HTTPS", "hTtP", "ftp", "htt", "httpss", "h-ttp"]
        let separators = ["//", "/", ""]
        let users = ["", "u@", "u:p@", "@", "a@b@", "u:[x]@"]
        let hosts = [
            "example.com", "127.0.0.1", "[::1]", "[fe80::1%25eth0]", "[v1.x]", "[]", "[::1", "ex%20ample.com",
            "h%41st", "", "under_score", String(repeating: "a", count: 253), String(repeating: "a", count: 254),
            "exa$mple", "xn--bcher-kva.de",
        ]
        let ports = ["", ":", ":80", ":0", ":65535", ":65536", ":00080", ":99999999999999999999", ":8a", ":-1"]
        let rests = ["", "/x", "?q=1", "#f", "/a:b@c?d=[e]"]
        var checked = 0
        for scheme in schemes {
            for separator in separators {
                for user in users {
                    for host in hosts {
                        for port in ports {
                            for rest in rests {
                                let text = "\(scheme):\(separator)\(user)\(host)\(port)\(rest)"
                                guard let url = URL(string: text) else { continue }
                                checked += 1
                                let byBytes: UnsupportedURLReason?
                                do {
                                    try HTTPURLCheck.validate(url)
                                    byBytes = nil
                                } catch {
                                    byBytes = error
                                }
                                #expect(byBytes == Self.plainReason(url), "\(text)")
                            }
                        }
                    }
                }
            }
        }
        #expect(checked > 10_000)
    }

    /// ``HTTPURLCheck/validate(_:)`` as its documentation says it, on `String`s.
    private static func plainReason(_ url: URL) -> UnsupportedURLReason? {
        let text = url.absoluteString
        guard let colon = text.firstIndex(of: ":") else { return .unsupportedScheme("") }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return .unsupportedScheme(scheme) }
        let rest = text[text.index(after: colon)...]
        var authority = rest.hasPrefix("//") ? rest.dropFirst(2).prefix { !"/?#".contains($0) } : ""
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = authority
        var port: Substring?
        let isBracketed = authority.hasPrefix("[")
        if isBracketed {
            host = authority.dropFirst()
            if let close = host.firstIndex(of: "]") {
                let after = host[host.index(after: close)...]
                host = host[..<close]
                if after.hasPrefix(":") { port = after.dropFirst() }
            }
        } else if let portColon = authority.firstIndex(of: ":") {
            host = authority[..<portColon]
            port = authority[authority.index(after: portColon)...]
        }
        if let port, !port.isEmpty {
            guard port.allSatisfy({ "0123456789".contains($0) }), let number = Int(port), (1...65_535).contains(number)
            else { return .invalidPort(String(port)) }
        }
        var name = String(host)
        if name.contains("%") {
            name = url.host ?? ""
            if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        }
        if name.isEmpty { return .missingHost }
        if isBracketed {
            if name.contains("%") { return .ipv6ZoneIdentifier(name) }
            return HTTPURLCheck.isIPv6Address(name) ? nil : .invalidIPv6Address(name)
        }
        let hostNameCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._")
        guard name.count <= 253, name.allSatisfy(hostNameCharacters.contains) else { return .invalidHost(name) }
        return nil
    }

    @Test func ipv6AddressesFollowRFC3986() {
        for valid in [
            "::", "::1", "1::", "1:2:3:4:5:6:7:8", "1::8", "::ffff:1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "fe80::a",
        ] {
            #expect(HTTPURLCheck.isIPv6Address(valid), "\(valid)")
        }
        for invalid in [
            "", ":", ":::", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "g::", "::1.2.3",
            "::256.1.1.1", "::01.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "::1%eth0", "1:2:3:4:5:6:7::8:9",
        ] {
            #expect(!HTTPURLCheck.isIPv6Address(invalid), "\(invalid)")
        }
    }
}
