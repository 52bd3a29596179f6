import Foundation
import StrataCore

/// Decodes `Decodable` values from XML, mirroring ``XMLEncoder``.
///
/// - A member is the child element of its name or, for a key starting with `@`, the attribute
///   (`case currency = "@currency"`); the key `#text` (``XMLTree/textKey``) is the element's own
///   text, so `<price currency="EUR">12.50</price>` decodes into a struct with a `@currency` and a
///   `#text` member.
/// - An array member decodes from repeated elements of its name (`<slide/><slide/>`) or from a
///   wrapper element holding the items (`<slides><item/><item/></slides>`): see ``XMLArrayShape``
///   for how one element is told apart, and ``arrayShapes`` to settle it per key. No element at
///   all is an empty array.
/// - Names match by local name, so `soapenv:Body`, `S:Body` and `Body` all match the key `Body`;
///   a key with a prefix matches that qualified name, and ``keepsNamespacePrefixes`` compares
///   qualified names only. Namespace declarations (`xmlns`, `xmlns:p`) are not attributes.
/// - A `String` is all the text inside an element, its descendants' included, exactly as written
///   (entities and character references replaced, CDATA sections as they are); numbers, Booleans,
///   dates, URLs and base64 `Data` ignore surrounding whitespace. Booleans are `true`, `false`,
///   `1` and `0`; an integer that does not fit its type is `DecodingError.dataCorrupted`.
/// - An empty element (`<note/>`, `<note></note>`, or only whitespace) decodes as `nil` for an
///   optional, and as `""` for a `String`. Whitespace between child elements is indentation and
///   ignored; in mixed content (`<p>Hi <b>you</b></p>`) it is text.
/// - `superDecoder()` reads the same element: a subclass's members and its superclass's are
///   siblings, as ``XMLEncoder`` writes them.
///
/// The parser is Strata's own: UTF-8 (or UTF-16, ISO-8859-1, US-ASCII, windows-1252, converted),
/// well-formedness checked, no DTD read, so no entity is ever expanded or fetched. A document
/// nesting elements more than ``maximumDepth`` deep is refused while it is read, with
/// ``XMLError/nestingTooDeep(maximum:)``.
///
/// ```swift
/// let note = try XMLDecoder().decode(Note.self, from: Data(#"<note lang="en"><to>Ann</to><body>Hi</body></note>"#.utf8))
/// ```
public struct XMLDecoder: Sendable {
    /// How dates are read: the strategies of `JSONDecoder`, on the element's text.
    public enum DateDecoding: Sendable {
        /// As `Date`'s own `Decodable` conformance reads it: seconds since 2001-01-01.
        case deferredToDate
        /// ISO 8601, with or without fractional seconds (the default).
        case iso8601
        /// Seconds since 1970-01-01.
        case secondsSince1970
        /// Milliseconds since 1970-01-01.
        case millisecondsSince1970
        /// The date the formatter reads from the text.
        case formatted(DateFormatter)
        /// The date the closure returns, or `nil` when the text is not a date.
        case custom(@Sendable (String) -> Date?)
    }

    /// How dates are read.
    public var dateDecoding: DateDecoding
    /// The shape of array members by key, for the keys whose shape the decoder should not work out
    /// itself (see ``XMLArrayShape``).
    public var arrayShapes: [String: XMLArrayShape]
    /// Whether names are compared with their namespace prefixes (`soap:Body` matches only the key
    /// `soap:Body`) rather than by local name. Off by default.
    public var keepsNamespacePrefixes: Bool
    /// The most levels elements may nest, the root included. Defaults to
    /// ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public var maximumDepth: Int

    /// Creates a decoder.
    public init(
        dateDecoding: DateDecoding = .iso8601, arrayShapes: [String: XMLArrayShape] = [:],
        keepsNamespacePrefixes: Bool = false, maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) {
        self.dateDecoding = dateDecoding
        self.arrayShapes = arrayShapes
        self.keepsNamespacePrefixes = keepsNamespacePrefixes
        self.maximumDepth = maximumDepth
    }

