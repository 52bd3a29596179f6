import Foundation
import StrataEncoding

/// Why a request could not be built from an endpoint and a configuration.
public enum RequestGenerationError: Error, Hashable, Sendable, LocalizedError {
    /// No valid URL results from the base URL and the path; the text is what was tried.
    case invalidURL(String)
    /// A query or body parameter could not be encoded.
    case encoding(ParameterEncodingError)

    /// A sentence saying what was wrong.
    public var errorDescription: String? {
        switch self {
        case .invalidURL(let text):
            return "No valid URL could be built from '\(text)'."
        case .encoding(let error):
            return error.errorDescription
        }
    }
}
