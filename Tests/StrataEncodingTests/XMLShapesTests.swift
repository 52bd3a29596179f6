import Foundation
import StrataEncoding
import Testing

/// Documents as services write them: repeated elements, attributes next to text, namespaces.
@Suite struct XMLArrayShapeTests {
    struct Slide: Codable, Equatable {
        enum CodingKeys: String, CodingKey { case type = "@type", title, item }
        let type: String?
        let title: String
        let item: [String]?
    }

    struct Slideshow: Codable, Equatable {
        enum CodingKeys: String, CodingKey { case title = "@title", slide }
        let title: String
        let slide: [Slide]
    }

    @Test func repeatedElementsWithoutAWrapperAreAnArray() throws {
        let xml = """
            <slideshow title="Sample">
              <slide type="all"><title>Wake up</title></slide>
              <slide><title>Overview</title><item>Why</item><item>Who</item></slide>
            </slideshow>
            """
        let show = try XMLDecoder().decode(Slideshow.self, from: Data(xml.utf8))
        #expect(show.title == "Sample")
        #expect(show.slide.map(\.title) == ["Wake up", "Overview"])
        #expect(show.slide[0].type == "all" && show.slide[1].type == nil)
        #expect(show.slide[1].item == ["Why", "Who"])
    }

    @Test func oneRepeatedElementIsAnArrayOfOne() throws {
        let shows = [
            #"<slideshow title="t"><slide><title>Only</title></slide></slideshow>"#,
            #"<slideshow title="t"><slide type="x"><title>Only</title></slide></slideshow>"#,
            #"<slideshow title="t"><slide><title>Only</title><item>a</item></slide></slideshow>"#,
        ]
        for xml in shows {
            let show = try XMLDecoder().decode(Slideshow.self, from: Data(xml.utf8))
            #expect(show.slide.map(\.title) == ["Only"], "\(xml)")
        }
        struct Tags: Codable, Equatable { let tag: [String] }
        #expect(try XMLDecoder().decode(Tags.self, from: Data("<t><tag>a</tag></t>".utf8)) == Tags(tag: ["a"]))
    }

    @Test func noElementIsAnEmptyArrayAndAnOptionalArrayIsNil() throws {
        #expect(try XMLDecoder().decode(Slideshow.self, from: Data(#"<slideshow title="t"/>"#.utf8)).slide == [])
        struct Maybe: Codable { let tag: [String]? }
        #expect(try XMLDecoder().decode(Maybe.self, from: Data("<m/>".utf8)).tag == nil)
    }

    @Test func wrappedArraysDecodeWhateverTheItemName() throws {
        struct Bucket: Codable, Equatable { let Name: String }
        struct Result: Codable, Equatable {
            let Buckets: [Bucket]
            let tags: [String]
        }
        let xml = """
            <r><Buckets><Bucket><Name>a</Name></Bucket><Bucket><Name>b</Name></Bucket></Buckets>
            <tags><tag>x</tag></tags></r>
            """
        let result = try XMLDecoder().decode(Result.self, from: Data(xml.utf8))
        #expect(result == Result(Buckets: [.init(Name: "a"), .init(Name: "b")], tags: ["x"]))
    }

