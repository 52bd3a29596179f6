import Foundation
import StrataCore
import StrataEncoding
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct XMLWriterTests {
    @Test func everySpecialCharacterIsEscapedInTextAndAttributes() throws {
        let tree = XMLTree("a", attributes: [("v", "<&>\"'\t\n\r")], children: [.text("<&>\"'\r")])
        let xml = try XMLWriter(includesDeclaration: false).write(tree)
        #expect(xml == #"<a v="&lt;&amp;&gt;&quot;&apos;&#x9;&#xA;&#xD;">&lt;&amp;&gt;"'&#xD;</a>"#)
        #expect(try XMLDecoder.parse(Data(xml.utf8)) == tree)
    }

    @Test func elementAndAttributeOrderIsKept() throws {
        let tree = XMLTree(
            "r",
            attributes: [("z", "1"), ("a", "2")],
            children: [.element(XMLTree("z", text: "1")), .element(XMLTree("a", text: "2")), .element(XMLTree("m"))]
        )
        #expect(try XMLWriter(includesDeclaration: false).write(tree) == #"<r z="1" a="2"><z>1</z><a>2</a><m/></r>"#)
    }

    @Test(arguments: ["", "1abc", "a b", "a<b", "-x", "a&b"])
    func invalidNamesAreTypedErrors(name: String) {
        #expect(throws: XMLError.invalidName(name)) { try XMLWriter().write(XMLTree(name)) }
        #expect(throws: XMLError.invalidName(name)) { try XMLWriter().write(XMLTree("ok", attributes: [(name, "v")])) }
    }

    @Test func validNamesIncludeNonASCIIPrefixesAndPunctuation() throws {
        for name in ["naïve", "soap:Envelope", "_x", "a-b.c", "日本"] {
            _ = try XMLWriter().write(XMLTree(name))
        }
    }

    @Test(arguments: [0x0, 0x1, 0x8, 0xB, 0x1F, 0xFFFE, 0xFFFF])
    func charactersXMLCannotHoldAreTypedErrors(scalar: UInt32) throws {
        let text = "a" + String(try #require(Unicode.Scalar(scalar)))
        #expect(throws: XMLError.invalidCharacter(scalar, in: "element t")) {
            try XMLWriter().write(XMLTree("t", text: text))
        }
    }

    @Test func malformedDocumentsAreTypedErrors() {
        #expect(throws: XMLError.self) { try XMLDecoder.parse(Data("<a><b></a>".utf8)) }
        #expect(throws: XMLError.self) { try XMLDecoder.parse(Data("not xml".utf8)) }
    }
}

@Suite struct XMLCodableTests {
    struct Order: Codable, Equatable, Sendable {
        enum CodingKeys: String, CodingKey {
            case id = "@id", currency = "@currency", customer, lines, note, placedAt, paid
        }
        struct Line: Codable, Equatable, Sendable {
            enum CodingKeys: String, CodingKey { case sku = "@sku", quantity, price }
            let sku: String
            let quantity: Int
            let price: Double
        }
        let id: Int
        let currency: String
        let customer: String
        let lines: [Line]
        let note: String?
        let placedAt: Date
        let paid: Bool
    }

    static let order = Order(
        id: 7, currency: "NOK", customer: "Åse & Bo <AS>",
        lines: [.init(sku: "A-1", quantity: 2, price: 9.5), .init(sku: "B\"2", quantity: 1, price: 100)],
        note: nil, placedAt: Date(timeIntervalSince1970: 1_700_000_000), paid: true
    )

