import Foundation
import ShopData
import ShopDomain
import Strata

/// Builds the object graph once, at launch: one configuration for the chosen environment, the
/// session managers, services and repositories. Everything above it sees only the domain's
/// repository protocols.
public struct CompositionRoot: Sendable {
    /// The configuration in use.
    public let configuration: NetworkConfiguration
    /// The catalogue.
    public let products: any ProductRepository
    /// Orders.
    public let orders: any OrderRepository
    /// The newsletter.
    public let newsletter: any NewsletterRepository
    /// Review attachments.
    public let attachments: any AttachmentRepository
    /// The customer's account.
    public let account: any AccountRepository

    /// Wires the app for `configuration`.
    /// - Parameters:
    ///   - transport: Sends every request, for both session managers: one connection pool.
    ///   - monitors: Told of every request's life, a logger among them (none: silence).
    ///   - didRefreshToken: Called after each token refresh.
    public init(
        configuration: NetworkConfiguration,
        transport: any Transport = URLSessionTransport(),
        monitors: [any EventMonitor] = [],
        didRefreshToken: @escaping @Sendable () -> Void = {}
    ) {
        self.configuration = configuration
        let userAgent = HeadersAdapter(["User-Agent": "StrataExample/1.0"])
        let retries = RetryPolicy(maximumAttempts: 3)

        func transfer(over sessionManager: any NetworkSessionManager) -> any DataTransferService {
            DefaultDataTransferService(
                networkService: DefaultNetworkService(configuration: configuration, sessionManager: sessionManager),
                errorResolver: ShopErrorResolver(),
                completionQueue: .global()
            )
        }

        let publicTransfer = transfer(
            over: SessionManager(transport: transport, adapters: [userAgent], retriers: [retries], monitors: monitors))
        let authentication = AuthenticationInterceptor(
            authenticator: ShopAuthenticator(transfer: publicTransfer, didRefresh: didRefreshToken),
            credential: nil,
            origins: Set([Origin(configuration.baseURL)].compactMap { $0 })
        )
        let protectedTransfer = transfer(
            over: SessionManager(
                transport: transport, adapters: [userAgent], retriers: [retries], interceptors: [authentication],
                monitors: monitors))

        products = RemoteProductRepository(transfer: publicTransfer)
        orders = RemoteOrderRepository(transfer: publicTransfer)
        newsletter = RemoteNewsletterRepository(transfer: publicTransfer)
        attachments = RemoteAttachmentRepository(transfer: publicTransfer)
        account = RemoteAccountRepository(
            transfer: publicTransfer, protectedTransfer: protectedTransfer, authentication: authentication)
    }
}