    @Test func aShapeNamedPerKeySettlesWhatCannotBeWorkedOut() throws {
        struct Bucket: Codable, Equatable { let Name: String }
        struct Result: Codable, Equatable { let Buckets: [Bucket] }
        // One wrapped bucket looks exactly like one repeated element holding a member.
        let xml = "<r><Buckets><Bucket><Name>a</Name></Bucket></Buckets></r>"
        #expect(throws: DecodingError.self) { try XMLDecoder().decode(Result.self, from: Data(xml.utf8)) }
        let decoder = XMLDecoder(arrayShapes: ["Buckets": .wrapped(itemName: "Bucket")])
        #expect(try decoder.decode(Result.self, from: Data(xml.utf8)) == Result(Buckets: [.init(Name: "a")]))
        // And a repeated element whose members repeat looks like a wrapper, unless told.
        struct Point: Codable, Equatable { let x: Int }
        struct Shape: Codable, Equatable { let point: [Point] }
        struct Drawing: Codable, Equatable { let shape: [Shape] }
        let drawing = "<d><shape><point><x>1</x></point><point><x>2</x></point></shape></d>"
        let repeated = XMLDecoder(arrayShapes: ["shape": .repeated])
        #expect(
            try repeated.decode(Drawing.self, from: Data(drawing.utf8))
                == Drawing(shape: [Shape(point: [Point(x: 1), Point(x: 2)])]))
    }

    static let show = Slideshow(
        title: "Sample & more",
        slide: [
            Slide(type: "all", title: "Wake up", item: nil),
            Slide(type: nil, title: "Overview", item: ["Why <this>", "Who"]),
        ])

    @Test(arguments: [XMLArrayShape.repeated, .wrapped(itemName: "item"), .wrapped(itemName: "entry")])
    func eachShapeRoundTrips(shape: XMLArrayShape) throws {
        let encoder = XMLEncoder(arrayShape: shape)
        let data = try encoder.encodeDocument(Self.show, rootElement: "slideshow")
        let text = String(decoding: data, as: UTF8.self)
        switch shape {
        case .repeated:
            #expect(text.contains("<slide type=\"all\"><title>Wake up</title></slide><slide><title>Overview</title>"))
            #expect(text.contains("<item>Why &lt;this&gt;</item><item>Who</item>"))
        case .wrapped(let name):
            #expect(text.contains("<slide><\(name) type=\"all\"><title>Wake up</title></\(name)>"))
            #expect(text.contains("<item><\(name)>Why &lt;this&gt;</\(name)><\(name)>Who</\(name)></item>"))
        }
        let decoder = XMLDecoder(arrayShapes: ["slide": shape, "item": shape])
        #expect(try decoder.decode(Slideshow.self, from: data) == Self.show)
        if shape != .wrapped(itemName: "entry") {
            // The default shapes need no hint.
            #expect(try XMLDecoder().decode(Slideshow.self, from: data) == Self.show)
        }
    }

    @Test func aShapePerKeyOverridesTheEncodersDefault() throws {
        let encoder = XMLEncoder(arrayShapes: ["slide": .repeated])
        let text = String(decoding: try encoder.encodeDocument(Self.show, rootElement: "s"), as: UTF8.self)
        #expect(text.contains("</slide><slide>"))
        #expect(text.contains("<item><item>Why"))
        #expect(try XMLDecoder().decode(Slideshow.self, from: Data(text.utf8)) == Self.show)
    }

    @Test func arraysThatCannotRepeatAreWrappedEvenWhenTheShapeIsRepeated() throws {
        struct Grid: Codable, Equatable { let row: [[Int]] }
        let grid = Grid(row: [[1, 2], [3]])
        let data = try XMLEncoder(arrayShape: .repeated).encodeDocument(grid, rootElement: "grid")
        #expect(
            String(decoding: data, as: UTF8.self).hasSuffix(
                "<grid><row><item>1</item><item>2</item></row><row><item>3</item></row></grid>"))
        #expect(try XMLDecoder().decode(Grid.self, from: data) == grid)
        let root = try XMLEncoder(arrayShape: .repeated).encodeDocument([1, 2], rootElement: "numbers")
        #expect(String(decoding: root, as: UTF8.self).hasSuffix("<numbers><item>1</item><item>2</item></numbers>"))
        #expect(try XMLDecoder().decode([Int].self, from: root) == [1, 2])
    }

    @Test func anEmptyArrayIsNothingWhenRepeatedAndAnEmptyWrapperWhenWrapped() throws {
        struct Tags: Codable, Equatable { let tag: [String] }
        let repeated = try XMLEncoder(arrayShape: .repeated).encodeDocument(Tags(tag: []), rootElement: "t")
        #expect(String(decoding: repeated, as: UTF8.self).hasSuffix("<t></t>"))
        let wrapped = try XMLEncoder().encodeDocument(Tags(tag: []), rootElement: "t")
        #expect(String(decoding: wrapped, as: UTF8.self).hasSuffix("<t><tag/></t>"))
        #expect(try XMLDecoder().decode(Tags.self, from: repeated) == Tags(tag: []))
        #expect(try XMLDecoder().decode(Tags.self, from: wrapped) == Tags(tag: []))
    }
}

