/// A gzip member (RFC 1952) holding `bytes` in stored (uncompressed) deflate blocks (RFC 1951
/// §3.2.4): a valid gzip body any client decodes, written without a compression library.
enum Gzip {
    static func stored(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let isLast = offset + count == bytes.count
            output.append(isLast ? 1 : 0)
            output += littleEndian(UInt16(count)) + littleEndian(~UInt16(count))
            output += bytes[offset..<offset + count]
            offset += count
        } while offset < bytes.count
        output += littleEndian(crc32(bytes)) + littleEndian(UInt32(truncatingIfNeeded: bytes.count))
        return output
    }

    private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<T.bitWidth / 8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    fileprivate static let crcTable: [UInt32] = table
}

/// A CRC-32 (IEEE 802.3, as gzip uses) computed over bytes as they come.
public struct CRC32: Sendable {
    private var state = ~UInt32(0)

    /// Starts a checksum.
    public init() {}

    /// Adds `bytes`.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            state = Gzip.crcTable[Int((state ^ UInt32(byte)) & 0xFF)] ^ (state >> 8)
        }
    }

    /// The checksum of everything added so far.
    public var value: UInt32 { ~state }
}
