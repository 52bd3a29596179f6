import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import StrataSession

extension HTTPClient.Configuration {
    /// Asks `evaluator` about the server of every TLS connection the client makes, after NIOSSL has
    /// verified its certificate against the trust roots of ``tlsConfiguration``, before any request
    /// is sent on it: the trust hook of Strata's seam (``/StrataSession/ServerTrustEvaluator``), for
    /// certificate pinning on Linux as well.
    ///
    /// The evaluator sees the certificate the server presented (its own, DER-encoded: NIOSSL shows
    /// no more of the chain) and, as the host, the server's IP address (AsyncHTTPClient does not
    /// tell a connection's host name; NIOSSL has checked the name against the certificate). A
    /// refusal fails the connection and the requests waiting for it with the evaluator's error.
    /// Connection establishment is then not retried (`retryConnectionEstablishment`), so that a
    /// refusal is reported at once rather than at the request's deadline. Debug initializers set
    /// before still run, first.
    public mutating func evaluatesServerTrust(with evaluator: any ServerTrustEvaluator) {
        connectionPool.retryConnectionEstablishment = false
        http1_1ConnectionDebugInitializer = Self.evaluating(evaluator, after: http1_1ConnectionDebugInitializer)
        http2ConnectionDebugInitializer = Self.evaluating(evaluator, after: http2ConnectionDebugInitializer)
    }

    private static func evaluating(
        _ evaluator: any ServerTrustEvaluator,
        after previous: (@Sendable (any Channel) -> EventLoopFuture<Void>)?
    ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        { channel in
            let ready = previous?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            return ready.hop(to: channel.eventLoop).flatMapThrowing {
                // No TLS handler: a plain `http` connection, with nothing to evaluate.
                guard let handler = try? channel.pipeline.syncOperations.handler(type: NIOSSLHandler.self) else {
                    return
                }
                let host = channel.remoteAddress?.ipAddress ?? "unknown"
                let certificates = try handler.peerCertificate.map { [Data(try $0.toDERBytes())] } ?? []
                try evaluator.evaluate(ServerTrustChain(host: host, certificates: certificates))
            }
        }
    }
}
