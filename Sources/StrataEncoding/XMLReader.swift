import Foundation

/// A parsed XML document: its nodes in document order, each element followed by its subtree.
///
/// Flat arrays rather than a tree of values: decoding reads an element's children by index, with no
/// copying and no reference counting per element.
final class XMLNodes {
    enum Kind: UInt8 {
        case element
        case text
        /// Whitespace between the child elements of an element that holds no other text: indentation.
        case ignorableText
    }

    struct Node {
        /// The element's qualified name, or the text of a text node.
        var name: String
        /// The UTF-8 offset of the colon in a prefixed element name, or -1.
        var colon: Int32
        var kind: Kind
        /// Whether an element holds non-whitespace text of its own.
        var hasText: Bool
        /// The index past this node's subtree: its next sibling, if it has one.
        var end: Int32
        var firstAttribute: Int32
        var attributeEnd: Int32
    }

    struct Attribute {
        var name: String
        var colon: Int32
        var value: String
        /// `xmlns` or `xmlns:prefix`: a namespace declaration, not an attribute of the data.
        var declaresNamespace: Bool { name.utf8.starts(with: "xmlns".utf8) && (colon == 5 || name.utf8.count == 5) }
    }

    let nodes: [Node]
    let attributes: [Attribute]

    init(nodes: [Node], attributes: [Attribute]) {
        self.nodes = nodes
        self.attributes = attributes
    }

    /// The element children of `element`, in order.
    func elementChildren(of element: Int) -> [Int] {
        var children: [Int] = []
        var child = element + 1
        let end = Int(nodes[element].end)
        while child < end {
            if nodes[child].kind == .element { children.append(child) }
            child = Int(nodes[child].end)
        }
        return children
    }

    /// The text directly inside `element`, its child elements' text left out.
    func ownText(of element: Int) -> String {
        var text = ""
        var child = element + 1
        let end = Int(nodes[element].end)
        while child < end {
            if nodes[child].kind == .text { text += nodes[child].name }
            child = Int(nodes[child].end)
        }
        return text
    }

    /// All the text inside `element`, in document order, descendants included.
    func textContent(of element: Int) -> String {
        let end = Int(nodes[element].end)
        // The common case, an element holding only text, needs no concatenation.
        if end == element + 2, nodes[element + 1].kind == .text { return nodes[element + 1].name }
        var text = ""
        for index in (element + 1)..<max(element + 1, end) where nodes[index].kind == .text {
            text += nodes[index].name
        }
        return text
    }

    /// Whether `element` has no attributes, no child elements and no text but whitespace.
    func isEmpty(_ element: Int) -> Bool {
        let node = nodes[element]
        guard node.firstAttribute == node.attributeEnd, !node.hasText else { return false }
        var child = element + 1
        while child < Int(node.end) {
            if nodes[child].kind == .element { return false }
            if nodes[child].kind == .text, !nodes[child].name.utf8.allSatisfy(XMLReader.isWhitespace) { return false }
            child = Int(nodes[child].end)
        }
        return true
    }

    /// The document as an ``XMLTree`` rooted at `element`, built without recursion.
    func tree(at element: Int = 0) -> XMLTree {
        func shell(_ index: Int) -> XMLTree {
            let node = nodes[index]
            let attributes = attributes[Int(node.firstAttribute)..<Int(node.attributeEnd)].map { ($0.name, $0.value) }
            return XMLTree(node.name, attributes: attributes)
        }
        var open: [(tree: XMLTree, end: Int)] = [(shell(element), Int(nodes[element].end))]
        var index = element + 1
        while true {
            while let last = open.last, index >= last.end {
                let finished = open.removeLast().tree
                guard !open.isEmpty else { return finished }
                open[open.count - 1].tree.children.append(.element(finished))
            }
            let node = nodes[index]
            switch node.kind {
            case .element: open.append((shell(index), Int(node.end)))
            case .text: open[open.count - 1].tree.children.append(.text(node.name))
            case .ignorableText: break
            }
            index += 1
        }
    }

