import Foundation
import NIOConcurrencyHelpers

/// The state behind the standard routes that remember something: issued tokens and attempt
/// counters. Tests read it to count refreshes or attempts.
public final class ServerState: Sendable {
    private struct Tokens: Sendable {
        var valid: Set<String> = []
        var refreshTokens: Set<String> = []
        var issued = 0
        var refreshed = 0
        var all: [String] = []
    }

    private let tokens = NIOLockedValueBox(Tokens())
    private let attempts = NIOLockedValueBox<[String: Int]>([:])
    private let streamed = NIOLockedValueBox<[String: Int]>([:])

    init() {}

    /// How many access tokens were issued by a password grant.
    public var issuedTokenCount: Int { tokens.withLockedValue { $0.issued } }
    /// How many access tokens were issued by a refresh.
    public var refreshCount: Int { tokens.withLockedValue { $0.refreshed } }

    /// Every access and refresh token issued so far.
    public var issuedTokens: [String] { tokens.withLockedValue { $0.all } }

    /// How many requests arrived with attempt key `key`.
    public func attemptCount(for key: String) -> Int {
        attempts.withLockedValue { $0[key] ?? 0 }
    }

    /// How many body bytes the server has written for streams with key `key` (`/endless?key=`).
    public func streamedBytes(for key: String) -> Int {
        streamed.withLockedValue { $0[key] ?? 0 }
    }

    func countStreamed(_ bytes: Int, for key: String) {
        streamed.withLockedValue { $0[key, default: 0] += bytes }
    }

    func countAttempt(for key: String) -> Int {
        attempts.withLockedValue { counts in
            counts[key, default: 0] += 1
            return counts[key] ?? 0
        }
    }

    func issueTokens(refreshing: Bool) -> (access: String, refresh: String) {
        let access = "access-" + UUID().uuidString
        let refresh = "refresh-" + UUID().uuidString
        tokens.withLockedValue { tokens in
            tokens.valid.insert(access)
            tokens.refreshTokens.insert(refresh)
            tokens.all += [access, refresh]
            if refreshing { tokens.refreshed += 1 } else { tokens.issued += 1 }
        }
        return (access, refresh)
    }

    func redeem(refreshToken: String) -> Bool {
        tokens.withLockedValue { $0.refreshTokens.remove(refreshToken) != nil }
    }

    /// Whether `accessToken` was issued and has not expired.
    public func isValid(accessToken: String) -> Bool {
        tokens.withLockedValue { $0.valid.contains(accessToken) }
    }

    /// Makes every access token issued so far invalid, as if they had expired.
    public func expireAccessTokens() {
        tokens.withLockedValue { $0.valid.removeAll() }
    }
}
