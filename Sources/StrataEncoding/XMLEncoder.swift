import Foundation
import StrataCore

/// Encodes `Encodable` values (and parameter dictionaries) as XML.
///
/// Each member becomes a child element, in the order it was encoded; a member whose key starts with
/// `@` becomes an attribute instead (`case id = "@id"`). Arrays are wrapped: `tags: ["a", "b"]` is
/// `<tags><item>a</item><item>b</item></tags>`. `nil` optionals are left out. Dates follow
/// ``dateEncoding``, `Data` is base64, Booleans are `true` and `false`. A value nesting more than
/// ``maximumDepth`` levels is refused with ``XMLError/nestingTooDeep(maximum:)``.
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
    /// The element name of array items. Defaults to `item`.
    public var arrayItemName: String
    /// The most levels of arrays and objects a value may nest. Defaults to
    /// ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public var maximumDepth: Int

    /// Creates an encoder.
    public init(
        dateEncoding: DateEncoding = .iso8601, arrayItemName: String = "item",
        maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) {
        self.dateEncoding = dateEncoding
        self.arrayItemName = arrayItemName
        self.maximumDepth = maximumDepth
    }

    /// The element `value` encodes to, named `rootElement`.
    /// - Throws: ``XMLError`` for a member that cannot be an attribute; `encodingFailed` wrapped in
    ///   ``XMLError/unsupportedValue(_:)`` when the value's own encoding fails.
    public func encode(_ value: some Encodable, rootElement: String) throws(XMLError) -> XMLTree {
        let ordered: OrderedValue
        do {
            ordered = try ParameterValueEncoder(maximumDepth: maximumDepth).encodeOrdered(value)
        } catch .nestingTooDeep(let maximum) {
            throw .nestingTooDeep(maximum: maximum)
        } catch {
            throw .unsupportedValue(error.errorDescription ?? "the value could not be encoded")
        }
        return try element(rootElement, ordered)
    }

    /// The element of `parameters`, named `rootElement`, members in sorted key order.
    public func encode(_ parameters: [String: ParameterValue], rootElement: String) throws(XMLError) -> XMLTree {
        guard !ParameterValue.object(parameters).nests(deeperThan: maximumDepth) else {
            throw .nestingTooDeep(maximum: maximumDepth)
        }
        return try element(rootElement, Self.ordered(.object(parameters)))
    }

    /// The UTF-8 document of `value`, with an XML declaration.
    /// - Throws: ``XMLError`` when the value cannot be written as XML.
    public func encodeDocument(_ value: some Encodable, rootElement: String) throws(XMLError) -> Data {
        Data(try XMLWriter().write(encode(value, rootElement: rootElement)).utf8)
    }

    private func element(_ name: String, _ value: OrderedValue) throws(XMLError) -> XMLTree {
        switch value {
        case .scalar(let scalar):
            let text = self.text(scalar)
            return XMLTree(name, children: text.isEmpty ? [] : [.text(text)])
        case .elements(let items):
            var children: [XMLTree.Child] = []
            for item in items {
                children.append(.element(try element(arrayItemName, item)))
            }
            return XMLTree(name, children: children)
        case .members(let members):
            var tree = XMLTree(name)
            for (key, member) in members {
                if key.hasPrefix("@") {
                    guard case .scalar(let scalar) = member else {
                        throw .unsupportedValue("the attribute '\(key)' must be a single value")
                    }
                    tree.attributes.append((String(key.dropFirst()), text(scalar)))
                } else {
                    tree.children.append(.element(try element(key, member)))
                }
            }
            return tree
        }
    }

    private func text(_ scalar: ParameterValue) -> String {
        switch scalar {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .date(let date): return dateEncoding.text(for: date)
        case .null, .array, .object: return ""
        }
    }

    /// A parameter value with members in sorted key order.
    private static func ordered(_ value: ParameterValue) -> OrderedValue {
        switch value {
        case .object(let members):
            return .members(members.sorted { $0.key < $1.key }.map { ($0.key, ordered($0.value)) })
        case .array(let elements): return .elements(elements.map(ordered))
        default: return .scalar(value)
        }
    }
}
