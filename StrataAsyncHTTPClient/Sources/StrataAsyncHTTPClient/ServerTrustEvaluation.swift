import AsyncHTTPClient
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import StrataSession

extension HTTPClient.Configuration {
    /// Asks `evaluator` about the server of every TLS connection the client makes, after NIOSSL has
    /// verified its certificate against the trust roots of ``tlsConfiguration`` and the request's
    /// host name, before any request is sent on it: the trust hook of Strata's seam
    /// (``/StrataSession/ServerTrustEvaluator``), for certificate pinning on Linux as well.
    ///
    /// The evaluator sees the certificate the server presented (its own, DER-encoded: NIOSSL shows
    /// no more of the chain) and, as ``/StrataSession/ServerTrustChain/host``, the host the request
    /// went to — the name in its URL (`api.example.com`), not the address it resolved to — so an
    /// evaluator can pin per host name. AsyncHTTPClient tells a connection's initializer nothing of
    /// its host, so the evaluation runs as the connection's first request head goes out (once for an
    /// HTTP/1 connection, whose requests all go to one host; once per stream over HTTP/2), and a
    /// refusal fails that request with the evaluator's error and closes the connection. The evaluator
    /// runs on a queue of its own, never on an event loop: one that takes its time holds up the
    /// connection it decides about, not the loop's other connections. Connection establishment is
    /// not retried (`retryConnectionEstablishment`), so that a refusal is reported
    /// at once rather than at the request's deadline. Debug initializers set before still run, first.
    ///
    /// It also checks the request's host against the names the certificate was issued for, as
    /// ``verifiesServerHostNames()`` does.
    public mutating func evaluatesServerTrust(with evaluator: any ServerTrustEvaluator) {
        connectionPool.retryConnectionEstablishment = false
        checksServers(evaluator: evaluator)
    }

    /// Checks, before the first request on every TLS connection, that the certificate was issued for
    /// the request's host, as RFC 6125 says: a host name against the certificate's DNS names (a
    /// wildcard standing for one whole left-most label), an IP address against its IP addresses.
    ///
    /// NIOSSL's own check also accepts a certificate issued for the *address* the name resolved to,
    /// whatever the name: one for `203.0.113.7` passes for `api.example.com` when DNS sends that
    /// name there. This closes that gap. A refusal fails the request with
    /// ``/StrataSession/ServerTrustError/refused(host:reason:)``, naming what the certificate is
    /// for. ``AsyncHTTPClientTransport`` applies it to every client it creates; call it on the
    /// configuration of a client you pass in. Nothing is checked when the configuration's
    /// `certificateVerification` is not `.fullVerification`, or for a certificate without subject
    /// alternative names (NIOSSL matched its common name to the host already).
    public mutating func verifiesServerHostNames() {
        checksServers(evaluator: nil)
    }

    /// Installs the ``ServerTrustGate`` on every TLS connection (and HTTP/2 stream).
    mutating func checksServers(evaluator: (any ServerTrustEvaluator)?) {
        let verifiesHostNames = (tlsConfiguration?.certificateVerification ?? .fullVerification) == .fullVerification
        guard verifiesHostNames || evaluator != nil else { return }
        let checks = ServerTrustGate.Checks(verifiesHostNames: verifiesHostNames, evaluator: evaluator)
        http1_1ConnectionDebugInitializer = Self.gating(checks, after: http1_1ConnectionDebugInitializer) {
            try $0.handler(type: HTTPRequestEncoder.self)
        }
        http2StreamChannelDebugInitializer = Self.gating(checks, after: http2StreamChannelDebugInitializer) {
            try $0.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
        }
    }

    /// An initializer that runs `previous`, then puts a ``ServerTrustGate`` right behind the handler
    /// `encoder` finds (where requests are still heads and bodies) in a TLS channel or stream.
    private static func gating(
        _ checks: ServerTrustGate.Checks,
        after previous: (@Sendable (any Channel) -> EventLoopFuture<Void>)?,
        behind encoder: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> any ChannelHandler
    ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        chaining(after: previous) { channel in
            // The TLS handler is the connection's: a stream's parent holds it. Without one, a
            // plain `http` connection, there is nothing to evaluate.
            let connection = channel.parent ?? channel
            guard let tls = try? connection.pipeline.syncOperations.handler(type: NIOSSLHandler.self) else {
                return
            }
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(
                ServerTrustGate(checks: checks, certificate: tls.peerCertificate),
                position: .after(try encoder(operations)))
        }
    }

