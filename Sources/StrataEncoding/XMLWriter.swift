import Foundation

/// Writes an ``XMLTree`` as an XML 1.0 document in UTF-8.
///
/// Text escapes `&`, `<` and `>`; attribute values also `"`, `'`, tab, CR and LF (as character
/// references, so they survive attribute-value normalization); CR in text is written as `&#xD;`.
/// Element order and attribute order are kept. Names must be XML 1.0 `Name`s and every character
/// an XML 1.0 `Char`, or writing fails with a typed ``XMLError``, never producing a broken document.
public struct XMLWriter: Sendable {
    /// Whether to start with `<?xml version="1.0" encoding="UTF-8"?>`.
    public var includesDeclaration: Bool

    /// Creates a writer.
    public init(includesDeclaration: Bool = true) {
        self.includesDeclaration = includesDeclaration
    }

    /// The document's UTF-8 text.
    /// - Throws: ``XMLError/invalidName(_:)`` or ``XMLError/invalidCharacter(_:in:)``.
    public func write(_ tree: XMLTree) throws(XMLError) -> String {
        var output = XMLOutput(declaration: includesDeclaration)
        try Self.write(tree, to: &output)
        return String(decoding: output.bytes, as: UTF8.self)
    }

    /// Writes `tree` depth first with a stack of open elements, not recursion: a tree of any depth
    /// is written.
    static func write(_ tree: XMLTree, to output: inout XMLOutput) throws(XMLError) {
        var open: [(element: XMLTree, next: Int)] = []
        func start(_ element: XMLTree) throws(XMLError) {
            try output.startTag(element.name)
            for attribute in element.attributes {
                try output.attribute(attribute.name, attribute.value)
            }
            if element.children.isEmpty {
                output.closeEmptyTag()
            } else {
                output.closeStartTag()
                open.append((element, 0))
            }
        }
        try start(tree)
        while let (element, next) = open.last {
            guard next < element.children.count else {
                output.endTag(element.name)
                open.removeLast()
                continue
            }
            open[open.count - 1].next += 1
            switch element.children[next] {
            case .element(let nested): try start(nested)
            case .text(let text): try output.text(text, in: element.name)
            }
        }
    }

    /// Throws unless every character of `document`, read as UTF-8, is an XML 1.0 `Char`: for
    /// documents written by others (a property list serialization writes control characters as
    /// they are).
    static func validateCharacters(of document: Data, context: String) throws(XMLError) {
        for scalar in String(decoding: document, as: UTF8.self).unicodeScalars where !isXMLCharacter(scalar) {
            throw .invalidCharacter(scalar.value, in: context)
        }
    }

    /// XML 1.0 `Char`: tab, LF, CR, and U+0020–U+D7FF, U+E000–U+FFFD, U+10000–U+10FFFF.
    static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    /// Throws unless `name` is an XML 1.0 `Name` (§2.3).
    static func validateName(_ name: String) throws(XMLError) {
        guard let first = name.unicodeScalars.first, isNameStart(first),
            name.unicodeScalars.dropFirst().allSatisfy(isNameCharacter)
        else { throw .invalidName(name) }
    }

    private static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3A, 0x41...0x5A, 0x5F, 0x61...0x7A, 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D,
            0x37F...0x1FFF, 0x200C...0x200D, 0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF,
            0xFDF0...0xFFFD, 0x10000...0xEFFFF:
            return true
        default:
            return false
        }
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2D, 0x2E, 0x30...0x39, 0xB7, 0x300...0x36F, 0x203F...0x2040: return true
        default: return isNameStart(scalar)
        }
    }
}

/// UTF-8 XML under construction: tags, attributes and text, escaped and checked as they are added.
/// What both ``XMLWriter`` and ``XMLEncoder`` write with.
struct XMLOutput {
    private(set) var bytes: [UInt8] = []

