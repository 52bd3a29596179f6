import Foundation
import StrataEncoding
import StrataTesting
import Testing

/// Strata's XML parser against documents that are broken, hostile or merely unusual: every one is a
/// tree or a typed error, never a crash or a hang.
@Suite struct XMLReaderTests {
    private func parse(_ text: String) throws(XMLError) -> XMLTree {
        try XMLDecoder.parse(Data(text.utf8))
    }

    private func reason(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch .malformedDocument(_, _, let reason) {
            return reason
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: [
        "", "   ", "text", "<a>", "<a></b>", "<a><b></a></b>", "<a/><b/>", "<a/>text", "text<a/>", "<a x='1' x='2'/>",
        "<a x=1/>", "<a x/>", "<a x='<'/>", "<a>&unknown;</a>", "<a>&#0;</a>", "<a>&#xD800;</a>", "<a>&#xFFFE;</a>",
        "<a>&#;</a>", "<a>& b</a>", "<a>\u{0}</a>", "<a>\u{1}</a>", "<a>\u{FFFF}</a>", "<1a/>", "<-a/>",
        "<a b='1'c='2'/>",
        "<a><!-- open </a>", "<a><![CDATA[ open </a>", "<a><?pi open </a>", "<!DOCTYPE a [ <!ENTITY x 'y'> <a/>",
        "<a></a ", "<a/><!DOCTYPE a>", "<?xml version='1.0'?><?xml version='1.0'?><a/>", "<a><!DOCTYPE a></a>",
        "<a><![CDATA[x]]></a><![CDATA[y]]>", "</a>", "<a x='1'", "<a", "<", "<a>&amp</a>",
    ])
    func malformedDocumentsAreTypedErrors(document: String) {
        #expect(reason(document) != nil, "\(document.debugDescription)")
    }

    @Test func errorsSayWhereAndWhat() {
        #expect(throws: XMLError.malformedDocument(line: 3, column: 4, reason: "the end tag does not match <b>")) {
            try parse("<a>\n <b>\n  x</a></b>")
        }
        #expect(reason("<a>&nbsp;</a>")?.contains("'&nbsp;' is not defined") == true)
        // Names quoted from a hostile document are cut short.
        let long = String(repeating: "n", count: 100_000)
        #expect((reason("<\(long)></\(long)x>")?.count ?? .max) < 300)
    }

    @Test func invalidUTF8IsATypedError() {
        for bytes: [UInt8] in [
            [0x3C, 0x61, 0x3E, 0xFF, 0x3C, 0x2F, 0x61, 0x3E], [0x3C, 0x61, 0xC3, 0x3E, 0x3C, 0x2F, 0x61, 0xC3, 0x3E],
        ] {
            #expect(throws: XMLError.self) { try XMLDecoder.parse(Data(bytes)) }
        }
    }

    @Test func everyPrefixOfADocumentIsATypedErrorNeverACrash() throws {
        let document = """
            <?xml version="1.0" encoding="UTF-8"?><!-- c --><!DOCTYPE r [<!ELEMENT r ANY>]>
            <r a="1" b='&lt;&#x41;'><x:s xmlns:x="urn:x">t&amp;u<![CDATA[<v>]]></x:s><?pi data?><e/>ü😀</r>
            """
        let bytes = Array(document.utf8)
        _ = try XMLDecoder.parse(Data(bytes))
        for length in 0..<(bytes.count - 1) {
            #expect(throws: XMLError.self, "\(length)") { try XMLDecoder.parse(Data(bytes[0..<length])) }
        }
    }