    @Test func encodesAttributesNestedElementsArraysInOrderAndLeavesOutNil() throws {
        let xml = String(decoding: try XMLEncoder().encodeDocument(Self.order, rootElement: "order"), as: UTF8.self)
        #expect(
            xml
                == #"<?xml version="1.0" encoding="UTF-8"?><order id="7" currency="NOK"><customer>Åse &amp; Bo &lt;AS&gt;</customer>"#
                + #"<lines><item sku="A-1"><quantity>2</quantity><price>9.5</price></item>"#
                + #"<item sku="B&quot;2"><quantity>1</quantity><price>100.0</price></item></lines>"#
                + "<placedAt>2023-11-14T22:13:20Z</placedAt><paid>true</paid></order>"
        )
    }

    /// A key that names an attribute without its `@` — as XMLCoder reads attributes — fails saying
    /// how to read it; a missing element or attribute says which it looked for.
    @Test func aMissingKeySaysWhatItLookedFor() throws {
        struct Title: Decodable { let title: String }
        struct Author: Decodable { let author: String }
        struct AttributeAuthor: Decodable {
            let author: String
            enum CodingKeys: String, CodingKey { case author = "@author" }
        }
        struct AttributeTitle: Decodable {
            let title: String
            enum CodingKeys: String, CodingKey { case title = "@title" }
        }
        let document = Data(#"<slideshow title="Sample"><slide><title>Overview</title></slide></slideshow>"#.utf8)
        func failure<T: Decodable>(_ type: T.Type) -> String? {
            let result = Result { try XMLDecoder().decode(type, from: document) }
            guard case .failure(DecodingError.keyNotFound(_, let context)) = result else { return nil }
            return context.debugDescription
        }
        #expect(failure(Title.self) == "No element 'title'; the attribute of that name is read with the key '@title'.")
        #expect(failure(Author.self) == "No element 'author'.")
        #expect(failure(AttributeAuthor.self) == "No attribute 'author'.")
        #expect(try XMLDecoder().decode(AttributeTitle.self, from: document).title == "Sample")
    }

    @Test func decodesWhatItEncodesDatesAndOptionalsIncluded() throws {
        let data = try XMLEncoder().encodeDocument(Self.order, rootElement: "order")
        #expect(try XMLDecoder().decode(Order.self, from: data) == Self.order)
        let withNote = Order(
            id: 1, currency: "EUR", customer: "C", lines: [], note: "n", placedAt: Date(timeIntervalSince1970: 0.5),
            paid: false
        )
        #expect(
            try XMLDecoder().decode(Order.self, from: XMLEncoder().encodeDocument(withNote, rootElement: "o"))
                == withNote)
    }

    @Test func dateStrategiesApplyBothWays() throws {
        struct Stamp: Codable, Equatable { let at: Date }
        let stamp = Stamp(at: Date(timeIntervalSince1970: 1_700_000_000.25))
        let data = try XMLEncoder(dateEncoding: .millisecondsSince1970).encodeDocument(stamp, rootElement: "s")
        #expect(String(decoding: data, as: UTF8.self).hasSuffix("<s><at>1700000000250</at></s>"))
        #expect(try XMLDecoder(dateDecoding: .millisecondsSince1970).decode(Stamp.self, from: data) == stamp)
    }

    @Test(arguments: ["nan", "inf", "-infinity", "1e999", "-1e999"])
    func aNumberThatIsNoDateIsADecodingError(text: String) {
        struct Stamp: Codable, Equatable { let at: Date }
        for decoding in [XMLDecoder.DateDecoding.secondsSince1970, .millisecondsSince1970] {
            #expect(throws: DecodingError.self) {
                try XMLDecoder(dateDecoding: decoding).decode(Stamp.self, from: Data("<s><at>\(text)</at></s>".utf8))
            }
        }
    }

    @Test func decodingADocumentThatDoesNotMatchIsADecodingError() {
        #expect(throws: DecodingError.self) {
            try XMLDecoder().decode(
                Order.Line.self, from: Data(#"<item sku="x"><quantity>many</quantity><price>1</price></item>"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try XMLDecoder().decode(Order.Line.self, from: Data(#"<item><quantity>1</quantity></item>"#.utf8))
        }
    }

    @Test func randomUnicodeTextAndAttributesRoundTrip() throws {
        struct Record: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case label = "@label", values }
            let label: String
            let values: [String]
        }
        var generator = SystemRandomNumberGenerator()
        let pools: [[Character]] = [Array("abcXYZ019 "), Array("<>&\"'\t\n;="), Array("éüßñжщ漢字"), Array("🚀👩‍💻🇳🇴")]
        func text() -> String {
            String(
                (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                    pools.randomElement(using: &generator)?.randomElement(using: &generator) ?? "a"
                })
        }
        for _ in 0..<200 {
            let record = Record(
                label: text(), values: (0..<Int.random(in: 0...4, using: &generator)).map { _ in text() })
            let data = try XMLEncoder().encodeDocument(record, rootElement: "record")
            #expect(
                try XMLDecoder().decode(Record.self, from: data) == record, "\(String(decoding: data, as: UTF8.self))")
        }
    }
}

