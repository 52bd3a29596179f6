import Foundation
import StrataCore

#if canImport(Security)
    import Security
#endif

/// Decides whether to trust a server's certificate chain: certificate or public-key pinning, a
/// private certificate authority.
///
/// A transport asks its evaluator during the TLS handshake of every `https` request, before
/// anything is sent; throwing refuses the server and the request fails with the error (as
/// `NetworkError.serverTrust` above the session layer). It may take its time (a revocation check):
/// the request waits for it, within its deadline. ``URLSessionTransport`` asks on its session's
/// delegate queue; the `AsyncHTTPClientTransport` on a queue of its own, never on an event loop.
///
/// **Platforms.** ``URLSessionTransport`` asks the evaluator on Apple platforms, where `URLSession`
/// exposes the chain. On Linux, FoundationNetworking exposes no server trust at all: a
/// `URLSessionTransport` given an evaluator there refuses every `https` request with
/// ``ServerTrustError/evaluationUnavailable`` and sends nothing, rather than silently trusting what
/// it cannot check. (Plain `http` requests have no chain and are sent.) The `AsyncHTTPClientTransport`
/// of the StrataAsyncHTTPClient package asks the evaluator on every platform, Linux included, once
/// for each TLS connection, showing it the server's own certificate.
///
/// ```swift
/// #if canImport(Security)
///     let pinned = URLSessionTransport(serverTrust: PublicKeyPinning(keys: [apiKey]))
///     let manager = SessionManager(transport: pinned)
/// #endif
/// ```
public protocol ServerTrustEvaluator: Sendable {
    /// Returns if `chain` is trusted for its host; throws to refuse it.
    func evaluate(_ chain: ServerTrustChain) throws(ServerTrustError)
}

/// A server's certificate chain, as a transport shows it to a ``ServerTrustEvaluator``.
public struct ServerTrustChain: @unchecked Sendable {  // Sendable: `trust` is only read, never changed.
    /// The host the request went to.
    public let host: String
    /// The certificates the server presented, DER-encoded, its own first.
    public let certificates: [Data]
    #if canImport(Security)
        /// The platform's trust object, for evaluations of its own (`SecTrustEvaluateWithError`).
        public let trust: SecTrust?
    #endif

    #if canImport(Security)
        /// Describes a chain.
        public init(host: String, certificates: [Data], trust: SecTrust? = nil) {
            self.host = host
            self.certificates = certificates
            self.trust = trust
        }
    #else
        /// Describes a chain.
        public init(host: String, certificates: [Data]) {
            self.host = host
            self.certificates = certificates
        }
    #endif
}

/// Why a server was not trusted.
public enum ServerTrustError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// The transport cannot show the server's certificates (`URLSessionTransport` on Linux), so an
    /// evaluator could not be asked and the request was not sent.
    case evaluationUnavailable
    /// The platform's own evaluation (the system's roots, expiry, the host name) refused the chain.
    case defaultEvaluationFailed(host: String)
    /// None of the server's keys is a pinned one.
    case noPinnedKey(host: String)
    /// An evaluator of your own refused the chain, for this reason.
    case refused(host: String, reason: String)

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .evaluationUnavailable:
            return "The server's certificates cannot be evaluated here (FoundationNetworking on Linux exposes no "
                + "server trust), so the request was not sent."
        case .defaultEvaluationFailed(let host):
            return "The certificate chain of \(host) is not trusted by the system."
        case .noPinnedKey(let host):
            return "No public key in the certificate chain of \(host) is a pinned one."
        case .refused(let host, let reason):
            return "The certificate chain of \(host) was refused: \(reason)"
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}

/// Trusts a server only if its chain holds one of the pinned certificates: certificate pinning, on
/// every platform and with every transport that shows the chain.
///
/// Pin the server's own certificate (the first of a ``ServerTrustChain``, the only one some
/// transports show), and its successor before a renewal, so that both are accepted during the
/// change. The transport's own verification (trust roots, expiry, host name) runs first.
///
/// ```swift
/// let pinning = CertificatePinning(certificates: [serverCertificateDER])
/// ```
public struct CertificatePinning: ServerTrustEvaluator {
    /// The certificates, DER-encoded, one of which the chain must hold.
    public let certificates: Set<Data>

    /// Pins `certificates`, DER-encoded.
    public init(certificates: some Sequence<Data>) {
        self.certificates = Set(certificates)
    }

    /// Throws unless the chain holds a pinned certificate.
    public func evaluate(_ chain: ServerTrustChain) throws(ServerTrustError) {
        guard chain.certificates.contains(where: certificates.contains) else {
            throw .refused(host: chain.host, reason: "no certificate in the chain is a pinned one")
        }
    }
}

#if canImport(Security)
    /// Trusts a server only if its chain passes the system's evaluation and holds one of the pinned
    /// public keys.
    ///
    /// Pin the keys of your own certificate authority, or of the server and its next certificate,
    /// so that a routine certificate renewal keeps the key.
    public struct PublicKeyPinning: ServerTrustEvaluator, @unchecked Sendable {  // Sendable: `SecKey`s are immutable.
        /// The keys one of which the chain must hold.
        public let keys: [SecKey]
        /// Whether the system's evaluation must pass too (roots, expiry, host name). `true` by default.
        public let performsDefaultEvaluation: Bool

        /// Pins `keys`.
        public init(keys: [SecKey], performsDefaultEvaluation: Bool = true) {
            self.keys = keys
            self.performsDefaultEvaluation = performsDefaultEvaluation
        }

        /// Throws unless the chain is trusted and holds a pinned key.
        public func evaluate(_ chain: ServerTrustChain) throws(ServerTrustError) {
            guard let trust = chain.trust else { throw .evaluationUnavailable }
            if performsDefaultEvaluation {
                var error: CFError?
                guard SecTrustEvaluateWithError(trust, &error) else { throw .defaultEvaluationFailed(host: chain.host) }
            }
            let certificates = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
            let presented = certificates.compactMap { SecCertificateCopyKey($0) }
            guard presented.contains(where: { key in keys.contains(key) }) else {
                throw .noPinnedKey(host: chain.host)
            }
        }
    }
#endif