    /// The nodes of `tree`, flattened without recursion; throws if it nests deeper than `maximumDepth`.
    static func flattening(_ tree: XMLTree, maximumDepth: Int) throws(XMLError) -> XMLNodes {
        var document = (nodes: [Node](), attributes: [Attribute]())
        var open: [(tree: XMLTree, index: Int, next: Int, hasElements: Bool)] = []
        func start(_ element: XMLTree) throws(XMLError) {
            guard open.count < maximumDepth else { throw .nestingTooDeep(maximum: maximumDepth) }
            let firstAttribute = Int32(document.attributes.count)
            for attribute in element.attributes {
                document.attributes.append(
                    Attribute(name: attribute.name, colon: XMLReader.colon(in: attribute.name), value: attribute.value))
            }
            let hasText = element.children.contains {
                if case .text(let text) = $0 { !text.utf8.allSatisfy(XMLReader.isWhitespace) } else { false }
            }
            document.nodes.append(
                Node(
                    name: element.name, colon: XMLReader.colon(in: element.name), kind: .element, hasText: hasText,
                    end: 0, firstAttribute: firstAttribute, attributeEnd: Int32(document.attributes.count)))
            let hasElements = element.children.contains { if case .element = $0 { true } else { false } }
            open.append((element, document.nodes.count - 1, 0, hasElements))
        }
        try start(tree)
        while let (element, index, next, hasElements) = open.last {
            guard next < element.children.count else {
                document.nodes[index].end = Int32(document.nodes.count)
                open.removeLast()
                continue
            }
            open[open.count - 1].next += 1
            switch element.children[next] {
            case .element(let child): try start(child)
            case .text(let text):
                let ignorable =
                    hasElements && !document.nodes[index].hasText && text.utf8.allSatisfy(XMLReader.isWhitespace)
                document.nodes.append(
                    Node(
                        name: text, colon: -1, kind: ignorable ? .ignorableText : .text, hasText: false,
                        end: Int32(document.nodes.count + 1), firstAttribute: 0, attributeEnd: 0))
            }
        }
        return XMLNodes(nodes: document.nodes, attributes: document.attributes)
    }
}

/// A non-validating XML 1.0 parser over UTF-8 bytes, checking well-formedness as it reads.
///
/// It reads elements, attributes, character data, CDATA sections, comments, processing
/// instructions, the five predefined entities and character references. A document type
/// declaration is skipped, never read: entities it declares are not defined, so no entity is ever
/// expanded or fetched, and a reference to one is an error. Documents in UTF-16 or in a declared
/// single-byte encoding (ISO-8859-1, US-ASCII, windows-1252) are converted to UTF-8 first.
/// Elements nesting deeper than `maximumDepth` stop the parse at once.
struct XMLReader: ~Copyable {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private var position = 0
    private var nodes: [XMLNodes.Node] = []
    private var attributes: [XMLNodes.Attribute] = []
    /// The open elements: index, where the name starts in the bytes, whether they hold child
    /// elements, whether they hold whitespace text.
    private var open: [(index: Int, name: Int, hasElements: Bool, hasWhitespace: Bool)] = []
    /// The text node the next text is joined to (text, CDATA and references in one run), or -1.
    private var joinableText = -1
    private var scratch: [UInt8] = []

