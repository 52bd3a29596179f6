import Foundation
import StrataCore

/// Encodes `Encodable` values (and parameter dictionaries) as XML.
///
/// Each member becomes a child element, in the order it was encoded; a member whose key starts with
/// `@` becomes an attribute instead (`case id = "@id"`), and the member keyed `#text`
/// (``XMLTree/textKey``) the element's own text. Arrays take the shape ``arrayShape`` says, or
/// ``arrayShapes`` for their key: wrapped by default, `tags: ["a", "b"]` being
/// `<tags><item>a</item><item>b</item></tags>`, or repeated, `<tags>a</tags><tags>b</tags>`.
/// `nil` optionals are left out. Dates follow ``dateEncoding``, `Data` is base64, Booleans are
/// `true` and `false`. `superEncoder()` writes into the same element, so a subclass's members sit
/// next to its superclass's. A value nesting more than ``maximumDepth`` levels is refused with
/// ``XMLError/nestingTooDeep(maximum:)``.
///
/// ```swift
/// struct Note: Codable {
///     enum CodingKeys: String, CodingKey { case lang = "@lang", to, body }
///     let lang: String; let to: String; let body: String
/// }
/// let xml = try XMLEncoder().encodeDocument(Note(lang: "en", to: "Ann", body: "Hi & bye"), rootElement: "note")
/// // <?xml version="1.0" encoding="UTF-8"?><note lang="en"><to>Ann</to><body>Hi &amp; bye</body></note>
/// ```
public struct XMLEncoder: Sendable {
    /// How dates are written (the same options as form encoding).
    public typealias DateEncoding = URLEncodedFormEncoder.DateEncoding

    /// How dates are written. Defaults to ISO 8601.
    public var dateEncoding: DateEncoding
    /// The shape of arrays whose key is not in ``arrayShapes``. Defaults to
    /// ``XMLArrayShape/wrapped(itemName:)`` with `item`. Arrays that cannot repeat (the root, an
    /// array in an array) are always wrapped, in `item` elements when the shape is repeated.
    public var arrayShape: XMLArrayShape
    /// The shape of array members by key.
    public var arrayShapes: [String: XMLArrayShape]
    /// The most levels of arrays and objects a value may nest. Defaults to
    /// ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public var maximumDepth: Int

    /// Creates an encoder.
    public init(
        dateEncoding: DateEncoding = .iso8601, arrayShape: XMLArrayShape = .wrapped(itemName: "item"),
        arrayShapes: [String: XMLArrayShape] = [:], maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) {
        self.dateEncoding = dateEncoding
        self.arrayShape = arrayShape
        self.arrayShapes = arrayShapes
        self.maximumDepth = maximumDepth
    }

    /// The element `value` encodes to, named `rootElement`.
    /// - Throws: ``XMLError`` for a name or character XML cannot hold, or a member that cannot be
    ///   an attribute; ``XMLError/unsupportedValue(_:)`` when the value's own encoding fails.
    public func encode(_ value: some Encodable, rootElement: String) throws(XMLError) -> XMLTree {
        try XMLReader.parse(Data(encodeDocument(value, rootElement: rootElement)), maximumDepth: .max).tree()
    }

    /// The element of `parameters`, named `rootElement`, members in sorted key order.
    public func encode(_ parameters: [String: ParameterValue], rootElement: String) throws(XMLError) -> XMLTree {
        var output = XMLOutput(declaration: false)
        try write(parameters, rootElement: rootElement, to: &output)
        return try XMLReader.parse(Data(output.bytes), maximumDepth: .max).tree()
    }

    /// The UTF-8 document of `value`, with an XML declaration.
    /// - Throws: ``XMLError`` when the value cannot be written as XML.
    public func encodeDocument(_ value: some Encodable, rootElement: String) throws(XMLError) -> Data {
        var output = XMLOutput(declaration: true, capacity: 4096)
        try write(value, rootElement: rootElement, to: &output)
        return Data(output.bytes)
    }

    /// Writes the element of `value`, named `rootElement`.
    func write(_ value: some Encodable, rootElement: String, to output: inout XMLOutput) throws(XMLError) {
        let root = EncodedElement()
        let state = EncodingState(options: self)
        do {
            try Context(state: state, parent: [], key: nil, depth: 0).encode(value, into: root)
        } catch let error as XMLError {
            throw error
        } catch is DepthLimit.Exceeded {
            throw .nestingTooDeep(maximum: maximumDepth)
        } catch {
            throw .unsupportedValue(Self.describe(error))
        }
        guard !state.limit.isExceeded else { throw .nestingTooDeep(maximum: maximumDepth) }
        try write(root, name: rootElement, to: &output)
    }

