import StrataCore
import Testing

@Suite struct HTTPHeadersTests {
    @Test func namesCompareWithoutCase() {
        let headers: HTTPHeaders = ["Content-Type": "application/json"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.contains(name: "content-TYPE"))
        #expect(headers["Accept"] == nil)
    }

    @Test func onlyASCIILettersFoldAndEveryByteCounts() {
        let headers: HTTPHeaders = ["X-[a]": "brackets", "X-@": "at", "X-É": "accented", "Content-Length": "3"]
        // Same length, one byte apart: a prefix, a letter, and bytes 32 apart that are not letters.
        #expect(headers["Content-Lengtx"] == nil)
        #expect(headers["Content-Lengt"] == nil)
        #expect(headers["content-length "] == nil)
        #expect(headers["x-[A]"] == "brackets")
        #expect(headers["X-{a}"] == nil)
        #expect(headers["X-`"] == nil)
        #expect(headers["x-@"] == "at")
        #expect(headers["X-é"] == nil)
        #expect(headers["x-É"] == "accented")
    }

    @Test func fieldsKeepTheOrderTheyWereAddedIn() {
        var headers = HTTPHeaders()
        headers.add(name: "B", value: "2")
        headers.add(name: "A", value: "1")
        headers.add(name: "C", value: "3")
        #expect(headers.map(\.name) == ["B", "A", "C"])
    }

    @Test func addKeepsRepeatedNamesAndValuesForReturnsThemAll() {
        var headers = HTTPHeaders()
        headers.add(name: "Set-Cookie", value: "a=1")
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(headers.value(for: "Set-Cookie") == "a=1")
    }

    @Test func updateReplacesInPlaceAndRemovesOtherFieldsWithTheName() {
        var headers: HTTPHeaders = ["Accept": "a", "X-One": "1", "accept": "b", "X-Two": "2"]
        headers.update(name: "ACCEPT", value: "c")
        #expect(headers == ["ACCEPT": "c", "X-One": "1", "X-Two": "2"])
        #expect(headers.map(\.name) == ["ACCEPT", "X-One", "X-Two"])
    }

    @Test func subscriptSetAddsReplacesAndRemoves() {
        var headers = HTTPHeaders()
        headers["Authorization"] = "Bearer one"
        headers["authorization"] = "Bearer two"
        #expect(headers.count == 1)
        #expect(headers["Authorization"] == "Bearer two")
        headers["AUTHORIZATION"] = nil
        #expect(headers.isEmpty)
    }

    @Test func mergingLetsTheOtherListWinForEveryNameItHas() {
        let base: HTTPHeaders = ["Accept": "text/plain", "X-Client": "strata", "X-Trace": "1"]
        let merged = base.merging(["accept": "application/json", "X-Trace": "2", "X-New": "n"])
        #expect(merged["Accept"] == "application/json")
        #expect(merged.values(for: "accept") == ["application/json"])
        #expect(merged["X-Client"] == "strata")
        #expect(merged["X-Trace"] == "2")
        #expect(merged["X-New"] == "n")
    }

    @Test func dictionaryJoinsRepeatedValuesWithCommas() {
        var headers = HTTPHeaders()
        headers.add(name: "Accept", value: "text/html")
        headers.add(name: "accept", value: "application/json")
        #expect(headers.dictionary == ["Accept": "text/html, application/json"])
    }

    @Test func dictionaryOfManyFieldsKeepsEachNamesFirstSpellingAndJoinsItsValuesInOrder() {
        // A server chooses a response's fields: tens of thousands of them, names repeating in any case.
        var headers = HTTPHeaders()
        for index in 0..<60_000 {
            let name = "X-Field-\(index % 20_000)"
            headers.add(name: index < 20_000 ? name : name.uppercased(), value: "\(index)")
        }
        let dictionary = headers.dictionary
        #expect(dictionary.count == 20_000)
        #expect(dictionary["X-Field-7"] == "7, 20007, 40007")
        #expect(dictionary["X-FIELD-7"] == nil)
    }

    /// A few fields are matched by a scan, many through a table: both as the rule written plainly
    /// says, on either side of the switch.
    @Test(arguments: [1, 2, 5, 15, 16, 17, 18, 40])
    func dictionaryAndMergingAgreeWithTheRuleWrittenPlainlyForAnyCount(count: Int) {
        let spellings = ["x-name-", "X-Name-", "X-NAME-"]
        let fields = (0..<count).map { index in
            // Names repeat, in another case each time.
            HTTPHeader(name: spellings[index % 3] + "\(index % max(1, count / 3))", value: "v\(index)")
        }
        let headers = HTTPHeaders(fields)
        var expected: [String: String] = [:]
        var firstSpelling: [String: String] = [:]
        for field in fields {
            if let first = firstSpelling[field.name.lowercased()] {
                expected[first, default: ""] += ", " + field.value
            } else {
                firstSpelling[field.name.lowercased()] = field.name
                expected[field.name] = field.value
            }
        }
        #expect(headers.dictionary == expected)

        let base = HTTPHeaders((0..<count).map { HTTPHeader(name: "X-Name-\($0)", value: "base") })
        let merged = base.merging(headers)
        let replaced = Set(fields.map { $0.name.lowercased() })
        let expectedFields = base.filter { !replaced.contains($0.name.lowercased()) } + fields
        #expect(Array(merged) == expectedFields)
    }

    @Test func dictionaryInitializerSortsByNameForReproducibleRequests() {
        let headers = HTTPHeaders(["b": "2", "A": "1", "c": "3"])
        #expect(headers.map(\.name) == ["A", "b", "c"])
    }

    @Test func sortingByNameOrdersAsLowercasedNamesDo() {
        // Prefixes, mixed case, and characters between "Z" and "a" in ASCII ("[", "_", "`").
        let names = [
            "Content-Type", "content-length", "Content", "X-A_B", "x-ab", "X-A[", "x-a`", "ETag", "etag-2", "A", "b",
            "Set-Cookie", "SET-COOKIE2", "~tilde", "0-digit", "Z", "zz",
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let fields = names.shuffled(using: &generator).map { HTTPHeader(name: $0, value: "v") }
            let sorted = HTTPHeaders(Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.value) }))
            let expected = names.sorted { $0.lowercased() < $1.lowercased() }
            #expect(sorted.map(\.name) == expected)
        }
    }

    @Test func equalityAndHashingIgnoreNameCaseButNotOrderOrValues() {
        let lower: HTTPHeaders = ["accept": "x"]
        let upper: HTTPHeaders = ["ACCEPT": "x"]
        #expect(lower == upper)
        #expect(lower.hashValue == upper.hashValue)
        #expect(lower != ["accept": "X"])
        #expect(
            HTTPHeaders(["a": "1", "b": "2"])
                != HTTPHeaders([HTTPHeader(name: "b", value: "2"), HTTPHeader(name: "a", value: "1")]))
    }

    @Test(arguments: [
        ("5", true), ("5, 5", true), ("5,5", true), (" 12 ,12", true), ("0", true), ("999999999999999999", true),
        ("5, 10", false), ("", false), ("-5", false), ("+5", false), ("5,", false), ("0x10", false), ("1e3", false),
        ("9999999999999999999", false), ("\u{FF15}", false), ("5 5", false),
    ])
    func aContentLengthIsOneLengthOnlyInDecimalDigitsRepeatedAlike(value: String, isOne: Bool) {
        #expect(HTTPGrammar.isOneLength(value) == isOne)
    }
}
