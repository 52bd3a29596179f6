import CStrataZlib
import Foundation
import NIOCore
import NIOFoundationCompat
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response body's content codings undone as its parts arrive (RFC 9110, 8.4), as `URLSession`
/// (libcurl) undoes them: `gzip`, and `x-gzip`, its old name (8.4.1.3); `deflate` as a zlib stream,
/// or as the raw deflate data some servers send under that name; `identity` is no coding; and
/// several codings are undone in the reverse of the order the field lists them. Anything after the
/// end of a coding's data fails the body, as libcurl fails it, and so does a body that decodes to
/// more than ``/StrataSession/ResponseHead/decodedRatioLimit`` times its bytes on the wire (a
/// decompression bomb), before it is held in memory.
///
/// Used by one response's delegate, one part at a time, under its lock (hence `Sendable`).
final class ContentDecoder: @unchecked Sendable {  // Sendable: the delegate's `state` lock guards every use.
    /// What a `Content-Encoding` field asks of a decoder.
    enum Plan {
        /// No coding but `identity`: the body is as it was sent.
        case none
        /// Codings that this decoder undoes.
        case decode(ContentDecoder)
        /// A coding it does not know, with the field's codings joined as it lists them.
        case unknown(String)
        /// More codings than ``mostCodings``: how many.
        case tooMany(Int)
    }

    /// The most codings a body may arrive in, as libcurl allows: each holds about 40 KiB of zlib's
    /// while the body arrives, and a field that named thousands would hold that many.
    static let mostCodings = 5

    /// The most bytes one coding may make of one part of the body. One coding makes at most about
    /// 1,032 bytes of a byte (deflate's longest match), some 66 MiB of a read of 64 KiB; codings in
    /// turn multiply that, and a server that first sent enough of a body to be allowed gigabytes
    /// by the ratio could have one part make them at once, in memory.
    static let mostAtOnce = 128 << 20

    /// The inflaters, in the order the body goes through them: the last coding applied first.
    private let stages: [Inflater]
    /// The bytes received on the wire.
    private var received: Int64 = 0
    private let mostAtOnce: Int

    private init(_ stages: [Inflater], mostAtOnce: Int) {
        self.stages = stages
        self.mostAtOnce = mostAtOnce
    }

    /// The plan for a body whose `Content-Encoding` field has `values` (each may list several);
    /// `mostAtOnce` is ``mostAtOnce`` but in tests.
    static func plan(_ values: [String], mostAtOnce: Int = mostAtOnce) -> Plan {
        let codings = values.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        guard !codings.isEmpty else { return .none }
        guard codings.count <= mostCodings else { return .tooMany(codings.count) }
        var stages: [Inflater] = []
        for coding in codings.reversed() {
            switch coding {
            case "gzip", "x-gzip": stages.append(Inflater(.gzip))
            case "deflate": stages.append(Inflater(.deflate))
            default: return .unknown(codings.joined(separator: ", "))
            }
        }
        return .decode(ContentDecoder(stages, mostAtOnce: mostAtOnce))
    }

    /// The decoded bytes of the next part of the body.
    func decode(_ part: ByteBuffer) throws(DecodingFailure) -> Data {
        received += Int64(part.readableBytes)
        // What any stage may have made so far: a bomb fails before its bytes are held.
        let limit = received.multipliedReportingOverflow(by: ResponseHead.decodedRatioLimit)
        let most = limit.overflow ? Int64.max : limit.partialValue
        var bytes = Data(buffer: part, byteTransferStrategy: .noCopy)
        for stage in stages {
            bytes = try stage.inflate(bytes, upTo: most, atOnce: mostAtOnce)
        }
        return bytes
    }

    /// Checks that the body ended where its codings' data ends; a body of no bytes at all is an
    /// empty body, as libcurl takes it.
    func finish() throws(DecodingFailure) {
        guard received > 0 else { return }
        for stage in stages where !stage.ended {
            throw .cutShort(stage.format.name)
        }
    }

    /// Why a body could not be decoded.
    enum DecodingFailure: Error, Equatable {
        /// The bytes are not data of the coding: zlib's message.
        case corrupt(String, message: String)
        /// The body ended inside the coding's data.
        case cutShort(String)
        /// Bytes came after the end of the coding's data.
        case trailingBytes(String)
        /// The body decodes to more than the limit allows.
        case bomb(received: Int64)
        /// One part of the body decodes to more than this many bytes.
        case tooMuchAtOnce(Int)

