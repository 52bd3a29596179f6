import Foundation

/// Why parameters could not be applied to a request.
public enum ParameterEncodingError: Error, Hashable, Sendable, LocalizedError {
    /// The request has no URL to put a query on.
    case missingURL
    /// The request's URL could not be split into components to add a query.
    case invalidURL(String)
    /// An `Encodable` value could not be encoded; `type` names it, `reason` says why.
    case encodingFailed(type: String, reason: String)
    /// The encoding needs named members, but the value encodes as something else (an array or a
    /// single value); `description` shows what it encoded to.
    case membersRequired(type: String, found: String)
    /// A multipart body could not be built.
    case multipart(MultipartError)
    /// An XML body could not be written (an invalid name or character, or an unsupported value).
    case xml(XMLError)

    /// A sentence saying what was wrong.
    public var errorDescription: String? {
        switch self {
        case .missingURL:
            return "The request has no URL to encode parameters into."
        case .invalidURL(let url):
            return "The URL '\(url)' could not be parsed to add query parameters."
        case .encodingFailed(let type, let reason):
            return "A value of type \(type) could not be encoded: \(reason)"
        case .multipart(let error):
            return error.errorDescription
        case .xml(let error):
            return error.description
        case .membersRequired(let type, let found):
            return
                "A value of type \(type) must encode as named members to be used as parameters, but encoded as \(found)."
        }
    }
}
