import Foundation
import StrataCore
import StrataEncoding
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct JSONEncodingTests {
    private func postRequest() throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/items")))
        request.httpMethod = "POST"
        return request
    }

    @Test func parametersBecomeAJSONBodyWithSortedKeys() throws {
        let encoded = try JSONEncoding.default.encode(postRequest(), with: ["b": [1, 2], "a": "x", "c": ["d": nil]])
        #expect(encoded.httpBody == Data(#"{"a":"x","b":[1,2],"c":{"d":null}}"#.utf8))
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(encoded.httpMethod == "POST")
    }

    @Test func encodableValuesUseTheConfiguredEncoder() throws {
        struct NewUser: Encodable, Sendable {
            let firstName: String
            let createdAt: Date
        }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let encoded = try JSONEncoding(encoder: encoder).encode(
            postRequest(),
            withEncodable: NewUser(firstName: "Ann", createdAt: Date(timeIntervalSince1970: 10))
        )
        #expect(encoded.httpBody == Data(#"{"created_at":10,"first_name":"Ann"}"#.utf8))
    }

    @Test func anExistingContentTypeIsKept() throws {
        var request = try postRequest()
        request.setValue("application/vnd.api+json", forHTTPHeaderField: "content-type")
        let encoded = try JSONEncoding.default.encode(request, with: ["a": 1])
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
    }

    @Test func anUnencodableValueIsATypedErrorNotACrash() throws {
        struct Measurement: Encodable, Sendable { let value: Double }
        let request = try postRequest()
        do {
            _ = try JSONEncoding.default.encode(request, withEncodable: Measurement(value: .nan))
            Issue.record("expected an error")
        } catch {
            guard case .encodingFailed(let type, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(type == "Measurement")
        }
        #expect(throws: ParameterEncodingError.self) {
            try JSONEncoding.default.encode(postRequest(), with: ["x": .double(.infinity)])
        }
    }
}
