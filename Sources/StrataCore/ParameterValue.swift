import Foundation

/// A parameter value: a Sendable, JSON-like tree that request parameters are written in.
///
/// Literals build it directly, so a parameter set reads like the JSON it stands for:
///
/// ```swift
/// let parameters: [String: ParameterValue] = ["q": "swift", "page": 2, "tags": ["a", "b"]]
/// ```
///
/// Encodings decide how each kind is written: as a query string, a form body, JSON, XML or
/// multipart fields.
public enum ParameterValue: Hashable, Sendable {
    /// A text value.
    case string(String)
    /// A whole number.
    case int(Int)
    /// A floating-point number.
    case double(Double)
    /// A Boolean.
    case bool(Bool)
    /// A point in time. Each encoding writes it as its options say (ISO 8601 by default); JSON uses
    /// the `JSONEncoder`'s date strategy.
    case date(Date)
    /// An ordered list of values.
    case array([ParameterValue])
    /// Named values. Encodings write keys in a deterministic (sorted) order.
    case object([String: ParameterValue])
    /// The absence of a value (JSON `null`).
    case null
}

extension ParameterValue: ExpressibleByStringLiteral {
    /// Creates `.string` from a literal.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension ParameterValue: ExpressibleByIntegerLiteral {
    /// Creates `.int` from a literal.
    public init(integerLiteral value: Int) {
        self = .int(value)
    }
}

extension ParameterValue: ExpressibleByFloatLiteral {
    /// Creates `.double` from a literal.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension ParameterValue: ExpressibleByBooleanLiteral {
    /// Creates `.bool` from a literal.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension ParameterValue: ExpressibleByArrayLiteral {
    /// Creates `.array` from a literal.
    public init(arrayLiteral elements: ParameterValue...) {
        self = .array(elements)
    }
}

extension ParameterValue: ExpressibleByDictionaryLiteral {
    /// Creates `.object` from a literal. A key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension ParameterValue: ExpressibleByNilLiteral {
    /// Creates `.null` from `nil`.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension ParameterValue: Codable {
    /// Decodes any JSON-like value: `null`, a Boolean, a whole number, a floating-point number,
    /// a string, an array or an object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ParameterValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: ParameterValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "The value is not null, a Boolean, a number, a string, an array or an object."
            )
        }
    }

    /// Encodes the value as the matching JSON-like value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .date(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

extension ParameterValue: CustomStringConvertible {
    /// A compact, JSON-like rendering with sorted keys, for logs and test failures.
    public var description: String {
        switch self {
        case .string(let value): return "\"\(value)\""
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return String(value)
        case .date(let value): return "\"\(value.formatted(.iso8601))\""
        case .null: return "null"
        case .array(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .object(let values):
            let members = values.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value.description)" }
            return "{" + members.joined(separator: ", ") + "}"
        }
    }
}

extension ParameterValue {
    /// The deepest nesting of arrays and objects (or XML elements) Strata's encodings and decoders
    /// accept unless told otherwise: 100 levels. Deeper input is refused with a typed error rather
    /// than walked: every level of it costs stack, and a deep enough one would exhaust it.
    public static let defaultMaximumDepth = 100

    /// Whether arrays and objects nest more than `maximum` levels deep (a scalar is 0 levels, `[1]`
    /// and `["a": 1]` are 1). Found without recursion, so any depth is safe to ask about.
    package func nests(deeperThan maximum: Int) -> Bool {
        // Most parameters are one level of scalars: answered without allocating anything.
        switch self {
        case .array(let elements) where elements.allSatisfy(\.isScalar): return maximum < 1
        case .object(let members) where members.values.allSatisfy(\.isScalar): return maximum < 1
        case .string, .int, .double, .bool, .date, .null: return false
        case .array, .object: break
        }
        var pending: [(value: ParameterValue, depth: Int)] = [(self, 0)]
        while let (value, depth) = pending.popLast() {
            switch value {
            case .array(let elements):
                guard depth < maximum else { return true }
                pending += elements.lazy.map { ($0, depth + 1) }
            case .object(let members):
                guard depth < maximum else { return true }
                pending += members.values.lazy.map { ($0, depth + 1) }
            case .string, .int, .double, .bool, .date, .null:
                continue
            }
        }
        return false
    }
}

extension ParameterValue {
    /// Whether this is neither an array nor an object.
    package var isScalar: Bool {
        switch self {
        case .string, .int, .double, .bool, .date, .null: return true
        case .array, .object: return false
        }
    }
}

/// How deep a JSON document nests, read from its bytes before any parser recurses into it.
package enum JSONNesting {
    /// Whether arrays and objects in `document` nest more than `maximum` levels deep. One pass over
    /// the bytes, skipping strings; it does not check that the document is valid JSON.
    package static func exceeds(_ maximum: Int, in document: Data) -> Bool {
        // Too short to open more than `maximum` containers: nothing to read.
        guard document.count > maximum else { return false }
        return document.withUnsafeBytes { raw in
            // Fewer `[` and `{` bytes than the maximum cannot nest past it, which settles most
            // responses in one quick pass.
            guard openingBrackets(in: raw) > maximum else { return false }
            return classes.withUnsafeBufferPointer { classes in
                var depth = 0
                var index = raw.startIndex
                let end = raw.endIndex
                while index < end {
                    let byte = raw[index]
                    index += 1
                    // Most bytes are none of `"[]{}`: one look-up in the class table each.
                    switch classes[Int(byte)] {
                    case 0:
                        continue
                    case 1:  // `[` or `{`
                        depth += 1
                        if depth > maximum { return true }
                    case 2:  // `]` or `}`
                        depth -= 1
                    default:  // `"`: skip the string, escapes included
                        while index < end {
                            let inner = raw[index]
                            index += 1
                            if inner == UInt8(ascii: "\\") {
                                index += 1
                            } else if inner == UInt8(ascii: "\"") {
                                break
                            }
                        }
                    }
                }
                return false
            }
        }
    }

    /// How many bytes of `bytes` are `[` or `{`, counted sixteen at a time without a branch per byte.
    package static func openingBrackets(in bytes: UnsafeRawBufferPointer) -> Int {
        // `[` (0x5B) and `{` (0x7B) differ only in bit 0x20, and no other byte becomes 0x7B with
        // it set: after setting it, the bytes equal to 0x7B are exactly theirs.
        let caseBit = SIMD16<UInt8>(repeating: 0x20)
        let brace = SIMD16<UInt8>(repeating: UInt8(ascii: "{"))
        var count = 0
        var offset = 0
        while offset + 16 <= bytes.count {
            // Up to 255 chunks are counted lane by lane before a lane could overflow.
            var lanes = SIMD16<UInt8>()
            let end = min(bytes.count - 15, offset + 255 * 16)
            while offset < end {
                let chunk = bytes.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
                lanes &+= SIMD16<UInt8>(repeating: 0).replacing(with: 1, where: chunk | caseBit .== brace)
                offset += 16
            }
            for lane in 0..<16 {
                count &+= Int(lanes[lane])
            }
        }
        while offset < bytes.count {
            count &+= bytes[offset] | 0x20 == UInt8(ascii: "{") ? 1 : 0
            offset += 1
        }
        return count
    }

    /// 1 for `[` and `{`, 2 for `]` and `}`, 3 for `"`, 0 for every other byte.
    private static let classes: [UInt8] = (0...255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "["), UInt8(ascii: "{"): return 1
        case UInt8(ascii: "]"), UInt8(ascii: "}"): return 2
        case UInt8(ascii: "\""): return 3
        default: return 0
        }
    }
}