    /// A debug initializer that runs `previous` (one set before, if any), then `install` on the
    /// channel's event loop: how Strata adds its handlers to a client's connections and streams
    /// without taking the initializers a caller set.
    static func chaining(
        after previous: (@Sendable (any Channel) -> EventLoopFuture<Void>)?,
        _ install: @escaping @Sendable (any Channel) throws -> Void
    ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        { channel in
            let ready = previous?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            return ready.hop(to: channel.eventLoop).flatMapThrowing { try install(channel) }
        }
    }
}

/// Holds back a TLS connection's first request head until the server's certificate has passed the
/// checks for the request's host (its `Host` field, without the port): issued for that host, and
/// accepted by the evaluator. A refusal fails the request with its error and closes the connection.
///
/// The evaluator runs on a queue of its own, not on the event loop: an evaluator that takes its
/// time (a revocation check, a lock held elsewhere) holds up this connection's writes, which wait
/// here for its verdict, and nothing else of the loop's — other connections, a server sharing the
/// loops. A connection closed meanwhile (a deadline) fails what waited, and the late verdict finds
/// nothing to do.
final class ServerTrustGate: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// What the gate checks.
    struct Checks: Sendable {
        /// Whether the certificate must be issued for the request's host (RFC 6125).
        var verifiesHostNames: Bool
        /// The evaluator to ask after that, if any.
        var evaluator: (any ServerTrustEvaluator)?
    }

    /// The writes held back while the evaluator decides, and whether a flush came among them.
    private struct Held {
        var writes: [(data: NIOAny, promise: EventLoopPromise<Void>?)]
        var flushes = false
    }

    private let checks: Checks
    private let certificate: NIOSSLCertificate?
    /// The verdict for the host of the requests on this channel, once given.
    private var verdict: (host: String, refusal: ServerTrustError?)?
    /// Set while the evaluator decides.
    private var held: Held?
    /// Whether the gate is still in its channel's pipeline: a verdict that comes after the channel
    /// went is not taken to its event loop, which may have been shut down since.
    private let inPipeline = NIOLockedValueBox(true)

    init(checks: Checks, certificate: NIOSSLCertificate?) {
        self.checks = checks
        self.certificate = certificate
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if held != nil {
            held?.writes.append((data, promise))
            return
        }
        if case .head(let head) = unwrapOutboundIn(data) {
            let host = Self.host(ofField: head.headers.first(name: "Host") ?? "")
            if verdict?.host != host {
                do {
                    try verifyHostName(host)
                    if let evaluator = checks.evaluator {
                        held = Held(writes: [(data, promise)])
                        evaluate(host, with: evaluator, context: context)
                        return
                    }
                    verdict = (host, nil)
                } catch {
                    verdict = (host, error)
                }
            }
        }
        guard let refusal = verdict?.refusal else { return context.write(data, promise: promise) }
        promise?.fail(refusal)
        context.fireErrorCaught(refusal)
        context.close(promise: nil)
    }

    func flush(context: ChannelHandlerContext) {
        guard held == nil else {
            held?.flushes = true
            return
        }
        context.flush()
    }

    /// The channel is closing (a cancelled request, a deadline): what waited for a verdict fails,
    /// and nothing is written once the verdict comes.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode != .input { failHeldWrites() }
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        inPipeline.withLockedValue { $0 = false }
        failHeldWrites()
    }

    private func failHeldWrites() {
        guard let writes = held?.writes else { return }
        held = nil
        for write in writes { write.promise?.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Throws unless the certificate was issued for `host`, when host names are checked.
    private func verifyHostName(_ host: String) throws(ServerTrustError) {
        guard checks.verifiesHostNames, let certificate else { return }
        try ServerIdentity(certificate).verify(host)
    }

    /// Asks `evaluator` about `host` on a queue of its own, then, on the channel's loop, writes what
    /// waited — or fails it, if refused.
    private func evaluate(_ host: String, with evaluator: any ServerTrustEvaluator, context: ChannelHandlerContext) {
        let der: [Data]
        do {
            der = try certificate.map { [Data(try $0.toDERBytes())] } ?? []
        } catch {
            return decide(
                host, refusal: .refused(host: host, reason: "its certificate could not be read (\(error))"),
                context: context)
        }
        let loop = context.eventLoop
        let gate = NIOLoopBound((self, context), eventLoop: loop)
        DispatchQueue(label: "Strata.AsyncHTTPClientTransport.serverTrust").async { [inPipeline] in
            let refusal: ServerTrustError?
            do throws(ServerTrustError) {
                try evaluator.evaluate(ServerTrustChain(host: host, certificates: der))
                refusal = nil
            } catch {
                refusal = error
            }
            guard inPipeline.withLockedValue({ $0 }) else { return }
            loop.execute {
                let (waiting, context) = gate.value
                waiting.decide(host, refusal: refusal, context: context)
            }
        }
    }

    /// Takes the verdict for `host` and sends on, through ``write(context:data:promise:)``, what
    /// waited for it; nothing when the channel went meanwhile.
    private func decide(_ host: String, refusal: ServerTrustError?, context: ChannelHandlerContext) {
        guard let waited = held else { return }
        held = nil
        verdict = (host, refusal)
        for write in waited.writes { self.write(context: context, data: write.data, promise: write.promise) }
        if waited.flushes { flush(context: context) }
    }

    /// The host of a `Host` field: without its port, and an IPv6 address without its brackets.
    static func host(ofField field: String) -> String {
        let field = field.trimmingCharacters(in: .whitespaces)
        if field.hasPrefix("["), let close = field.firstIndex(of: "]") {
            return String(field[field.index(after: field.startIndex)..<close])
        }
        return String(field.prefix { $0 != ":" })
    }
}

/// The names and addresses a certificate was issued for (its subject alternative names), and the
/// check of a host against them as RFC 6125 §6 says.
struct ServerIdentity {
    /// DNS names, lowercased, without a trailing dot.
    var names: [String] = []
    /// IP addresses, as their 4 or 16 bytes.
    var addresses: [[UInt8]] = []

    /// Reads the names of `certificate` (NIOSSL parses them; its `_subjectAlternativeNames` is the
    /// one way it shows them).
    init(_ certificate: NIOSSLCertificate) {
        for name in certificate._subjectAlternativeNames() {
            let bytes = name.contents.withUnsafeBufferPointer { Array($0) }
            switch name.nameType {
            case .dnsName: names.append(Self.normalized(String(decoding: bytes, as: UTF8.self)))
            case .ipAddress: addresses.append(bytes)
            default: continue
            }
        }
    }

    init(names: [String], addresses: [[UInt8]]) {
        self.names = names.map(Self.normalized)
        self.addresses = addresses
    }

    /// Throws unless the certificate was issued for `host`: an IP address among its addresses, a
    /// name among its names, a `*.` name standing for exactly one whole left-most label. A
    /// certificate with no subject alternative names passes (NIOSSL matched its common name).
    func verify(_ host: String) throws(ServerTrustError) {
        guard !names.isEmpty || !addresses.isEmpty else { return }
        if let address = Self.address(host) {
            guard addresses.contains(address) else { throw refusal(host) }
            return
        }
        let host = Self.normalized(host)
        let matches = names.contains { name in
            if name == host { return true }
            guard name.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
            let suffix = name.dropFirst(2)
            // `*.com` stands for no host: a wildcard needs a name of two labels after it.
            return suffix.contains(".") && host[host.index(after: dot)...] == suffix && dot > host.startIndex
        }
        guard matches else { throw refusal(host) }
    }

    private func refusal(_ host: String) -> ServerTrustError {
        let issued = names + addresses.map(Self.text)
        let shown = issued.prefix(5).joined(separator: ", ") + (issued.count > 5 ? ", …" : "")
        return .refused(host: host, reason: "its certificate was issued for \(shown), not for this host")
    }

    private static func normalized(_ name: String) -> String {
        let lowercased = name.lowercased()
        return lowercased.hasSuffix(".") ? String(lowercased.dropLast()) : lowercased
    }

    /// The bytes of `host` if it is an IPv4 or IPv6 address.
    static func address(_ host: String) -> [UInt8]? {
        let host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let address = try? SocketAddress(ipAddress: host, port: 0) {
            switch address {
            case .v4(let v4): return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
            case .v6(let v6): return withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            case .unixDomainSocket: return nil
            }
        }
        return nil
    }

    /// An address as text: dotted for IPv4, hex groups for IPv6.
    private static func text(_ address: [UInt8]) -> String {
        if address.count == 4 { return address.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: address.count, by: 2).map {
            String(Int(address[$0]) << 8 | Int(address[min($0 + 1, address.count - 1)]), radix: 16)
        }.joined(separator: ":")
    }
}
