/// Compressed bodies written without a compression library: `bytes` in stored (uncompressed)
/// deflate blocks (RFC 1951 §3.2.4), wrapped as a gzip member (RFC 1952) or as a zlib stream
/// (RFC 1950, what HTTP's `deflate` content coding is), which any client decodes.
package enum Gzip {
    /// A gzip member of 1,051 bytes that decodes to 1 MiB of zeros (about 1,000 times its size): a
    /// decompression bomb. Made by `gzip.compress(bytes(1 << 20), compresslevel=9, mtime=0)` in
    /// Python; its deflate block is one byte, repeated, for each 1,032 zeros.
    static let bomb: [UInt8] =
        [
            0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xED, 0xC1, 0x31, 0x01, 0x00, 0x00, 0x00,
            0xC2, 0xA0, 0xF5, 0x4F, 0x6D, 0x08, 0x5F, 0xA0,
        ] + [UInt8](repeating: 0, count: 1_016) + [0x3E, 0x03, 0x1C, 0xEA, 0x38, 0xA7, 0x00, 0x00, 0x10, 0x00]

    package static func stored(_ bytes: [UInt8]) -> [UInt8] {
        [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF] + storedBlocks(bytes)
            + littleEndian(crc32(bytes)) + littleEndian(UInt32(truncatingIfNeeded: bytes.count))
    }

    /// One gzip member written in `pieces`, to be sent apart: each piece's bytes in a stored block
    /// of their own, which a decoder can hand on as soon as the piece arrives (as a compressor's
    /// flush makes it), the first after the member's header, the last followed by the member's end.
    package static func storedPieces(_ pieces: [[UInt8]]) -> [[UInt8]] {
        var written = pieces.map { piece in
            [0] + littleEndian(UInt16(piece.count)) + littleEndian(~UInt16(piece.count)) + piece
        }
        guard !written.isEmpty else { return [stored([])] }
        written[0] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF] + written[0]
        let bytes = Array(pieces.joined())
        // An empty final block, then the checksum and the length of all of it.
        written[written.count - 1] +=
            [1, 0, 0, 0xFF, 0xFF] + littleEndian(crc32(bytes)) + littleEndian(UInt32(truncatingIfNeeded: bytes.count))
        return written
    }

    /// A zlib stream: its header (deflate, 32 KiB window, no dictionary, check bits), the blocks
    /// and the Adler-32 of `bytes`, most significant byte first.
    package static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        let adler = b << 16 | a
        return [0x78, 0x01] + storedBlocks(bytes) + littleEndian(adler).reversed()
    }

    /// Raw deflate data, without the zlib stream's header and check value: what some servers
    /// (Go's `compress/flate` behind `Content-Encoding: deflate`, among them) send as `deflate`.
    package static func rawStored(_ bytes: [UInt8]) -> [UInt8] {
        storedBlocks(bytes)
    }

    private static func storedBlocks(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let isLast = offset + count == bytes.count
            output.append(isLast ? 1 : 0)
            output += littleEndian(UInt16(count)) + littleEndian(~UInt16(count))
            output += bytes[offset..<offset + count]
            offset += count
        } while offset < bytes.count
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

    /// Adds `bytes`. Contiguous bytes (an array, `Data`, a `ByteBuffer`'s view) are read through
    /// a buffer pointer: iterating a `ByteBufferView` element by element costs about a microsecond
    /// a byte in a debug build, which made checksumming a few megabytes take seconds.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            for byte in buffer { add(byte) }
        }
        if done == nil {
            for byte in bytes { add(byte) }
        }
    }

    private mutating func add(_ byte: UInt8) {
        state = Gzip.crcTable[Int((state ^ UInt32(byte)) & 0xFF)] ^ (state >> 8)
    }

    /// The checksum of everything added so far.
    public var value: UInt32 { ~state }
}
