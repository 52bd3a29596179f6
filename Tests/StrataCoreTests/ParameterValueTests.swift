import Foundation
import StrataCore
import Testing

@Suite struct ParameterValueTests {
    @Test func literalsBuildParameterDictionaries() {
        let parameters: [String: ParameterValue] = [
            "q": "swift", "page": 2, "ratio": 0.5, "exact": true, "tags": ["a", "b"], "filter": ["min": 1], "none": nil,
        ]
        #expect(parameters["q"] == .string("swift"))
        #expect(parameters["page"] == .int(2))
        #expect(parameters["ratio"] == .double(0.5))
        #expect(parameters["exact"] == .bool(true))
        #expect(parameters["tags"] == .array([.string("a"), .string("b")]))
        #expect(parameters["filter"] == .object(["min": .int(1)]))
        #expect(parameters["none"] == .null)
    }

    @Test func decodesEveryJSONKindToTheMatchingCase() throws {
        let json = #"{"s": "x", "i": 3, "d": 1.5, "b": false, "n": null, "a": [1, "two"], "o": {"k": true}}"#
        let value = try JSONDecoder().decode(ParameterValue.self, from: Data(json.utf8))
        #expect(
            value == [
                "s": "x", "i": 3, "d": 1.5, "b": false, "n": nil, "a": [1, "two"], "o": ["k": true],
            ]
        )
    }

    @Test func encodesAndDecodesBackToTheSameValue() throws {
        let value: ParameterValue = ["list": [1, 2.5, "three", false, nil], "nested": ["deep": ["x": "y"]]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(ParameterValue.self, from: data) == value)
    }

    @Test func descriptionIsCompactJSONWithSortedKeys() {
        let value: ParameterValue = ["b": [1, "x"], "a": nil]
        #expect(value.description == #"{"a": null, "b": [1, "x"]}"#)
    }
}
