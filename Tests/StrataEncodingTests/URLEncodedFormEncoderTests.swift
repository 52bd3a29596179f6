import Foundation
import StrataCore
import StrataEncoding
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLEncodedFormEncoderTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000)
    static let fractional = Date(timeIntervalSince1970: 1_700_000_000.25)

    @Test(
        arguments: [
            (URLEncodedFormEncoder.DateEncoding.iso8601, "2023-11-14T22%3A13%3A20Z", "2023-11-14T22%3A13%3A20.250Z"),
            (.secondsSince1970, "1700000000.0", "1700000000.25"),
            (.millisecondsSince1970, "1700000000000", "1700000000250"),
            (.custom { "day-\(Int($0.timeIntervalSince1970) / 86_400)" }, "day-19675", "day-19675"),
        ]
    )
    func datesFollowTheDateEncoding(
        encoding: URLEncodedFormEncoder.DateEncoding, whole: String, fraction: String
    ) throws {
        let encoder = URLEncodedFormEncoder(dateEncoding: encoding)
        #expect(try encoder.encode(["at": .date(Self.date)]) == "at=\(whole)")
        #expect(try encoder.encode(["at": .date(Self.fractional)]) == "at=\(fraction)")
    }

    /// A date the encoding cannot write — not a number, milliseconds past `Int64`, a year ISO 8601
    /// has no four digits for — is an error, never a trap or a clamped, wrong date.
    @Test(
        arguments: [
            (URLEncodedFormEncoder.DateEncoding.millisecondsSince1970, 1e17), (.millisecondsSince1970, -1e17),
            (.millisecondsSince1970, .infinity), (.millisecondsSince1970, .nan), (.millisecondsSince1970, 9.3e15),
            (.secondsSince1970, .infinity), (.secondsSince1970, -.infinity), (.secondsSince1970, .nan),
            (.iso8601, .nan), (.iso8601, .infinity), (.iso8601, 1e17), (.iso8601, -1e17),
            (.iso8601, 253_402_300_800), (.iso8601, -62_135_596_801),
        ]
    )
    func aDateTheEncodingCannotWriteIsAnError(encoding: URLEncodedFormEncoder.DateEncoding, seconds: Double) {
        let encoder = URLEncodedFormEncoder(dateEncoding: encoding)
        #expect(throws: ParameterEncodingError.self) {
            try encoder.encode(["at": .date(Date(timeIntervalSince1970: seconds))])
        }
        #expect(throws: ParameterEncodingError.self) {
            try encoder.encode(["at": [.date(Date(timeIntervalSince1970: seconds))]])
        }
        #expect(throws: XMLError.self) {
            try XMLEncoder(dateEncoding: encoding).encode(
                ["at": .date(Date(timeIntervalSince1970: seconds))], rootElement: "r")
        }
        struct Stamp: Encodable { let at: Date }
        #expect(throws: XMLError.self) {
            try XMLEncoder(dateEncoding: encoding).encodeDocument(
                Stamp(at: Date(timeIntervalSince1970: seconds)), rootElement: "s")
        }
        // Each error can be shown: one holding the date itself traps when described.
        let encodings: [() throws -> Void] = [
            { _ = try encoder.encode(["at": .date(Date(timeIntervalSince1970: seconds))]) },
            {
                _ = try XMLEncoder(dateEncoding: encoding).encodeDocument(
                    Stamp(at: Date(timeIntervalSince1970: seconds)), rootElement: "s")
            },
        ]
        for encode in encodings {
            do {
                _ = try encode()
            } catch {
                #expect(String(describing: error).contains("\(seconds)"))
            }
        }
    }

    @Test(
        arguments: [
            (URLEncodedFormEncoder.DateEncoding.iso8601, 253_402_300_799, "9999-12-31T23%3A59%3A59Z"),
            (.millisecondsSince1970, 9e15, "9000000000000000000"),
            (.millisecondsSince1970, -9e15, "-9000000000000000000"),
        ]
    )
    func theFurthestDatesAnEncodingCanWriteAreWritten(
        encoding: URLEncodedFormEncoder.DateEncoding, seconds: Double, text: String
    ) throws {
        let encoder = URLEncodedFormEncoder(dateEncoding: encoding)
        #expect(try encoder.encode(["at": .date(Date(timeIntervalSince1970: seconds))]) == "at=\(text)")
    }

    @Test func datesInArraysAndNestedObjectsFollowTheDateEncoding() throws {
        let encoder = URLEncodedFormEncoder(arrayEncoding: .indexInBrackets, dateEncoding: .millisecondsSince1970)
        let parameters: [String: ParameterValue] = ["range": ["from": .date(Self.date)], "days": [.date(Self.date)]]
        #expect(try encoder.encode(parameters) == "days%5B0%5D=1700000000000&range%5Bfrom%5D=1700000000000")
    }

    struct Filter: Encodable, Sendable {
        struct Window: Encodable, Sendable {
            let from: Date
            let open: Bool
        }
        let q: String
        let tags: [String]
        let window: Window
        let limit: Int?
    }

    static let filter = Filter(q: "a+b c", tags: ["x", "y"], window: .init(from: date, open: true), limit: nil)

    @Test(
        arguments: [
            (
                URLEncodedFormEncoder(),
                "q=a%2Bb%20c&tags%5B%5D=x&tags%5B%5D=y&window%5Bfrom%5D=2023-11-14T22%3A13%3A20Z&window%5Bopen%5D=1"
            ),
            (
                URLEncodedFormEncoder(
                    arrayEncoding: .noBrackets, boolEncoding: .literal, dateEncoding: .secondsSince1970),
                "q=a%2Bb%20c&tags=x&tags=y&window%5Bfrom%5D=1700000000.0&window%5Bopen%5D=true"
            ),
            (
                URLEncodedFormEncoder(arrayEncoding: .commaSeparated, dateEncoding: .millisecondsSince1970),
                "q=a%2Bb%20c&tags=x,y&window%5Bfrom%5D=1700000000000&window%5Bopen%5D=1"
            ),
        ]
    )
    func encodableValuesUseTheSameOptionsAsDictionaries(encoder: URLEncodedFormEncoder, expected: String) throws {
        #expect(try encoder.encode(Self.filter) == expected)
    }

    @Test func urlEncodingWritesEncodablesWithItsFormEncoder() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/search")))
        request.httpMethod = "GET"
        let encoding = URLEncoding(
            destination: .queryString, arrayEncoding: .commaSeparated, dateEncoding: .secondsSince1970)
        let encoded = try encoding.encode(request, withEncodable: Self.filter)
        #expect(encoded.url?.query == "q=a%2Bb%20c&tags=x,y&window%5Bfrom%5D=1700000000.0&window%5Bopen%5D=1")
    }

    @Test func jsonWritesDatesWithTheJSONEncodersStrategy() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com")))
        request.httpMethod = "POST"
        let encoded = try JSONEncoding(encoder: encoder).encode(request, with: ["at": .date(Self.date)])
        #expect(encoded.httpBody == Data(#"{"at":1700000000}"#.utf8))
    }
}
