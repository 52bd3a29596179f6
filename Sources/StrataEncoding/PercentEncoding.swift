/// Percent-encoding (RFC 3986 §2.1) of query components and paths.
///
/// In a query key or value, the characters left as they are are the unreserved set (§2.3:
/// `A-Z a-z 0-9 - . _ ~`) plus `/` and `?`, which §3.4 allows in a query. Everything else, the
/// sub-delimiters `! $ & ' ( ) * + , ; =` and `:` `@` included, is written as `%XX` of its UTF-8
/// bytes, so a value can never be mistaken for a separator by any server's parser.
package enum PercentEncoding {
    /// The bytes a text keeps as they are; every other byte is written as `%XX`. Only ASCII bytes
    /// can be kept: a byte of a multi-byte UTF-8 sequence is always escaped.
    package struct KeptBytes: Sendable {
        /// One bit for each of the bytes 0–63, and one for each of 64–127.
        private var low: UInt64 = 0
        private var high: UInt64 = 0

        /// The ASCII letters and digits, and `symbols`.
        private init(lettersDigitsAnd symbols: String) {
            let ranges: [ClosedRange<UInt8>] = [
                UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
            ]
            for byte in ranges.joined() + Array(symbols.utf8) {
                if byte < 64 {
                    low |= 1 << UInt64(byte)
                } else {
                    high |= 1 << UInt64(byte - 64)
                }
            }
        }

        /// Whether `byte` is kept as it is.
        func contains(_ byte: UInt8) -> Bool {
            switch byte {
            case 0..<64: low & (1 << UInt64(byte)) != 0
            case 64..<128: high & (1 << UInt64(byte - 64)) != 0
            default: false
            }
        }

        /// What a query key or value keeps.
        static let queryComponent = KeptBytes(lettersDigitsAnd: "-._~/?")

        /// What a path keeps (see ``PercentEncoding/encodePath(_:)``).
        package static let path = KeptBytes(lettersDigitsAnd: "-._~!$&'()*+,;=:@/%")
    }

    /// `text` with every byte outside the query-component set written as `%XX`.
    package static func encodeQueryComponent(_ text: String) -> String {
        encode(text, keeping: .queryComponent)
    }

    /// `text` with every byte that cannot stand in a URL path percent-encoded: RFC 3986 `pchar`
    /// and `/` are kept, and so is `%`, so escapes already in the text stay as they are.
    package static func encodePath(_ text: String) -> String {
        encode(text, keeping: .path)
    }

    /// Writes `bytes` to `buffer` from `count`, each byte that `kept` does not hold as `%XX`
    /// (uppercase hex digits), and advances `count`. The buffer needs room for
    /// ``encodedCount(_:keeping:)`` bytes from `count`.
    package static func write(
        _ bytes: UnsafeBufferPointer<UInt8>,
        keeping kept: KeptBytes,
        to buffer: UnsafeMutableBufferPointer<UInt8>,
        at count: inout Int
    ) {
        for byte in bytes {
            if kept.contains(byte) {
                buffer[count] = byte
                count += 1
            } else {
                buffer[count] = UInt8(ascii: "%")
                buffer[count + 1] = hexDigit(byte >> 4)
                buffer[count + 2] = hexDigit(byte & 0x0F)
                count += 3
            }
        }
    }

    /// How many bytes ``write(_:keeping:to:at:)`` writes for `bytes`: three for each byte that
    /// `kept` does not hold, one for each other.
    package static func encodedCount(_ bytes: UnsafeBufferPointer<UInt8>, keeping kept: KeptBytes) -> Int {
        var count = 0
        for byte in bytes {
            count += kept.contains(byte) ? 1 : 3
        }
        return count
    }

    /// `text` with every byte that `kept` does not hold written as `%XX`.
    private static func encode(_ text: String, keeping kept: KeptBytes) -> String {
        var copy = text
        let encoded = copy.withUTF8 { bytes -> String? in
            let count = encodedCount(bytes, keeping: kept)
            // Most keys and values need no escape: they are returned as they are, without copying.
            guard count != bytes.count else { return nil }
            return String(unsafeUninitializedCapacity: count) { buffer in
                var written = 0
                write(bytes, keeping: kept, to: buffer, at: &written)
                return written
            }
        }
        return encoded ?? text
    }

    /// The uppercase hex digit of `value` (0–15).
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
