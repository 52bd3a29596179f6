import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers a server's `401` challenge with a user name and password: `Basic` (RFC 7617) and
/// `Digest` (RFC 7616: MD5, SHA-256 or SHA-512-256, each also `-sess`; `qop=auth`, `auth-int` for a
/// body in memory, or none), as `URLSession` answers with a `URLCredential` on Apple platforms, and
/// Alamofire's `authenticate(username:password:)` — here on every platform and over every
/// transport. (On Linux FoundationNetworking hangs on a `Basic` challenge it handles itself: Strata
/// declines every challenge there, so the `401` comes up to this interceptor.)
///
/// Nothing is sent before a server asks. Once an origin has challenged, each request to it carries
/// the answer from the start (a `Digest` one with its own nonce count); a `stale` nonce, or one the
/// server retired since, is answered again. The password goes only to `origins`: a challenge from
/// anywhere else (a server a redirect led to) is not answered, and the pipeline keeps the answer
/// from following a redirect there. A request that carries an `Authorization` field of its own is
/// left alone, and a password the server refuses ends the request with its `401`.
/// Of several challenges, the strongest it can answer is: `Digest` with SHA-512-256, then SHA-256,
/// then MD5, then `Basic`.
///
/// ```swift
/// let authenticator = PasswordAuthenticator(user: "ann", password: "secret", for: baseURL)
/// let manager = SessionManager(interceptors: [authenticator])
/// ```
public final class PasswordAuthenticator: RequestInterceptor {
    /// The user name sent.
    public let user: String
    private let password: String
    /// The origins the password is sent to.
    public let origins: Set<Origin>
    /// The last challenge answered, by origin.
    private let challenges = Locked<[Origin: Challenge]>([:])

    /// The most attempts of a request (all its attempts, whatever they were retried for) after
    /// which a challenge is no longer answered: a server whose every answer is a stale nonce ends
    /// with its `401` then.
    public static let maximumAttempts = 4

    /// An authenticator that answers the challenges of `origins` as `user` with `password`.
    public init(user: String, password: String, for origins: Set<Origin>) {
        self.user = user
        self.password = password
        self.origins = origins
    }

    /// An authenticator that answers the challenges of `url`'s origin (a configuration's base
    /// URL, say) as `user` with `password`; of none if `url` has no origin.
    public convenience init(user: String, password: String, for url: URL) {
        self.init(user: user, password: password, for: Set([Origin(url)].compactMap { $0 }))
    }

    /// ``origins``: the pipeline keeps the answer from following a redirect anywhere else.
    public var credentialOrigins: Set<Origin>? { origins }

    /// Adds the answer to the last challenge of the request's origin, unless the request has an
    /// `Authorization` of its own.
    public func adapt(_ request: URLRequest, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        guard request.value(forHTTPHeaderField: "Authorization") == nil, let url = request.url,
            let origin = Origin(url), origins.contains(origin),
            let answer = challenges.withLock({ $0[origin] }).flatMap({ $0.canAnswer(request) ? $0.nextAnswer() : nil })
        else { return completion(.success(request)) }
        var request = request
        request.setHeaderField("Authorization", answer.field(for: request, user: user, password: password))
        completion(.success(request))
    }

    /// Retries a `401` from one of ``origins`` that brings a challenge this can answer, unless it
    /// is the one the request answered already.
    public func retry(_ failure: RequestFailure, completion: @escaping @Sendable (RetryDecision) -> Void) {
        guard let response = failure.response, response.statusCode == 401,
            failure.attemptCount < Self.maximumAttempts,
            let url = failure.request.url ?? response.url, let origin = Origin(url), origins.contains(origin),
            let challenge = Challenge.strongest(
                in: AuthenticationChallenge.parse(response.value(forHTTPHeaderField: "WWW-Authenticate") ?? "")),
            challenge.canAnswer(failure.request)
        else { return completion(.doNotRetry) }
        if let sent = failure.request.value(forHTTPHeaderField: "Authorization") {
            // The request's own credential is the caller's to renew; an answer of this one's that
            // the challenge only repeats was refused.
            let basic = Challenge.basicField(user: user, password: password)
            guard isAnswer(sent, basic: basic), challenge.isNew(after: sent, firstAttempt: failure.attemptCount == 1)
            else {
                return completion(.doNotRetry)
            }
        }
        challenges.withLock { $0[origin] = challenge }
        completion(.retry)
    }

