import Foundation
import ShopDomain
import Strata

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The shop's OAuth-style tokens.
public struct ShopCredential: AuthenticationCredential, Hashable {
    /// The bearer token sent with each request.
    public let accessToken: String
    /// The token that obtains a new access token.
    public let refreshToken: String

    /// Creates a credential.
    public init(accessToken: String, refreshToken: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }

    /// `false`: the shop's tokens carry no expiry date; a `401` tells when one has expired.
    public var requiresRefresh: Bool { false }
}

/// Applies the shop's bearer token and refreshes it through `auth/token`.
///
/// Refreshing uses its own data-transfer service, one without the authentication interceptor, so a
/// refresh is never itself held waiting for a refresh.
public struct ShopAuthenticator: Authenticator {
    private let transfer: any DataTransferService
    private let didRefresh: @Sendable () -> Void

    /// Creates the authenticator.
    /// - Parameters:
    ///   - transfer: The service refresh requests are sent through.
    ///   - didRefresh: Called after each successful refresh.
    public init(transfer: any DataTransferService, didRefresh: @escaping @Sendable () -> Void = {}) {
        self.transfer = transfer
        self.didRefresh = didRefresh
    }

    /// Sets `Authorization: Bearer <access token>`.
    public func apply(_ credential: ShopCredential, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.accessToken)", forHTTPHeaderField: "Authorization")
    }

    /// Exchanges the refresh token for new tokens.
    public func refresh(
        _ credential: ShopCredential, completion: @escaping @Sendable (Result<ShopCredential, any Error>) -> Void
    ) {
        transfer.request(with: AccountEndpoints.refresh(credential.refreshToken)) { [didRefresh] result in
            switch result {
            case .success(let tokens):
                didRefresh()
                completion(
                    .success(ShopCredential(accessToken: tokens.access_token, refreshToken: tokens.refresh_token)))
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    /// Whether `request` carries `credential`'s access token.
    public func isRequest(_ request: URLRequest, authenticatedWith credential: ShopCredential) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.accessToken)"
    }
}