    /// Decodes the root element of `data` as a `T`.
    /// - Throws: ``XMLError/malformedDocument(line:column:reason:)`` for XML that is not well-formed,
    ///   ``XMLError/nestingTooDeep(maximum:)``, a `DecodingError` when the document does not match `T`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: XMLReader.parse(data, maximumDepth: maximumDepth), element: 0)
    }

    /// Decodes `element` as a `T`.
    public func decode<T: Decodable>(_ type: T.Type, from element: XMLTree) throws -> T {
        try decode(type, from: XMLNodes.flattening(element, maximumDepth: maximumDepth), element: 0)
    }

    /// Decodes the element inside the body of the SOAP 1.1 or 1.2 envelope `data`, whatever the
    /// envelope's prefix.
    /// - Throws: ``SOAPFault`` when the body holds a fault; ``XMLError`` when `data` is not a SOAP
    ///   envelope with an element in its body; otherwise as ``decode(_:from:)-(_,Data)``.
    public func decode<T: Decodable>(_ type: T.Type, fromSOAPEnvelope data: Data) throws -> T {
        let nodes = try XMLReader.parse(data, maximumDepth: maximumDepth)
        let content = try SOAPFault.bodyContent(of: nodes)
        if let fault = SOAPFault(nodes, content) { throw fault }
        return try decode(type, from: nodes, element: content)
    }

    func decode<T: Decodable>(_ type: T.Type, from nodes: XMLNodes, element: Int) throws -> T {
        try XMLTreeDecoder(session: Session(nodes: nodes, options: self), target: .element(element), codingPath: [])
            .decodeValue(type)
    }

    /// Parses `data` into its root element. Whitespace between elements is dropped.
    /// - Throws: ``XMLError/malformedDocument(line:column:reason:)``, or
    ///   ``XMLError/nestingTooDeep(maximum:)`` as soon as elements nest deeper than `maximumDepth`.
    public static func parse(
        _ data: Data, maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) throws(XMLError) -> XMLTree {
        try XMLReader.parse(data, maximumDepth: maximumDepth).tree()
    }
}

/// The document being decoded and how.
private final class Session {
    let nodes: XMLNodes
    let options: XMLDecoder

    init(nodes: XMLNodes, options: XMLDecoder) {
        self.nodes = nodes
        self.options = options
    }

    /// Whether `name` (with a colon at `colon`) answers to `key`.
    func name(_ name: String, colon: Int32, matches key: String) -> Bool {
        if colon < 0 || options.keepsNamespacePrefixes { return name == key }
        if name == key { return true }
        return name.utf8.dropFirst(Int(colon) + 1).elementsEqual(key.utf8)
    }

    /// The name `key` would be listed under.
    func listedName(_ name: String, colon: Int32) -> String {
        colon < 0 || options.keepsNamespacePrefixes ? name : String(Substring(name.utf8.dropFirst(Int(colon) + 1)))
    }

    func firstChild(of element: Int, named key: String) -> Int? {
        let nodes = nodes.nodes
        var child = element + 1
        let end = Int(nodes[element].end)
        while child < end {
            let node = nodes[child]
            if node.kind == .element, name(node.name, colon: node.colon, matches: key) { return child }
            child = Int(node.end)
        }
        return nil
    }

    func children(of element: Int, named key: String) -> [Int] {
        let nodes = nodes.nodes
        var children: [Int] = []
        var child = element + 1
        let end = Int(nodes[element].end)
        while child < end {
            let node = nodes[child]
            if node.kind == .element, name(node.name, colon: node.colon, matches: key) { children.append(child) }
            child = Int(node.end)
        }
        return children
    }

    func attribute(of element: Int, named key: Substring) -> Int? {
        let node = nodes.nodes[element]
        let key = String(key)
        for index in Int(node.firstAttribute)..<Int(node.attributeEnd) {
            let attribute = nodes.attributes[index]
            if !options.keepsNamespacePrefixes, attribute.declaresNamespace { continue }
            if name(attribute.name, colon: attribute.colon, matches: key) { return index }
        }
        return nil
    }

    /// Whether `element` has attributes other than namespace declarations.
    func hasAttributes(_ element: Int) -> Bool {
        let node = nodes.nodes[element]
        return nodes.attributes[Int(node.firstAttribute)..<Int(node.attributeEnd)].contains { !$0.declaresNamespace }
    }

    /// The items of the array under `key` of `element` (see ``XMLArrayShape``).
    func items(of element: Int, key: String, itemsAreValues: Bool) -> [Int] {
        let matches = children(of: element, named: key)
        switch options.arrayShapes.isEmpty ? nil : options.arrayShapes[key] {
        case .repeated?:
            return matches
        case .wrapped(let itemName)?:
            return matches.first.map { children(of: $0, named: itemName) } ?? []
        case nil:
            guard matches.count == 1, let only = matches.first else { return matches }
            if nodes.nodes[only].hasText || hasAttributes(only) { return [only] }
            let children = nodes.elementChildren(of: only)
            guard let first = children.first else { return [] }
            if itemsAreValues { return children }
            let name = nodes.nodes[first].name
            let repeated = children.allSatisfy { nodes.nodes[$0].name == name }
            if repeated, children.count > 1 || listedName(name, colon: nodes.nodes[first].colon) == "item" {
                return children
            }
            return [only]
        }
    }
}

