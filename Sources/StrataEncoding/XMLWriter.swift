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
        var output = includesDeclaration ? #"<?xml version="1.0" encoding="UTF-8"?>"# : ""
        // Depth first with a stack of open elements, not recursion: a tree of any depth is written.
        var open: [(element: XMLTree, next: Int)] = []
        try start(tree, to: &output, open: &open)
        while let (element, next) = open.last {
            guard next < element.children.count else {
                output += "</\(element.name)>"
                open.removeLast()
                continue
            }
            open[open.count - 1].next += 1
            switch element.children[next] {
            case .element(let nested): try start(nested, to: &output, open: &open)
            case .text(let text):
                try Self.escape(text, attribute: false, context: "element \(element.name)", to: &output)
            }
        }
        return output
    }

    /// Writes the start tag of `element` (the whole of it, when it has no children) and, when it
    /// has children, pushes it on `open`.
    private func start(
        _ element: XMLTree, to output: inout String, open: inout [(element: XMLTree, next: Int)]
    ) throws(XMLError) {
        try Self.validateName(element.name)
        output += "<" + element.name
        for attribute in element.attributes {
            try Self.validateName(attribute.name)
            output += " \(attribute.name)=\""
            try Self.escape(attribute.value, attribute: true, context: "attribute \(attribute.name)", to: &output)
            output += "\""
        }
        if element.children.isEmpty {
            output += "/>"
        } else {
            output += ">"
            open.append((element, 0))
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

    private static func escape(
        _ text: String, attribute: Bool, context: String, to output: inout String
    ) throws(XMLError) {
        for scalar in text.unicodeScalars {
            guard isXMLCharacter(scalar) else { throw .invalidCharacter(scalar.value, in: context) }
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\r": output += "&#xD;"
            case "\"" where attribute: output += "&quot;"
            case "'" where attribute: output += "&apos;"
            case "\t" where attribute: output += "&#x9;"
            case "\n" where attribute: output += "&#xA;"
            default: output.unicodeScalars.append(scalar)
            }
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
