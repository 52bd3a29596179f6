import Foundation
import StrataCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Decodes `Decodable` values from XML, mirroring ``XMLEncoder``: members are child elements or,
/// for keys starting with `@`, attributes; arrays are wrapped in an element whose children are the
/// items; dates follow ``dateDecoding``. Built on Foundation's `XMLParser` (`FoundationXML` on
/// Linux), with external entities never resolved (and libxml2's own guard against entity expansion).
/// A document nesting elements more than ``maximumDepth`` deep is refused while it is read, with
/// ``XMLError/nestingTooDeep(maximum:)``: no tree deeper than that is ever built.
///
/// ```swift
/// let note = try XMLDecoder().decode(Note.self, from: Data(#"<note lang="en"><to>Ann</to><body>Hi</body></note>"#.utf8))
/// ```
///
/// An empty element decodes as `nil` for an optional, and as `""` for a `String`.
public struct XMLDecoder: Sendable {
    /// How dates are read.
    public enum DateDecoding: Sendable {
        /// ISO 8601, with or without fractional seconds (the default).
        case iso8601
        /// Seconds since 1970-01-01.
        case secondsSince1970
        /// Milliseconds since 1970-01-01.
        case millisecondsSince1970
        /// The date the closure returns, or `nil` when the text is not a date.
        case custom(@Sendable (String) -> Date?)
    }

    /// How dates are read.
    public var dateDecoding: DateDecoding
    /// The most levels elements may nest, the root included. Defaults to
    /// ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public var maximumDepth: Int

    /// Creates a decoder.
    public init(dateDecoding: DateDecoding = .iso8601, maximumDepth: Int = ParameterValue.defaultMaximumDepth) {
        self.dateDecoding = dateDecoding
        self.maximumDepth = maximumDepth
    }

    /// Decodes the root element of `data` as a `T`.
    /// - Throws: ``XMLError/malformedDocument(line:column:reason:)`` for XML that is not well-formed,
    ///   ``XMLError/nestingTooDeep(maximum:)``, a `DecodingError` when the document does not match `T`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: Self.parse(data, maximumDepth: maximumDepth))
    }

    /// Decodes `element` as a `T`.
    public func decode<T: Decodable>(_ type: T.Type, from element: XMLTree) throws -> T {
        try XMLTreeDecoder(node: .element(element), codingPath: [], options: self).decodeValue(type)
    }

    /// Parses `data` into its root element. Whitespace between elements is dropped.
    /// - Throws: ``XMLError/malformedDocument(line:column:reason:)``, or
    ///   ``XMLError/nestingTooDeep(maximum:)`` as soon as elements nest deeper than `maximumDepth`.
    public static func parse(
        _ data: Data, maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) throws(XMLError) -> XMLTree {
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        let builder = TreeBuilder(maximumDepth: maximumDepth)
        parser.delegate = builder
        let parsed = parser.parse()
        if builder.isTooDeep {
            throw .nestingTooDeep(maximum: maximumDepth)
        }
        guard parsed, let root = builder.root else {
            let reason = parser.parserError.map { String(describing: $0) } ?? "no root element"
            throw .malformedDocument(line: parser.lineNumber, column: parser.columnNumber, reason: reason)
        }
        return root
    }
}

/// Builds an ``XMLTree`` from `XMLParser` events, with a stack of open elements, and stops the
/// parser when they nest deeper than allowed.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    private let maximumDepth: Int
    private var stack: [XMLTree] = []
    /// Character data of the innermost open element not yet added to it: pieces arrive one by one,
    /// and are joined here in place rather than by copying the text so far for each.
    private var pendingText = ""
    var root: XMLTree?
    private(set) var isTooDeep = false

    init(maximumDepth: Int) {
        self.maximumDepth = maximumDepth
    }

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        guard stack.count < maximumDepth else {
            isTooDeep = true
            parser.abortParsing()
            return
        }
        flushText()
        let ordered = attributes.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        stack.append(XMLTree(qualifiedName ?? elementName, attributes: ordered))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if !stack.isEmpty { pendingText += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if !stack.isEmpty { pendingText += String(decoding: CDATABlock, as: UTF8.self) }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard !isTooDeep else { return }
        flushText()
        guard var element = stack.popLast() else { return }
        if !element.elements.isEmpty {
            element.children.removeAll {
                if case .text(let text) = $0 { return text.allSatisfy(\.isWhitespace) }
                return false
            }
        }
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(.element(element))
        }
    }

    /// Adds the pending character data to the innermost open element.
    private func flushText() {
        guard !pendingText.isEmpty, !stack.isEmpty else { return }
        stack[stack.count - 1].children.append(.text(pendingText))
        pendingText = ""
    }
}

/// What a decoding step reads: an element, or an attribute's text.
private enum Node {
    case element(XMLTree)
    case attribute(String)

    var text: String {
        switch self {
        case .element(let element): return element.text
        case .attribute(let value): return value
        }
    }

    var isEmpty: Bool {
        guard case .element(let element) = self else { return false }
        return element.children.isEmpty && element.attributes.isEmpty
    }
}

