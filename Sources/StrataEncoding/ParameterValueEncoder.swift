import Foundation
import StrataCore

/// An `Encoder` that turns any `Encodable` value into a ``/StrataCore/ParameterValue`` tree.
///
/// Encodings that write parameters (URL query strings and form bodies, XML, multipart fields) use
/// it to accept `Encodable` models directly, without a detour through JSON.
///
/// ```swift
/// struct Search: Encodable { let q: String; let page: Int }
/// let value = try ParameterValueEncoder().encode(Search(q: "swift", page: 2))
/// // .object(["q": .string("swift"), "page": .int(2)])
/// ```
///
/// `nil` optionals encoded with `encodeIfPresent` (the synthesized default) are left out.
/// `Date`, `Data`, `URL` and `Decimal` are written as the strategies say; unsigned numbers above
/// `Int.max` become their decimal text. A value nested more than ``maximumDepth`` levels of
/// containers deep fails with ``ParameterEncodingError/nestingTooDeep(maximum:)``.
public struct ParameterValueEncoder: Sendable {
    /// How a `Date` is written.
    public enum DateEncodingStrategy: Sendable {
        /// As ``/StrataCore/ParameterValue/date(_:)``, for the encoding to write as its own options
        /// say (the default).
        case dateValue
        /// An ISO 8601 timestamp in UTC, such as `2026-11-22T06:00:00Z`.
        case iso8601
        /// Seconds since 1970-01-01 as a number.
        case secondsSince1970
        /// Milliseconds since 1970-01-01 as a whole number.
        case millisecondsSince1970
        /// The date as `Date`'s own `Encodable` conformance writes it.
        case deferredToDate
        /// A value computed by the closure.
        case custom(@Sendable (Date) -> ParameterValue)
    }

    /// How a `Data` value is written.
    public enum DataEncodingStrategy: Sendable {
        /// Base64 text (the default).
        case base64
        /// The value as `Data`'s own `Encodable` conformance writes it (an array of bytes).
        case deferredToData
    }

    /// How dates are written. Defaults to ``DateEncodingStrategy/dateValue``.
    public var dateEncodingStrategy: DateEncodingStrategy
    /// How data is written. Defaults to ``DataEncodingStrategy/base64``.
    public var dataEncodingStrategy: DataEncodingStrategy
    /// The most levels of keyed and unkeyed containers a value may nest (a value wrapping another
    /// in a single-value container counts as a level too). Defaults to
    /// ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public var maximumDepth: Int

    /// Creates an encoder.
    public init(
        dateEncodingStrategy: DateEncodingStrategy = .dateValue, dataEncodingStrategy: DataEncodingStrategy = .base64,
        maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) {
        self.dateEncodingStrategy = dateEncodingStrategy
        self.dataEncodingStrategy = dataEncodingStrategy
        self.maximumDepth = maximumDepth
    }

    /// The parameter tree `value` encodes to.
    /// - Throws: ``ParameterEncodingError/encodingFailed(type:reason:)`` when the value's encoding
    ///   fails, ``ParameterEncodingError/nestingTooDeep(maximum:)`` when it nests too deep.
    public func encode(_ value: some Encodable) throws(ParameterEncodingError) -> ParameterValue {
        try encodeOrdered(value).parameterValue
    }

    /// The tree `value` encodes to, members in the order they were encoded (for formats where order
    /// matters, such as XML).
    package func encodeOrdered(_ value: some Encodable) throws(ParameterEncodingError) -> OrderedValue {
        let node = Node()
        let limit = DepthLimit(maximum: maximumDepth)
        do {
            try Context(options: self, limit: limit, codingPath: [], depth: 0).encode(value, into: node)
        } catch is DepthLimit.Exceeded {
            throw .nestingTooDeep(maximum: maximumDepth)
        } catch {
            throw .encodingFailed(type: String(describing: type(of: value)), reason: Self.describe(error))
        }
        guard !limit.isExceeded else { throw .nestingTooDeep(maximum: maximumDepth) }
        return node.ordered
    }