    /// Whether `field` is an answer this authenticator made: its `Basic` field, or a `Digest` one
    /// in its user's name.
    private func isAnswer(_ field: String, basic: String) -> Bool {
        guard field != basic else { return true }
        guard let answer = AuthenticationChallenge.parse(field).first, answer.scheme == "digest" else { return false }
        let parameters = answer.parameters
        return parameters["username"] == user || parameters["userhash"] == "true"
            || parameters["username*"] == "UTF-8''" + Challenge.attributeValue(user)
    }
}

/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): its scheme, and its
/// parameters by lowercased name.
struct AuthenticationChallenge: Equatable, Sendable {
    /// The scheme, lowercased.
    let scheme: String
    let parameters: [String: String]

    /// The challenges of `field` (several fields combined with commas are one field), in order.
    /// What cannot be read is skipped; a token68 (`Negotiate abc==`) gives a challenge without
    /// parameters.
    static func parse(_ field: String) -> [AuthenticationChallenge] {
        var scanner = Scanner(Array(field.utf8))
        var challenges: [AuthenticationChallenge] = []
        while !scanner.isAtEnd {
            scanner.skip { $0 == UInt8(ascii: ",") || Scanner.isSpace($0) }
            guard let scheme = scanner.token() else {
                scanner.skipOne()
                continue
            }
            var parameters: [String: String] = [:]
            while true {
                let start = scanner.position
                scanner.skip { $0 == UInt8(ascii: ",") || Scanner.isSpace($0) }
                guard let name = scanner.token() else { break }
                scanner.skip(while: Scanner.isSpace)
                guard scanner.take(UInt8(ascii: "=")) else {
                    // The next challenge's scheme.
                    scanner.position = start
                    break
                }
                if scanner.take(UInt8(ascii: "=")) || scanner.isAtEnd || scanner.peek == UInt8(ascii: ",") {
                    // A token68 ending in `=`: nothing this reads.
                    scanner.skip { $0 != UInt8(ascii: ",") }
                    continue
                }
                scanner.skip(while: Scanner.isSpace)
                guard let value = scanner.quotedString() ?? scanner.token() else {
                    // A quoted string left open takes the rest of the field with it.
                    if scanner.peek == UInt8(ascii: "\"") { scanner.position = scanner.bytes.count }
                    break
                }
                parameters[name.lowercased()] = value
            }
            challenges.append(AuthenticationChallenge(scheme: scheme.lowercased(), parameters: parameters))
        }
        return challenges
    }

    /// Reads a field's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position >= bytes.count }
        var peek: UInt8? { isAtEnd ? nil : bytes[position] }

        static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

        mutating func skipOne() { position += 1 }

        mutating func skip(while matches: (UInt8) -> Bool) {
            while let byte = peek, matches(byte) { position += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        /// A token (RFC 9110 §5.6.2), or `nil` if none starts here.
        mutating func token() -> String? {
            let start = position
            skip(while: HTTPGrammar.isTokenByte)
            return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
        }

        /// A quoted string's value, its escapes undone, or `nil` if none starts here (or it is
        /// not closed).
        mutating func quotedString() -> String? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            var value: [UInt8] = []
            var index = position + 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    position = index + 1
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\") where index + 1 < bytes.count:
                    value.append(bytes[index + 1])
                    index += 2
                default:
                    value.append(bytes[index])
                    index += 1
                }
            }
            return nil
        }
    }
}

/// A challenge ``PasswordAuthenticator`` answers, with what each answer needs.
final class Challenge: Sendable {
    enum Kind: Sendable {
        case basic
        case digest(DigestChallenge)
    }

