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

extension DataTransferResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// The value's type and the response (redacted), not the value itself: a decoded value may be
    /// a credential. `Token from 200 https://… (512 bytes)`.
    public var description: String {
        "\(Value.self) from \(response.description)"
    }

    /// `DataTransferResponse<Token>(NetworkResponse(…))`, redacted.
    public var debugDescription: String {
        "DataTransferResponse<\(Value.self)>(\(response.debugDescription))"
    }
}

extension DataTransferResponse: Sendable where Value: Sendable {}
extension DataTransferResponse: Equatable where Value: Equatable {}