private struct XMLKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

private struct XMLTreeDecoder: Decoder {
    let node: Node
    let codingPath: [any CodingKey]
    let options: XMLDecoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .element(let element) = node else {
            throw DecodingError.typeMismatch(
                [String: Any].self,
                DecodingError.Context(codingPath: codingPath, debugDescription: "An attribute has no members.")
            )
        }
        return KeyedDecodingContainer(MembersContainer<Key>(element: element, codingPath: codingPath, options: options))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .element(let element) = node else {
            throw DecodingError.typeMismatch(
                [Any].self,
                DecodingError.Context(codingPath: codingPath, debugDescription: "An attribute has no items.")
            )
        }
        return ItemsContainer(items: element.elements, codingPath: codingPath, options: options)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ValueContainer(node: node, codingPath: codingPath, options: options)
    }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueContainer(node: node, codingPath: codingPath, options: options).decode(type)
    }
}

private struct MembersContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let element: XMLTree
    let codingPath: [any CodingKey]
    let options: XMLDecoder

    var allKeys: [Key] {
        let names = element.attributes.map { "@" + $0.name } + element.elements.map(\.name)
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }.compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        node(for: key) != nil
    }

    private func node(for key: Key) -> Node? {
        if key.stringValue.hasPrefix("@") {
            return element.attribute(String(key.stringValue.dropFirst())).map(Node.attribute)
        }
        return element.elements.first { $0.name == key.stringValue }.map(Node.element)
    }

    private func decoder(for key: Key) throws -> XMLTreeDecoder {
        guard let node = node(for: key) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath, debugDescription: "No element or attribute '\(key.stringValue)'.")
            )
        }
        return XMLTreeDecoder(node: node, codingPath: codingPath + [key], options: options)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        node(for: key)?.isEmpty ?? true
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder(for: key).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        XMLTreeDecoder(node: .element(element), codingPath: codingPath, options: options)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try decoder(for: key)
    }
}

private struct ItemsContainer: UnkeyedDecodingContainer {
    let items: [XMLTree]
    let codingPath: [any CodingKey]
    let options: XMLDecoder
    var currentIndex = 0

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next() throws -> XMLTreeDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any.self,
                DecodingError.Context(codingPath: codingPath, debugDescription: "No more items.")
            )
        }
        defer { currentIndex += 1 }
        return XMLTreeDecoder(
            node: .element(items[currentIndex]), codingPath: codingPath + [XMLKey(intValue: currentIndex)],
            options: options)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, Node.element(items[currentIndex]).isEmpty else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next().decodeValue(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try next()
    }
}

private struct ValueContainer: SingleValueDecodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    let options: XMLDecoder

    func decodeNil() -> Bool { node.isEmpty }

    private func mismatch<T>(_ type: T.Type) -> DecodingError {
        DecodingError.typeMismatch(
            type,
            // The text itself is not shown: it may be a secret.
            DecodingError.Context(codingPath: codingPath, debugDescription: "The text is not a valid \(type).")
        )
    }

    private var trimmed: String { node.text.trimmingCharacters(in: .whitespacesAndNewlines) }

    func decode(_ type: Bool.Type) throws -> Bool {
        switch trimmed.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw mismatch(type)
        }
    }

    func decode(_ type: String.Type) throws -> String { node.text }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = try special(type) { return value }
        return try T(from: XMLTreeDecoder(node: node, codingPath: codingPath, options: options))
    }

    private func special<T>(_ type: T.Type) throws -> T? {
        let value: Any?
        switch type {
        case is String.Type: value = node.text
        case is Bool.Type: value = try decode(Bool.self)
        case is Int.Type: value = Int(trimmed)
        case is Int8.Type: value = Int8(trimmed)
        case is Int16.Type: value = Int16(trimmed)
        case is Int32.Type: value = Int32(trimmed)
        case is Int64.Type: value = Int64(trimmed)
        case is UInt.Type: value = UInt(trimmed)
        case is UInt8.Type: value = UInt8(trimmed)
        case is UInt16.Type: value = UInt16(trimmed)
        case is UInt32.Type: value = UInt32(trimmed)
        case is UInt64.Type: value = UInt64(trimmed)
        case is Double.Type: value = Double(trimmed)
        case is Float.Type: value = Float(trimmed)
        case is Decimal.Type: value = Decimal(string: trimmed)
        case is Date.Type: value = date(trimmed)
        case is Data.Type: value = Data(base64Encoded: trimmed)
        case is URL.Type: value = URL(string: trimmed)
        default: return nil
        }
        guard let typed = value as? T else { throw mismatch(type) }
        return typed
    }

    private func date(_ text: String) -> Date? {
        switch options.dateDecoding {
        case .iso8601:
            return (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                ?? (try? Date.ISO8601FormatStyle().parse(text))
        case .secondsSince1970:
            return Double(text).map { Date(timeIntervalSince1970: $0) }
        case .millisecondsSince1970:
            return Double(text).map { Date(timeIntervalSince1970: $0 / 1000) }
        case .custom(let parse):
            return parse(text)
        }
    }
}