@Suite struct XMLRandomKeyTests {
    /// Keys become element names, so they are drawn from letters and name characters of many scripts.
    @Test func randomUnicodeKeysAndValuesRoundTripThroughADictionary() throws {
        var generator = SystemRandomNumberGenerator()
        let starts = Array("abcXYZ_éüßñжщ漢字かな")
        let rest = starts + Array("0189-.")
        let values: [[Character]] = [Array("abc 019"), Array("<>&\"';="), Array("éж漢"), Array("🚀👩‍💻")]
        for _ in 0..<200 {
            var parameters: [String: ParameterValue] = [:]
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let head = String(starts.randomElement(using: &generator) ?? "a")
                let tail = String(
                    (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                        rest.randomElement(using: &generator) ?? "a"
                    })
                let value = String(
                    (0..<Int.random(in: 1...10, using: &generator)).map { _ in
                        values.randomElement(using: &generator)?.randomElement(using: &generator) ?? "a"
                    })
                parameters[head + tail] = .string(value)
            }
            let document = try XMLWriter().write(XMLEncoder().encode(parameters, rootElement: "p"))
            let decoded = try XMLDecoder().decode([String: String].self, from: Data(document.utf8))
            #expect(decoded.mapValues(ParameterValue.string) == parameters, "\(document)")
        }
    }
}