    private init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// The nodes of `data`.
    /// - Throws: ``XMLError/malformedDocument(line:column:reason:)`` or ``XMLError/nestingTooDeep(maximum:)``.
    static func parse(_ data: Data, maximumDepth: Int) throws(XMLError) -> XMLNodes {
        let utf8 = try transcodedToUTF8(data)
        let result: Result<XMLNodes, XMLError> = (utf8 ?? data).withUnsafeBytes { raw in
            var reader = XMLReader(bytes: raw.bindMemory(to: UInt8.self), maximumDepth: maximumDepth)
            do throws(XMLError) {
                try reader.readDocument()
                return .success(XMLNodes(nodes: reader.nodes, attributes: reader.attributes))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Encodings

    /// `data` converted to UTF-8 when it is in another encoding, or `nil` when it is UTF-8 already.
    private static func transcodedToUTF8(_ data: Data) throws(XMLError) -> Data? {
        let head = Array(data.prefix(4))
        var encoding: String.Encoding?
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0, 0x3C, 0, 0x3F]) {
            encoding = .utf16BigEndian
        } else if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0x3C, 0, 0x3F, 0]) {
            encoding = .utf16LittleEndian
        } else if let declared = declaredEncoding(data) {
            switch declared.lowercased() {
            case "utf-8", "utf8": return nil
            case "iso-8859-1", "latin1", "iso_8859-1", "l1": encoding = .isoLatin1
            case "us-ascii", "ascii": encoding = .ascii
            case "windows-1252", "cp1252": encoding = .windowsCP1252
            case "utf-16": return nil  // Declared but written without a byte order mark: read as it is.
            default:
                throw .malformedDocument(line: 1, column: 1, reason: "the encoding '\(declared)' is not supported")
            }
        }
        guard let encoding else { return nil }
        var body = data
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) { body = data.dropFirst(2) }
        guard let text = String(data: body, encoding: encoding) else {
            throw .malformedDocument(line: 1, column: 1, reason: "the document is not valid in its encoding")
        }
        return Data(text.utf8)
    }

    /// The `encoding` of an XML declaration at the start of `data`.
    private static func declaredEncoding(_ data: Data) -> String? {
        guard data.starts(with: "<?xml".utf8) else { return nil }
        let declaration = String(decoding: data.prefix(200).prefix { $0 != UInt8(ascii: ">") }, as: UTF8.self)
        guard let range = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    // MARK: Document

    private mutating func readDocument() throws(XMLError) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        if starts(with: "<?xml") && (position + 5 < bytes.count && Self.isWhitespace(bytes[position + 5])) {
            try skip(past: "?>", what: "XML declaration")
        }
        // The prolog: comments, processing instructions, one document type declaration.
        var sawDoctype = false
        while true {
            skipWhitespace()
            if starts(with: "<!--") {
                try skip(past: "-->", what: "comment")
            } else if starts(with: "<?") {
                try skipProcessingInstruction()
            } else if starts(with: "<!DOCTYPE") {
                guard !sawDoctype else { throw malformed("a second document type declaration") }
                sawDoctype = true
                try skipDoctype()
            } else {
                break
            }
        }
        guard position < bytes.count, bytes[position] == UInt8(ascii: "<") else {
            throw malformed(position < bytes.count ? "text before the root element" : "no root element")
        }
        try readContent()
        // After the root: only comments, processing instructions and whitespace.
        while true {
            skipWhitespace()
            guard position < bytes.count else { return }
            if starts(with: "<!--") {
                try skip(past: "-->", what: "comment")
            } else if starts(with: "<?") {
                try skipProcessingInstruction()
            } else {
                throw malformed("content after the root element")
            }
        }
    }

    /// Reads the root element and everything in it.
    private mutating func readContent() throws(XMLError) {
        repeat {
            guard position < bytes.count else {
                let name = open.last.map { nodes[$0.index].name } ?? ""
                throw malformed("the document ends before </\(name)>")
            }
            if bytes[position] == UInt8(ascii: "<") {
                guard position + 1 < bytes.count else { throw malformed("the document ends inside a tag") }
                switch bytes[position + 1] {
                case UInt8(ascii: "/"): try readEndTag()
                case UInt8(ascii: "!"):
                    if starts(with: "<!--") {
                        try skip(past: "-->", what: "comment")
                    } else if starts(with: "<![CDATA[") {
                        try readCDATA()
                    } else {
                        throw malformed("markup that is not allowed in content")
                    }
                case UInt8(ascii: "?"): try skipProcessingInstruction()
                default: try readStartTag()
                }
            } else {
                try readText()
            }
        } while !open.isEmpty
    }

    // MARK: Elements

    private mutating func readStartTag() throws(XMLError) {
        guard open.count < maximumDepth else { throw .nestingTooDeep(maximum: maximumDepth) }
        position += 1
        let nameStart = position
        let (name, colon) = try readName()
        let firstAttribute = attributes.count
        // Past a few attributes, a set: a hostile tag with thousands cannot make the check quadratic.
        var names: Set<String>?
        while true {
            let spaced = skipWhitespace()
            guard position < bytes.count else { throw malformed("the document ends inside <\(name)>") }
            let byte = bytes[position]
            if byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") { break }
            guard spaced else { throw malformed("attributes of <\(name)> must be separated by whitespace") }
            let (attribute, attributeColon) = try readName()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                throw malformed("the attribute '\(attribute)' has no value")
            }
            position += 1
            skipWhitespace()
            let value = try readAttributeValue()
            let count = attributes.count - firstAttribute
            if names == nil, count >= 8 { names = Set(attributes[firstAttribute...].map(\.name)) }
            let isDuplicate =
                names.map { !$0.contains(attribute) } == false
                || (names == nil && attributes[firstAttribute...].contains { $0.name == attribute })
            guard !isDuplicate else { throw malformed("the attribute '\(attribute)' appears twice in <\(name)>") }
            names?.insert(attribute)
            attributes.append(.init(name: attribute, colon: attributeColon, value: value))
        }
        let isEmpty = bytes[position] == UInt8(ascii: "/")
        if isEmpty {
            guard position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: ">") else {
                throw malformed("'/' inside <\(name)> not followed by '>'")
            }
            position += 2
        } else {
            position += 1
        }
        if !open.isEmpty { open[open.count - 1].hasElements = true }
        let index = nodes.count
        nodes.append(
            .init(
                name: name, colon: colon, kind: .element, hasText: false, end: Int32(index + 1),
                firstAttribute: Int32(firstAttribute), attributeEnd: Int32(attributes.count)))
        joinableText = -1
        if !isEmpty { open.append((index, nameStart, false, false)) }
    }

    private mutating func readEndTag() throws(XMLError) {
        let tagStart = position
        position += 2
        let nameStart = position
        while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
        guard let (index, startName, hasElements, hasWhitespace) = open.last else {
            throw malformed("an end tag with no start")
        }
        let node = nodes[index]
        let length = position - nameStart
        guard let base = bytes.baseAddress, length == node.name.utf8.count,
            memcmp(base + nameStart, base + startName, length) == 0
        else {
            position = tagStart
            throw malformed("the end tag does not match <\(node.name)>")
        }
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
            throw malformed("the end tag of <\(node.name)> is not closed")
        }
        position += 1
        open.removeLast()
        let end = Int32(nodes.count)
        nodes[index].end = end
        joinableText = -1
        // Whitespace between child elements of an element holding no other text is indentation.
        if hasElements, hasWhitespace, !node.hasText {
            var child = index + 1
            while child < Int(end) {
                if nodes[child].kind == .text { nodes[child].kind = .ignorableText }
                child = Int(nodes[child].end)
            }
        }
    }

    /// Reads an XML `Name`; returns it with the UTF-8 offset of its first colon (or -1).
    private mutating func readName() throws(XMLError) -> (String, Int32) {
        let start = position
        var ascii = true
        var colon: Int32 = -1
        while position < bytes.count, Self.isNameByte(bytes[position]) {
            if bytes[position] >= 0x80 {
                ascii = false
            } else if bytes[position] == UInt8(ascii: ":"), colon < 0 {
                colon = Int32(position - start)
            }
            position += 1
        }
        guard position > start else { throw malformed("a name was expected") }
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if ascii {
            let first = slice[0]
            guard !(0x30...0x39).contains(first), first != UInt8(ascii: "-"), first != UInt8(ascii: ".") else {
                position = start
                throw malformed("a name cannot start with '\(Character(Unicode.Scalar(first)))'")
            }
            return (String(decoding: slice, as: UTF8.self), colon)
        }
        guard let name = String(validating: slice, as: UTF8.self) else { throw malformed("a name is not valid UTF-8") }
        do {
            try XMLWriter.validateName(name)
        } catch {
            position = start
            throw malformed("'\(name)' is not a valid XML name")
        }
        return (name, colon)
    }

    // MARK: Character data

    private mutating func readText() throws(XMLError) {
        let start = position
        var simple = true
        var whitespace = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "<") { break }
            if byte < 0x21 {
                if byte == UInt8(ascii: "\r") {
                    simple = false
                } else if byte != 0x20, byte != 0x0A, byte != 0x09 {
                    throw malformed("the character U+\(String(byte, radix: 16, uppercase: true)) cannot appear in XML")
                }
            } else {
                whitespace = false
                if byte == UInt8(ascii: "&") {
                    simple = false
                } else if byte == 0xEF {
                    try checkNonCharacter(at: position)
                }
            }
            position += 1
        }
        let text: String
        if simple {
            guard let valid = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            else {
                position = start
                throw malformed("text that is not valid UTF-8")
            }
            text = valid
        } else {
            text = try decodeCharacterData(start..<position, attribute: false)
            whitespace = text.utf8.allSatisfy(Self.isWhitespace)
        }
        try appendText(text, whitespace: whitespace)
    }

    private mutating func readCDATA() throws(XMLError) {
        position += 9
        let start = position
        guard let end = find("]]>") else { throw malformed("a CDATA section is not closed") }
        var text = [UInt8]()
        text.reserveCapacity(end - start)
        var index = start
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\r") {
                text.append(0x0A)
                if index + 1 < end, bytes[index + 1] == 0x0A { index += 1 }
            } else {
                if byte < 0x20, byte != 0x09, byte != 0x0A {
                    throw malformed("the character U+\(String(byte, radix: 16, uppercase: true)) cannot appear in XML")
                }
                if byte == 0xEF { try checkNonCharacter(at: index) }
                text.append(byte)
            }
            index += 1
        }
        position = end + 3
        guard let string = String(validating: text, as: UTF8.self) else {
            throw malformed("text that is not valid UTF-8")
        }
        try appendText(string, whitespace: string.utf8.allSatisfy(Self.isWhitespace))
    }

    private mutating func appendText(_ text: String, whitespace: Bool) throws(XMLError) {
        guard !text.isEmpty else { return }
        guard !open.isEmpty else {
            if whitespace { return }
            throw malformed("text outside the root element")
        }
        let parent = open[open.count - 1].index
        if whitespace {
            open[open.count - 1].hasWhitespace = true
        } else {
            nodes[parent].hasText = true
        }
        if joinableText >= 0 {
            nodes[joinableText].name += text
            return
        }
        joinableText = nodes.count
        nodes.append(
            .init(
                name: text, colon: -1, kind: .text, hasText: false, end: Int32(joinableText + 1), firstAttribute: 0,
                attributeEnd: 0))
    }

    private mutating func readAttributeValue() throws(XMLError) -> String {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'")
        else { throw malformed("an attribute value must be quoted") }
        let quote = bytes[position]
        position += 1
        let start = position
        var simple = true
        while position < bytes.count, bytes[position] != quote {
            let byte = bytes[position]
            if byte == UInt8(ascii: "<") { throw malformed("'<' inside an attribute value") }
            if byte == UInt8(ascii: "&") || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                simple = false
            } else if byte < 0x20 {
                throw malformed("the character U+\(String(byte, radix: 16, uppercase: true)) cannot appear in XML")
            } else if byte == 0xEF {
                try checkNonCharacter(at: position)
            }
            position += 1
        }
        guard position < bytes.count else { throw malformed("an attribute value is not closed") }
        let end = position
        position += 1
        if simple {
            guard let value = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            else {
                throw malformed("an attribute value is not valid UTF-8")
            }
            return value
        }
        return try decodeCharacterData(start..<end, attribute: true)
    }

    /// The text of `range` with references replaced and line ends normalized; in an attribute,
    /// literal tabs and line ends become spaces (attribute-value normalization).
    private mutating func decodeCharacterData(_ range: Range<Int>, attribute: Bool) throws(XMLError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "&"):
                guard let semicolon = bytes[index..<min(range.upperBound, index + 12)].firstIndex(of: UInt8(ascii: ";"))
                else {
                    position = index
                    throw malformed("'&' that does not start a reference (write &amp;)")
                }
                try appendReference(UnsafeBufferPointer(rebasing: bytes[(index + 1)..<semicolon]), at: index)
                index = semicolon + 1
                continue
            case UInt8(ascii: "\r"):
                scratch.append(attribute ? 0x20 : 0x0A)
                if index + 1 < range.upperBound, bytes[index + 1] == 0x0A { index += 1 }
            case 0x09, 0x0A:
                scratch.append(attribute ? 0x20 : byte)
            default:
                scratch.append(byte)
            }
            index += 1
        }
        guard let text = String(validating: scratch, as: UTF8.self) else {
            throw malformed("text that is not valid UTF-8")
        }
        return text
    }

    private mutating func appendReference(_ name: UnsafeBufferPointer<UInt8>, at offset: Int) throws(XMLError) {
        func append(_ character: String) { scratch.append(contentsOf: character.utf8) }
        if name.first == UInt8(ascii: "#") {
            let hex = name.count > 1 && name[1] == UInt8(ascii: "x")
            let digits = String(decoding: name.dropFirst(hex ? 2 : 1), as: UTF8.self)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ hex ? $0.isHexDigit : (0x30...0x39).contains($0) }),
                let value = UInt32(digits, radix: hex ? 16 : 10), let scalar = Unicode.Scalar(value),
                XMLWriter.isXMLCharacter(scalar)
            else {
                position = offset
                throw malformed("a character reference to a character XML cannot hold")
            }
            append(String(scalar))
            return
        }
        switch String(decoding: name, as: UTF8.self) {
        case "lt": append("<")
        case "gt": append(">")
        case "amp": append("&")
        case "apos": append("'")
        case "quot": append("\"")
        case let entity:
            position = offset
            throw malformed("the entity '&\(entity);' is not defined (entities declared in a DTD are not read)")
        }
    }

    /// Throws for U+FFFE and U+FFFF, the only non-characters the byte scans let through.
    private func checkNonCharacter(at index: Int) throws(XMLError) {
        if index + 2 < bytes.count, bytes[index + 1] == 0xBF, bytes[index + 2] == 0xBE || bytes[index + 2] == 0xBF {
            throw malformed("the character U+FFF\(bytes[index + 2] == 0xBE ? "E" : "F") cannot appear in XML")
        }
    }

    // MARK: Markup that is skipped

    private mutating func skipProcessingInstruction() throws(XMLError) {
        position += 2
        let (target, _) = try readName()
        if target.lowercased() == "xml" { throw malformed("an XML declaration that is not at the start") }
        try skip(past: "?>", what: "processing instruction")
    }

    /// Skips a document type declaration, internal subset included, without reading any of it.
    private mutating func skipDoctype() throws(XMLError) {
        position += 9
        var quote: UInt8?
        var inSubset = false
        while position < bytes.count {
            let byte = bytes[position]
            if let open = quote {
                if byte == open { quote = nil }
            } else if inSubset, starts(with: "<!--") {
                try skip(past: "-->", what: "comment")
                continue
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                inSubset = true
            } else if byte == UInt8(ascii: "]") {
                inSubset = false
            } else if byte == UInt8(ascii: ">"), !inSubset {
                position += 1
                return
            }
            position += 1
        }
        throw malformed("a document type declaration is not closed")
    }

    private mutating func skip(past terminator: StaticString, what: String) throws(XMLError) {
        guard let end = find(terminator) else { throw malformed("a \(what) is not closed") }
        position = end + terminator.utf8CodeUnitCount
    }

    // MARK: Bytes

    private func starts(with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count - position >= count, let base = bytes.baseAddress else { return false }
        return memcmp(base + position, prefix.utf8Start, count) == 0
    }

    /// The offset of the next `needle` from the current position.
    private func find(_ needle: StaticString) -> Int? {
        let first = needle.utf8Start.pointee
        let count = needle.utf8CodeUnitCount
        guard let base = bytes.baseAddress else { return nil }
        var index = position
        while index + count <= bytes.count {
            guard let found = bytes[index...(bytes.count - count)].firstIndex(of: first) else { return nil }
            if memcmp(base + found, needle.utf8Start, count) == 0 { return found }
            index = found + 1
        }
        return nil
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = position
        while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
        return position > start
    }

    private func malformed(_ reason: String) -> XMLError {
        let offset = min(position, bytes.count)
        var line = 1
        var lineStart = 0
        for index in 0..<offset where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        // A reason quotes names from the document: a hostile one can be any length.
        let shown = reason.count > 200 ? reason.prefix(200) + "…" : Substring(reason)
        return .malformedDocument(line: line, column: offset - lineStart + 1, reason: String(shown))
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    /// A byte that may be part of a name: ASCII name characters, and every byte of a non-ASCII
    /// character (checked against the XML rules once the name is read).
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"),
            UInt8(ascii: "."), 0x80...0xFF:
            return true
        default: return false
        }
    }

    /// The UTF-8 offset of the first colon in `name`, or -1.
    static func colon(in name: String) -> Int32 {
        name.utf8.firstIndex(of: UInt8(ascii: ":")).map {
            Int32(name.utf8.distance(from: name.utf8.startIndex, to: $0))
        }
            ?? -1
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