    /// A `Digest` quality of protection: the request (`auth`), or the request and its body
    /// (`auth-int`).
    enum Protection: String, Sendable {
        case auth
        case authInt = "auth-int"
    }

    /// What a `Digest` challenge says (RFC 7616 §3.3).
    struct DigestChallenge: Sendable {
        let realm: String
        let nonce: String
        let opaque: String?
        let hash: DigestHash
        /// Whether the algorithm ends in `-sess`.
        let isSession: Bool
        /// The name the algorithm was given by, sent back as it was.
        let algorithm: String?
        /// The protection answered: `auth` if offered, else `auth-int`; `nil` when the server
        /// named none, as RFC 2069 did.
        let protection: Protection?
        let hashesUser: Bool
        let isStale: Bool
    }

    let kind: Kind
    /// The nonce count of the answers made: each `Digest` answer takes the next.
    private let answers = Locked(0)

    private init(_ kind: Kind) {
        self.kind = kind
    }

    /// The strongest of `challenges` that can be answered: `Digest` with SHA-512/256, then with
    /// SHA-256, then with MD5, then `Basic`.
    static func strongest(in challenges: [AuthenticationChallenge]) -> Challenge? {
        let digests = challenges.compactMap(digest)
        if let best = [DigestHash.sha512256, .sha256, .md5].lazy.compactMap({ hash in
            digests.first { $0.hash == hash }
        }).first {
            return Challenge(.digest(best))
        }
        return challenges.contains { $0.scheme == "basic" } ? Challenge(.basic) : nil
    }

