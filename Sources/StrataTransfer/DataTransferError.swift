import Foundation
import StrataService

/// Why a typed request did not produce its value.
///
/// Its descriptions, like ``/StrataService/NetworkError``'s, show no secret: bodies as their size,
/// URLs and headers redacted.
public enum DataTransferError: Error, Sendable, LocalizedError, CustomStringConvertible,
    CustomDebugStringConvertible
{
    /// The server sent an empty body where a value was expected.
    case noResponse
    /// The body could not be decoded; the decoder's error and the raw body are kept.
    case parsing(any Error, body: Data)
    /// The request failed; the error resolver left the ``/StrataService/NetworkError`` as it was.
    case networkFailure(NetworkError)
    /// The request failed and the error resolver turned it into this error (for example a domain
    /// error decoded from the server's error body).
    case resolvedNetworkFailure(any Error)

    /// Whether the request was cancelled.
    public var isCancelled: Bool {
        if case .networkFailure(.cancelled) = self { return true }
        return false
    }

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .noResponse:
            return "The server sent no body where a value was expected."
        case .parsing(let error, let body):
            return "The response body (\(body.count) bytes) could not be decoded: \(error)"
        case .networkFailure(let error):
            return error.errorDescription
        case .resolvedNetworkFailure(let error):
            return error.localizedDescription
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }

    /// The case and what it carries, redacted.
    public var debugDescription: String {
        switch self {
        case .noResponse: return "DataTransferError.noResponse"
        case .parsing(let error, let body):
            return "DataTransferError.parsing(\(String(describing: error)), body: \(body.count) bytes)"
        case .networkFailure(let error): return "DataTransferError.networkFailure(\(error.debugDescription))"
        case .resolvedNetworkFailure(let error):
            return "DataTransferError.resolvedNetworkFailure(\(String(reflecting: error)))"
        }
    }
}
