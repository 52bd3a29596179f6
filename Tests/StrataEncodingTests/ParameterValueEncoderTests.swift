import Foundation
import StrataCore
import StrataEncoding
import Testing

@Suite struct ParameterValueEncoderTests {
    struct Address: Encodable { let city: String; let zip: String? }
    struct User: Encodable {
        let name: String
        let age: Int
        let score: Double
        let active: Bool
        let tags: [String]
        let address: Address
        let nickname: String?
    }

    @Test func structsEncodeToNestedObjectsAndNilOptionalsAreLeftOut() throws {
        let user = User(
            name: "Ann", age: 30, score: 9.5, active: true, tags: ["a", "b"], address: Address(city: "Oslo", zip: nil),
            nickname: nil
        )
        let value = try ParameterValueEncoder().encode(user)
        #expect(
            value == [
                "name": "Ann", "age": 30, "score": 9.5, "active": true, "tags": ["a", "b"], "address": ["city": "Oslo"],
            ]
        )
    }

    @Test func dictionariesArraysAndScalarsEncodeAsThemselves() throws {
        let encoder = ParameterValueEncoder()
        #expect(try encoder.encode(["k": [1, 2]]) == ["k": [1, 2]])
        #expect(try encoder.encode("text") == "text")
        #expect(try encoder.encode([true, false]) == [true, false])
        #expect(try encoder.encode(Int8(-3)) == -3)
        #expect(try encoder.encode(Float(0.5)) == 0.5)
    }

    @Test func unsignedNumbersBeyondIntMaxBecomeTheirDecimalText() throws {
        #expect(try ParameterValueEncoder().encode(UInt64.max) == .string("18446744073709551615"))
        #expect(try ParameterValueEncoder().encode(UInt64(7)) == 7)
    }

    @Test func datesFollowTheStrategy() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        #expect(try ParameterValueEncoder().encode(date) == .date(date))
        #expect(try ParameterValueEncoder(dateEncodingStrategy: .iso8601).encode(date) == "2023-11-14T22:13:20Z")
        #expect(
            try ParameterValueEncoder(dateEncodingStrategy: .secondsSince1970).encode(date) == .double(1_700_000_000.25)
        )
        #expect(
            try ParameterValueEncoder(dateEncodingStrategy: .millisecondsSince1970).encode(date)
                == .int(1_700_000_000_250))
        let custom = ParameterValueEncoder(dateEncodingStrategy: .custom { _ in "custom" })
        #expect(try custom.encode(["at": date]) == ["at": "custom"])
    }

    @Test(arguments: [Double.nan, .infinity, 1e17, -1e17])
    func aDateTheStrategyCannotWriteIsAnError(seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(throws: ParameterEncodingError.self) {
            try ParameterValueEncoder(dateEncodingStrategy: .iso8601).encode(["at": date])
        }
        #expect(throws: ParameterEncodingError.self) {
            try ParameterValueEncoder(dateEncodingStrategy: .millisecondsSince1970).encode(["at": date])
        }
        // The year 10000 has milliseconds, but no ISO 8601 text of four digits.
        #expect(throws: ParameterEncodingError.self) {
            try ParameterValueEncoder(dateEncodingStrategy: .iso8601).encode([
                "at": Date(timeIntervalSince1970: 253_402_300_800)
            ])
        }
        // Each error can be shown: one holding the date itself traps when described.
        do {
            _ = try ParameterValueEncoder(dateEncodingStrategy: .iso8601).encode(["at": date])
        } catch {
            #expect(error.description.contains("\(seconds)"))
        }
    }

    @Test func dataURLAndDecimalHaveTextForms() throws {
        let encoder = ParameterValueEncoder()
        #expect(try encoder.encode(Data([0, 1, 2])) == "AAEC")
        #expect(try encoder.encode(URL(string: "https://example.com/a?b=c")) == "https://example.com/a?b=c")
        #expect(try encoder.encode(Decimal(string: "12.50")) == "12.5")
    }

    @Test func nonFiniteNumbersAreATypedErrorNamingThePath() {
        struct Reading: Encodable { let values: [Double] }
        do {
            _ = try ParameterValueEncoder().encode(Reading(values: [1, .nan]))
            Issue.record("expected an error")
        } catch {
            guard case .encodingFailed(let type, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(type == "Reading")
            #expect(reason.contains("values.1"))
        }
    }

    @Test func customEncodeImplementationsWithSuperEncodersAndNestedContainersWork() throws {
        struct Custom: Encodable {
            enum Keys: String, CodingKey { case outer, list, base }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                var outer = container.nestedContainer(keyedBy: Keys.self, forKey: .outer)
                try outer.encode(1, forKey: .list)
                var list = container.nestedUnkeyedContainer(forKey: .list)
                try list.encode("x")
                try list.encodeNil()
                var base = container.superEncoder(forKey: .base).singleValueContainer()
                try base.encode(true)
            }
        }
        #expect(
            try ParameterValueEncoder().encode(Custom()) == ["outer": ["list": 1], "list": ["x", nil], "base": true])
    }
}
