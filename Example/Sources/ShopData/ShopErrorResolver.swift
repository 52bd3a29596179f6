import Foundation
import ShopDomain
import Strata

/// Turns the API's error responses into ``ShopDomain/ShopError``s, reading the error body
/// (`{"error": "out_of_stock", "available": 3}`) where there is one.
public struct ShopErrorResolver: DataTransferErrorResolver {
    /// Creates the resolver.
    public init() {}

    /// The shop error a failed response stands for; errors without a response are left as they are.
    public func resolve(error: NetworkError) -> any Error {
        guard let response = error.response else { return error }
        let body = try? JSONDecoder().decode(ShopErrorBody.self, from: response.body)
        switch (response.statusCode, body?.error) {
        case (409, "out_of_stock"):
            return ShopError.outOfStock(available: body?.available ?? 0)
        case (400, _), (422, _):
            return ShopError.invalidInput(body?.message ?? "the server answered \(response.statusCode)")
        case (401, _):
            return ShopError.signInRequired
        case (500..., _):
            return ShopError.unavailable
        default:
            return error
        }
    }
}

extension ShopError {
    /// The shop error for a failed request: what the ``ShopErrorResolver`` made of a response, or the
    /// transport failure in the shop's terms.
    public init(_ error: DataTransferError) {
        switch error {
        case .resolvedNetworkFailure(let resolved as ShopError):
            self = resolved
        case .networkFailure(.cancelled):
            self = .cancelled
        case .networkFailure(.notConnected), .networkFailure(.timedOut), .networkFailure(.transport):
            self = .offline
        case .networkFailure(.underlying(let underlying))
        where underlying is AuthenticationError || underlying is DataTransferError:
            // The credential is missing, or refreshing it failed or timed out.
            self = .signInRequired
        default:
            self = .unexpected(error.localizedDescription)
        }
    }
}

/// A Strata request handle, as the domain's ``ShopDomain/Cancellable``.
struct RequestHandle: Cancellable {
    let request: any NetworkCancellable

    func cancel() {
        request.cancel()
    }
}