    private static func digest(_ challenge: AuthenticationChallenge) -> DigestChallenge? {
        let parameters = challenge.parameters
        guard challenge.scheme == "digest", let realm = parameters["realm"], let nonce = parameters["nonce"],
            // What the answer repeats must be sendable: a control character a server slipped in
            // would make the request fail its field check.
            [realm, nonce, parameters["opaque"] ?? "", parameters["algorithm"] ?? ""].allSatisfy(
                HTTPGrammar.isFieldValue)
        else { return nil }
        let algorithm = parameters["algorithm"]
        var name = (algorithm ?? "MD5").uppercased()
        let isSession = name.hasSuffix("-SESS")
        if isSession { name.removeLast(5) }
        guard let hash = DigestHash(rawValue: name) else { return nil }
        var protection: Protection?
        if let qop = parameters["qop"] {
            let offered = Set(qop.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
            guard let chosen = [Protection.auth, .authInt].first(where: { offered.contains($0.rawValue) }) else {
                return nil
            }
            protection = chosen
        }
        return DigestChallenge(
            realm: realm, nonce: nonce, opaque: parameters["opaque"], hash: hash, isSession: isSession,
            algorithm: algorithm, protection: protection,
            hashesUser: parameters["userhash"]?.lowercased() == "true",
            isStale: parameters["stale"]?.lowercased() == "true")
    }

    /// `text` in RFC 8187's encoding: UTF-8, every byte but an `attr-char` percent-encoded.
    static func attributeValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: attributeCharacters) ?? ""
    }

    private static let attributeCharacters = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&+-.^_`|~")

    /// `Basic` with `user` and `password` (UTF-8, RFC 7617 §2.1).
    static func basicField(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// Whether this challenge asks for something else than the answer `sent` gave: a `Digest`
    /// challenge whose nonce is stale or whose realm is another, or a scheme other than the one
    /// sent — or, on a request's first attempt, whose nonce is another (the answer was made from
    /// an earlier request's challenge, whose nonce a server may have retired without calling it
    /// stale). Otherwise a `Digest` challenge after a `Digest` answer, or a `Basic` one after a
    /// `Basic` answer, means the password was refused: a refusal brings a new nonce too, not
    /// called stale (RFC 7616 §3.3).
    func isNew(after sent: String, firstAttempt: Bool) -> Bool {
        switch kind {
        case .basic:
            return !sent.lowercased().hasPrefix("basic ")
        case .digest(let challenge):
            guard let answered = AuthenticationChallenge.parse(sent).first, answered.scheme == "digest" else {
                return true
            }
            return challenge.isStale || answered.parameters["realm"] != challenge.realm
                || (firstAttempt && answered.parameters["nonce"] != challenge.nonce)
        }
    }

    /// Whether an answer can be made for `request`: not with `auth-int` for a body that is a
    /// stream (a file's, or the caller's), which would have to be read to be hashed.
    func canAnswer(_ request: URLRequest) -> Bool {
        guard case .digest(let digest) = kind, digest.protection == .authInt else { return true }
        return request.httpBodyStream == nil
    }

    /// This challenge with the nonce count of its next answer.
    func nextAnswer() -> Answer {
        Answer(
            challenge: self,
            count: answers.withLock { count in
                count += 1
                return count
            })
    }

    /// One answer to a challenge.
    struct Answer: Sendable {
        let challenge: Challenge
        let count: Int

        /// The `Authorization` field for `request`.
        func field(
            for request: URLRequest, user: String, password: String, clientNonce: String = Answer.clientNonce()
        ) -> String {
            guard case .digest(let digest) = challenge.kind else {
                return Challenge.basicField(user: user, password: password)
            }
            let hash = digest.hash
            let nonceCount = String(String(count, radix: 16).suffix(8)).leftPadded(to: 8)
            var secret = hash.hex("\(user):\(digest.realm):\(password)")
            if digest.isSession {
                secret = hash.hex("\(secret):\(digest.nonce):\(clientNonce)")
            }
            let target = Self.target(of: request.url)
            var requestPart = "\(request.httpMethod ?? "GET"):\(target)"
            if digest.protection == .authInt {
                requestPart += ":" + hash.hex(bytes: Array(request.httpBody ?? Data()))
            }
            let response =
                digest.protection.map {
                    hash.hex(
                        "\(secret):\(digest.nonce):\(nonceCount):\(clientNonce):\($0.rawValue):\(hash.hex(requestPart))"
                    )
                } ?? hash.hex("\(secret):\(digest.nonce):\(hash.hex(requestPart))")
            var parts: [String] = []
            if digest.hashesUser {
                parts.append("username=\(Self.quoted(hash.hex("\(user):\(digest.realm)")))")
            } else if user.utf8.allSatisfy({ (0x20..<0x7f).contains($0) }) {
                parts.append("username=\(Self.quoted(user))")
            } else {
                // RFC 7616 §3.4.4: a name a quoted string cannot carry, in RFC 8187's encoding.
                parts.append("username*=UTF-8''" + Challenge.attributeValue(user))
            }
            parts.append("realm=\(Self.quoted(digest.realm))")
            parts.append("uri=\(Self.quoted(target))")
            if let algorithm = digest.algorithm { parts.append("algorithm=\(algorithm)") }
            parts.append("nonce=\(Self.quoted(digest.nonce))")
            if let protection = digest.protection {
                parts.append("nc=\(nonceCount)")
                parts.append("cnonce=\(Self.quoted(clientNonce))")
                parts.append("qop=\(protection.rawValue)")
            }
            parts.append("response=\(Self.quoted(response))")
            if let opaque = digest.opaque { parts.append("opaque=\(Self.quoted(opaque))") }
            if digest.hashesUser { parts.append("userhash=true") }
            return "Digest " + parts.joined(separator: ", ")
        }

        /// The request target a transport sends for `url`: its path as written (`/` if empty)
        /// and its query.
        static func target(of url: URL?) -> String {
            guard let url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return "/" }
            let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
        }

        /// `text` as a quoted string, its quotes and backslashes escaped.
        static func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }

        /// 16 random bytes in hexadecimal.
        static func clientNonce() -> String {
            var generator = SystemRandomNumberGenerator()
            return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
        }
    }
}

extension String {
    /// The string with `0`s before it up to `length` characters.
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
