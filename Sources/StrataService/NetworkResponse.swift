import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A complete HTTP response: status, headers and body. Successes carry one, and so does
/// ``NetworkError/unacceptableStatusCode(_:)``, so an error body is never lost.
public struct NetworkResponse: Hashable, Sendable {
    /// The status code.
    public var statusCode: Int
    /// The response headers; names compare without case.
    public var headers: HTTPHeaders
    /// The body, empty when there was none.
    public var body: Data
    /// The URL the response came from (after redirects).
    public var url: URL?
    /// Where the body was saved, for a download (the body itself is then empty).
    public var fileURL: URL?

    /// Creates a response.
    public init(statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// Creates a response from what `URLSession` delivered.
    public init(_ response: HTTPURLResponse, body: Data?) {
        let allFields = response.allHeaderFields
        var fields: [HTTPHeader] = []
        fields.reserveCapacity(allFields.count)
        for (name, value) in allFields {
            if let name = name as? String, let value = value as? String {
                fields.append(HTTPHeader(name: name, value: value))
            }
        }
        self.init(
            statusCode: response.statusCode, headers: HTTPHeaders(sortingByName: fields), body: body ?? Data(),
            url: response.url)
    }

    /// The body as UTF-8 text, or `nil` when it is not valid UTF-8.
    public var bodyText: String? {
        String(data: body, encoding: .utf8)
    }
}
