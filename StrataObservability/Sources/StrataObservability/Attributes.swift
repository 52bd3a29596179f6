import Foundation
import StrataSession

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
    static func errorType(_ error: any Error) -> String {
        switch error {
        case let error as URLError: return "URLError(\(error.code.rawValue))"
        case SessionError.unacceptableStatusCode(let status): return "\(status)"
        default: return String(reflecting: type(of: error))
        }
    }
}