        /// The failure as `URLSession` reports one: `URLError(.cannotDecodeContentData)`.
        func urlError(for url: URL) -> URLError {
            let description =
                switch self {
                case .corrupt(let coding, let message):
                    "its content coding (\(coding)) could not be decoded: \(message)"
                case .cutShort(let coding):
                    "the body ended inside its content coding (\(coding)): it was cut short"
                case .trailingBytes(let coding):
                    "bytes follow the end of the body's content coding (\(coding))"
                case .bomb(let received):
                    "the body decodes to more than \(ResponseHead.decodedRatioLimit) times the \(received) bytes "
                        + "of its content coding"
                case .tooMuchAtOnce(let most):
                    "one part of the body decodes to more than \(most) bytes at once"
                }
            return URLError(
                .cannotDecodeContentData,
                userInfo: [NSLocalizedDescriptionKey: description, NSURLErrorFailingURLErrorKey: url])
        }
    }
}

/// One coding's data inflated by zlib, a part at a time.
private final class Inflater {
    enum Format {
        case gzip, deflate

        var name: String {
            switch self {
            case .gzip: "gzip"
            case .deflate: "deflate"
            }
        }
    }

    let format: Format
    /// Whether the coding's data has ended.
    private(set) var ended = false
    /// zlib keeps the stream's address: it never moves.
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var started = false
    /// A `deflate` body's first byte, until the second tells a zlib stream from raw data.
    private var first: Data?
    /// The bytes this stage has made.
    private var made: Int64 = 0

    /// zlib's window: 15 bits, plus 32 to read a zlib or a gzip header, whichever comes.
    private static let wrapped: Int32 = 15 + 32
    /// Raw deflate data: no header, no check value.
    private static let raw: Int32 = -15
    private static let chunk = 32_768

    init(_ format: Format) {
        self.format = format
        stream.initialize(to: z_stream())
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// `input` inflated, failing once this stage has made more than `most` bytes in all, or more
    /// than `atOnce` of `input` (which keeps every stage's input within `avail_in`'s 32 bits).
    func inflate(
        _ input: Data, upTo most: Int64, atOnce: Int
    ) throws(ContentDecoder.DecodingFailure) -> Data {
        var input = input
        if !started {
            if let first {
                input = first + input
                self.first = nil
            }
            guard !input.isEmpty else { return Data() }
            if format == .deflate, input.count < 2 {
                first = input
                return Data()
            }
            try start(input)
        }
        guard !input.isEmpty else { return Data() }
        guard !ended else { throw .trailingBytes(format.name) }
        var output = Data()
        var failure: ContentDecoder.DecodingFailure?
        input.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            guard let base = bytes.baseAddress else { return }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = UInt32(bytes.count)
            withUnsafeTemporaryAllocation(of: Bytef.self, capacity: Self.chunk) { chunk in
                guard let out = chunk.baseAddress else { return }
                while failure == nil {
                    stream.pointee.next_out = out
                    stream.pointee.avail_out = UInt32(Self.chunk)
                    let status = CStrataZlib.inflate(stream, Z_NO_FLUSH)
                    let count = Self.chunk - Int(stream.pointee.avail_out)
                    made += Int64(count)
                    if made > most {
                        failure = .bomb(received: most / ResponseHead.decodedRatioLimit)
                        break
                    }
                    guard output.count + count <= atOnce else {
                        failure = .tooMuchAtOnce(atOnce)
                        break
                    }
                    output.append(out, count: count)
                    if status == Z_STREAM_END {
                        ended = true
                        if stream.pointee.avail_in > 0 { failure = .trailingBytes(format.name) }
                        break
                    }
                    // Out of input with room left, or no progress possible: wait for the next part.
                    if status == Z_BUF_ERROR || (status == Z_OK && stream.pointee.avail_out > 0) { break }
                    guard status == Z_OK else {
                        failure = .corrupt(format.name, message: Self.message(stream.pointee.msg, status))
                        break
                    }
                }
            }
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        if let failure { throw failure }
        return output
    }

    /// Starts zlib for the data that begins with `input`'s bytes: a `deflate` body without a zlib
    /// or gzip header is raw deflate data.
    private func start(_ input: Data) throws(ContentDecoder.DecodingFailure) {
        let bits = format == .gzip || Self.hasHeader(input) ? Self.wrapped : Self.raw
        let status = CStrataZlib_inflateInit2(stream, bits)
        guard status == Z_OK else {
            throw .corrupt(format.name, message: Self.message(stream.pointee.msg, status))
        }
        started = true
    }

    /// Whether `data` begins with a zlib header (RFC 1950, 2.2: deflate, a window of at most
    /// 32 KiB, check bits that make the pair a multiple of 31) or gzip's magic bytes (RFC 1952).
    private static func hasHeader(_ data: Data) -> Bool {
        guard data.count >= 2 else { return false }
        let (method, flags) = (Int(data[data.startIndex]), Int(data[data.startIndex + 1]))
        if method == 0x1F, flags == 0x8B { return true }
        return method & 0x0F == 8 && method >> 4 <= 7 && (method * 256 + flags) % 31 == 0
    }

    private static func message(_ text: UnsafePointer<CChar>?, _ status: Int32) -> String {
        text.map { String(cString: $0) } ?? "zlib status \(status)"
    }
}