@Suite struct XMLTextAndAttributeTests {
    struct Price: Codable, Equatable {
        enum CodingKeys: String, CodingKey { case currency = "@currency", amount = "#text" }
        let currency: String
        let amount: Decimal
    }

    struct Line: Codable, Equatable {
        let name: String
        let price: Price
    }

    @Test func attributesAndTextMapToAttributeKeysAndTheTextKey() throws {
        let xml = #"<line><name>Tea</name><price currency="EUR">12.50</price></line>"#
        let line = try XMLDecoder().decode(Line.self, from: Data(xml.utf8))
        #expect(line == Line(name: "Tea", price: Price(currency: "EUR", amount: Decimal(string: "12.50") ?? 0)))
        let encoded = try XMLEncoder().encodeDocument(line, rootElement: "line")
        #expect(String(decoding: encoded, as: UTF8.self).hasSuffix(#"<price currency="EUR">12.5</price></line>"#))
        #expect(try XMLDecoder().decode(Line.self, from: encoded) == line)
    }

    @Test func emptyAndSelfClosingElementsAndWhitespace() throws {
        struct Person: Codable, Equatable {
            let first: String
            let middle: String?
            let nickname: String?
            let note: String
            let padded: String
            let age: Int
        }
        let xml = """
            <person>
              <first>Ann</first>
              <middle/>
              <nickname>   </nickname>
              <note></note>
              <padded>  two  words  </padded>
              <age>
                42
              </age>
            </person>
            """
        let person = try XMLDecoder().decode(Person.self, from: Data(xml.utf8))
        #expect(person == Person(first: "Ann", middle: nil, nickname: nil, note: "", padded: "  two  words  ", age: 42))
    }

    @Test func cdataReferencesAndLineEndsDecodeAsWritten() throws {
        struct Doc: Codable, Equatable {
            let code: String
            let refs: String
            let mixed: String
            let lines: String
        }
        let xml =
            "<doc><code><![CDATA[if a < b && c > d { <tag/> }]]></code>"
            + "<refs>&lt;&gt;&amp;&apos;&quot; &#65;&#x42;&#x1F600; caf&#xE9;</refs>"
            + "<mixed>a<![CDATA[<b>]]>c&amp;d</mixed><lines>one\r\ntwo\rthree&#xD;</lines></doc>"
        let doc = try XMLDecoder().decode(Doc.self, from: Data(xml.utf8))
        #expect(doc.code == "if a < b && c > d { <tag/> }")
        #expect(doc.refs == "<>&'\" AB😀 café")
        #expect(doc.mixed == "a<b>c&d")
        #expect(doc.lines == "one\ntwo\nthree\r")
    }

    @Test func attributeValuesAreNormalizedAsXMLSays() throws {
        struct Tag: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case value = "@value", kept = "@kept" }
            let value: String
            let kept: String
        }
        let xml = "<t value='a\tb\r\nc\nd &amp; &quot;' kept=\"x&#x9;y&#xA;z\"/>"
        #expect(try XMLDecoder().decode(Tag.self, from: Data(xml.utf8)) == Tag(value: "a b c d & \"", kept: "x\ty\nz"))
    }

    @Test func mixedContentKeepsItsTextInOrder() throws {
        struct Paragraph: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case style = "@class", text = "#text", b, a }
            struct Link: Codable, Equatable {
                enum CodingKeys: String, CodingKey { case href = "@href", label = "#text" }
                let href: String
                let label: String
            }
            let style: String?
            let text: String
            let b: [String]
            let a: [Link]
        }
        let xml = #"<p class="intro">Hello <b>bold</b> and <a href="/x">a link</a>, <b>again</b>.</p>"#
        let paragraph = try XMLDecoder().decode(Paragraph.self, from: Data(xml.utf8))
        #expect(paragraph.text == "Hello  and , .")
        #expect(paragraph.b == ["bold", "again"])
        #expect(paragraph.a == [.init(href: "/x", label: "a link")])
        // A string of the whole element is all its text, in order.
        #expect(try XMLDecoder().decode(String.self, from: Data(xml.utf8)) == "Hello bold and a link, again.")
    }

    @Test func aTextKeyOrAttributeThatIsNotASingleValueIsATypedError() {
        struct Bad: Encodable {
            enum CodingKeys: String, CodingKey { case list = "@list" }
            let list: [Int]
        }
        #expect(throws: XMLError.self) { try XMLEncoder().encodeDocument(Bad(list: [1]), rootElement: "b") }
    }
}

