/// A ``Requestable`` that also says what its response is and how to decode it.
public protocol ResponseRequestable<Response>: Requestable {
    /// The value a successful response yields: a `Decodable` type, or `Void` for no value.
    associatedtype Response

    /// How the response body is decoded into ``Response``.
    var responseDecoder: any ResponseDecoder { get }
}
