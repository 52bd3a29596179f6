import Foundation
import StrataCore
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLRequest.setHeaderField(_:_:keepingExisting:)` and `setHeaderFields(_:keepingExisting:)`:
/// `setValue(_:forHTTPHeaderField:)`'s effect, one field per name whatever its case.
@Suite struct HeaderFieldWritingTests {
    private func request(_ fields: [String: String]) -> URLRequest {
        var request = URLRequest(url: URL(fileURLWithPath: "/items"))
        request.allHTTPHeaderFields = fields
        return request
    }

    @Test func aFieldReplacesOneOfTheSameNameInAnyCaseKeepingItsNameAsWritten() {
        var request = request(["content-TYPE": "text/plain", "Accept": "*/*"])
        request.setHeaderField("Content-Type", "application/json")
        #expect(request.allHTTPHeaderFields == ["Content-Type": "application/json", "Accept": "*/*"])
        request.setHeaderField("x-request-ID", "7")
        #expect(request.allHTTPHeaderFields?["x-request-ID"] == "7")
        #expect(request.value(forHTTPHeaderField: "X-Request-Id") == "7")
    }

    @Test func nilRemovesTheFieldInAnyCaseAndAnAbsentOneChangesNothing() {
        var request = request(["Transfer-Encoding": "chunked", "Accept": "*/*"])
        request.setHeaderField("transfer-encoding", nil)
        request.setHeaderField("TE", nil)
        #expect(request.allHTTPHeaderFields == ["Accept": "*/*"])
    }

    @Test func keepingExistingWritesOnlyAFieldTheRequestLacks() {
        var request = request(["content-type": "text/csv"])
        request.setHeaderField("Content-Type", "application/json", keepingExisting: true)
        request.setHeaderField("Content-Length", "3", keepingExisting: true)
        #expect(request.allHTTPHeaderFields == ["content-type": "text/csv", "Content-Length": "3"])
    }

    @Test func severalAtOnceApplyInOrderAsOneCallEachWould() {
        let fields: [(String, String?)] = [
            ("Transfer-Encoding", nil), ("Content-Length", "10"), ("content-length", "12"), ("TE", "trailers"),
        ]
        var together = request(["transfer-encoding": "chunked", "CONTENT-LENGTH": "5"])
        together.setHeaderFields(fields)
        var oneByOne = request(["transfer-encoding": "chunked", "CONTENT-LENGTH": "5"])
        for (name, value) in fields {
            oneByOne.setHeaderField(name, value)
        }
        #expect(together.allHTTPHeaderFields == ["content-length": "12", "TE": "trailers"])
        #expect(together.allHTTPHeaderFields == oneByOne.allHTTPHeaderFields)
        // What `setValue` leaves, but for the names' case, which it changes on Linux.
        var set = request(["transfer-encoding": "chunked", "CONTENT-LENGTH": "5"])
        for (name, value) in fields {
            set.setValue(value, forHTTPHeaderField: name)
        }
        let lowercased = { (fields: [String: String]?) in
            Dictionary(uniqueKeysWithValues: (fields ?? [:]).map { ($0.key.lowercased(), $0.value) })
        }
        #expect(lowercased(together.allHTTPHeaderFields) == lowercased(set.allHTTPHeaderFields))
    }

    @Test func onlyLettersFoldWhenNamesAreMatched() {
        // `[` and `{` are 32 apart, as `A` and `a` are: distinct names.
        var request = request(["X-[a]": "1"])
        request.setHeaderField("X-{A}", "2")
        #expect(request.allHTTPHeaderFields == ["X-[a]": "1", "X-{A}": "2"])
    }

    @Test func aFieldIsReadInAnyCaseAsValueForHTTPHeaderFieldReadsIt() {
        let request = request(["content-TYPE": "text/plain", "X-[a]": "1", "TE": "trailers"])
        for name in ["Content-Type", "content-type", "X-[A]", "x-{a}", "te", "Accept", "Content-Typ"] {
            #expect(request.headerField(name) == request.value(forHTTPHeaderField: name), "\(name)")
        }
        #expect(request.headerField("CONTENT-type") == "text/plain")
        #expect(self.request([:]).headerField("Accept") == nil)
    }

    /// A request of many fields — a caller's, or a server's `Vary` — is written in linear time: a
    /// scan for each of 100,000 names over 100,000 fields would take minutes.
    @Test(.timeLimit(.minutes(1)))
    func manyFieldsOntoARequestOfManyAreMatchedThroughATable() {
        let count = 100_000
        var request = request(Dictionary(uniqueKeysWithValues: (0..<count).map { ("x-field-\($0)", "old") }))
        let written: [(String, String?)] = (0..<count).map { ("X-FIELD-\($0)", $0.isMultiple(of: 2) ? "new" : nil) }
        request.setHeaderFields(written)
        let fields = request.allHTTPHeaderFields ?? [:]
        #expect(fields.count == count / 2)
        #expect(fields["X-FIELD-42"] == "new")
        #expect(fields["x-field-42"] == nil && fields["X-FIELD-43"] == nil && fields["x-field-43"] == nil)
        let more: [(String, String?)] = [("x-field-42", "kept"), ("X-New", "added")]
        request.setHeaderFields(more, keepingExisting: true)
        #expect(request.headerField("x-field-42") == "new")
        #expect(request.headerField("x-new") == "added")
    }
}