/// What a decoding step reads.
private enum Target {
    case element(Int)
    case attribute(Int)
    /// The `#text` of an element.
    case ownText(Int)
    /// The items of an array member.
    case items([Int])
    /// A member that is not there (for `superDecoder(forKey:)`).
    case absent
}

/// An item's index in a coding path: one word, so that it needs no allocation as `any CodingKey`.
private struct IndexKey: CodingKey {
    let index: Int
    var stringValue: String { String(index) }
    var intValue: Int? { index }
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) {
        guard let index = Int(stringValue) else { return nil }
        self.index = index
    }
    init(intValue: Int) { index = intValue }
}

/// An array type, whose items are read from repeated or wrapped elements.
private protocol DecodableArray {
    /// Whether the items are single values (text), rather than elements with members.
    static var itemsAreValues: Bool { get }
}

extension Array: DecodableArray where Element: Decodable {
    fileprivate static var itemsAreValues: Bool { isSingleValue(Element.self) }
}

extension ContiguousArray: DecodableArray where Element: Decodable {
    fileprivate static var itemsAreValues: Bool { isSingleValue(Element.self) }
}

extension Set: DecodableArray where Element: Decodable {
    fileprivate static var itemsAreValues: Bool { isSingleValue(Element.self) }
}

private func isSingleValue(_ type: Any.Type) -> Bool {
    let values: [Any.Type] = [
        String.self, Int.self, Bool.self, Double.self, Date.self, Int64.self, Int32.self, Int16.self, Int8.self,
        UInt.self, UInt64.self, UInt32.self, UInt16.self, UInt8.self, Float.self, Decimal.self, Data.self, URL.self,
    ]
    return values.contains { $0 == type } || type is any RawRepresentable.Type
}

/// A coding path built only when asked for (an error, a container): a member's key is kept apart
/// from its parent's path, so decoding a member allocates no path.
private struct LazyPath {
    let parent: [any CodingKey]
    let key: (any CodingKey)?

    init(_ parent: [any CodingKey], _ key: (any CodingKey)? = nil) {
        self.parent = parent
        self.key = key
    }

    var keys: [any CodingKey] { key.map { parent + [$0] } ?? parent }
}

private struct XMLTreeDecoder: Decoder {
    let session: Session
    let target: Target
    let path: LazyPath
    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(session: Session, target: Target, path: LazyPath) {
        self.session = session
        self.target = target
        self.path = path
    }

    init(session: Session, target: Target, codingPath: [any CodingKey]) {
        self.init(session: session, target: target, path: LazyPath(codingPath))
    }

    private func mismatch(_ type: Any.Type, _ reason: String) -> DecodingError {
        .typeMismatch(type, DecodingError.Context(codingPath: codingPath, debugDescription: reason))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch target {
        case .element(let element):
            return KeyedDecodingContainer(
                MembersContainer<Key>(session: session, element: element, codingPath: codingPath))
        case .items(let items):
            guard let first = items.first else {
                return KeyedDecodingContainer(AbsentMembers<Key>(codingPath: codingPath))
            }
            return KeyedDecodingContainer(
                MembersContainer<Key>(session: session, element: first, codingPath: codingPath))
        case .absent:
            return KeyedDecodingContainer(AbsentMembers<Key>(codingPath: codingPath))
        case .attribute, .ownText:
            throw mismatch([String: Any].self, "Text has no members.")
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch target {
        case .element(let element):
            return ItemsContainer(
                session: session, items: session.nodes.elementChildren(of: element), codingPath: codingPath)
        case .items(let items):
            return ItemsContainer(session: session, items: items, codingPath: codingPath)
        case .absent:
            return ItemsContainer(session: session, items: [], codingPath: codingPath)
        case .attribute, .ownText:
            throw mismatch([Any].self, "Text has no items.")
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ValueContainer(session: session, target: target, path: path)
    }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueContainer(session: session, target: target, path: path).decode(type)
    }
}

private struct MembersContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let session: Session
    let element: Int
    let codingPath: [any CodingKey]