@Suite struct XMLEncodingTests {
    private func postRequest() throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/xml")))
        request.httpMethod = "PUT"
        return request
    }

    @Test func parametersBecomeADocumentWithContentTypeAndByteLength() throws {
        let request = try XMLEncoding(rootElement: "search").encode(
            postRequest(), with: ["q": "ünï & co", "page": 2, "tags": ["a"]])
        let body = try #require(request.httpBody)
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"<?xml version="1.0" encoding="UTF-8"?><search><page>2</page><q>ünï &amp; co</q><tags><item>a</item></tags></search>"#
        )
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/xml; charset=utf-8")
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(body.count))
        #expect(request.httpMethod == "PUT")
    }

    @Test func anExistingContentTypeIsKept() throws {
        var request = try postRequest()
        request.setValue("text/xml", forHTTPHeaderField: "Content-Type")
        #expect(
            try XMLEncoding().encode(request, with: ["a": 1]).value(forHTTPHeaderField: "Content-Type") == "text/xml")
    }

    @Test func soap11EnvelopesCarryHeaderBodyAndSOAPAction() throws {
        let encoding = XMLEncoding.soap(
            .v1_1, operation: "GetQuote", header: [XMLTree("auth", text: "t")], action: "urn:GetQuote")
        let request = try encoding.encode(postRequest(), with: ["symbol": "AAPL"])
        let xml = String(decoding: try #require(request.httpBody), as: UTF8.self)
        #expect(
            xml
                == #"<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">"#
                + "<soap:Header><auth>t</auth></soap:Header><soap:Body><GetQuote><symbol>AAPL</symbol></GetQuote></soap:Body></soap:Envelope>"
        )
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "text/xml; charset=utf-8")
        #expect(request.value(forHTTPHeaderField: "SOAPAction") == "\"urn:GetQuote\"")
    }

    @Test func soap12EnvelopesUseTheirNamespaceAndActionParameter() throws {
        struct Quote: Encodable, Sendable { let symbol: String }
        let request = try XMLEncoding.soap(.v1_2, operation: "GetQuote", action: "urn:q").encode(
            postRequest(), withEncodable: Quote(symbol: "X"))
        let xml = String(decoding: try #require(request.httpBody), as: UTF8.self)
        #expect(
            xml.contains(
                #"<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><GetQuote><symbol>X</symbol>"#
            ))
        #expect(!xml.contains("soap:Header"))
        #expect(
            request.value(forHTTPHeaderField: "Content-Type") == #"application/soap+xml; charset=utf-8; action="urn:q""#
        )
    }

    @Test func propertyListsAreWrittenAsXMLPlists() throws {
        let request = try XMLEncoding.propertyList.encode(postRequest(), with: ["name": "Ann", "count": 3, "on": true])
        let body = try #require(request.httpBody)
        #expect(String(decoding: body, as: UTF8.self).contains("<plist version=\"1.0\">"))
        let decoded = try PropertyListSerialization.propertyList(from: body, format: nil) as? [String: Any]
        #expect(decoded?["name"] as? String == "Ann")
        #expect(decoded?["count"] as? Int == 3)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
        struct Settings: Codable, Equatable, Sendable { let theme: String }
        let encoded = try XMLEncoding.propertyList.encode(postRequest(), withEncodable: Settings(theme: "dark"))
        #expect(
            try PropertyListDecoder().decode(Settings.self, from: try #require(encoded.httpBody))
                == Settings(theme: "dark"))
    }

    @Test func unwritableValuesAreTypedErrorsNotCrashes() throws {
        let request = try postRequest()
        #expect(throws: ParameterEncodingError.xml(.unsupportedValue("a property list cannot hold null"))) {
            try XMLEncoding.propertyList.encode(request, with: ["a": nil])
        }
        #expect(throws: ParameterEncodingError.xml(.invalidName("bad name"))) {
            try XMLEncoding().encode(request, with: ["bad name": 1])
        }
        #expect(throws: ParameterEncodingError.self) {
            try XMLEncoding().encode(request, with: ["text": .string("nul \u{0}")])
        }
    }

    /// Property lists are XML: a character XML 1.0 forbids, in a key or a string, is a typed error
    /// rather than a document no parser accepts. Both serializations write such characters as they are.
    @Test(arguments: [0x0, 0x1, 0x8, 0xB, 0xC, 0x1F, 0xFFFE, 0xFFFF] as [UInt32])
    func propertyListsRefuseCharactersXMLCannotHold(scalar: UInt32) throws {
        let request = try postRequest()
        let character = String(Character(try #require(Unicode.Scalar(scalar))))
        let expected = ParameterEncodingError.xml(.invalidCharacter(scalar, in: "property list"))
        #expect(throws: expected) { try XMLEncoding.propertyList.encode(request, with: ["a\(character)b": "value"]) }
        #expect(throws: expected) { try XMLEncoding.propertyList.encode(request, with: ["key": .string(character)]) }
        #expect(throws: expected) {
            try XMLEncoding.propertyList.encode(request, withEncodable: ["key": ["nested \(character)"]])
        }
    }

    @Test func propertyListsKeepEveryCharacterXMLAllows() throws {
        let text = "tab\t lf\n cr\r é 日本 😀 \u{D7FF}\u{E000}\u{FFFD}\u{10000}"
        let request = try XMLEncoding.propertyList.encode(postRequest(), with: ["text": .string(text)])
        let decoded = try PropertyListSerialization.propertyList(from: try #require(request.httpBody), format: nil)
        #expect((decoded as? [String: String])?["text"]?.unicodeScalars.count == text.unicodeScalars.count)
    }
}