@Suite struct XMLNamespaceTests {
    struct Quote: Codable, Equatable {
        enum CodingKeys: String, CodingKey { case symbol = "@symbol", price }
        let symbol: String
        let price: Double
    }

    @Test func elementsAndAttributesMatchByLocalName() throws {
        let xml = """
            <m:Quote xmlns:m="urn:market" xmlns:x="urn:x" x:symbol="AAPL"><m:price>1.5</m:price></m:Quote>
            """
        #expect(try XMLDecoder().decode(Quote.self, from: Data(xml.utf8)) == Quote(symbol: "AAPL", price: 1.5))
    }

    @Test func keepingPrefixesComparesQualifiedNames() throws {
        struct Prefixed: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case symbol = "@x:symbol", price = "m:price", namespace = "@xmlns:m" }
            let symbol: String
            let price: Double
            let namespace: String
        }
        let xml = #"<m:Quote xmlns:m="urn:market" x:symbol="A"><m:price>2</m:price><price>9</price></m:Quote>"#
        let decoder = XMLDecoder(keepsNamespacePrefixes: true)
        #expect(
            try decoder.decode(Prefixed.self, from: Data(xml.utf8))
                == Prefixed(symbol: "A", price: 2, namespace: "urn:market"))
        #expect(throws: DecodingError.self) { try decoder.decode(Quote.self, from: Data(xml.utf8)) }
        // A key with a prefix matches that qualified name even when names match by local name.
        struct Price: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case price = "m:price" }
            let price: Double
        }
        #expect(try XMLDecoder().decode(Price.self, from: Data(xml.utf8)) == Price(price: 2))
    }

    @Test func namespaceDeclarationsAreNotAttributes() throws {
        let xml = #"<q xmlns="urn:a" xmlns:b="urn:b" symbol="S"><price>1</price></q>"#
        let keys = try XMLDecoder().decode([String: String].self, from: Data(xml.utf8))
        #expect(keys == ["@symbol": "S", "price": "1"])
    }

    static let prefixes = ["soapenv", "S", "env", "soap", "SOAP-ENV"]

    @Test(arguments: prefixes)
    func soapEnvelopesWithAnyPrefixDecode(prefix: String) throws {
        for version in [XMLEncoding.SOAPVersion.v1_1, .v1_2] {
            let xml = """
                <?xml version="1.0"?>
                <\(prefix):Envelope xmlns:\(prefix)="\(version.namespace)">
                  <\(prefix):Header><t:Trace xmlns:t="urn:t">1</t:Trace></\(prefix):Header>
                  <\(prefix):Body>
                    <m:GetQuoteResponse xmlns:m="urn:market" symbol="IBM"><m:price>140.25</m:price></m:GetQuoteResponse>
                  </\(prefix):Body>
                </\(prefix):Envelope>
                """
            let quote = try XMLDecoder().decode(Quote.self, fromSOAPEnvelope: Data(xml.utf8))
            #expect(quote == Quote(symbol: "IBM", price: 140.25))
        }
    }

    @Test func aDocumentThatIsNotAnEnvelopeIsATypedError() {
        #expect(throws: XMLError.self) { try XMLDecoder().decode(Quote.self, fromSOAPEnvelope: Data("<q/>".utf8)) }
        #expect(throws: XMLError.self) {
            try XMLDecoder().decode(
                Quote.self, fromSOAPEnvelope: Data("<s:Envelope xmlns:s='x'><s:Body/></s:Envelope>".utf8))
        }
    }
}

