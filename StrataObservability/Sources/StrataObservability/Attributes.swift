import Foundation
import StrataService
import StrataSession
import StrataTransfer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the monitors name a request's method and error, the same in a log line, a metric and a span.
enum Attributes {
    /// The method: one of RFC 9110's or PATCH; any other is `_OTHER`, as OpenTelemetry asks, so
    /// that a caller's custom methods cannot multiply metric series.
    static func method(of request: URLRequest) -> String {
        let method = (request.httpMethod ?? "GET").uppercased()
        return knownMethods.contains(method) ? method : "_OTHER"
    }

    private static let knownMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ]

    /// What kind of error `error` is, in words that quote nothing it carries: a status, a
    /// `URLError`'s code, or the error's type.
    ///
    /// A request's outcome carries what its caller got (see ``/StrataSession/EventMonitor``): a
    /// body that did not decode is the decoder's error type, an error the resolver made is that
    /// error's, and the layers' wrappers are looked through to the failure they wrap.
    static func errorType(_ error: any Error) -> String {
        switch cause(of: error) {
        case let error as URLError: return "URLError(\(error.code.rawValue))"
        case SessionError.unacceptableStatusCode(let status): return "\(status)"
        case DataTransferError.parsing(let error, _): return String(reflecting: type(of: error))
        case DataTransferError.noResponse: return "DataTransferError.noResponse"
        case DataTransferError.resolvedNetworkFailure(let error): return errorType(error)
        case let error: return String(reflecting: type(of: error))
        }
    }

    /// The failure `error` wraps, as the session layer names it: a ``/StrataService/NetworkError``
    /// or a ``/StrataTransfer/DataTransferError`` left by the resolver is its cause.
    static func cause(of error: any Error) -> any Error {
        switch error {
        case DataTransferError.networkFailure(let error): return cause(of: error)
        case let error as NetworkError:
            switch error {
            case .unacceptableStatusCode(let response): return SessionError.unacceptableStatusCode(response.statusCode)
            case .notConnected: return URLError(.notConnectedToInternet)
            case .timedOut(let error), .transport(let error): return error
            case .cancelled: return URLError(.cancelled)
            case .invalidResponse: return SessionError.invalidResponse
            case .invalidRequest(let error): return error
            case .redirect(let error): return error
            case .serverTrust(let error): return error
            case .stream(let error): return error
            case .underlying(let error): return error
            case .urlGeneration, .encoding: return error
            }
        default: return error
        }
    }
}