    var allKeys: [Key] {
        let nodes = session.nodes
        let node = nodes.nodes[element]
        var names: [String] = []
        for attribute in nodes.attributes[Int(node.firstAttribute)..<Int(node.attributeEnd)]
        where session.options.keepsNamespacePrefixes || !attribute.declaresNamespace {
            names.append("@" + session.listedName(attribute.name, colon: attribute.colon))
        }
        if node.hasText { names.append(XMLTree.textKey) }
        for child in nodes.elementChildren(of: element) {
            names.append(session.listedName(nodes.nodes[child].name, colon: nodes.nodes[child].colon))
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }.compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        target(for: key) != nil
    }

    private func target(for key: Key) -> Target? {
        let name = key.stringValue
        if name.utf8.first == UInt8(ascii: "@") {
            return session.attribute(of: element, named: name.dropFirst()).map(Target.attribute)
        }
        if name == XMLTree.textKey { return .ownText(element) }
        return session.firstChild(of: element, named: name).map(Target.element)
    }

    /// Says what `name` looked for and did not find; for a key that names an attribute without
    /// its `@` (as XMLCoder reads attributes), how to read it.
    private func missing(_ name: String) -> String {
        if name.utf8.first == UInt8(ascii: "@") { return "No attribute '\(name.dropFirst())'." }
        guard session.attribute(of: element, named: Substring(name)) != nil else { return "No element '\(name)'." }
        return "No element '\(name)'; the attribute of that name is read with the key '@\(name)'."
    }

    private func decoder(for key: Key) throws -> XMLTreeDecoder {
        guard let target = target(for: key) else {
            throw DecodingError.keyNotFound(
                key, DecodingError.Context(codingPath: codingPath, debugDescription: missing(key.stringValue)))
        }
        return XMLTreeDecoder(session: session, target: target, path: LazyPath(codingPath, key))
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let target = target(for: key) else { return true }
        return ValueContainer(session: session, target: target, path: LazyPath(codingPath)).decodeNil()
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decoder(for: key).decodeValue(type)
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try decoder(for: key).decodeValue(type)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder(for: key).decodeValue(type)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder(for: key).decodeValue(type)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if let array = T.self as? any DecodableArray.Type, key.stringValue.utf8.first != UInt8(ascii: "@") {
            let items = session.items(of: element, key: key.stringValue, itemsAreValues: array.itemsAreValues)
            return try XMLTreeDecoder(session: session, target: .items(items), path: LazyPath(codingPath, key))
                .decodeValue(type)
        }
        return try decoder(for: key).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let items = session.items(of: element, key: key.stringValue, itemsAreValues: false)
        return ItemsContainer(session: session, items: items, codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder {
        XMLTreeDecoder(session: session, target: .element(element), codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        XMLTreeDecoder(session: session, target: target(for: key) ?? .absent, codingPath: codingPath + [key])
    }
}

/// The members of nothing: every member is missing.
private struct AbsentMembers<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let codingPath: [any CodingKey]
    var allKeys: [Key] { [] }
    func contains(_ key: Key) -> Bool { false }
    func decodeNil(forKey key: Key) throws -> Bool { true }

    private func missing(_ key: Key) -> DecodingError {
        .keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "The element is missing."))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { throw missing(key) }
    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> { throw missing(key) }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw missing(key) }
    func superDecoder() throws -> any Decoder {
        throw DecodingError.valueNotFound(
            Any.self, DecodingError.Context(codingPath: codingPath, debugDescription: "The element is missing."))
    }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw missing(key) }
}

