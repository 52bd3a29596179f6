/// An XML element: a name, attributes in order, and children (elements and text) in order.
///
/// The XML encoders build one and ``XMLWriter`` writes it; ``XMLDecoder`` parses documents into one.
public struct XMLTree: Hashable, Sendable {
    /// One child of an element.
    public enum Child: Hashable, Sendable {
        /// A nested element.
        case element(XMLTree)
        /// Character data.
        case text(String)
    }

    /// The coding key of an element's own text, next to `@`-prefixed attribute keys:
    /// `<price currency="EUR">12.50</price>` is a struct with the keys `@currency` and `#text`.
    public static let textKey = "#text"

    /// The element name, prefix included (`soap:Envelope`).
    public var name: String
    /// The attributes, in the order they are written.
    public var attributes: [(name: String, value: String)]
    /// The children, in order.
    public var children: [Child]

    /// Creates an element.
    public init(_ name: String, attributes: [(name: String, value: String)] = [], children: [Child] = []) {
        self.name = name
        self.attributes = attributes
        self.children = children
    }

    /// An element holding only `text`.
    public init(_ name: String, text: String) {
        self.init(name, children: [.text(text)])
    }

    /// The element children, in order.
    public var elements: [XMLTree] {
        children.compactMap { if case .element(let element) = $0 { return element } else { return nil } }
    }

    /// The concatenated character data of the direct text children.
    public var text: String {
        children.map { if case .text(let text) = $0 { return text } else { return "" } }.joined()
    }

    /// The value of attribute `name`.
    public func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// Equal when names, attributes (in order) and children are equal.
    public static func == (lhs: XMLTree, rhs: XMLTree) -> Bool {
        lhs.name == rhs.name && lhs.children == rhs.children
            && lhs.attributes.map(\.name) == rhs.attributes.map(\.name)
            && lhs.attributes.map(\.value) == rhs.attributes.map(\.value)
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(children)
        for attribute in attributes {
            hasher.combine(attribute.name)
            hasher.combine(attribute.value)
        }
    }
}

/// How an array member is written as XML, and read back.
///
/// ```swift
/// struct Slideshow: Codable { let slide: [Slide] }
/// // .repeated:                    <slideshow><slide>…</slide><slide>…</slide></slideshow>
/// // .wrapped(itemName: "item"):   <slideshow><slide><item>…</item><item>…</item></slide></slideshow>
/// ```
///
/// ``XMLEncoder`` writes ``wrapped(itemName:)`` with `item` unless told otherwise, per key or for
/// all. ``XMLDecoder`` reads both without being told: several elements of the member's name are
/// repeated items, none is an empty array, and a single element is a wrapper when it has no
/// attributes and no text of its own and either the items are single values (strings, numbers,
/// dates, raw-value enums…) or its children all share one name and are more than one or are named
/// `item`; otherwise it is the one item. An empty element is an empty wrapper. Where that guess is
/// wrong for a document, name the key's shape in ``XMLDecoder/arrayShapes``.
public enum XMLArrayShape: Hashable, Sendable {
    /// One element of the member's name holding one element per item, named `itemName`.
    case wrapped(itemName: String)
    /// One element of the member's name per item, with no element around them.
    case repeated
}

/// Why XML could not be written or read.
public enum XMLError: Error, Hashable, Sendable {
    /// An element or attribute name is not an XML 1.0 `Name` (or is empty).
    case invalidName(String)
    /// Text or an attribute value holds a character XML 1.0 cannot represent (such as U+0000).
    case invalidCharacter(UInt32, in: String)
    /// A value cannot be written in this format (a `null` in a property list, say).
    case unsupportedValue(String)
    /// The document is not well-formed XML.
    case malformedDocument(line: Int, column: Int, reason: String)
    /// Elements nest more than `maximum` levels deep (an ``XMLDecoder``'s `maximumDepth`).
    case nestingTooDeep(maximum: Int)
}

extension XMLError: CustomStringConvertible {
    /// A sentence saying what was wrong.
    public var description: String {
        switch self {
        case .invalidName(let name): return "'\(name)' is not a valid XML name."
        case .invalidCharacter(let scalar, let context):
            return "The character U+\(String(scalar, radix: 16, uppercase: true)) cannot appear in XML (in \(context))."
        case .unsupportedValue(let reason): return "The value cannot be written as XML: \(reason)"
        case .malformedDocument(let line, let column, let reason):
            return "Malformed XML at \(line):\(column): \(reason)"
        case .nestingTooDeep(let maximum):
            return "The XML document nests elements more than \(maximum) levels deep, more than the decoder accepts."
        }
    }
}
