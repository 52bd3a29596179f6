import StrataCore

/// Measures how deep an `Encodable` value nests, writing nothing, so that a value too deep for a
/// platform encoder is refused before it is handed over.
///
/// `JSONEncoder` and `PropertyListEncoder` recurse once per level of the value and check depth only
/// when they write it out, so a value a few thousand levels deep exhausts the stack first. The
/// probe walks the value with the same rule as ``ParameterValueEncoder`` — keyed and unkeyed
/// containers and single-value wrappers each count a level — and stops at the limit.
enum NestingProbe {
    /// Throws ``ParameterEncodingError/nestingTooDeep(maximum:)`` if `value` nests deeper than
    /// `maximumDepth`. Errors of the value's own encoding are left for the real encoder to report.
    static func check(_ value: some Encodable, maximumDepth: Int) throws(ParameterEncodingError) {
        let limit = DepthLimit(maximum: maximumDepth)
        do {
            try ProbeEncoder(limit: limit, depth: 0).probe(value)
        } catch is DepthLimit.Exceeded {
            throw .nestingTooDeep(maximum: maximumDepth)
        } catch {
            // The value's own failure: the encoder that runs next meets it at the same place.
        }
        if limit.isExceeded {
            throw .nestingTooDeep(maximum: maximumDepth)
        }
    }
}

/// An encoder that only follows the value's structure. Its coding path stays empty: a path is
/// built for error messages, and the probe reports none.
private struct ProbeEncoder: Encoder {
    let limit: DepthLimit
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Follows `value`, which lies `depth` containers deep. A parameter value is measured as the
    /// parameter encoder counts it: each array or object one level.
    func probe<Value: Encodable>(_ value: Value) throws {
        try limit.check(depth)
        if Value.self == ParameterValue.self, let parameter = value as? ParameterValue {
            guard !parameter.nests(deeperThan: limit.maximum - depth) else { throw DepthLimit.Exceeded() }
            return
        }
        try value.encode(to: self)
    }

    /// The encoder of what lies one level further in.
    var inner: ProbeEncoder { ProbeEncoder(limit: limit, depth: depth + 1) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        _ = limit.allowsContainer(at: depth)
        return KeyedEncodingContainer(ProbeKeyedContainer<Key>(members: inner))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        _ = limit.allowsContainer(at: depth)
        return ProbeUnkeyedContainer(elements: inner)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ProbeSingleValueContainer(wrapped: inner)
    }
}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let members: ProbeEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws {}
    mutating func encode(_ value: String, forKey key: Key) throws {}
    mutating func encode(_ value: Double, forKey key: Key) throws {}
    mutating func encode(_ value: Float, forKey key: Key) throws {}
    mutating func encode(_ value: Int, forKey key: Key) throws {}
    mutating func encode(_ value: Int8, forKey key: Key) throws {}
    mutating func encode(_ value: Int16, forKey key: Key) throws {}
    mutating func encode(_ value: Int32, forKey key: Key) throws {}
    mutating func encode(_ value: Int64, forKey key: Key) throws {}
    mutating func encode(_ value: UInt, forKey key: Key) throws {}
    mutating func encode(_ value: UInt8, forKey key: Key) throws {}
    mutating func encode(_ value: UInt16, forKey key: Key) throws {}
    mutating func encode(_ value: UInt32, forKey key: Key) throws {}
    mutating func encode(_ value: UInt64, forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try members.probe(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        members.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        members.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { members }
    mutating func superEncoder(forKey key: Key) -> any Encoder { members }
}

private struct ProbeUnkeyedContainer: UnkeyedEncodingContainer {
    let elements: ProbeEncoder
    var codingPath: [any CodingKey] { [] }
    private(set) var count = 0

    init(elements: ProbeEncoder) {
        self.elements = elements
    }

    mutating func encodeNil() throws { count += 1 }
    mutating func encode(_ value: Bool) throws { count += 1 }
    mutating func encode(_ value: String) throws { count += 1 }
    mutating func encode(_ value: Double) throws { count += 1 }
    mutating func encode(_ value: Float) throws { count += 1 }
    mutating func encode(_ value: Int) throws { count += 1 }
    mutating func encode(_ value: Int8) throws { count += 1 }
    mutating func encode(_ value: Int16) throws { count += 1 }
    mutating func encode(_ value: Int32) throws { count += 1 }
    mutating func encode(_ value: Int64) throws { count += 1 }
    mutating func encode(_ value: UInt) throws { count += 1 }
    mutating func encode(_ value: UInt8) throws { count += 1 }
    mutating func encode(_ value: UInt16) throws { count += 1 }
    mutating func encode(_ value: UInt32) throws { count += 1 }
    mutating func encode(_ value: UInt64) throws { count += 1 }
    mutating func encode<T: Encodable>(_ value: T) throws {
        count += 1
        try elements.probe(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        count += 1
        return elements.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        count += 1
        return elements.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        count += 1
        return elements
    }
}

private struct ProbeSingleValueContainer: SingleValueEncodingContainer {
    let wrapped: ProbeEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: Bool) throws {}
    mutating func encode(_ value: String) throws {}
    mutating func encode(_ value: Double) throws {}
    mutating func encode(_ value: Float) throws {}
    mutating func encode(_ value: Int) throws {}
    mutating func encode(_ value: Int8) throws {}
    mutating func encode(_ value: Int16) throws {}
    mutating func encode(_ value: Int32) throws {}
    mutating func encode(_ value: Int64) throws {}
    mutating func encode(_ value: UInt) throws {}
    mutating func encode(_ value: UInt8) throws {}
    mutating func encode(_ value: UInt16) throws {}
    mutating func encode(_ value: UInt32) throws {}
    mutating func encode(_ value: UInt64) throws {}
    mutating func encode<T: Encodable>(_ value: T) throws { try wrapped.probe(value) }
}