@Suite struct XMLTypedValueTests {
    @Test func booleansReadTheirFourSpellings() throws {
        for (text, value) in [("true", true), ("1", true), (" false ", false), ("0", false)] {
            #expect(try XMLDecoder().decode(Bool.self, from: Data("<b>\(text)</b>".utf8)) == value)
        }
        for text in ["yes", "TRUE1", "", "2"] {
            #expect(throws: DecodingError.self) {
                try XMLDecoder().decode(Bool.self, from: Data("<b>\(text)</b>".utf8))
            }
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try XMLDecoder().decode(type, from: Data("<v>\(text)</v>".utf8))
    }

    private func isOverflow(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch DecodingError.dataCorrupted(let context) {
            return context.debugDescription.contains("does not fit")
        } catch {
            return false
        }
    }

    @Test func everyIntegerWidthReadsItsRangeAndRefusesOverflowWithATypedError() throws {
        func check<T: FixedWidthInteger & Decodable>(_ type: T.Type) throws {
            #expect(try decode(T.self, String(T.max)) == T.max)
            #expect(try decode(T.self, String(T.min)) == T.min)
            #expect(try decode(T.self, " 7\n") == 7)
            let above = (String(T.max).dropLast() + "9") + "0"
            #expect(isOverflow { _ = try decode(T.self, String(above)) }, "\(T.self) \(above)")
            if T.isSigned {
                #expect(isOverflow { _ = try decode(T.self, "-" + String(above)) }, "\(T.self)")
            } else {
                #expect(throws: DecodingError.self) { try decode(T.self, "-1") }
            }
            #expect(throws: DecodingError.self) { try decode(T.self, "12x") }
            #expect(throws: DecodingError.self) { try decode(T.self, "1.5") }
        }
        try check(Int.self)
        try check(Int8.self)
        try check(Int16.self)
        try check(Int32.self)
        try check(Int64.self)
        try check(UInt.self)
        try check(UInt8.self)
        try check(UInt16.self)
        try check(UInt32.self)
        try check(UInt64.self)
    }

    @Test func floatingPointAndDecimal() throws {
        #expect(try decode(Double.self, "1.5e3") == 1500)
        #expect(try decode(Double.self, "-0.25") == -0.25)
        #expect(try decode(Double.self, "INF") == .infinity)
        #expect(try decode(Float.self, "3.25") == 3.25)
        #expect(try decode(Decimal.self, "12.50") == Decimal(string: "12.5"))
        #expect(try decode(Decimal.self, "-1e2") == Decimal(-100))
        for bad in ["", "abc", "1.2.3", "12abc"] {
            #expect(throws: DecodingError.self) { try decode(Decimal.self, bad) }
            #expect(throws: DecodingError.self) { try decode(Double.self, bad) }
        }
    }

    struct Stamp: Codable, Equatable { let at: Date }