    /// Writes the element of `parameters`, named `rootElement`.
    func write(
        _ parameters: [String: ParameterValue], rootElement: String, to output: inout XMLOutput
    ) throws(XMLError) {
        guard !ParameterValue.object(parameters).nests(deeperThan: maximumDepth) else {
            throw .nestingTooDeep(maximum: maximumDepth)
        }
        let root = EncodedElement()
        do {
            try Context(state: EncodingState(options: self), parent: [], key: nil, depth: 0).encode(
                ParameterValue.object(parameters), into: root)
        } catch let error as XMLError {
            throw error
        } catch {
            throw .unsupportedValue(Self.describe(error))
        }
        try write(root, name: rootElement, to: &output)
    }

    private static func describe(_ error: any Error) -> String {
        if case EncodingError.invalidValue(_, let context) = error {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(context.debugDescription) (at \(path))"
        }
        return String(describing: error)
    }

    // MARK: Writing

    private func shape(of key: String) -> XMLArrayShape {
        arrayShapes.isEmpty ? arrayShape : arrayShapes[key] ?? arrayShape
    }

    private func write(_ element: EncodedElement, name: String, to output: inout XMLOutput) throws(XMLError) {
        try output.startTag(name)
        for (attribute, value) in element.attributes {
            try output.attribute(attribute, value)
        }
        guard !element.children.isEmpty || !(element.text ?? "").isEmpty else {
            output.closeEmptyTag()
            return
        }
        output.closeStartTag()
        if let text = element.text { try output.text(text, in: name) }
        if element.isArray {
            let itemName: String
            switch shape(of: name) {
            case .wrapped(let name): itemName = name
            case .repeated: itemName = "item"
            }
            for (_, item) in element.children {
                try write(item, name: itemName, repeatable: false, to: &output)
            }
        } else {
            for (key, member) in element.children {
                try write(member, name: key, repeatable: true, to: &output)
            }
        }
        output.endTag(name)
    }

    private func write(
        _ value: EncodedValue, name: String, repeatable: Bool, to output: inout XMLOutput
    ) throws(XMLError) {
        switch value {
        case .text(let text):
            try output.leaf(name, text)
        case .element(let element):
            if repeatable, element.isArray, shape(of: name) == .repeated {
                for (_, item) in element.children {
                    try write(item, name: name, repeatable: false, to: &output)
                }
            } else {
                try write(element, name: name, to: &output)
            }
        }
    }
}

// MARK: - The tree under construction

/// An element being encoded. Containers keep a reference and fill it in, so nested containers and
/// super encoders write into their parent's element.
private final class EncodedElement {
    var attributes: [(name: String, value: String)] = []
    /// Members by name, in the order encoded; for an array, its items (names unused).
    var children: [(name: String, value: EncodedValue)] = []
    /// A single value's text, or the `#text` member.
    var text: String?
    var isArray = false

    /// The text of an element holding nothing else, for an attribute: `nil` when it holds more.
    var singleText: String? {
        attributes.isEmpty && children.isEmpty && !isArray ? text ?? "" : nil
    }
}

private enum EncodedValue {
    /// An element holding only this text (empty for `<name/>`).
    case text(String)
    case element(EncodedElement)
}

private final class EncodingState {
    let options: XMLEncoder
    let limit: DepthLimit

    init(options: XMLEncoder) {
        self.options = options
        limit = DepthLimit(maximum: options.maximumDepth)
    }
}

/// A member's name, for coding paths.
private struct NameKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// An item's index, for coding paths: one word, so that it needs no allocation as `any CodingKey`.
private struct IndexKey: CodingKey {
    let index: Int
    var stringValue: String { String(index) }
    var intValue: Int? { index }
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init(intValue: Int) { index = intValue }
}

/// Where a value is encoded: its path, and how many containers enclose it (counted as the
/// ``ParameterValueEncoder`` counts them). The path is kept as the parent's path and a key, and
/// joined only when asked for, so that encoding a member allocates no path.
private struct Context {
    let state: EncodingState
    let parent: [any CodingKey]
    let key: (any CodingKey)?
    let depth: Int

    var codingPath: [any CodingKey] { key.map { parent + [$0] } ?? parent }

    /// The context of the member or item `key` of a container whose path is `path`.
    func child(_ key: any CodingKey, under path: [any CodingKey]) -> Context {
        Context(state: state, parent: path, key: key, depth: depth + 1)
    }

    func appending(_ key: any CodingKey) -> Context {
        child(key, under: codingPath)
    }

