import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The hashes Digest authentication names, against their standards' test vectors and against
/// coreutils on inputs around the block boundaries.
@Suite struct DigestHashTests {
    @Test func theStandardsTestVectorsHash() {
        #expect(DigestHash.md5.hex("") == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(DigestHash.md5.hex("abc") == "900150983cd24fb0d6963f7d28e17f72")
        #expect(DigestHash.md5.hex("message digest") == "f96b697d7cb7938d525a2f31aaf161d0")
        #expect(
            DigestHash.md5.hex(String(repeating: "1234567890", count: 8)) == "57edf4a22be3c955ac49da2e2107b67a")
        #expect(DigestHash.sha256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(DigestHash.sha256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            DigestHash.sha256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(DigestHash.sha512256.hex("") == "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a")
        #expect(
            DigestHash.sha512256.hex("abc") == "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23")
        #expect(
            DigestHash.sha512256.hex(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                    + "mnopqrstnopqrstu")
                == "3928e184fb8690f840da3988121d31be65cb9d3ef83ee6146feac861e19b563a")
    }

    #if os(macOS) || os(Linux)  // Process: not on iOS, tvOS or watchOS
        /// Random bytes of every length from 0 to 300 (a block is 64 bytes, 128 for SHA-512, and the
        /// length takes the last eighth of the last), hashed here and by Python's `hashlib` (OpenSSL's).
        @Test(arguments: DigestHash.allCases)
        func everyLengthHashesAsPythonsHashlibDoes(hash: DigestHash) throws {
            let python = URL(fileURLWithPath: "/usr/bin/python3")
            guard FileManager.default.isExecutableFile(atPath: python.path) else { return }
            var generator = SeededGenerator(seed: 11)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "strata-hash-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var expected: [String] = []
            for length in 0...300 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                try Data(bytes).write(to: folder.appendingPathComponent(String(length)))
                expected.append(hash.hex(bytes: bytes))
            }
            let name = ["MD5": "md5", "SHA-256": "sha256", "SHA-512-256": "sha512_256"][hash.rawValue] ?? ""
            let process = Process()
            process.executableURL = python
            process.currentDirectoryURL = folder
            process.arguments = [
                "-c",
                "import hashlib\nfor n in range(301): print(hashlib.new('\(name)', open(str(n), 'rb').read()).hexdigest())",
            ]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(text.split(separator: "\n").map(String.init) == expected)
        }
    #endif
}

