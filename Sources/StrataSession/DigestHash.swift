/// The hash functions HTTP Digest authentication names (RFC 7616 §6.1): MD5 (RFC 1321), SHA-256
/// and SHA-512/256 (FIPS 180-4), over a message in memory. Foundation has none of them on Linux,
/// and Strata depends on no package; they serve ``PasswordAuthenticator`` only, which hashes a few
/// short strings (and, for `auth-int`, a body in memory) — not for anything that needs a hash to
/// be secret or fast.
enum DigestHash: String, Sendable, CaseIterable {
    case md5 = "MD5"
    case sha256 = "SHA-256"
    case sha512256 = "SHA-512-256"

    /// The hash of `message`'s UTF-8 bytes, in lowercase hexadecimal, as Digest writes it.
    func hex(_ message: String) -> String {
        hex(bytes: Array(message.utf8))
    }

    /// The hash of `message`, in lowercase hexadecimal.
    func hex(bytes message: [UInt8]) -> String {
        let bytes = hash(message)
        return String(
            decoding: bytes.flatMap { [Self.hexDigits[Int($0 >> 4)], Self.hexDigits[Int($0 & 0xf)]] }, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The hash of `message`.
    func hash(_ message: [UInt8]) -> [UInt8] {
        switch self {
        case .md5: return Self.md5(message)
        case .sha256:
            return Self.sha2(message, from: Self.sha256Initial, constants: Self.sha256Constants, shape: .sha256)
        case .sha512256:
            let state = Self.sha2(
                message, from: Self.sha512256Initial, constants: Self.sha512Constants, shape: .sha512)
            return Array(state.prefix(32))
        }
    }

    /// Calls `body` with each block of `blockSize` bytes of `message` padded: a 1 bit, zeros, and
    /// the message's length in bits in the last eighth of the last block, little-endian for MD5
    /// and big-endian for the SHA-2 functions. The message's whole blocks are handed on as they
    /// stand; only its tail is copied, to be padded (a body hashed for `auth-int` may be large).
    private static func forEachBlock(
        of message: [UInt8], blockSize: Int = 64, lengthBigEndian: Bool, _ body: (ArraySlice<UInt8>) -> Void
    ) {
        let whole = message.count - message.count % blockSize
        for start in stride(from: 0, to: whole, by: blockSize) {
            body(message[start..<start + blockSize])
        }
        let lengthSize = blockSize / 8
        var tail = Array(message[whole...])
        tail.append(0x80)
        while tail.count % blockSize != blockSize - lengthSize { tail.append(0) }
        let bits = UInt64(message.count) &* 8
        // The length's high bytes (of 16, for SHA-512) are zero: no message here is 2^61 bytes.
        for index in 0..<lengthSize {
            let shift = lengthBigEndian ? (lengthSize - 1 - index) * 8 : index * 8
            tail.append(shift < 64 ? UInt8(truncatingIfNeeded: bits >> UInt64(shift)) : 0)
        }
        for start in stride(from: 0, to: tail.count, by: blockSize) {
            body(tail[start..<start + blockSize])
        }
    }

    // MARK: MD5 (RFC 1321)

    /// `floor(abs(sin(i + 1)) * 2^32)` for each step `i`.
    private static let md5Constants: [UInt32] = [
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
        0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
        0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
        0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
        0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
    ]

    /// How far each step rotates, four values a round.
    private static let md5Shifts: [UInt32] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]

    private static func md5(_ message: [UInt8]) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
        var words = [UInt32](repeating: 0, count: 16)
        forEachBlock(of: message, lengthBigEndian: false) { block in
            for index in 0..<16 {
                let at = block.startIndex + index * 4
                words[index] = (0..<4).reduce(0) { word, byte in word | UInt32(block[at + byte]) << (byte * 8) }
            }
            var (a, b, c, d) = state
            for step in 0..<64 {
                let mixed: UInt32
                let word: Int
                switch step / 16 {
                case 0: (mixed, word) = ((b & c) | (~b & d), step)
                case 1: (mixed, word) = ((d & b) | (~d & c), (5 * step + 1) % 16)
                case 2: (mixed, word) = (b ^ c ^ d, (3 * step + 5) % 16)
                default: (mixed, word) = (c ^ (b | ~d), (7 * step) % 16)
                }
                let sum = mixed &+ a &+ md5Constants[step] &+ words[word]
                (a, d, c) = (d, c, b)
                let shift = md5Shifts[(step / 16) * 4 + step % 4]
                b = b &+ ((sum << shift) | (sum >> (32 - shift)))
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
        }
        return [state.0, state.1, state.2, state.3].flatMap { word in
            (0..<4).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) }
        }
    }

    // MARK: SHA-256 and SHA-512/256 (FIPS 180-4)

    /// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let sha256Constants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The first 32 bits of the fractional parts of the square roots of the first 8 primes.
    private static let sha256Initial: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]

    /// The first 64 bits of the fractional parts of the cube roots of the first 80 primes.
    private static let sha512Constants: [UInt64] = [
        0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
        0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
        0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
        0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
        0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
        0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
        0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
        0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
        0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
        0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
        0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
        0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
        0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
        0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
        0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
        0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
        0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
        0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
        0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
        0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
    ]

    /// SHA-512/256's initial value (FIPS 180-4 §5.3.6.2: SHA-512 of "SHA-512/256" from SHA-512's
    /// initial value with every byte exclusive-ored with 0xa5).
    private static let sha512256Initial: [UInt64] = [
        0x22312194fc2bf72c, 0x9f555fa3c84c64c2, 0x2393b86b6f53b151, 0x963877195940eabd,
        0x96283ee2a88effe3, 0xbe5e1e2553863992, 0x2b0199fc2c85b8aa, 0x0eb72ddc81c52ca2,
    ]

    // MARK: SHA-2's compression (FIPS 180-4 §6.2, §6.4)

    /// The rotations (and, for the schedule, the shift) of each SHA-2 function over its words.
    private struct SHA2Shape {
        let scheduleSigma0: (Int, Int, Int)
        let scheduleSigma1: (Int, Int, Int)
        let sum0: (Int, Int, Int)
        let sum1: (Int, Int, Int)

        static let sha256 = SHA2Shape(
            scheduleSigma0: (7, 18, 3), scheduleSigma1: (17, 19, 10), sum0: (2, 13, 22), sum1: (6, 11, 25))
        static let sha512 = SHA2Shape(
            scheduleSigma0: (1, 8, 7), scheduleSigma1: (19, 61, 6), sum0: (28, 34, 39), sum1: (14, 18, 41))
    }

    /// `message` compressed from `initial` with `constants` (one a round) as SHA-256 (32-bit
    /// words) or SHA-512 (64-bit words) does: all the bytes of the state.
    private static func sha2<Word: FixedWidthInteger & UnsignedInteger>(
        _ message: [UInt8], from initial: [Word], constants: [Word], shape: SHA2Shape
    ) -> [UInt8] {
        let wordSize = Word.bitWidth / 8
        func rotated(_ value: Word, _ count: Int) -> Word { (value >> count) | (value << (Word.bitWidth - count)) }
        func sigma(_ value: Word, _ counts: (Int, Int, Int)) -> Word {
            rotated(value, counts.0) ^ rotated(value, counts.1) ^ (value >> counts.2)
        }
        func sum(_ value: Word, _ counts: (Int, Int, Int)) -> Word {
            rotated(value, counts.0) ^ rotated(value, counts.1) ^ rotated(value, counts.2)
        }
        var state = initial
        var schedule = [Word](repeating: 0, count: constants.count)
        forEachBlock(of: message, blockSize: 16 * wordSize, lengthBigEndian: true) { block in
            for index in 0..<16 {
                let at = block.startIndex + index * wordSize
                schedule[index] = (0..<wordSize).reduce(0) { word, byte in word << 8 | Word(block[at + byte]) }
            }
            for index in 16..<constants.count {
                schedule[index] =
                    schedule[index - 16] &+ sigma(schedule[index - 15], shape.scheduleSigma0) &+ schedule[index - 7]
                    &+ sigma(schedule[index - 2], shape.scheduleSigma1)
            }
            var (a, b, c, d, e, f, g, h) = (
                state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
            )
            for index in 0..<constants.count {
                let choice = (e & f) ^ (~e & g)
                let first = h &+ sum(e, shape.sum1) &+ choice &+ constants[index] &+ schedule[index]
                let majority = (a & b) ^ (a & c) ^ (b & c)
                (h, g, f, e, d, c, b, a) = (g, f, e, d &+ first, c, b, a, first &+ sum(a, shape.sum0) &+ majority)
            }
            for (index, value) in [a, b, c, d, e, f, g, h].enumerated() {
                state[index] = state[index] &+ value
            }
        }
        return state.flatMap { word in
            (0..<wordSize).map { UInt8(truncatingIfNeeded: word >> ((wordSize - 1 - $0) * 8)) }
        }
    }
}