    /// The named members `value` encodes to.
    /// - Throws: ``ParameterEncodingError/membersRequired(type:found:)`` when it does not encode
    ///   as named members, or ``ParameterEncodingError/encodingFailed(type:reason:)``.
    public func encodeMembers(_ value: some Encodable) throws(ParameterEncodingError) -> [String: ParameterValue] {
        let encoded = try encode(value)
        guard case .object(let members) = encoded else {
            throw .membersRequired(type: String(describing: type(of: value)), found: encoded.kind)
        }
        return members
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case EncodingError.invalidValue(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(context.debugDescription) (at \(path))"
        default:
            return String(describing: error)
        }
    }
}

/// An encoded value whose members keep the order they were encoded in.
package indirect enum OrderedValue: Sendable {
    /// A string, number, Boolean, date or null.
    case scalar(ParameterValue)
    /// Named members, in order.
    case members([(key: String, value: OrderedValue)])
    /// Elements, in order.
    case elements([OrderedValue])

    /// The same value as a ``/StrataCore/ParameterValue`` (members lose their order).
    package var parameterValue: ParameterValue {
        switch self {
        case .scalar(let value): return value
        case .members(let members):
            return .object(
                Dictionary(members.map { ($0.key, $0.value.parameterValue) }, uniquingKeysWith: { _, last in last }))
        case .elements(let elements): return .array(elements.map(\.parameterValue))
        }
    }
}

// MARK: - The tree under construction

/// One value being encoded. Containers keep a reference and fill it in, so nested containers and
/// super encoders write into their parent's tree.
private final class Node {
    enum Content {
        case empty
        case single(ParameterValue)
        case members(keys: [String], nodes: [String: Node])
        case elements([Node])
    }

    var content = Content.empty

    var ordered: OrderedValue {
        switch content {
        case .empty: return .members([])
        case .single(let value): return .scalar(value)
        case .members(let keys, let nodes):
            return .members(keys.compactMap { key in nodes[key].map { (key, $0.ordered) } })
        case .elements(let elements): return .elements(elements.map(\.ordered))
        }
    }

    func member(_ key: String) -> Node {
        var keys: [String] = []
        var nodes: [String: Node] = [:]
        if case .members(let existingKeys, let existingNodes) = content {
            if let node = existingNodes[key] { return node }
            keys = existingKeys
            nodes = existingNodes
            // Emptied while the collections grow, so they are not shared and grow in place:
            // otherwise every new member would copy all earlier ones.
            content = .empty
        }
        let node = Node()
        keys.append(key)
        nodes[key] = node
        content = .members(keys: keys, nodes: nodes)
        return node
    }

    func appendElement() -> Node {
        var elements: [Node] = []
        if case .elements(let existing) = content {
            elements = existing
            content = .empty  // So `elements` grows in place, as in `member(_:)`.
        }
        let node = Node()
        elements.append(node)
        content = .elements(elements)
        return node
    }

    var elementCount: Int {
        if case .elements(let elements) = content { return elements.count }
        return 0
    }
}

/// Where a value is encoded: its options, its path, and how many containers enclose it.
private struct Context {
    let options: ParameterValueEncoder
    let limit: DepthLimit
    let codingPath: [any CodingKey]
    /// The containers around the value (0 for the value encoded first).
    let depth: Int

    /// The context of a member or element: one container deeper. Past the limit the path stops
    /// growing: the encoding fails anyway, and copying a path as long as the nesting at every level
    /// made a chain of containers quadratic in its length.
    func appending(_ key: any CodingKey) -> Context {
        let path = depth < limit.maximum ? codingPath + [key] : codingPath
        return Context(options: options, limit: limit, codingPath: path, depth: depth + 1)
    }

    /// The context of a value wrapped in a single-value container or a super encoder: a level of
    /// its own, so that a chain of wrappers cannot recurse without bound either.
    func deeper() -> Context {
        Context(options: options, limit: limit, codingPath: codingPath, depth: depth + 1)
    }

    /// `node` if a container may open at this depth; past the limit, a node of its own that is
    /// thrown away (a nested container cannot throw), and the encoding fails once it returns.
    func containerNode(_ node: Node) -> Node {
        limit.allowsContainer(at: depth) ? node : Node()
    }

    func encode<Value: Encodable>(_ value: Value, into node: Node) throws {
        try limit.check(depth)
        if Value.self == ParameterValue.self, let parameter = value as? ParameterValue {
            try encode(parameter, into: node)
        } else if let special = try specialValue(value) {
            node.content = .single(special)
        } else {
            try value.encode(to: TreeEncoder(node: node, context: self))
        }
    }