private struct ItemsContainer: UnkeyedDecodingContainer {
    let session: Session
    let items: [Int]
    let codingPath: [any CodingKey]
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
            session: session, target: .element(items[currentIndex]), path: LazyPath(codingPath, IndexKey(currentIndex)))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, session.nodes.isEmpty(items[currentIndex]) else { return false }
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
    let session: Session
    let target: Target
    let path: LazyPath
    var codingPath: [any CodingKey] { path.keys }

    var text: String {
        switch target {
        case .element(let element): return session.nodes.textContent(of: element)
        case .attribute(let attribute): return session.nodes.attributes[attribute].value
        case .ownText(let element): return session.nodes.ownText(of: element)
        case .items(let items): return items.first.map { session.nodes.textContent(of: $0) } ?? ""
        case .absent: return ""
        }
    }

    func decodeNil() -> Bool {
        switch target {
        case .element(let element): return session.nodes.isEmpty(element)
        case .attribute: return false
        case .ownText: return text.isEmpty
        case .items(let items): return items.isEmpty
        case .absent: return true
        }
    }

    private func mismatch(_ type: Any.Type) -> DecodingError {
        // The text itself is not shown: it may be a secret.
        .typeMismatch(
            type, DecodingError.Context(codingPath: codingPath, debugDescription: "The text is not a valid \(type)."))
    }

    /// The text without surrounding whitespace, copied only when there is some.
    private var trimmed: String {
        let text = text
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last,
            XMLReader.isWhitespace(first) || XMLReader.isWhitespace(last)
        else { return text }
        let start = utf8.firstIndex { !XMLReader.isWhitespace($0) } ?? utf8.endIndex
        let end = utf8.lastIndex { !XMLReader.isWhitespace($0) }.map { utf8.index(after: $0) } ?? start
        return String(text[start..<max(start, end)])
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        switch trimmed {
        case "true", "1": return true
        case "false", "0": return false
        default: throw mismatch(type)
        }
    }

    func decode(_ type: String.Type) throws -> String { text }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = try special(type) { return value }
        return try T(from: XMLTreeDecoder(session: session, target: target, path: path))
    }

    /// The value of a type read from text, or `nil` for a type that decodes itself. Types are
    /// compared by identity, not cast, and the value handed back as the very type it is.
    private func special<T>(_ type: T.Type) throws -> T? {
        func value<V>(_ value: V) -> T { unsafeBitCast(value, to: T.self) }
        if T.self == String.self { return value(text) }
        if T.self == Int.self { return value(try integer(Int.self)) }
        if T.self == Bool.self { return value(try decode(Bool.self)) }
        if T.self == Double.self { return value(try parsed(Double(trimmed), type)) }
        if T.self == Date.self {
            if case .deferredToDate = session.options.dateDecoding { return nil }
            return value(try parsed(date(trimmed), type))
        }
        if T.self == Int64.self { return value(try integer(Int64.self)) }
        if T.self == Int32.self { return value(try integer(Int32.self)) }
        if T.self == Int16.self { return value(try integer(Int16.self)) }
        if T.self == Int8.self { return value(try integer(Int8.self)) }
        if T.self == UInt.self { return value(try integer(UInt.self)) }
        if T.self == UInt64.self { return value(try integer(UInt64.self)) }
        if T.self == UInt32.self { return value(try integer(UInt32.self)) }
        if T.self == UInt16.self { return value(try integer(UInt16.self)) }
        if T.self == UInt8.self { return value(try integer(UInt8.self)) }
        if T.self == Float.self { return value(try parsed(Float(trimmed), type)) }
        if T.self == Decimal.self { return value(try decimal()) }
        if T.self == Data.self { return value(try parsed(Data(base64Encoded: trimmed), type)) }
        if T.self == URL.self { return value(try parsed(URL(string: trimmed), type)) }
        return nil
    }

    private func parsed<Value>(_ value: Value?, _ type: Any.Type) throws -> Value {
        guard let value else { throw mismatch(type) }
        return value
    }

    /// An integer, or `dataCorrupted` when the text is an integer too large for `Integer`.
    private func integer<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
        let text = trimmed
        if let value = Integer(text) { return value }
        let digits = text.utf8.drop { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") }
        if text.utf8.count - digits.count == 1 || text.utf8.count == digits.count, !digits.isEmpty,
            digits.allSatisfy({ (0x30...0x39).contains($0) })
        {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: codingPath, debugDescription: "The number does not fit in \(type)."))
        }
        throw mismatch(type)
    }

    /// A `Decimal`, from text that is a decimal number and nothing else.
    private func decimal() throws -> Decimal {
        let text = trimmed
        let isNumber = text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        }
        guard isNumber, Double(text) != nil,
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { throw mismatch(Decimal.self) }
        return value
    }

    private func date(_ text: String) -> Date? {
        switch session.options.dateDecoding {
        case .iso8601:
            return (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                ?? (try? Date.ISO8601FormatStyle().parse(text))
        // Only a finite number is a date: `Double` also reads "nan", "inf" and "1e999", and a date
        // that is not a number traps when described.
        case .secondsSince1970:
            return Double(text).flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0) : nil }
        case .millisecondsSince1970:
            return Double(text).flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0 / 1000) : nil }
        case .formatted(let formatter):
            return formatter.date(from: text)
        case .custom(let parse):
            return parse(text)
        case .deferredToDate:
            return nil
        }
    }
}
