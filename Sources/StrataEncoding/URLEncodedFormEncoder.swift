import Foundation
import StrataCore

/// Writes parameters, or any `Encodable`, as `application/x-www-form-urlencoded` text: the form of
/// URL query strings and form bodies.
///
/// `Encodable` values go through ``ParameterValueEncoder`` (an `Encoder`; nothing passes through
/// JSON), then are written with the same options as parameter dictionaries:
///
/// ```swift
/// struct Search: Encodable { let q: String; let tags: [String]; let since: Date }
/// let encoder = URLEncodedFormEncoder(arrayEncoding: .noBrackets, dateEncoding: .secondsSince1970)
/// try encoder.encode(Search(q: "a&b", tags: ["x", "y"], since: Date(timeIntervalSince1970: 0)))
/// // "q=a%26b&since=0&tags=x&tags=y"
/// ```
///
/// Keys are written in sorted order, nested objects with bracket keys (`user[name]=Ann`), and
/// `.null` values are left out. Parameters nested more than ``maximumDepth`` levels deep fail with
/// ``ParameterEncodingError/nestingTooDeep(maximum:)``. Keys and values are percent-encoded per RFC 3986 §3.4: everything
/// but `A-Z a-z 0-9 - . _ ~ / ?` is escaped, so `+`, `&`, `=` and `;` in a value can never be read
/// as separators.
public struct URLEncodedFormEncoder: Sendable {
    /// How array elements are keyed.
    public enum ArrayEncoding: Hashable, Sendable {
        /// `tags[]=a&tags[]=b` (the default).
        case brackets
        /// `tags=a&tags=b`
        case noBrackets
        /// `tags[0]=a&tags[1]=b`
        case indexInBrackets
        /// `tags=a,b`: scalar elements joined by a literal comma (commas inside an element are
        /// escaped); nested arrays and objects are written with brackets.
        case commaSeparated
    }

    /// How Booleans are written.
    public enum BoolEncoding: Hashable, Sendable {
        /// `1` and `0` (the default).
        case numeric
        /// `true` and `false`.
        case literal
    }

    /// How dates are written.
    public enum DateEncoding: Sendable {
        /// ISO 8601 in UTC with fractional seconds when there are any, e.g. `2026-11-22T06:00:00Z` (the default).
        case iso8601
        /// Seconds since 1970-01-01, e.g. `1700000000.25`.
        case secondsSince1970
        /// Whole milliseconds since 1970-01-01, e.g. `1700000000250`.
        case millisecondsSince1970
        /// The text the closure returns.
        case custom(@Sendable (Date) -> String)
    }

    /// How arrays are keyed.
    public var arrayEncoding: ArrayEncoding
    /// How Booleans are written.
    public var boolEncoding: BoolEncoding
    /// How dates are written.
    public var dateEncoding: DateEncoding
    /// The most levels of arrays and objects the parameters may nest (the parameter list itself is
    /// one). Defaults to ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public var maximumDepth: Int

    /// Creates an encoder.
    public init(
        arrayEncoding: ArrayEncoding = .brackets, boolEncoding: BoolEncoding = .numeric,
        dateEncoding: DateEncoding = .iso8601, maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dateEncoding = dateEncoding
        self.maximumDepth = maximumDepth
    }

    /// The form text of `value`'s members.
    /// - Throws: ``ParameterEncodingError`` when the value cannot be encoded, is not keyed, or
    ///   nests too deep.
    public func encode(_ value: some Encodable) throws(ParameterEncodingError) -> String {
        try encode(ParameterValueEncoder(maximumDepth: maximumDepth).encodeMembers(value))
    }