    /// Seconds of CPU under ThreadSanitizer (each of the thousands of errors thrown has Swift
    /// Testing capture a backtrace), so on a thread of its own: see ``runOnThread(stackSize:_:)``.
    @Test func randomlyDamagedDocumentsAreTreesOrTypedErrors() async {
        await runOnThread(stackSize: 512 * 1024) {
            var generator = SeededGenerator(seed: 14)
            let document = Array(
                #"<?xml version="1.0"?><r a="1"><s>t&amp;u</s><![CDATA[x]]><!--c--><e b='2'/>é</r>"#.utf8)
            let alphabet = Array("<>/&;='\"!?[]-x#a ".utf8) + [0, 0xC3, 0xFF]
            for _ in 0..<5_000 {
                var damaged = document
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let index = Int.random(in: 0..<damaged.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: damaged[index] = alphabet.randomElement(using: &generator) ?? 0
                    case 1: damaged.remove(at: index)
                    default: damaged.insert(alphabet.randomElement(using: &generator) ?? 0, at: index)
                    }
                }
                do {
                    _ = try XMLDecoder.parse(Data(damaged))
                } catch {
                    // A typed error is what is expected; the point is that nothing traps.
                }
            }
        }
    }

    @Test func entitiesDeclaredInADTDAreNeverExpandedOrFetched() {
        var entities = #"<!ENTITY l0 "lol">"#
        for level in 1...9 {
            entities += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">"
        }
        let bomb = #"<?xml version="1.0"?><!DOCTYPE r [\#(entities)]><r>&l9;</r>"#
        #expect(reason(bomb)?.contains("'&l9;' is not defined") == true)
        let external = #"<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]><r>&x;</r>"#
        #expect(reason(external)?.contains("'&x;' is not defined") == true)
        // A DTD that declares what is not used is skipped, quotes, brackets and comments included.
        let harmless = #"<!DOCTYPE r PUBLIC "-//x//[>" 'y' [<!-- ]> ' --><!ATTLIST r a CDATA "]>">]><r/>"#
        #expect(reason(harmless) == nil)
    }

    /// Seconds of CPU under ThreadSanitizer, so on a thread of its own: see
    /// ``runOnThread(stackSize:_:)``.
    @Test func hostileShapesAreReadInLinearTime() async throws {
        // Thousands of attributes on one element, a long text, many siblings.
        let (attributes, duplicate, text, siblings) = await runOnThread(stackSize: 512 * 1024) {
            let attributes = (0..<20_000).map { "a\($0)='\($0)'" }.joined(separator: " ")
            return (
                (try? parse("<r \(attributes)/>"))?.attributes.count,
                reason("<r \(attributes) a19999='x'/>"),
                (try? parse("<r>\(String(repeating: "x&amp;", count: 200_000))</r>"))?.text.utf8.count,
                (try? parse("<r>\(String(repeating: "<e/>", count: 100_000))</r>"))?.children.count
            )
        }
        #expect(attributes == 20_000)
        #expect(duplicate?.contains("appears twice") == true)
        #expect(text == 400_000)
        #expect(siblings == 100_000)
    }

    @Test func otherEncodingsAreReadAsDeclared() throws {
        let latin1 = Data(#"<?xml version="1.0" encoding="ISO-8859-1"?><r>caf"#.utf8) + Data([0xE9]) + Data("</r>".utf8)
        #expect(try XMLDecoder.parse(latin1).text == "café")
        let utf16 = try #require("<r>日本 ü</r>".data(using: .utf16))
        #expect(try XMLDecoder.parse(utf16).text == "日本 ü")
        let bom = Data([0xEF, 0xBB, 0xBF]) + Data("<r>x</r>".utf8)
        #expect(try XMLDecoder.parse(bom).text == "x")
        #expect(throws: XMLError.self) {
            try XMLDecoder.parse(Data(#"<?xml version="1.0" encoding="EBCDIC"?><r/>"#.utf8))
        }
    }

    @Test func commentsProcessingInstructionsAndIndentationAreNotContent() throws {
        let tree = try parse(
            """
            <?xml version="1.0"?>
            <!-- before --><?style x?>
            <r>
              <!-- inside -->
              <a>1</a><?pi?>
              <b> 2 </b>
            </r>
            <!-- after -->
            """)
        #expect(
            tree == XMLTree("r", children: [.element(XMLTree("a", text: "1")), .element(XMLTree("b", text: " 2 "))]))
    }
}