    init(declaration: Bool, capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
        if declaration { append(#"<?xml version="1.0" encoding="UTF-8"?>"#) }
    }

    /// Writes `<name`; the tag stays open for attributes.
    mutating func startTag(_ name: String) throws(XMLError) {
        try Self.checkName(name)
        bytes.append(UInt8(ascii: "<"))
        append(name)
    }

    mutating func attribute(_ name: String, _ value: String) throws(XMLError) {
        try Self.checkName(name)
        bytes.append(UInt8(ascii: " "))
        append(name)
        bytes.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "\"")])
        try escape(value, attribute: true) { "attribute \(name)" }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func closeStartTag() { bytes.append(UInt8(ascii: ">")) }

    mutating func closeEmptyTag() { bytes.append(contentsOf: [UInt8(ascii: "/"), UInt8(ascii: ">")]) }

    mutating func endTag(_ name: String) {
        bytes.append(contentsOf: [UInt8(ascii: "<"), UInt8(ascii: "/")])
        append(name)
        bytes.append(UInt8(ascii: ">"))
    }

    /// Text inside the element `element` (named in an error).
    mutating func text(_ text: String, in element: String) throws(XMLError) {
        try escape(text, attribute: false) { "element \(element)" }
    }

    /// `<name>text</name>`, or `<name/>` for empty text.
    mutating func leaf(_ name: String, _ text: String) throws(XMLError) {
        try startTag(name)
        if text.isEmpty {
            closeEmptyTag()
        } else {
            closeStartTag()
            try self.text(text, in: name)
            endTag(name)
        }
    }

    /// Appends raw, already valid XML.
    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// What each byte needs: 0 nothing, 1 escaping in text and attributes, 2 escaping in attributes
    /// only, 3 never allowed (C0 controls), 4 a lead byte of U+FFFE or U+FFFF, checked further.
    private static let classes: [UInt8] = (0...255).map { byte -> UInt8 in
        switch byte {
        case 0x26, 0x3C, 0x3E, 0x0D: return 1
        case 0x22, 0x27, 0x09, 0x0A: return 2
        case 0x00..<0x20: return 3
        case 0xEF: return 4
        default: return 0
        }
    }

    private mutating func escape(
        _ text: String, attribute: Bool, context: () -> String
    ) throws(XMLError) {
        var text = text
        let failure: UInt32? = text.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            let count = utf8.count
            while index < count {
                let byte = utf8[index]
                let kind = Self.classes[Int(byte)]
                if kind == 0 || (kind == 2 && !attribute) {
                    index += 1
                    continue
                }
                if kind == 3 { return UInt32(byte) }
                if kind == 4 {
                    if index + 2 < count, utf8[index + 1] == 0xBF, utf8[index + 2] == 0xBE || utf8[index + 2] == 0xBF {
                        return 0xFFF0 | UInt32(utf8[index + 2] & 0x0F)
                    }
                    index += 1
                    continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                let replacement: StaticString
                switch byte {
                case 0x26: replacement = "&amp;"
                case 0x3C: replacement = "&lt;"
                case 0x3E: replacement = "&gt;"
                case 0x0D: replacement = "&#xD;"
                case 0x22: replacement = "&quot;"
                case 0x27: replacement = "&apos;"
                case 0x09: replacement = "&#x9;"
                default: replacement = "&#xA;"
                }
                bytes.append(
                    contentsOf: UnsafeBufferPointer(start: replacement.utf8Start, count: replacement.utf8CodeUnitCount))
                index += 1
                runStart = index
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<count]))
            return nil
        }
        if let failure { throw .invalidCharacter(failure, in: context()) }
    }

    /// Throws unless `name` is an XML name: ASCII names are checked byte by byte, others in full.
    private static func checkName(_ name: String) throws(XMLError) {
        var name = name
        let asciiValid: Bool? = name.withUTF8 { utf8 in
            guard let first = utf8.first else { return false }
            guard utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
            guard (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first) || first == 0x5F || first == 0x3A
            else { return false }
            return utf8.allSatisfy(XMLReader.isNameByte)
        }
        switch asciiValid {
        case true?: return
        case false?: throw .invalidName(name)
        case nil: try XMLWriter.validateName(name)
        }
    }
}