    /// A parameter value, written straight into the tree rather than through its `Encodable`
    /// conformance (which would count each level twice).
    private func encode(_ parameter: ParameterValue, into node: Node) throws {
        switch parameter {
        case .array(let elements):
            guard limit.allowsContainer(at: depth) else { throw DepthLimit.Exceeded() }
            node.content = .elements([])
            for (index, element) in elements.enumerated() {
                try appending(IndexKey(index)).encode(element, into: node.appendElement())
            }
        case .object(let members):
            guard limit.allowsContainer(at: depth) else { throw DepthLimit.Exceeded() }
            node.content = .members(keys: [], nodes: [:])
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                try appending(IndexKey(stringValue: key)).encode(member, into: node.member(key))
            }
        case .date(let date):
            try encode(date, into: node)
        case .double(let number):
            node.content = .single(try self.number(number))
        case .string, .int, .bool, .null:
            node.content = .single(parameter)
        }
    }

    private func specialValue(_ value: some Encodable) throws -> ParameterValue? {
        switch value {
        case let date as Date:
            switch options.dateEncodingStrategy {
            case .dateValue: return .date(date)
            case .iso8601:
                // The error holds the seconds, not the date: describing a date that is not a number traps.
                guard URLEncodedFormEncoder.DateEncoding.iso8601Range.contains(date.timeIntervalSince1970) else {
                    throw invalid(date.timeIntervalSince1970, "seconds from 1970 lie outside the years 0001 to 9999")
                }
                return .string(date.formatted(.iso8601))
            case .secondsSince1970: return .double(date.timeIntervalSince1970)
            case .millisecondsSince1970:
                let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
                guard let whole = Int(exactly: milliseconds) else {
                    throw invalid(date.timeIntervalSince1970, "seconds from 1970 are more milliseconds than Int holds")
                }
                return .int(whole)
            case .deferredToDate: return nil
            case .custom(let transform): return transform(date)
            }
        case let data as Data:
            switch options.dataEncodingStrategy {
            case .base64: return .string(data.base64EncodedString())
            case .deferredToData: return nil
            }
        case let url as URL:
            return .string(url.absoluteString)
        case let decimal as Decimal:
            return .string(decimal.description)
        default:
            return nil
        }
    }

    func number(_ value: Double) throws -> ParameterValue {
        guard value.isFinite else { throw invalid(value, "is not a finite number") }
        return .double(value)
    }

    func number<Integer: BinaryInteger>(_ value: Integer) -> ParameterValue {
        if let int = Int(exactly: value) { return .int(int) }
        return .string(String(value))
    }

    func invalid(_ value: Any, _ reason: String) -> EncodingError {
        EncodingError.invalidValue(
            value,
            EncodingError.Context(codingPath: codingPath, debugDescription: "\(value) \(reason).")
        )
    }
}

/// An element's index or a member's name, for coding paths.
private struct IndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String
    init(_ index: Int) {
        intValue = index
        stringValue = String(index)
    }
    init(stringValue: String) {
        intValue = nil
        self.stringValue = stringValue
    }
    init?(intValue: Int) { self.init(intValue) }
}

private struct TreeEncoder: Encoder {
    let node: Node
    let context: Context
    var codingPath: [any CodingKey] { context.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let node = context.containerNode(node)
        if case .members = node.content {} else { node.content = .members(keys: [], nodes: [:]) }
        return KeyedEncodingContainer(MembersContainer<Key>(node: node, context: context))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let node = context.containerNode(node)
        if case .elements = node.content {} else { node.content = .elements([]) }
        return ElementsContainer(node: node, context: context)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(node: node, context: context)
    }
}

