/// Percent-encoding (RFC 3986 §2.1) of query components and paths.
///
/// In a query key or value, the characters left as they are are the unreserved set (§2.3:
/// `A-Z a-z 0-9 - . _ ~`) plus `/` and `?`, which §3.4 allows in a query. Everything else, the
/// sub-delimiters `! $ & ' ( ) * + , ; =` and `:` `@` included, is written as `%XX` of its UTF-8
/// bytes, so a value can never be mistaken for a separator by any server's parser.
package enum PercentEncoding {
    /// `text` with every byte outside the query-component set written as `%XX`.
    package static func encodeQueryComponent(_ text: String) -> String {
        encode(text, keeping: "-._~/?")
    }

    /// `text` with every byte that cannot stand in a URL path percent-encoded: RFC 3986 `pchar`
    /// and `/` are kept, and so is `%`, so escapes already in the text stay as they are.
    package static func encodePath(_ text: String) -> String {
        encode(text, keeping: "-._~!$&'()*+,;=:@/%")
    }

    /// `text` with every byte that is not an ASCII letter or digit, or one of `kept`, written as
    /// `%XX` (uppercase hex digits).
    package static func encode(_ text: String, keeping kept: StaticString) -> String {
        let keptBytes = UnsafeBufferPointer(start: kept.utf8Start, count: kept.utf8CodeUnitCount)
        func isKept(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return keptBytes.contains(byte)
            }
        }
        // Most keys and values need no escape: they are returned as they are, without copying.
        guard text.utf8.contains(where: { !isKept($0) }) else { return text }
        return String(unsafeUninitializedCapacity: text.utf8.count * 3) { buffer in
            var count = 0
            for byte in text.utf8 {
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
            return count
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
