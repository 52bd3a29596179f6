import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why parameters could not be applied to a request.
public enum ParameterEncodingError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// The request has no URL: there is nowhere to put a query, and on Linux a request without one
    /// cannot be changed (FoundationNetworking traps on changing a copy of it).
    case missingURL
    /// The request's URL could not be split into components to add a query.
    case invalidURL(String)
    /// An `Encodable` value could not be encoded; `type` names it, `reason` says why.
    case encodingFailed(type: String, reason: String)
    /// The encoding needs named members, but the value encodes as something else; `found` says
    /// what (`an array of 3 elements`, `a string`), never the value itself, which may be a secret.
    case membersRequired(type: String, found: String)
    /// The parameters nest more than `maximum` levels of arrays and objects (the encoding's
    /// `maximumDepth`, by default ``/StrataCore/ParameterValue/defaultMaximumDepth``).
    case nestingTooDeep(maximum: Int)
    /// A multipart body could not be built.
    case multipart(MultipartError)
    /// An XML body could not be written (an invalid name or character, or an unsupported value).
    case xml(XMLError)

    /// A sentence saying what was wrong; a URL is shown with secret query values redacted.
    public var errorDescription: String? {
        switch self {
        case .missingURL:
            return "The request has no URL; parameters cannot be encoded into it."
        case .invalidURL(let url):
            return "The URL '\(Redaction.standard.redact(urlText: url))' could not be parsed to add query parameters."
        case .encodingFailed(let type, let reason):
            return "A value of type \(type) could not be encoded: \(reason)"
        case .membersRequired(let type, let found):
            return
                "A value of type \(type) must encode as named members to be used as parameters, but encoded as \(found)."
        case .nestingTooDeep(let maximum):
            return "The parameters nest more than \(maximum) levels deep, more than the encoding accepts."
        case .multipart(let error):
            return error.errorDescription
        case .xml(let error):
            return error.description
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}

extension URLRequest {
    /// The request, to encode parameters into: every encoding changes it, and on Linux changing a
    /// copy of a request without a URL traps inside FoundationNetworking.
    func encodable() throws(ParameterEncodingError) -> URLRequest {
        guard url != nil else { throw .missingURL }
        return self
    }
}