    @Test func dateStrategiesLikeTheJSONDecoders() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        let cases: [(XMLDecoder.DateDecoding, String)] = [
            (.iso8601, "2023-11-14T22:13:20.500Z"),
            (.secondsSince1970, "1700000000.5"),
            (.millisecondsSince1970, "1700000000500"),
            (.deferredToDate, String(date.timeIntervalSinceReferenceDate)),
            (.formatted(formatter), "2023-11-14 22:13:20.500"),
            (.custom({ $0 == "then" ? date : nil }), "then"),
        ]
        for (strategy, text) in cases {
            let decoded = try XMLDecoder(dateDecoding: strategy).decode(
                Stamp.self, from: Data("<s><at>\(text)</at></s>".utf8))
            #expect(abs(decoded.at.timeIntervalSince(date)) < 0.001, "\(text)")
            #expect(throws: DecodingError.self) {
                try XMLDecoder(dateDecoding: strategy).decode(Stamp.self, from: Data("<s><at>never</at></s>".utf8))
            }
        }
        #expect(
            try XMLDecoder().decode(Stamp.self, from: Data("<s><at>2023-11-14T22:13:20Z</at></s>".utf8)).at
                == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func urlsDataOptionalsAndRawValueEnums() throws {
        enum Kind: String, Codable { case fruit, vegetable }
        enum Level: Int, Codable { case low = 1, high = 9 }
        struct Item: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case kind = "@kind", level, link, blob, note, kinds }
            let kind: Kind
            let level: Level
            let link: URL
            let blob: Data
            let note: String?
            let kinds: [Kind]
        }
        let item = Item(
            kind: .fruit, level: .high, link: URL(string: "https://example.com/a?b=c&d") ?? URL(fileURLWithPath: "/"),
            blob: Data([0, 1, 2, 250]), note: nil, kinds: [.vegetable])
        let data = try XMLEncoder(arrayShape: .repeated).encodeDocument(item, rootElement: "item")
        #expect(
            String(decoding: data, as: UTF8.self).hasSuffix(
                #"<item kind="fruit"><level>9</level><link>https://example.com/a?b=c&amp;d</link><blob>AAEC+g==</blob><kinds>vegetable</kinds></item>"#
            ))
        #expect(try XMLDecoder().decode(Item.self, from: data) == item)
        #expect(throws: DecodingError.self) {
            try XMLDecoder().decode(Kind.self, from: Data("<k>mineral</k>".utf8))
        }
        #expect(throws: DecodingError.self) { try XMLDecoder().decode(Data.self, from: Data("<d>!!</d>".utf8)) }
    }

    class Animal: Codable {
        let name: String
        init(name: String) { self.name = name }
    }

    final class Dog: Animal {
        enum CodingKeys: String, CodingKey { case breed = "@breed", tricks }
        let breed: String
        let tricks: [String]
        init(name: String, breed: String, tricks: [String]) {
            self.breed = breed
            self.tricks = tricks
            super.init(name: name)
        }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            breed = try container.decode(String.self, forKey: .breed)
            tricks = try container.decode([String].self, forKey: .tricks)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(breed, forKey: .breed)
            try container.encode(tricks, forKey: .tricks)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test func superDecoderAndSuperEncoderShareTheElement() throws {
        let data = try XMLEncoder(arrayShape: .repeated).encodeDocument(
            Dog(name: "Rex", breed: "collie", tricks: ["sit", "roll"]), rootElement: "dog")
        #expect(
            String(decoding: data, as: UTF8.self).hasSuffix(
                #"<dog breed="collie"><tricks>sit</tricks><tricks>roll</tricks><name>Rex</name></dog>"#))
        let dog = try XMLDecoder().decode(Dog.self, from: data)
        #expect(dog.name == "Rex" && dog.breed == "collie" && dog.tricks == ["sit", "roll"])
    }

    @Test func nestedContainersDecodeByHand() throws {
        struct Box: Decodable, Equatable {
            let width: Int
            let labels: [String]
            enum Outer: String, CodingKey { case size, labels }
            enum Size: String, CodingKey { case width = "@w" }
            init(from decoder: any Decoder) throws {
                let outer = try decoder.container(keyedBy: Outer.self)
                width = try outer.nestedContainer(keyedBy: Size.self, forKey: .size).decode(Int.self, forKey: .width)
                var labels = try outer.nestedUnkeyedContainer(forKey: .labels)
                var all: [String] = []
                while !labels.isAtEnd { all.append(try labels.decode(String.self)) }
                self.labels = all
            }
        }
        let xml = #"<box><size w="3"/><labels>a</labels><labels>b</labels></box>"#
        let box = try XMLDecoder().decode(Box.self, from: Data(xml.utf8))
        #expect(box.width == 3 && box.labels == ["a", "b"])
    }
}
