import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import Strata
import StrataAsyncHTTPClient
import StrataTestServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The transport the integration suite runs over, named by the `STRATA_TRANSPORT` environment
/// variable (`urlsession`, the default, or `asynchttpclient`): `scripts/test.sh` runs the whole
/// suite — loopback tests, fault matrix, load, memory checks — once over each. Where a behaviour
/// differs by transport, the test asks ``current`` and says so.
public enum TestTransport: String, CaseIterable, Sendable, CustomStringConvertible {
    /// ``/StrataSession/URLSessionTransport``.
    case urlSession = "urlsession"
    /// ``/StrataAsyncHTTPClient/AsyncHTTPClientTransport``.
    case asyncHTTPClient = "asynchttpclient"

    /// The transport this run is over.
    public static let current: TestTransport = {
        let name = ProcessInfo.processInfo.environment["STRATA_TRANSPORT"] ?? ""
        return TestTransport(rawValue: name.lowercased()) ?? .urlSession
    }()

    /// The name as `--transport` and `STRATA_TRANSPORT` spell it.
    public var description: String { rawValue }

    /// A new transport of this kind; over `URLSession`, with `configuration`; over AsyncHTTPClient,
    /// with its cookie storage and connections per host, trusting the test authority
    /// (``/StrataTestServer/TestCertificates``) besides the system's, and with `connectTimeout`
    /// for the client's, if given.
    public func makeTransport(
        configuration: URLSessionConfiguration = .ephemeral, serverTrust: (any ServerTrustEvaluator)? = nil,
        connectTimeout: TimeAmount? = nil
    ) -> any Transport {
        switch self {
        case .urlSession:
            return URLSessionTransport(configuration: configuration, serverTrust: serverTrust)
        case .asyncHTTPClient:
            let urlSessionConfiguration = configuration
            var configuration = AsyncHTTPClientTransport.strataConfiguration()
            var tls = TLSConfiguration.makeClientConfiguration()
            if let authority = try? NIOSSLCertificate(bytes: Array(TestCertificates.authority.utf8), format: .pem) {
                tls.additionalTrustRoots = [.certificates([authority])]
            }
            configuration.tlsConfiguration = tls
            if let connectTimeout { configuration.timeout.connect = connectTimeout }
            // The session configuration's connections per host, as `URLSession` would keep them.
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit =
                urlSessionConfiguration.httpMaximumConnectionsPerHost
            // The session configuration's cookie storage, as `URLSession` would keep them: an
            // ephemeral one per transport, so no test's cookies reach another's server.
            return AsyncHTTPClientTransport(
                configuration: configuration, serverTrust: serverTrust,
                cookieStorage: urlSessionConfiguration.httpCookieStorage)
        }
    }
}

extension SessionManager {
    /// A pipeline over a new transport of the kind this run is over (``TestTransport/current``),
    /// with the options of `SessionManager.init(transport:…)`.
    public static func underTest(
        configuration: URLSessionConfiguration = .ephemeral,
        acceptableStatusCodes: Set<Int> = RequestOptions.defaultAcceptableStatusCodes,
        adapters: [any RequestAdapter] = [],
        retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = [],
        redirectPolicy: RedirectPolicy = .follow,
        redaction: Redaction = .standard,
        monitors: [any EventMonitor] = [],
        cache: HTTPCache? = nil
    ) -> SessionManager {
        SessionManager(
            transport: TestTransport.current.makeTransport(configuration: configuration),
            acceptableStatusCodes: acceptableStatusCodes,
            adapters: adapters,
            retriers: retriers,
            interceptors: interceptors,
            redirectPolicy: redirectPolicy,
            redaction: redaction,
            monitors: monitors,
            cache: cache
        )
    }
}