    /// A value in a single-value container or a super encoder: a level of its own, so that a chain
    /// of wrappers cannot recurse without bound either.
    func deeper() -> Context {
        Context(state: state, parent: parent, key: key, depth: depth + 1)
    }

    /// `element` if a container may open at this depth; past the limit, one that is thrown away (a
    func containerElement(_ element: EncodedElement) -> EncodedElement {
        state.limit.allowsContainer(at: depth) ? element : EncodedElement()
    }

    func encode<Value: Encodable>(_ value: Value, into element: EncodedElement) throws {
        try state.limit.check(depth)
        if let text = try specialText(value) {
            element.text = text
        } else if Value.self == ParameterValue.self {
            try encode(unsafeBitCast(value, to: ParameterValue.self), into: element)
        } else {
            try value.encode(to: ElementEncoder(element: element, context: self))
        }
    }

    /// A parameter value, written straight into the element rather than through its `Encodable`
    /// conformance (which would count each level twice).
    private func encode(_ parameter: ParameterValue, into element: EncodedElement) throws {
        switch parameter {
        case .array(let items):
            guard state.limit.allowsContainer(at: depth) else { throw DepthLimit.Exceeded() }
            element.isArray = true
            let path = codingPath
            for (index, item) in items.enumerated() {
                element.children.append(("", try child(IndexKey(index), under: path).value(of: item)))
            }
        case .object(let members):
            guard state.limit.allowsContainer(at: depth) else { throw DepthLimit.Exceeded() }
            let path = codingPath
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                try add(child(NameKey(stringValue: key), under: path).value(of: member), key: key, to: element)
            }
        case .string(let text): element.text = text
        case .int(let number): element.text = String(number)
        case .double(let number): element.text = try self.text(number)
        case .bool(let flag): element.text = flag ? "true" : "false"
        case .date(let date): element.text = try text(date)
        case .null: break
        }
    }

    private func value(of parameter: ParameterValue) throws -> EncodedValue {
        let element = EncodedElement()
        try encode(parameter, into: element)
        return element.singleText.map(EncodedValue.text) ?? .element(element)
    }

    /// The value of `value` encoded as a member or item: text when that is all it is.
    func value<Value: Encodable>(of value: Value) throws -> EncodedValue {
        if let text = try specialText(value) { return .text(text) }
        let element = EncodedElement()
        try encode(value, into: element)
        return element.singleText.map(EncodedValue.text) ?? .element(element)
    }

    /// Adds a member: an attribute for an `@` key, the element's text for `#text`, else a child.
    func add(_ value: EncodedValue, key: String, to element: EncodedElement) throws {
        if key.utf8.first == UInt8(ascii: "@") || key == XMLTree.textKey {
            let text: String
            switch value {
            case .text(let value): text = value
            case .element(let nested):
                guard let single = nested.singleText else {
                    throw XMLError.unsupportedValue("the attribute or text '\(key)' must be a single value")
                }
                text = single
            }
            if key == XMLTree.textKey {
                element.text = text
            } else {
                element.attributes.append((String(key.dropFirst()), text))
            }
        } else {
            element.children.append((key, value))
        }
    }

    /// The text of a value written as text by the encoder rather than by its own conformance.
    /// Types are compared by identity rather than cast, and the value read as the very type it is.
    private func specialText<Value: Encodable>(_ value: Value) throws -> String? {
        func read<V>(_ type: V.Type) -> V { unsafeBitCast(value, to: V.self) }
        if Value.self == String.self { return read(String.self) }
        if Value.self == Int.self { return String(read(Int.self)) }
        if Value.self == Bool.self { return read(Bool.self) ? "true" : "false" }
        if Value.self == Double.self { return try text(read(Double.self)) }
        if Value.self == Date.self { return try text(read(Date.self)) }
        if Value.self == Data.self { return read(Data.self).base64EncodedString() }
        if Value.self == URL.self { return read(URL.self).absoluteString }
        if Value.self == Decimal.self { return read(Decimal.self).description }
        return nil
    }

    func text(_ number: Double) throws -> String {
        guard number.isFinite else { throw invalid(number, "is not a finite number") }
        return String(number)
    }

    func text(_ date: Date) throws -> String {
        let encoding = state.options.dateEncoding
        guard let text = encoding.text(for: date) else {
            // The error holds the seconds, not the date: describing a date that is not a number traps.
            throw EncodingError.invalidValue(
                date.timeIntervalSince1970,
                EncodingError.Context(codingPath: codingPath, debugDescription: encoding.reason(refusing: date)))
        }
        return text
    }

    func text(_ number: Float) throws -> String {
        guard number.isFinite else { throw invalid(number, "is not a finite number") }
        return String(number)
    }

    func invalid(_ value: Any, _ reason: String) -> EncodingError {
        EncodingError.invalidValue(
            value, EncodingError.Context(codingPath: codingPath, debugDescription: "\(value) \(reason)."))
    }
}