/// `WWW-Authenticate` read as RFC 9110 §11.6.1 writes it, and the answers of RFC 7616's and
/// RFC 2617's examples made to the byte.
@Suite struct PasswordAuthenticatorAnswerTests {
    @Test func challengesAreReadWhateverTheirSpelling() {
        let challenges = AuthenticationChallenge.parse(
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", BASIC realm="simple, with a comma","#
                + #" Negotiate abc123==,Digest realm="r",  nonce = "n\\1" ,qop="auth,auth-int""#)
        #expect(
            challenges == [
                AuthenticationChallenge(
                    scheme: "newauth", parameters: ["realm": "apps", "type": "1", "title": #"Login to "apps""#]),
                AuthenticationChallenge(scheme: "basic", parameters: ["realm": "simple, with a comma"]),
                AuthenticationChallenge(scheme: "negotiate", parameters: [:]),
                AuthenticationChallenge(
                    scheme: "digest", parameters: ["realm": "r", "nonce": #"n\1"#, "qop": "auth,auth-int"]),
            ])
        #expect(AuthenticationChallenge.parse("") == [])
        #expect(AuthenticationChallenge.parse(#", ,Basic realm="unclosed"#).map(\.scheme) == ["basic"])
    }

    /// Fields made of random pieces of the grammar and random bytes, as a hostile server may send:
    /// each is read to its end, and every answer made for what was read is a field value that can
    /// be sent (no control character) — whatever the realm, nonce or opaque value held.
    @Test func fieldsMadeOfRandomPiecesAreReadAndAnsweredSafely() throws {
        var generator = SeededGenerator(seed: 5)
        let pieces = [
            "Digest", "Basic", "basic", "Negotiate", "realm", "nonce", "qop", "algorithm", "opaque", "stale",
            "userhash", "auth", "auth-int", "MD5", "SHA-256-sess", "SHA-512-256", "true", "=", "==", "\"", "\\",
            ",", " ", "\t", ", ", "abc", "é", "😀", "\u{7F}", "%0D%0A",
        ]
        let request = URLRequest(url: try #require(URL(string: "http://h.test/a?b=c")))
        for unsendable in [
            #"realm="a\#u{7F}b", nonce="n""#, #"realm="r", nonce="n\#u{1}""#, #"realm="r", nonce="n", opaque="\#u{0}""#,
        ] {
            #expect(Challenge.strongest(in: AuthenticationChallenge.parse("Digest " + unsendable)) == nil)
        }
        for _ in 0..<3_000 {
            var field = ""
            for _ in 0..<Int.random(in: 1...24, using: &generator) {
                field +=
                    Int.random(in: 0..<5, using: &generator) == 0
                    ? String(UnicodeScalar(UInt8.random(in: 0x20...0x7E, using: &generator)))
                    : pieces.randomElement(using: &generator) ?? ""
            }
            let challenges = AuthenticationChallenge.parse(field)
            #expect(challenges.count <= field.utf8.count)
            guard let challenge = Challenge.strongest(in: challenges) else { continue }
            let answer = challenge.nextAnswer().field(for: request, user: "ann", password: "pw")
            #expect(HTTPGrammar.isFieldValue(answer), "\(field.debugDescription) -> \(answer.debugDescription)")
        }
    }

    @Test func theStrongestChallengeThatCanBeAnsweredIsChosen() throws {
        func chosen(_ field: String) -> String? {
            Challenge.strongest(in: AuthenticationChallenge.parse(field)).map { challenge in
                switch challenge.kind {
                case .basic: return "basic"
                case .digest(let digest): return digest.hash.rawValue + (digest.isSession ? "-sess" : "")
                }
            }
        }
        #expect(chosen(#"Basic realm="a", Digest realm="a", nonce="n""#) == "MD5")
        #expect(
            chosen(#"Digest realm="a", nonce="n", algorithm=MD5, Digest realm="a", nonce="n", algorithm=SHA-256"#)
                == "SHA-256")
        #expect(chosen(#"Digest realm="a", nonce="n", algorithm=md5-sess"#) == "MD5-sess")
        #expect(
            chosen(
                #"Digest realm="a", nonce="n", Digest realm="a", nonce="n", algorithm=SHA-512-256-sess, "#
                    + #"Digest realm="a", nonce="n", algorithm=SHA-256"#) == "SHA-512-256-sess")
        #expect(chosen(#"Digest realm="a", nonce="n", algorithm=SHA3-256, Basic realm="a""#) == "basic")
        #expect(chosen(#"Digest realm="a", nonce="n", qop="auth-int""#) == "MD5")
        #expect(chosen(#"Digest realm="a", nonce="n", qop="other""#) == nil)
        #expect(chosen(#"Digest realm="a""#) == nil)
        #expect(chosen(#"Bearer realm="a", Negotiate"#) == nil)
    }

    @Test(arguments: [
        ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
    ])
    func rfc7616sExampleIsAnsweredToTheByte(algorithm: String, response: String) throws {
        let nonce = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"
        let opaque = "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
        let challenge = try #require(
            Challenge.strongest(
                in: AuthenticationChallenge.parse(
                    #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\#(algorithm), "#
                        + #"nonce="\#(nonce)", opaque="\#(opaque)""#)))
        let request = URLRequest(url: try #require(URL(string: "http://www.example.org/dir/index.html")))
        let field = challenge.nextAnswer().field(
            for: request, user: "Mufasa", password: "Circle of Life",
            clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
        #expect(
            field
                == #"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", "#
                + #"algorithm=\#(algorithm), nonce="\#(nonce)", nc=00000001, "#
                + #"cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="\#(response)", "#
                + #"opaque="\#(opaque)""#)
    }

    @Test func rfc2617sExampleIsAnsweredAndEachAnswerCountsOn() throws {
        let challenge = try #require(
            Challenge.strongest(
                in: AuthenticationChallenge.parse(
                    #"Digest realm="testrealm@host.com", qop="auth,auth-int", "#
                        + #"nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#)))
        let request = URLRequest(url: try #require(URL(string: "http://host.com/dir/index.html")))
        let first = challenge.nextAnswer().field(
            for: request, user: "Mufasa", password: "Circle Of Life", clientNonce: "0a4f113b")
        #expect(first.contains(#"nc=00000001, cnonce="0a4f113b""#))
        #expect(first.contains(#"response="6629fae49393a05397450978507c4ef1""#))
        #expect(!first.contains("algorithm="), "an algorithm the server did not name is not named back")
        let second = challenge.nextAnswer().field(
            for: request, user: "Mufasa", password: "Circle Of Life", clientNonce: "0a4f113b")
        #expect(second.contains("nc=00000002"))
    }

    /// `auth-int` hashes the body too: one in memory, or none; a stream's cannot be answered.
    @Test func authIntAnswersHashTheBodyInMemory() throws {
        let challenge = try #require(
            Challenge.strongest(
                in: AuthenticationChallenge.parse(
                    #"Digest realm="testrealm@host.com", qop="auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093""#)))
        var request = URLRequest(url: try #require(URL(string: "http://host.com/dir/index.html")))
        request.httpMethod = "POST"
        request.httpBody = Data("hello".utf8)
        let field = challenge.nextAnswer().field(
            for: request, user: "Mufasa", password: "Circle Of Life", clientNonce: "0a4f113b")
        #expect(field.contains(#"qop=auth-int, response="b3da9049011b9dafbd8fc28b2deecc0b""#))
        #expect(challenge.canAnswer(request))
        request.httpBodyStream = InputStream(data: Data("hello".utf8))
        #expect(!challenge.canAnswer(request))
        let offeringBoth = try #require(
            Challenge.strongest(
                in: AuthenticationChallenge.parse(#"Digest realm="r", nonce="n", qop="auth-int, auth""#)))
        #expect(offeringBoth.canAnswer(request), "auth, offered too, needs no body")
    }

    @Test func aNameAQuotedStringCannotCarryIsSentEncodedOrHashed() throws {
        let request = URLRequest(url: try #require(URL(string: "http://h.test/a%20b?x=1&y=%2F")))
        let plain = try #require(
            Challenge.strongest(in: AuthenticationChallenge.parse(#"Digest realm="r", nonce="n""#)))
        let field = plain.nextAnswer().field(for: request, user: "Jäsøn Doe", password: "pw", clientNonce: "c")
        #expect(field.hasPrefix("Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, "))
        #expect(field.contains(#"uri="/a%20b?x=1&y=%2F""#))
        #expect(!field.contains("nc="), "no qop offered: none sent")
        let hashed = try #require(
            Challenge.strongest(in: AuthenticationChallenge.parse(#"Digest realm="r", nonce="n", userhash=true"#)))
        let hashedField = hashed.nextAnswer().field(for: request, user: "Jäsøn Doe", password: "pw", clientNonce: "c")
        #expect(hashedField.hasPrefix(#"Digest username="\#(DigestHash.md5.hex("Jäsøn Doe:r"))", "#))
        #expect(hashedField.hasSuffix("userhash=true"))
        let quoted = plain.nextAnswer().field(for: request, user: #"a "b" \c"#, password: "pw", clientNonce: "c")
        #expect(quoted.hasPrefix(#"Digest username="a \"b\" \\c", "#))
    }
}
