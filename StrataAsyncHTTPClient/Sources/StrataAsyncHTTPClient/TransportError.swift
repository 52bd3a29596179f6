import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
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
            return URLError(code(for: error), userInfo: userInfo)
        }
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
        case let error as NIOSSLError:
            if case .handshakeFailed = error { return .serverCertificateUntrusted }
            return .secureConnectionFailed
        case is NIOSSLExtraError, is BoringSSLError: return .secureConnectionFailed
        default: return .unknown
        }
    }
}
