import Foundation
import StrataCore
import StrataEncoding

/// Why a request could not be built from an endpoint and a configuration.
public enum RequestGenerationError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// No valid URL results from the base URL and the path; the text is what was tried.
    case invalidURL(String)
    /// The path's `..` segments climb above the base URL's path: a path is built under it, and
    /// one that leaves it (a user's input put into a path, say) is not sent. A full-path endpoint
    /// reaches any other path.
    case pathLeavesBaseURL(String)
    /// A query or body parameter could not be encoded.
    case encoding(ParameterEncodingError)
    /// The method or a header breaks HTTP's grammar (a CR LF in a header, say).
    case invalidRequest(RequestValidationError)

    /// A sentence saying what was wrong; the URL text with secret query values redacted.
    public var errorDescription: String? {
        switch self {
        case .invalidURL(let text):
            return "No valid URL could be built from '\(Redaction.standard.redact(urlText: text))'."
        case .pathLeavesBaseURL(let path):
            return "The path '\(Redaction.standard.redact(urlText: path))' climbs above the base URL's path with "
                + "'..' segments; a full-path endpoint reaches other paths."
        case .encoding(let error):
            return error.errorDescription
        case .invalidRequest(let error):
            return error.errorDescription
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}
