import StrataService

/// A decoded value together with the response it came from (status, headers, body).
public struct DataTransferResponse<Value> {
    /// The decoded value.
    public var value: Value
    /// The response the value was decoded from.
    public var response: NetworkResponse

    /// Creates a response.
    public init(value: Value, response: NetworkResponse) {
        self.value = value
        self.response = response
    }

    /// The status code.
    public var statusCode: Int { response.statusCode }
}

extension DataTransferResponse: Sendable where Value: Sendable {}
extension DataTransferResponse: Equatable where Value: Equatable {}