    /// The form text of `parameters`, keys in sorted order, without a leading `?`.
    /// - Throws: ``ParameterEncodingError/nestingTooDeep(maximum:)`` when they nest too deep.
    public func encode(_ parameters: [String: ParameterValue]) throws(ParameterEncodingError) -> String {
        guard maximumDepth >= 1 else { throw .nestingTooDeep(maximum: maximumDepth) }
        var query = ""
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            try append(value, key: PercentEncoding.encodeQueryComponent(key), depth: 1, to: &query)
        }
        return query
    }

    /// Appends the pairs for `value`, which lies `depth` containers deep, under an already-encoded
    /// `key` to `query`. The walk recurses once per level and stops at ``maximumDepth``.
    private func append(
        _ value: ParameterValue, key: String, depth: Int, to query: inout String
    ) throws(ParameterEncodingError) {
        switch value {
        case .null:
            return
        case .object(let members):
            guard depth < maximumDepth else { throw .nestingTooDeep(maximum: maximumDepth) }
            for (member, value) in members.sorted(by: { $0.key < $1.key }) {
                let nested = "\(key)%5B\(PercentEncoding.encodeQueryComponent(member))%5D"
                try append(value, key: nested, depth: depth + 1, to: &query)
            }
        case .array(let elements):
            guard depth < maximumDepth else { throw .nestingTooDeep(maximum: maximumDepth) }
            try appendArray(elements, key: key, depth: depth + 1, to: &query)
        case .string, .int, .double, .bool, .date:
            query.appendPair("\(key)=\(try scalarText(value))")
        }
    }

    /// Appends the pairs for `elements`, each `depth` containers deep.
    private func appendArray(
        _ elements: [ParameterValue], key: String, depth: Int, to query: inout String
    ) throws(ParameterEncodingError) {
        switch arrayEncoding {
        case .brackets:
            for element in elements { try append(element, key: "\(key)%5B%5D", depth: depth, to: &query) }
        case .noBrackets:
            for element in elements { try append(element, key: key, depth: depth, to: &query) }
        case .indexInBrackets:
            for (index, element) in elements.enumerated() {
                try append(element, key: "\(key)%5B\(index)%5D", depth: depth, to: &query)
            }
        case .commaSeparated:
            let scalars = elements.filter(\.isScalar)
            if !scalars.isEmpty {
                var texts: [String] = []
                for scalar in scalars { texts.append(try scalarText(scalar)) }
                query.appendPair("\(key)=\(texts.joined(separator: ","))")
            }
            for element in elements where !element.isScalar {
                try append(element, key: "\(key)%5B%5D", depth: depth, to: &query)
            }
        }
    }

    /// The encoded text of a string, number, Boolean or date.
    private func scalarText(_ value: ParameterValue) throws(ParameterEncodingError) -> String {
        switch value {
        case .string(let text): return PercentEncoding.encodeQueryComponent(text)
        case .int(let number): return String(number)
        case .double(let number):
            // `nan` and `inf` are no numbers a server reads; JSON and XML refuse them too.
            guard number.isFinite else {
                throw .encodingFailed(type: "Double", reason: "\(number) is not a finite number")
            }
            return PercentEncoding.encodeQueryComponent(String(number))
        case .bool(let flag):
            switch boolEncoding {
            case .numeric: return flag ? "1" : "0"
            case .literal: return flag ? "true" : "false"
            }
        case .date(let date):
            guard let text = dateEncoding.text(for: date) else {
                throw .encodingFailed(type: "Date", reason: dateEncoding.reason(refusing: date))
            }
            return PercentEncoding.encodeQueryComponent(text)
        case .null, .array, .object: return ""
        }
    }
}

extension URLEncodedFormEncoder.DateEncoding {
    /// The text of `date` in this encoding (shared by the form and XML encoders); `nil` for a date
    /// it cannot write: one that is not a number, milliseconds past `Int64`, or a year outside
    /// ISO 8601's four digits (0001–9999), which the formatter would clamp into a wrong date.
    package func text(for date: Date) -> String? {
        let seconds = date.timeIntervalSince1970
        switch self {
        case .iso8601:
            guard Self.iso8601Range.contains(seconds) else { return nil }
            let hasFraction = seconds.rounded(.down) != seconds
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: hasFraction))
        case .secondsSince1970:
            return seconds.isFinite ? String(seconds) : nil
        case .millisecondsSince1970:
            return Int64(exactly: (seconds * 1000).rounded()).map { String($0) }
        case .custom(let format):
            return format(date)
        }
    }

    /// The seconds since 1970 of 0001-01-01T00:00:00Z up to 10000-01-01T00:00:00Z: the dates
    /// ISO 8601 writes with a four-digit year.
    package static let iso8601Range = -62_135_596_800.0..<253_402_300_800.0

    /// Why `date` has no text in this encoding.
    package func reason(refusing date: Date) -> String {
        switch self {
        case .iso8601:
            "the date \(date.timeIntervalSince1970) seconds from 1970 lies outside the years 0001 to 9999 of ISO 8601"
        case .secondsSince1970: "the date \(date.timeIntervalSince1970) seconds from 1970 is not a finite number"
        case .millisecondsSince1970, .custom:
            "the date \(date.timeIntervalSince1970) seconds from 1970 has more milliseconds than Int64 holds"
        }
    }
}

extension String {
    /// Appends a `key=value` pair to this query, after a `&` unless it is the first.
    fileprivate mutating func appendPair(_ pair: String) {
        if !isEmpty {
            append("&")
        }
        append(pair)
    }
}