private struct MembersContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let context: Context
    var codingPath: [any CodingKey] { context.codingPath }

    private func set(_ value: ParameterValue, _ key: Key) {
        node.member(key.stringValue).content = .single(value)
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(try context.appending(key).number(value), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        set(try context.appending(key).number(Double(value)), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(context.number(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try context.appending(key).encode(value, into: node.member(key.stringValue))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        TreeEncoder(node: node.member(key.stringValue), context: context.appending(key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        TreeEncoder(node: node.member(key.stringValue), context: context.appending(key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        TreeEncoder(node: node.member("super"), context: context.deeper())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        TreeEncoder(node: node.member(key.stringValue), context: context.appending(key))
    }
}

private struct ElementsContainer: UnkeyedEncodingContainer {
    let node: Node
    let context: Context
    var codingPath: [any CodingKey] { context.codingPath }
    var count: Int { node.elementCount }

    private func append(_ value: ParameterValue) {
        node.appendElement().content = .single(value)
    }

    private var nextContext: Context { context.appending(IndexKey(count)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try nextContext.number(value)) }
    mutating func encode(_ value: Float) throws { append(try nextContext.number(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.int(value)) }
    mutating func encode(_ value: Int8) throws { append(context.number(value)) }
    mutating func encode(_ value: Int16) throws { append(context.number(value)) }
    mutating func encode(_ value: Int32) throws { append(context.number(value)) }
    mutating func encode(_ value: Int64) throws { append(context.number(value)) }
    mutating func encode(_ value: UInt) throws { append(context.number(value)) }
    mutating func encode(_ value: UInt8) throws { append(context.number(value)) }
    mutating func encode(_ value: UInt16) throws { append(context.number(value)) }
    mutating func encode(_ value: UInt32) throws { append(context.number(value)) }
    mutating func encode(_ value: UInt64) throws { append(context.number(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let elementContext = nextContext
        try elementContext.encode(value, into: node.appendElement())
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let elementContext = nextContext
        return TreeEncoder(node: node.appendElement(), context: elementContext).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let elementContext = nextContext
        return TreeEncoder(node: node.appendElement(), context: elementContext).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let elementContext = nextContext
        return TreeEncoder(node: node.appendElement(), context: elementContext)
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let node: Node
    let context: Context
    var codingPath: [any CodingKey] { context.codingPath }

    private func set(_ value: ParameterValue) { node.content = .single(value) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(try context.number(value)) }
    mutating func encode(_ value: Float) throws { set(try context.number(Double(value))) }
    mutating func encode(_ value: Int) throws { set(.int(value)) }
    mutating func encode(_ value: Int8) throws { set(context.number(value)) }
    mutating func encode(_ value: Int16) throws { set(context.number(value)) }
    mutating func encode(_ value: Int32) throws { set(context.number(value)) }
    mutating func encode(_ value: Int64) throws { set(context.number(value)) }
    mutating func encode(_ value: UInt) throws { set(context.number(value)) }
    mutating func encode(_ value: UInt8) throws { set(context.number(value)) }
    mutating func encode(_ value: UInt16) throws { set(context.number(value)) }
    mutating func encode(_ value: UInt32) throws { set(context.number(value)) }
    mutating func encode(_ value: UInt64) throws { set(context.number(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try context.deeper().encode(value, into: node)
    }
}

/// The deepest nesting one encoding allows, and whether a container past it was asked for.
///
/// A value deeper than the limit fails at once (``check(_:)`` throws); a nested container cannot
/// throw, so one past the limit is only recorded, and the encoding fails when it returns.
final class DepthLimit {
    /// Thrown when a value lies deeper than the limit; becomes `nestingTooDeep`.
    struct Exceeded: Error {}

    let maximum: Int
    private(set) var isExceeded = false

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Throws ``Exceeded`` if a value at `depth` (that many containers deep) lies past the limit.
    func check(_ depth: Int) throws {
        guard depth <= maximum else { throw Exceeded() }
    }

    /// Whether a container may open around the members of a value at `depth`; records it if not.
    func allowsContainer(at depth: Int) -> Bool {
        guard depth < maximum else {
            isExceeded = true
            return false
        }
        return true
    }
}

extension ParameterValue {
    /// What kind of value this is, for an error message that must not show the value itself.
    fileprivate var kind: String {
        switch self {
        case .string: return "a string"
        case .int, .double: return "a number"
        case .bool: return "a Boolean"
        case .date: return "a date"
        case .null: return "null"
        case .array(let elements): return "an array of \(elements.count) element" + (elements.count == 1 ? "" : "s")
        case .object(let members): return "an object of \(members.count) member" + (members.count == 1 ? "" : "s")
        }
    }
}
