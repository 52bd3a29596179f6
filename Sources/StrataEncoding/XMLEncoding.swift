import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes parameters, or an `Encodable` value, as an XML body: a plain document, a SOAP envelope
/// (1.1 or 1.2, with an optional header), or an XML property list.
///
/// The body is UTF-8 with its exact byte length in `Content-Length`; `Content-Type` is set only
/// when the request has none; the method is never changed. Invalid element names and characters
/// XML 1.0 cannot hold — in documents, SOAP envelopes and property lists alike — are typed errors
/// (``ParameterEncodingError/xml(_:)``); values nesting deeper than the encoder's `maximumDepth`
/// fail with ``ParameterEncodingError/nestingTooDeep(maximum:)``.
///
/// ```swift
/// Endpoint<Receipt>(path: "orders", method: .post, bodyParametersEncodable: order,
///                   bodyEncoding: XMLEncoding(rootElement: "order"),
///                   responseDecoder: XMLResponseDecoder())
/// Endpoint<Quote>(path: "stock", method: .post, bodyParameters: ["symbol": "AAPL"],
///                 bodyEncoding: XMLEncoding.soap(.v1_2, operation: "GetQuote"))
/// ```
public struct XMLEncoding: ParameterEncoding {
    /// A SOAP version, with its envelope namespace and content type.
    public enum SOAPVersion: Hashable, Sendable {
        /// SOAP 1.1: `text/xml`, `SOAPAction` header.
        case v1_1
        /// SOAP 1.2: `application/soap+xml`, `action` parameter.
        case v1_2

        /// The envelope namespace.
        public var namespace: String {
            switch self {
            case .v1_1: return "http://schemas.xmlsoap.org/soap/envelope/"
            case .v1_2: return "http://www.w3.org/2003/05/soap-envelope"
            }
        }
    }

    /// The kind of document written.
    public enum Format: Sendable {
        /// A document whose root element has this name.
        case document(rootElement: String)
        /// A SOAP envelope whose body holds the `operation` element, with `header` elements in
        /// its header, and `action` as the SOAP action.
        case soap(SOAPVersion, operation: String, header: [XMLTree], action: String?)
        /// An XML property list (`PropertyListSerialization` / `PropertyListEncoder`).
        case propertyList
    }

    /// What is written.
    public var format: Format
    /// How values become elements (documents and SOAP).
    public var encoder: XMLEncoder

    /// A document with root element `rootElement`.
    public init(rootElement: String = "parameters", encoder: XMLEncoder = XMLEncoder()) {
        self.init(format: .document(rootElement: rootElement), encoder: encoder)
    }

    /// An encoding of the given format.
    public init(format: Format, encoder: XMLEncoder = XMLEncoder()) {
        self.format = format
        self.encoder = encoder
    }

    /// A SOAP envelope of `version` whose body holds `operation`.
    public static func soap(
        _ version: SOAPVersion,
        operation: String,
        header: [XMLTree] = [],
        action: String? = nil,
        encoder: XMLEncoder = XMLEncoder()
    ) -> XMLEncoding {
        XMLEncoding(format: .soap(version, operation: operation, header: header, action: action), encoder: encoder)
    }

    /// An XML property list.
    public static let propertyList = XMLEncoding(format: .propertyList)

