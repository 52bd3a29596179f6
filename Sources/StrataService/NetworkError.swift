import Foundation
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a request did not succeed, with everything a caller needs to act on it.
///
/// Its descriptions go through ``/StrataCore/Redaction/standard``: URLs show no secret query values,
/// headers no credentials or cookies, bodies only their size. A `URLError` it carries keeps its
/// failing URL only as redacted text.
public enum NetworkError: Error, Sendable, LocalizedError, CustomStringConvertible, CustomDebugStringConvertible {
    /// The server answered with a status code the endpoint does not accept; the response keeps the
    /// status, headers and body (for example an error document).
    case unacceptableStatusCode(NetworkResponse)
    /// The device is offline, or not allowed to use the network.
    case notConnected
    /// The request timed out; the `URLError` says which deadline fired (its failing URL redacted).
    /// Match it as `.timedOut` when that does not matter.
    case timedOut(URLError)
    /// The request was cancelled.
    case cancelled
    /// The transfer failed (connection refused or lost, DNS, TLS, a body cut short); the `URLError`
    /// says how (its failing URL redacted).
    case transport(URLError)
    /// The response is not an HTTP response.
    case invalidResponse
    /// No valid URL could be built for the endpoint.
    case urlGeneration(RequestGenerationError)
    /// A query or body parameter could not be encoded.
    case encoding(ParameterEncodingError)
    /// The request breaks HTTP's grammar (a CR LF in a header, say) and was not sent.
    case invalidRequest(RequestValidationError)
    /// A redirect was not followed: too many, a loop, a downgrade to `http`, another scheme.
    case redirect(RedirectError)
    /// The server's certificate chain was refused by the transport's ``/StrataSession/ServerTrustEvaluator``,
    /// or could not be evaluated; nothing was sent.
    case serverTrust(ServerTrustError)
    /// A streamed response ended early: one of its deadlines passed, or it broke one of its limits.
    case stream(StreamError)
    /// Any other error, reported by a session manager, a request adapter or a retrier.
    case underlying(any Error)

    /// A timeout with no more said of it.
    public static var timedOut: NetworkError { .timedOut(URLError(.timedOut)) }

    /// The response, when the server answered.
    public var response: NetworkResponse? {
        if case .unacceptableStatusCode(let response) = self { return response }
        return nil
    }

    /// The status code, when the server answered.
    public var statusCode: Int? { response?.statusCode }

    /// Whether the request was cancelled.
    public var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .unacceptableStatusCode(let response):
            return "The server answered with status \(response.statusCode)."
        case .notConnected:
            return "The network is not reachable."
        case .timedOut(let error):
            return Self.explain(error)
        case .cancelled:
            return "The request was cancelled."
        case .transport(let error):
            return Self.explain(error)
        case .invalidResponse:
            return "The server's response is not an HTTP response."
        case .urlGeneration(let error):
            return error.errorDescription
        case .encoding(let error):
            return error.errorDescription
        case .invalidRequest(let error):
            return error.errorDescription
        case .redirect(let error):
            return error.errorDescription
        case .serverTrust(let error):
            return error.errorDescription
        case .stream(let error):
            return error.errorDescription
        case .underlying(let error):
            return error.localizedDescription
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }

    /// The case and what it carries, redacted: the response's URL, headers and body size; a
    /// `URLError`'s code and failing URL.
    public var debugDescription: String {
        switch self {
        case .unacceptableStatusCode(let response):
            return "NetworkError.unacceptableStatusCode(\(response.debugDescription))"
        case .notConnected: return "NetworkError.notConnected"
        case .timedOut(let error): return "NetworkError.timedOut(\(Self.describe(error)))"
        case .cancelled: return "NetworkError.cancelled"
        case .transport(let error): return "NetworkError.transport(\(Self.describe(error)))"
        case .invalidResponse: return "NetworkError.invalidResponse"
        case .urlGeneration(let error): return "NetworkError.urlGeneration(\(error.description))"
        case .encoding(let error): return "NetworkError.encoding(\(error.description))"
        case .invalidRequest(let error): return "NetworkError.invalidRequest(\(error.description))"
        case .redirect(let error): return "NetworkError.redirect(\(error.description))"
        case .serverTrust(let error): return "NetworkError.serverTrust(\(error.description))"
        case .stream(let error): return "NetworkError.stream(\(error.description))"
        case .underlying(let error as URLError): return "NetworkError.underlying(\(Self.describe(error)))"
        case .underlying(let error): return "NetworkError.underlying(\(String(reflecting: error)))"
        }
    }

    /// What `error` means, in words: what went wrong for its code, the transport's details when it
    /// gave any (curl's message, the TLS library's reason, which deadline fired), and the failing
    /// URL, redacted. Foundation on Linux describes a `URLError` only by its number.
    static func explain(_ error: URLError) -> String {
        let redacted = Redaction.standard.redact(error)
        var text = meaning(of: error.code)
        if let detail = redacted.userInfo[NSLocalizedDescriptionKey] as? String, !detail.isEmpty,
            !detail.hasPrefix("The operation could not be completed"), detail != "unsupported URL"
        {
            text += ": " + detail.trimmingCharacters(in: CharacterSet(charactersIn: ". "))
        }
        if let url = redacted.userInfo[Redaction.failingURLStringKey] as? String {
            text += " (\(url))"
        }
        return text + " [URLError \(error.code.rawValue)]."
    }

    /// What a `URLError` code means, as a sentence without its full stop.
    private static func meaning(of code: URLError.Code) -> String {
        switch code {
        case .timedOut: return "The request timed out"
        case .cannotFindHost, .dnsLookupFailed: return "The server's host name could not be resolved (DNS)"
        case .cannotConnectToHost: return "No connection could be made to the server (refused or unreachable)"
        case .networkConnectionLost: return "The connection was lost before the response was complete"
        case .notConnectedToInternet: return "The network is not reachable"
        case .badServerResponse: return "The server's response is not valid HTTP"
        case .zeroByteResource: return "The server answered with no data at all"
        case .cannotDecodeContentData, .cannotDecodeRawData:
            return "The response body could not be decoded from its content coding"
        case .dataLengthExceedsMaximum: return "The body is larger than the transport can hold"
        case .badURL: return "The URL is not one the transport can send to"
        case .unsupportedURL: return "The URL's scheme is not one the transport supports"
        case .secureConnectionFailed: return "A secure (TLS) connection could not be made"
        case .serverCertificateUntrusted:
            return "The server's certificate is not trusted (no trusted authority vouches for it, or it is for "
                + "another host)"
        case .serverCertificateHasBadDate: return "The server's certificate has expired or is not yet valid"
        case .serverCertificateHasUnknownRoot:
            return "The server's certificate comes from an authority not trusted here"
        case .serverCertificateNotYetValid: return "The server's certificate is not yet valid"
        case .clientCertificateRejected, .clientCertificateRequired:
            return "The server wants a client certificate that was not given or not accepted"
        case .userAuthenticationRequired: return "The server or a proxy requires authentication"
        case .httpTooManyRedirects: return "The server redirected too many times"
        case .redirectToNonExistentLocation: return "The server redirected to a location that does not exist"
        case .cannotCreateFile, .cannotOpenFile, .cannotWriteToFile, .cannotMoveFile, .cannotRemoveFile,
            .cannotCloseFile:
            return "The download could not be written to its file"
        case .fileDoesNotExist, .noPermissionsToReadFile: return "The body's file could not be read"
        case .cancelled: return "The request was cancelled"
        default: return "The transfer failed"
        }
    }

    /// `URLError(code, failing URL redacted)`.
    private static func describe(_ error: URLError) -> String {
        let url = Redaction.standard.redact(error).userInfo[Redaction.failingURLStringKey] as? String
        return "URLError(\(error.code.rawValue)" + (url.map { ", failing URL: \($0)" } ?? "") + ")"
    }
}

