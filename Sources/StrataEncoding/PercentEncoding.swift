/// Percent-encoding (RFC 3986 §2.1) of query components and paths.
///
/// In a query key or value, the characters left as they are are the unreserved set (§2.3:
/// `A-Z a-z 0-9 - . _ ~`) plus `/` and `?`, which §3.4 allows in a query. Everything else, the
/// sub-delimiters `! $ & ' ( ) * + , ; =` and `:` `@` included, is written as `%XX` of its UTF-8
/// bytes, so a value can never be mistaken for a separator by any server's parser.
package enum PercentEncoding {
    /// `text` with every byte outside the query-component set written as `%XX`.
    package static func encodeQueryComponent(_ text: String) -> String {
        encode(text, keeping: isQueryComponentByte)
    }

    /// `text` with every byte that cannot stand in a URL path percent-encoded: RFC 3986 `pchar`
    /// and `/` are kept, and so is `%`, so escapes already in the text stay as they are.
    package static func encodePath(_ text: String) -> String {
        encode(text, keeping: isPathByte)
    }

    /// Whether `byte` stands in a query key or value as it is.
    private static func isQueryComponentByte(_ byte: UInt8) -> Bool {
        isASCIILetterOrDigit(byte) || contains("-._~/?", byte)
    }

    /// Whether `byte` stands in a path as it is (see ``encodePath(_:)``).
    package static func isPathByte(_ byte: UInt8) -> Bool {
        isASCIILetterOrDigit(byte) || contains("-._~!$&'()*+,;=:@/%", byte)
    }

    /// Writes `bytes` to `buffer` from `count`, each byte that `isKept` refuses as `%XX` (uppercase
    /// hex digits), and advances `count`. The buffer needs room for
    /// ``encodedCount(_:keeping:)`` bytes from `count`.
    package static func write(
        _ bytes: UnsafeBufferPointer<UInt8>,
        keeping isKept: (UInt8) -> Bool,
        to buffer: UnsafeMutableBufferPointer<UInt8>,
        at count: inout Int
    ) {
        for byte in bytes {
            if isKept(byte) {
                buffer[count] = byte
                count += 1
            } else {
                buffer[count] = UInt8(ascii: "%")
                buffer[count + 1] = hexDigits[Int(byte >> 4)]
                buffer[count + 2] = hexDigits[Int(byte & 0x0F)]
                count += 3
            }
        }
    }

    /// How many bytes ``write(_:keeping:to:at:)`` writes for `bytes`: three for each byte that
    /// `isKept` refuses, one for each other.
    package static func encodedCount<Bytes: Sequence<UInt8>>(_ bytes: Bytes, keeping isKept: (UInt8) -> Bool) -> Int {
        bytes.reduce(0) { $0 + (isKept($1) ? 1 : 3) }
    }

    /// `text` with every byte that `isKept` refuses written as `%XX`.
    private static func encode(_ text: String, keeping isKept: (UInt8) -> Bool) -> String {
        let count = encodedCount(text.utf8, keeping: isKept)
        // Most keys and values need no escape: they are returned as they are, without copying.
        guard count != text.utf8.count else { return text }
        var text = text
        return text.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: count) { buffer in
                var count = 0
                write(bytes, keeping: isKept, to: buffer, at: &count)
                return count
            }
        }
    }

    private static func isASCIILetterOrDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            false
        }
    }

    private static func contains(_ symbols: StaticString, _ byte: UInt8) -> Bool {
        UnsafeBufferPointer(start: symbols.utf8Start, count: symbols.utf8CodeUnitCount).contains(byte)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
