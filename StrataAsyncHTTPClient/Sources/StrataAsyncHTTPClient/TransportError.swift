import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import StrataCore
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AsyncHTTPClientTransport {
    /// The error an attempt to `url` reports for what AsyncHTTPClient or NIO threw: a `URLError`
    /// with the code `URLSession` gives for the same failure and, as its errors do, the failing URL,
    /// the original under `NSUnderlyingErrorKey`, so that retriers and resolvers need not know the
    /// transport. A ``/StrataSession/ServerTrustError``, an ``AsyncHTTPClientTransportError``, a
    /// `URLError` and a file system error pass unchanged.
    static func transportError(_ error: any Error, url: URL?) -> any Error {
        switch error {
        case is ServerTrustError, is AsyncHTTPClientTransportError, is URLError, is CocoaError,
            is RequestValidationError:
            return error
        default:
            var userInfo: [String: Any] = [NSUnderlyingErrorKey: error]
            userInfo[NSURLErrorFailingURLErrorKey] = url
            userInfo[NSLocalizedDescriptionKey] = detail(of: error)
            return URLError(code(for: error), userInfo: userInfo)
        }
    }

    /// What AsyncHTTPClient's, NIO's or NIOSSL's error says, in words (Foundation on Linux gives a
    /// `URLError` no description of its own): why a certificate was refused, which timeout fired,
    /// what the system said of a connection.
    static func detail(of error: any Error) -> String? {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded: return "the request's deadline passed"
            case .readTimeout: return "no byte arrived within the client's read timeout"
            case .writeTimeout: return "the request could not be written within the client's write timeout"
            case .connectTimeout: return "connecting took longer than the client's connect timeout"
            case .tlsHandshakeTimeout: return "the TLS handshake took longer than the client allows"
            case .getConnectionFromPoolTimeout: return "no connection of the client's pool became free in time"
            case .remoteConnectionClosed: return "the server closed the connection"
            case .requestStreamCancelled: return "the exchange ended before the request body was sent"
            case .bodyLengthMismatch: return "the body's length differs from its Content-Length"
            case .emptyHost: return "the URL has no host"
            case .alreadyShutdown: return "the client has been shut down"
            default: return "\(error)"
            }
        case let error as NIOConnectionError:
            if error.dnsAError != nil || error.dnsAAAAError != nil {
                return "the host \(error.host) could not be resolved"
            }
            let reasons = error.connectionErrors.map { "\($0.target): \(detail(of: $0.error) ?? "\($0.error)")" }
            return "no connection to \(error.host) port \(error.port)"
                + (reasons.isEmpty ? "" : " (" + reasons.joined(separator: "; ") + ")")
        case let error as IOError:
            return String(cString: strerror(error.errnoCode)).lowercased() + " (errno \(error.errnoCode))"
        case let error as NIOSSLError:
            if case .handshakeFailed(let reason) = error { return tlsReason(reason) }
            return "TLS failed: \(error)"
        case let error as BoringSSLError:
            return tlsReason(error)
        case let error as NIOSSLExtraError:
            return "TLS failed: \(error)"
        case let error as HTTPParserError:
            return error == .invalidEOFState
                ? "the connection closed inside the response" : "unparsable response: \(error)"
        case is NIOHTTPDecompression.DecompressionError, is NIOHTTPDecompression.ExtraDecompressionError:
            return "its content coding could not be decoded, or it decodes to more than 500 times its size"
        case let error as NIOHTTP2Errors.StreamClosed:
            return "the server reset the HTTP/2 stream (\(error.errorCode))"
        case let error as any NIOHTTP2Error:
            // Its type alone: some of these errors hold a header field's value, which may be a
            // credential or hold control characters.
            return "the HTTP/2 exchange failed (\(type(of: error)))"
        default:
            return nil
        }
    }

    /// Why TLS refused the server, from BoringSSL's error queue: its reasons in words.
    private static func tlsReason(_ error: BoringSSLError) -> String {
        let text = "\(error)"
        if refusesCertificate(error) {
            return "its certificate chain does not verify against the trusted roots (an authority not trusted "
                + "here, an expired certificate or one not yet valid)"
        }
        // `error:1000007d:SSL routines:OPENSSL_internal:REASON at file:line`: the reasons, in words.
        let reasons = text.components(separatedBy: "OPENSSL_internal:").dropFirst().map { part in
            part.prefix { $0.isUppercase || $0 == "_" || $0.isNumber }.lowercased()
                .replacingOccurrences(of: "_", with: " ")
        }.filter { !$0.isEmpty }
        return "TLS handshake failed" + (reasons.isEmpty ? "" : ": " + reasons.joined(separator: ", "))
    }

    /// Whether TLS failed because the server's certificate chain did not verify, rather than for
    /// a handshake that went wrong otherwise (a server answering in plain HTTP on the port, one
    /// that closed).
    private static func refusesCertificate(_ error: BoringSSLError) -> Bool {
        "\(error)".contains("CERTIFICATE_VERIFY_FAILED")
    }

    /// The `URLError` code for an error of AsyncHTTPClient, NIO, NIOSSL or the decompressor.
    static func code(for error: any Error) -> URLError.Code {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .cancelled, .alreadyShutdown: return .cancelled
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return .timedOut
            case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath: return .badURL
            // The exchange ended before the request body was sent.
            case .remoteConnectionClosed, .requestStreamCancelled: return .networkConnectionLost
            case .bodyLengthMismatch: return .networkConnectionLost
            case .proxyAuthenticationRequired: return .userAuthenticationRequired
            default:
                return error.description.contains("unsupportedScheme") ? .unsupportedURL : .badServerResponse
            }
        case let error as NIOConnectionError:
            return error.dnsAError != nil || error.dnsAAAAError != nil ? .cannotFindHost : .cannotConnectToHost
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return .timedOut
            case .connectPending, .inappropriateOperationForState, .operationUnsupported, .unknownLocalAddress,
                .badMulticastGroupAddressFamily, .badInterfaceAddressFamily, .illegalMulticastAddress,
                .multicastNotSupported:
                return .cannotConnectToHost
            default: return .networkConnectionLost
            }
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL: return .cannotConnectToHost
            case ETIMEDOUT: return .timedOut
            default: return .networkConnectionLost
            }
        case let error as HTTPParserError:
            // End of file inside a message: the connection closed before the body's end.
            return error == .invalidEOFState ? .networkConnectionLost : .badServerResponse
        case is NIOHTTPDecompression.DecompressionError, is NIOHTTPDecompression.ExtraDecompressionError:
            return .cannotDecodeContentData
        // A refused certificate, as Apple's `URLSession` says; any other TLS failure is no
        // certificate's fault (a server answering plain HTTP on the port, a close mid-handshake).
        case let error as NIOSSLError:
            if case .handshakeFailed(let reason) = error, refusesCertificate(reason) {
                return .serverCertificateUntrusted
            }
            return .secureConnectionFailed
        case let error as BoringSSLError:
            return refusesCertificate(error) ? .serverCertificateUntrusted : .secureConnectionFailed
        case let error as NIOSSLExtraError:
            return error == .failedToValidateHostname ? .serverCertificateUntrusted : .secureConnectionFailed
        // Over HTTP/2, which a client configured with `httpVersion = .automatic` may speak.
        case is NIOHTTP2Errors.StreamClosed: return .networkConnectionLost
        case is any NIOHTTP2Error: return .badServerResponse
        default: return .unknown
        }
    }
}