    /// Returns `request` with `parameters` as its XML body.
    public func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError)
        -> URLRequest
    {
        try write(
            to: request,
            element: { (root, output) throws(XMLError) in try encoder.write(parameters, rootElement: root, to: &output)
            },
            propertyList: { () throws(XMLError) in try Self.propertyList(parameters, maximumDepth: encoder.maximumDepth)
            }
        )
    }

    /// Returns `request` with `value` as its XML body.
    public func encode(
        _ request: URLRequest, withEncodable value: any Encodable & Sendable
    )
        throws(ParameterEncodingError) -> URLRequest
    {
        try write(
            to: request,
            element: { (root, output) throws(XMLError) in try encoder.write(value, rootElement: root, to: &output) },
            propertyList: { () throws(XMLError) in
                try Self.propertyList(encoding: value, maximumDepth: encoder.maximumDepth)
            }
        )
    }

    /// Writes the body in ``format``: `element` writes the document's or SOAP operation's element
    /// with the given name, `propertyList` makes the property list.
    private func write(
        to request: URLRequest,
        element: (String, inout XMLOutput) throws(XMLError) -> Void,
        propertyList: () throws(XMLError) -> Data
    ) throws(ParameterEncodingError) -> URLRequest {
        let request = try request.encodable()
        do {
            var output = XMLOutput(declaration: true, capacity: 1024)
            switch format {
            case .document(let root):
                try element(root, &output)
                return apply(output.bytes, to: request)
            case .soap(let version, let operation, let header, let action):
                output.append(#"<soap:Envelope xmlns:soap=""#)
                output.append(version.namespace)
                output.append(#"">"#)
                if !header.isEmpty {
                    output.append("<soap:Header>")
                    for entry in header { try XMLWriter.write(entry, to: &output) }
                    output.append("</soap:Header>")
                }
                output.append("<soap:Body>")
                try element(operation, &output)
                output.append("</soap:Body></soap:Envelope>")
                return apply(output.bytes, to: request, soap: (version, action))
            case .propertyList:
                return apply(try propertyList(), to: request)
            }
        } catch .nestingTooDeep(let maximum) {
            throw .nestingTooDeep(maximum: maximum)
        } catch {
            throw .xml(error)
        }
    }

    private static func propertyList(encoding value: some Encodable, maximumDepth: Int) throws(XMLError) -> Data {
        do {
            try NestingProbe.check(value, maximumDepth: maximumDepth)
        } catch {
            throw .nestingTooDeep(maximum: maximumDepth)
        }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        let document: Data
        do {
            document = try encoder.encode(value)
        } catch {
            throw .unsupportedValue(String(describing: error))
        }
        try XMLWriter.validateCharacters(of: document, context: "property list")
        return document
    }

    private static func propertyList(
        _ parameters: [String: ParameterValue], maximumDepth: Int
    ) throws(XMLError) -> Data {
        guard !ParameterValue.object(parameters).nests(deeperThan: maximumDepth) else {
            throw .nestingTooDeep(maximum: maximumDepth)
        }
        func object(_ value: ParameterValue) throws(XMLError) -> Any {
            switch value {
            case .string(let text): return text
            case .int(let number): return number
            case .double(let number): return number
            case .bool(let flag): return flag
            case .date(let date): return date
            case .array(let elements):
                var items: [Any] = []
                for element in elements { items.append(try object(element)) }
                return items
            case .object(let members):
                var dictionary: [String: Any] = [:]
                for (key, member) in members { dictionary[key] = try object(member) }
                return dictionary
            case .null: throw .unsupportedValue("a property list cannot hold null")
            }
        }
        let document: Data
        do {
            document = try PropertyListSerialization.data(
                fromPropertyList: try object(.object(parameters)), format: .xml, options: 0)
        } catch let error as XMLError {
            throw error
        } catch {
            throw .unsupportedValue(String(describing: error))
        }
        // The serializations write every character as it is, even those XML 1.0 forbids.
        try XMLWriter.validateCharacters(of: document, context: "property list")
        return document
    }

    private func apply(_ document: [UInt8], to request: URLRequest, soap: (SOAPVersion, String?)? = nil) -> URLRequest {
        let contentType =
            switch soap {
            case nil: "application/xml; charset=utf-8"
            case (.v1_1, _)?: "text/xml; charset=utf-8"
            case (.v1_2, let action)?:
                "application/soap+xml; charset=utf-8" + (action.map { "; action=\"\($0)\"" } ?? "")
            }
        var fields: [(String, String?)] = [("Content-Type", contentType)]
        if case (.v1_1, let action?)? = soap {
            fields.append(("SOAPAction", "\"\(action)\""))
        }
        return setBody(Data(document), fields: fields, on: request)
    }

    private func apply(_ propertyList: Data, to request: URLRequest) -> URLRequest {
        setBody(propertyList, fields: [("Content-Type", "application/x-plist")], on: request)
    }

    /// `body` as the request's, with its `Content-Length`, and `fields` where the request has none
    /// of their names.
    private func setBody(_ body: Data, fields: [(String, String?)], on request: URLRequest) -> URLRequest {
        var request = request
        request.httpBody = body
        request.setHeaderFields(fields, keepingExisting: true)
        request.setHeaderField("Content-Length", String(body.count))
        return request
    }
}