private struct ElementEncoder: Encoder {
    let element: EncodedElement
    let context: Context
    var codingPath: [any CodingKey] { context.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(MembersContainer<Key>(element: context.containerElement(element), context: context))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let element = context.containerElement(element)
        element.isArray = true
        return ItemsContainer(element: element, context: context)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(element: element, context: context)
    }
}

private struct MembersContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let element: EncodedElement
    let context: Context
    let codingPath: [any CodingKey]

    init(element: EncodedElement, context: Context) {
        self.element = element
        self.context = context
        codingPath = context.codingPath
    }

    private func member(_ key: Key) -> Context { context.child(key, under: codingPath) }

    private func add(_ text: String, _ key: Key) throws {
        try context.add(.text(text), key: key.stringValue, to: element)
    }

    mutating func encodeNil(forKey key: Key) throws { try add("", key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try add(value ? "true" : "false", key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try add(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try add(member(key).text(value), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try add(member(key).text(value), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try add(String(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try context.add(member(key).value(of: value), key: key.stringValue, to: element)
    }

    private func nested(_ key: Key) -> ElementEncoder {
        let nested = EncodedElement()
        element.children.append((key.stringValue, .element(nested)))
        return ElementEncoder(element: nested, context: member(key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        nested(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        nested(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ElementEncoder(element: element, context: context.deeper())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        nested(key)
    }
}

private struct ItemsContainer: UnkeyedEncodingContainer {
    let element: EncodedElement
    let context: Context
    let codingPath: [any CodingKey]
    var count: Int { element.children.count }

    init(element: EncodedElement, context: Context) {
        self.element = element
        self.context = context
        codingPath = context.codingPath
    }

    private var itemContext: Context { context.child(IndexKey(count), under: codingPath) }

    private func append(_ text: String) { element.children.append(("", .text(text))) }

    mutating func encodeNil() throws { append("") }
    mutating func encode(_ value: Bool) throws { append(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { append(value) }
    mutating func encode(_ value: Double) throws { append(try itemContext.text(value)) }
    mutating func encode(_ value: Float) throws { append(try itemContext.text(value)) }
    mutating func encode(_ value: Int) throws { append(String(value)) }
    mutating func encode(_ value: Int8) throws { append(String(value)) }
    mutating func encode(_ value: Int16) throws { append(String(value)) }
    mutating func encode(_ value: Int32) throws { append(String(value)) }
    mutating func encode(_ value: Int64) throws { append(String(value)) }
    mutating func encode(_ value: UInt) throws { append(String(value)) }
    mutating func encode(_ value: UInt8) throws { append(String(value)) }
    mutating func encode(_ value: UInt16) throws { append(String(value)) }
    mutating func encode(_ value: UInt32) throws { append(String(value)) }
    mutating func encode(_ value: UInt64) throws { append(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        element.children.append(("", try itemContext.value(of: value)))
    }

    private mutating func nested() -> ElementEncoder {
        let nestedContext = itemContext
        let nested = EncodedElement()
        element.children.append(("", .element(nested)))
        return ElementEncoder(element: nested, context: nestedContext)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        nested().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        nested().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        nested()
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let element: EncodedElement
    let context: Context
    var codingPath: [any CodingKey] { context.codingPath }

    private func set(_ text: String) { element.text = text }

    mutating func encodeNil() throws { element.text = nil }
    mutating func encode(_ value: Bool) throws { set(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { set(value) }
    mutating func encode(_ value: Double) throws { set(try context.text(value)) }
    mutating func encode(_ value: Float) throws { set(try context.text(value)) }
    mutating func encode(_ value: Int) throws { set(String(value)) }
    mutating func encode(_ value: Int8) throws { set(String(value)) }
    mutating func encode(_ value: Int16) throws { set(String(value)) }
    mutating func encode(_ value: Int32) throws { set(String(value)) }
    mutating func encode(_ value: Int64) throws { set(String(value)) }
    mutating func encode(_ value: UInt) throws { set(String(value)) }
    mutating func encode(_ value: UInt8) throws { set(String(value)) }
    mutating func encode(_ value: UInt16) throws { set(String(value)) }
    mutating func encode(_ value: UInt32) throws { set(String(value)) }
    mutating func encode(_ value: UInt64) throws { set(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try context.deeper().encode(value, into: element)
    }
}