extension NetworkError {
    /// The result of a session manager's outcome. The manager has validated the status (an
    /// unacceptable one comes with ``/StrataSession/SessionError/unacceptableStatusCode(_:)``), so
    /// it is not checked again: an error makes a failure, even after a `2xx` response (a body cut
    /// short is not a success); without one, the response must be HTTP. The response is read from
    /// its head, without making an `HTTPURLResponse`, and names the file its body was written to,
    /// if it was.
    package static func result(_ outcome: TransportOutcome) -> Result<NetworkResponse, NetworkError> {
        guard let head = outcome.head else {
            return result(nil, data: outcome.data, error: outcome.error)
        }
        var response = NetworkResponse(head, body: outcome.body)
        response.fileURL = outcome.fileURL
        return result(response, data: outcome.body, error: outcome.error)
    }

    /// `response` (made only when it is read) and `error` as a result: an error makes a failure,
    /// and without one there must be a response.
    private static func result(
        _ response: @autoclosure () -> NetworkResponse?, data: Data?, error: (any Error)?
    ) -> Result<NetworkResponse, NetworkError> {
        if let error {
            return .failure(NetworkError(error, response: response(), data: data))
        }
        guard let response = response() else { return .failure(.invalidResponse) }
        return .success(response)
    }

    /// Maps an error reported by a session manager; `response` is read only for an unacceptable status.
    package init(_ error: any Error, response: @autoclosure () -> NetworkResponse?, data: Data?) {
        switch error {
        case let error as NetworkError:
            self = error
        case let failure as FailedResponse:
            self = NetworkError(
                failure.error, response: NetworkResponse(failure.head, body: failure.body), data: failure.body)
        case let error as StreamError:
            self = .stream(error)
        case SessionError.unacceptableStatusCode(let code):
            self = .unacceptableStatusCode(response() ?? NetworkResponse(statusCode: code, body: data ?? Data()))
        case SessionError.invalidResponse:
            self = .invalidResponse
        case let error as SessionError:
            let code: URLError.Code
            switch error {
            case .interimResponseTakenForAnswer, .invalidContentLength, .unexpectedContentRange:
                code = .badServerResponse
            default: code = .networkConnectionLost
            }
            self = .transport(URLError(code, userInfo: [NSLocalizedDescriptionKey: error.errorDescription ?? ""]))
        case let error as URLError:
            self = NetworkError(error)
        case let error as RedirectError:
            self = .redirect(error)
        case let error as ServerTrustError:
            self = .serverTrust(error)
        case let error as RequestValidationError:
            self = .invalidRequest(error)
        case let error as RequestGenerationError:
            self = NetworkError(error)
        case let error as ParameterEncodingError:
            self = .encoding(error)
        default:
            self = .underlying(error)
        }
    }

    /// Maps a failure to build a request.
    package init(_ error: RequestGenerationError) {
        switch error {
        case .invalidURL, .pathLeavesBaseURL: self = .urlGeneration(error)
        case .encoding(let encodingError): self = .encoding(encodingError)
        case .invalidRequest(let validationError): self = .invalidRequest(validationError)
        }
    }

    /// Maps a `URLError` by its code.
    init(_ error: URLError) {
        switch error.code {
        case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff, .callIsActive:
            self = .notConnected
        case .timedOut:
            self = .timedOut(Redaction.standard.redact(error))
        case .cancelled:
            self = .cancelled
        default:
            // Kept without its URL as a `URL`: its description would show secret query values.
            self = .transport(Redaction.standard.redact(error))
        }
    }
}
