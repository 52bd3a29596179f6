import Crypto
import Foundation
import NIOConcurrencyHelpers

/// `/digest-auth/{qop}/{user}/{password}/{algorithm}`: a resource behind HTTP Digest authentication
/// (RFC 7616), checked with swift-crypto's hashes — an implementation Strata's own does not share.
/// `qop` is `auth` (`auth-int` offered too), `auth-int` (alone: the body is hashed into the
/// answer) or `none` (RFC 2069's answer, without `qop`); any method; `algorithm` one of `MD5`,
/// `MD5-sess`, `SHA-256`, `SHA-256-sess`. The answer's `uri` must be the request target as it
/// arrived, and each answer to a nonce must have a nonce count of its own (a replay is refused).
/// Queries: `nonce-uses=N` makes a nonce good for N answers, then stale (`stale=true` with a new
/// one, or, with `quiet-stale=1`, a new one alone, as a server that does not say so answers); `basic-too=1` sends a `Basic` challenge first, in a field of its own; `key` counts the
/// requests (``ServerState/attemptCount(for:)``).
enum DigestAuthentication {
    static let realm = "strata@loopback"

    /// What the server remembers of the nonces it issued.
    final class Nonces: Sendable {
        private struct Issued: Sendable {
            var uses = 0
            var counts: Set<Int> = []
        }

        private let issued = NIOLockedValueBox<[String: Issued]>([:])

        func issue() -> String {
            let nonce = Data((0..<24).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            issued.withLockedValue { $0[nonce] = Issued() }
            return nonce
        }

        enum Use { case unknown, stale, replayed, accepted }

        func use(_ nonce: String, count: Int?, limit: Int?) -> Use {
            issued.withLockedValue { issued in
                guard var entry = issued[nonce] else { return .unknown }
                if let limit, entry.uses >= limit { return .stale }
                if let count {
                    guard entry.counts.insert(count).inserted else { return .replayed }
                }
                entry.uses += 1
                issued[nonce] = entry
                return .accepted
            }
        }
    }

    static func install(on router: Router, state: ServerState) {
        let nonces = Nonces()
        router.add(nil, "/digest-auth/{qop}/{user}/{password}/{algorithm}") { request in
            if let key = request.queryValue("key") { _ = state.countAttempt(for: key) }
            let qop = request.parameters["qop"].flatMap { ["auth", "auth-int"].contains($0) ? $0 : nil }
            let algorithm = request.parameters["algorithm"] ?? "MD5"
            let user = request.parameters["user"] ?? ""
            func challenge(stale: Bool) -> TestReply {
                var fields: [(String, String)] = []
                if request.queryValue("basic-too") == "1" {
                    fields.append(("WWW-Authenticate", #"Basic realm="\#(realm)""#))
                }
                var digest = #"Digest realm="\#(realm)", nonce="\#(nonces.issue())", opaque="strata-opaque""#
                digest += ", algorithm=\(algorithm)"
                if let qop { digest += qop == "auth" ? #", qop="auth,auth-int""# : #", qop="auth-int""# }
                if stale { digest += ", stale=true" }
                fields.append(("WWW-Authenticate", digest))
                return .json(#"{"authenticated": false}"#, status: 401, headers: fields)
            }
            guard let field = request.header("Authorization"), field.lowercased().hasPrefix("digest "),
                let answer = Optional(parameters(of: String(field.dropFirst(7)))),
                answer["username"] == user, answer["realm"] == realm, answer["uri"] == request.uri,
                answer["opaque"] == "strata-opaque", let nonce = answer["nonce"], let response = answer["response"]
            else { return challenge(stale: false) }
            func hash(bytes data: Data) -> String {
                let bytes: [UInt8] =
                    algorithm.uppercased().hasPrefix("SHA-256")
                    ? Array(SHA256.hash(data: data)) : Array(Insecure.MD5.hash(data: data))
                return bytes.map { String(format: "%02x", $0) }.joined()
            }
            func hash(_ text: String) -> String { hash(bytes: Data(text.utf8)) }
            let clientNonce = answer["cnonce"] ?? ""
            var secret = hash("\(user):\(realm):\(request.parameters["password"] ?? "")")
            if algorithm.lowercased().hasSuffix("-sess") { secret = hash("\(secret):\(nonce):\(clientNonce)") }
            var requestPart = "\(request.method):\(request.uri)"
            if qop == "auth-int" {
                requestPart += ":" + hash(bytes: Data(request.body))
            }
            let target = hash(requestPart)
            let expected: String
            var count: Int?
            if let qop {
                guard answer["qop"] == qop, let nc = answer["nc"], nc.count == 8, let value = Int(nc, radix: 16)
                else { return challenge(stale: false) }
                count = value
                expected = hash("\(secret):\(nonce):\(nc):\(clientNonce):\(qop):\(target)")
            } else {
                expected = hash("\(secret):\(nonce):\(target)")
            }
            guard response == expected else { return challenge(stale: false) }
            switch nonces.use(nonce, count: count, limit: request.queryValue("nonce-uses").flatMap { Int($0) }) {
            case .accepted: return .json(#"{"authenticated": true, "user": "\#(user)"}"#)
            case .stale: return challenge(stale: request.queryValue("quiet-stale") != "1")
            case .unknown, .replayed: return challenge(stale: false)
            }
        }
    }

    /// The parameters of a field's auth-params (`name=value` or `name="quoted"`), by lowercased name.
    static func parameters(of text: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(text)
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: " ,")).lowercased()
            rest = rest[rest.index(after: equals)...].drop { $0 == " " }
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let character = rest.first, character != "\"" {
                    if character == "\\" { rest = rest.dropFirst() }
                    if let next = rest.first { value.append(next) }
                    rest = rest.dropFirst()
                }
                rest = rest.dropFirst()
            } else {
                value = String(rest.prefix { $0 != "," && $0 != " " })
                rest = rest.dropFirst(value.count)
            }
            result[name] = value
        }
        return result
    }
}
