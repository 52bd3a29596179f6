import Foundation
import StrataCore
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A complete HTTP response: status, headers and body. Successes carry one, and so does
/// ``NetworkError/unacceptableStatusCode(_:)``, so an error body is never lost.
///
/// Its descriptions go through ``/StrataCore/Redaction/standard``: the URL without secret query
/// values, `Set-Cookie` and other credential headers hidden, the body as its size.
public struct NetworkResponse: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The status code.
    public var statusCode: Int
    /// The response headers; names compare without case.
    public var headers: HTTPHeaders {
        get { fields.headers }
        set { fields = Fields(newValue) }
    }
    /// The body, empty when there was none.
    public var body: Data
    /// The URL the response came from (after redirects).
    public var url: URL?
    /// Where the body was saved, for a download (the body itself is then empty).
    public var fileURL: URL?

    private var fields: Fields

    /// Creates a response.
    public init(statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil) {
        self.statusCode = statusCode
        self.fields = Fields(headers)
        self.body = body
        self.url = url
    }

    /// Creates a response from what `URLSession` delivered. Its header fields are read from
    /// `response` the first time ``headers`` is.
    public init(_ response: HTTPURLResponse, body: Data?) {
        self.statusCode = response.statusCode
        self.fields = Fields(response)
        self.body = body ?? Data()
        self.url = response.url
    }

    /// Creates a response from the head a transport reported. Its header fields are read from
    /// the head the first time ``headers`` is, in the same shape as from an `HTTPURLResponse`:
    /// sorted by name, the values of a repeated name joined by commas.
    package init(_ head: ResponseHead, body: Data) {
        self.statusCode = head.statusCode
        self.fields = Fields(head)
        self.body = body
        self.url = head.url
    }

    /// Whether both have the same status, header fields (names without case), body and URLs.
    public static func == (lhs: NetworkResponse, rhs: NetworkResponse) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.body == rhs.body && lhs.url == rhs.url && lhs.fileURL == rhs.fileURL
            && lhs.headers == rhs.headers
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(statusCode)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(url)
        hasher.combine(fileURL)
    }

    /// The header fields, converted from the `HTTPURLResponse` or the transport's head once, when first read.
    ///
    /// On Linux, reading `allHeaderFields` and casting each name and value from `Any` costs more
    /// than the rest of the service layer's work for a response, and most callers only decode
    /// the body. Copies of a response share the conversion.
    private struct Fields: Sendable {
        private enum Source: Sendable {
            case converted(HTTPHeaders)
            case response(HTTPURLResponse)
            case head(ResponseHead)
        }

        private let source: Locked<Source>

        init(_ headers: HTTPHeaders) {
            source = Locked(.converted(headers))
        }

        init(_ response: HTTPURLResponse) {
            source = Locked(.response(response))
        }

        init(_ head: ResponseHead) {
            source = Locked(.head(head))
        }

        var headers: HTTPHeaders {
            source.withLock { source in
                switch source {
                case .converted(let headers):
                    return headers
                case .response(let response):
                    let headers = Self.headers(of: response)
                    source = .converted(headers)
                    return headers
                case .head(let head):
                    let headers = HTTPHeaders(head.headers.dictionary)
                    source = .converted(headers)
                    return headers
                }
            }
        }

        /// The value of the field `name` as ``headers`` has it (repeated values joined by commas),
        /// read without converting the other fields.
        func value(named name: String) -> String? {
            source.withLock { source in
                switch source {
                case .converted(let headers):
                    return headers[name]
                case .response(let response):
                    return response.value(forHTTPHeaderField: name)
                case .head(let head):
                    return head.headers.joinedValue(for: name)
                }
            }
        }

        private static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
            let allFields = response.allHeaderFields
            var fields: [HTTPHeader] = []
            fields.reserveCapacity(allFields.count)
            for (name, value) in allFields {
                if let name = name as? String, let value = value as? String {
                    fields.append(HTTPHeader(name: name, value: value))
                }
            }
            return HTTPHeaders(sortingByName: fields)
        }
    }

    /// The value of the header field `name`, as ``headers`` has it, without converting the other
    /// fields (about 19,000 instructions for a response of a few fields): what the layers read.
    package func headerValue(_ name: String) -> String? {
        fields.value(named: name)
    }

    /// The body as UTF-8 text, or `nil` when it is not valid UTF-8.
    public var bodyText: String? {
        String(data: body, encoding: .utf8)
    }

    /// `200 from https://…/items?api_key=<redacted> (512 bytes)`.
    public var description: String {
        let source = url.map { " from " + Redaction.standard.redact($0) } ?? ""
        let content = fileURL.map { "saved to \($0.path)" } ?? "\(body.count) bytes"
        return "\(statusCode)\(source) (\(content))"
    }

    /// Every field, redacted: `NetworkResponse(statusCode: 200, url: …, headers: [Set-Cookie: <redacted>], body: 512 bytes)`.
    public var debugDescription: String {
        let fields = Redaction.standard.redact(headers).map { "\($0.name): \($0.value)" }.joined(separator: ", ")
        var parts = ["statusCode: \(statusCode)"]
        if let url { parts.append("url: \(Redaction.standard.redact(url))") }
        parts.append("headers: [\(fields)]")
        parts.append("body: \(body.count) bytes")
        if let fileURL { parts.append("fileURL: \(fileURL.path)") }
        return "NetworkResponse(\(parts.joined(separator: ", ")))"
    }
}
