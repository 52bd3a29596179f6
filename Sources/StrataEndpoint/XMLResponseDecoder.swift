import Foundation
import StrataEncoding

/// Decodes XML bodies with an ``/StrataEncoding/XMLDecoder``: the root element is the response, or,
/// with ``unwrapsSOAPBody``, the first element inside a SOAP envelope's body.
///
/// ```swift
/// Endpoint<Quote>(path: "stock", method: .post, bodyEncoding: XMLEncoding.soap(.v1_1, operation: "GetQuote"),
///                 responseDecoder: XMLResponseDecoder(unwrapsSOAPBody: true))
/// ```
public struct XMLResponseDecoder: ResponseDecoder {
    /// The decoder used.
    public let decoder: XMLDecoder
    /// Whether the response is a SOAP envelope whose body's first element is decoded.
    public let unwrapsSOAPBody: Bool

    /// Creates the decoder.
    public init(decoder: XMLDecoder = XMLDecoder(), unwrapsSOAPBody: Bool = false) {
        self.decoder = decoder
        self.unwrapsSOAPBody = unwrapsSOAPBody
    }

    /// Decodes `data` as XML.
    /// - Throws: ``/StrataEncoding/SOAPFault`` when a SOAP body holds a fault,
    ///   ``/StrataEncoding/XMLError`` for malformed XML or a missing SOAP body, a `DecodingError`
    ///   when the document does not match `T`.
    public func decode<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
        unwrapsSOAPBody ? try decoder.decode(type, fromSOAPEnvelope: data) : try decoder.decode(type, from: data)
    }
}
