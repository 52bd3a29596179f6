import Foundation
import Testing

@testable import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// FoundationNetworking's errors get the codes Apple's `URLSession` gives for the same failure, with
/// libcurl's message kept: a refused certificate is no unknown error, an answer that is not
/// HTTP is no fault of the URL's, and a connection lost mid-answer is said to be.
@Suite struct URLSessionErrorCodeTests {
    @Test(arguments: [
        (
            "SSL certificate problem: unable to get local issuer certificate", URLError.Code.unknown,
            URLError.Code.serverCertificateUntrusted
        ),
        (
            "SSL: no alternative certificate subject name matches target host name", .unknown,
            .serverCertificateUntrusted
        ),
        ("SSL connect error", .unknown, .secureConnectionFailed),
        // libcurl 7.88 with OpenSSL 3, for a server that speaks plain HTTP on the port, and for
        // one that closes during the handshake; later curls begin such messages with "TLS".
        ("OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number", .unknown, .secureConnectionFailed),
        ("OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to 127.0.0.1:443", .unknown, .secureConnectionFailed),
        (
            "OpenSSL/3.0.19: error:0A000086:SSL routines::certificate verify failed", .unknown,
            .serverCertificateUntrusted
        ),
        ("TLS connect error: error:0A00010B:SSL routines::wrong version number", .unknown, .secureConnectionFailed),
        // A connection reset as it was made (a refused one FoundationNetworking tells itself).
        (
            "Failed to connect to 127.0.0.1 port 8443 after 0 ms: Couldn't connect to server", .unknown,
            .cannotConnectToHost
        ),
        ("Unsupported HTTP version in response", .unsupportedURL, .badServerResponse),
        ("Unsupported response code in HTTP response", .unsupportedURL, .badServerResponse),
        ("Received HTTP/0.9 when not allowed", .unsupportedURL, .badServerResponse),
        ("Protocol \"gopher\" not supported", .unsupportedURL, .unsupportedURL),
        ("Recv failure: Connection reset by peer", .unknown, .networkConnectionLost),
        ("Send failure: Broken pipe", .unknown, .networkConnectionLost),
        ("Send failure: Connection reset by peer", .unknown, .networkConnectionLost),
        ("transfer closed with 2097198 bytes remaining to read", .unknown, .networkConnectionLost),
        ("transfer closed with outstanding read data remaining", .unknown, .networkConnectionLost),
        ("Failed writing body", .unknown, .unknown),
        // A close before any byte of the answer: what a reused connection the server had closed
        // gives, and what Apple's URLSession and AsyncHTTPClient's transport call lost.
        ("Empty reply from server", .badServerResponse, .networkConnectionLost),
        ("Illegal or missing hexadecimal sequence in chunked-encoding", .unknown, .badServerResponse),
        ("Malformed encoding found in chunked-encoding", .unknown, .badServerResponse),
        ("Too large response headers: 307212 > 307200", .unknown, .badServerResponse),
        ("Failed writing header", .unknown, .badServerResponse),
        ("Header without colon", .unknown, .badServerResponse),
        ("Nul byte in header", .unknown, .badServerResponse),
        ("Invalid Content-Length: value", .unknown, .badServerResponse),
        (
            "Unrecognized content encoding type. libcurl understands deflate, gzip, br, zstd content encodings.",
            .unknown, .cannotDecodeContentData
        ),
        ("Error while processing content unencoding: incorrect header check", .unknown, .cannotDecodeContentData),
        ("Failed writing received data to disk/application", .unknown, .cannotDecodeContentData),
        ("Failed reading the chunked-encoded stream", .unknown, .cannotDecodeContentData),
        ("Unrecognized or bad HTTP Content or Transfer-Encoding", .unknown, .cannotDecodeContentData),
    ])
    func aLoadingSystemErrorGetsApplesCode(message: String, code: URLError.Code, expected: URLError.Code) {
        let error = URLError(code, userInfo: [NSLocalizedDescriptionKey: message])
        let classified = URLSessionTransport.classified(error) as? URLError
        #expect(classified?.code == expected)
        #expect(classified?.userInfo[NSLocalizedDescriptionKey] as? String == message)
    }
}
