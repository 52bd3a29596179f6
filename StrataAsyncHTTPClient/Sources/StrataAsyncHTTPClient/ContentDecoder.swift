import CStrataCompression
import Foundation
import NIOCore
import NIOFoundationCompat
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response body's content codings undone as its parts arrive (RFC 9110, 8.4), as `URLSession`
/// (libcurl) undoes them: `gzip`, and `x-gzip`, its old name (8.4.1.3); `deflate` as a zlib stream,
/// or as the raw deflate data some servers send under that name; `br` (RFC 7932) and `zstd`
/// (RFC 8878, in frames of at most an 8 MiB window, as RFC 9659 has encoders make them) where the
/// system has their libraries; `identity` is no coding; and several codings are undone in the
/// reverse of the order the field lists them. Anything after the end of a coding's data fails the
/// body, as libcurl fails it, and so does a body that decodes to more than its first MiB and more
/// than ``/StrataSession/ResponseHead/decodedRatioLimit`` times its bytes on the wire (a
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

    /// The codings the transport asks for in `Accept-Encoding` when a request names none: those it
    /// decodes.
    static let accepted =
        (["gzip", "deflate"] + (BrotliDecoderLibrary.shared == nil ? [] : ["br"])
        + (ZstdDecoderLibrary.shared == nil ? [] : ["zstd"])).joined(separator: ", ")

    /// The most bytes one coding may make of one part of the body. One coding makes at most about
    /// 1,032 bytes of a byte (deflate's longest match), some 66 MiB of a read of 64 KiB; codings in
    /// turn multiply that, and a server that first sent enough of a body to be allowed gigabytes
    /// by the ratio could have one part make them at once, in memory.
    static let mostAtOnce = 128 << 20

    /// What a stage may make whatever the ratio allows: brotli and zstd make tens of kilobytes of
    /// the first bytes of a body that repeats itself, far more than 500 times those bytes, and
    /// `URLSession` holds a body to the ratio of its whole length on the wire, not of what has
    /// come so far.
    static let leastAllowed: Int64 = 1 << 20

    /// The stages, in the order the body goes through them: the last coding applied first.
    private let stages: [any CodingStage]
    /// The bytes received on the wire.
    private var received: Int64 = 0
    private let mostAtOnce: Int

    private init(_ stages: [any CodingStage], mostAtOnce: Int) {
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
        var stages: [any CodingStage] = []
        for coding in codings.reversed() {
            guard let stage = stage(for: coding) else { return .unknown(codings.joined(separator: ", ")) }
            stages.append(stage)
        }
        return .decode(ContentDecoder(stages, mostAtOnce: mostAtOnce))
    }

    /// Whether the transport decodes `coding` (lowercased).
    static func decodes(_ coding: String) -> Bool {
        coding == "identity" || stage(for: coding) != nil
    }

    /// The stage that undoes `coding` (lowercased), if the transport decodes it.
    private static func stage(for coding: String) -> (any CodingStage)? {
        switch coding {
        case "gzip", "x-gzip": ZlibStage(.gzip)
        case "deflate": ZlibStage(.deflate)
        case "br": BrotliDecoderLibrary.shared.map(BrotliStage.init)
        case "zstd": ZstdDecoderLibrary.shared.map(ZstdStage.init)
        default: nil
        }
    }

    /// The decoded bytes of the next part of the body.
    func decode(_ part: ByteBuffer) throws(DecodingFailure) -> Data {
        received += Int64(part.readableBytes)
        // What any stage may have made so far: a bomb fails before its bytes are held.
        let limit = received.multipliedReportingOverflow(by: ResponseHead.decodedRatioLimit)
        let most = limit.overflow ? Int64.max : max(limit.partialValue, Self.leastAllowed)
        var bytes = Data(buffer: part, byteTransferStrategy: .noCopy)
        for stage in stages {
            bytes = try stage.decode(bytes, upTo: most, of: received, atOnce: mostAtOnce)
        }
        return bytes
    }

    /// Checks that the body ended where its codings' data ends; a body of no bytes at all is an
    /// empty body, as libcurl takes it.
    func finish() throws(DecodingFailure) {
        guard received > 0 else { return }
        for stage in stages where !stage.complete {
            throw .cutShort(stage.name)
        }
    }

    /// Why a body could not be decoded.
    enum DecodingFailure: Error, Equatable {
        /// The bytes are not data of the coding: its library's message.
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

/// One coding's data decoded a part at a time by its library: each library's call is a stage's
/// ``step(_:into:)``; the loop that holds the decoded bytes within the limits is `decode`.
private protocol CodingStage: AnyObject {
    /// The coding's name, as its errors name it.
    var name: String { get }
    /// Whether the data read so far is whole: a body may end here.
    var complete: Bool { get }
    /// The bytes this stage has made in all.
    var total: Int64 { get set }

    /// One call of the library on `input`, making at most `output`'s bytes: how many bytes of
    /// `input` it read, how many it made, and why it stopped.
    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> CodingStep
}

/// What one call of a coding's library did.
private typealias CodingStep = (read: Int, made: Int, stop: CodingStop)

/// What stopped one call of a coding's library.
private enum CodingStop {
    /// It wants to be called again: its output is full, or it has input left (after the end of a
    /// frame, say).
    case more
    /// It has read all of its input and wants more.
    case input
    /// The coding's data has ended; any byte after it is one too many.
    case ended
    case failed(ContentDecoder.DecodingFailure)
}

extension CodingStage {
    /// `input` decoded, failing once this stage has made more than `most` bytes in all (a bomb of
    /// the `received` bytes of the body so far), or more than `atOnce` of `input` (which keeps every
    /// stage's input within zlib's 32-bit counts).
    func decode(
        _ input: Data, upTo most: Int64, of received: Int64, atOnce: Int
    ) throws(ContentDecoder.DecodingFailure) -> Data {
        guard !input.isEmpty else { return Data() }
        var output = Data()
        let failure: ContentDecoder.DecodingFailure? = input.withUnsafeBytes { bytes in
            withUnsafeTemporaryAllocation(byteCount: 32_768, alignment: 1) { chunk in
                var rest = bytes
                var idle = 0
                while true {
                    let (read, count, stop) = step(rest, into: chunk)
                    // A library that neither reads nor makes a byte twice over would never stop.
                    idle = read == 0 && count == 0 ? idle + 1 : 0
                    guard idle < 2 else { return .corrupt(name, message: "the decoder made no progress") }
                    rest = UnsafeRawBufferPointer(rebasing: rest[read...])
                    total += Int64(count)
                    if total > most { return .bomb(received: received) }
                    guard output.count + count <= atOnce else { return .tooMuchAtOnce(atOnce) }
                    output.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[..<count]))
                    switch stop {
                    case .more: continue
                    case .input: return nil
                    case .ended: return rest.isEmpty ? nil : .trailingBytes(name)
                    case .failed(let failure): return failure
                    }
                }
            }
        }
        if let failure { throw failure }
        return output
    }

    static func message(_ text: UnsafePointer<CChar>?, _ status: some BinaryInteger) -> String {
        text.map { String(cString: $0) } ?? "status \(status)"
    }
}

/// `gzip` and `deflate` data, inflated by zlib.
private final class ZlibStage: CodingStage {
    let name: String
    private(set) var complete = false
    var total: Int64 = 0

    enum Format {
        case gzip, deflate
    }

    private let format: Format
    /// zlib keeps the stream's address: it never moves.
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var started = false
    /// A `deflate` body's first byte, until the second tells a zlib stream from raw data.
    private var first: UInt8?

    /// zlib's window: 15 bits, plus 32 to read a zlib or a gzip header, whichever comes.
    private static let wrapped: Int32 = 15 + 32
    /// Raw deflate data: no header, no check value.
    private static let raw: Int32 = -15

    init(_ format: Format) {
        self.format = format
        name = format == .gzip ? "gzip" : "deflate"
        stream.initialize(to: z_stream())
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> CodingStep {
        if complete { return (0, 0, .ended) }
        guard started else { return start(input, into: output) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = UInt32(output.count)
        let status = inflate(stream, Z_NO_FLUSH)
        let (read, made) = (input.count - Int(stream.pointee.avail_in), output.count - Int(stream.pointee.avail_out))
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        switch status {
        case Z_STREAM_END:
            complete = true
            return (read, made, .ended)
        // No progress possible: all of the input is read.
        case Z_BUF_ERROR: return (read, made, .input)
        // Progress: more to make, or input left to read.
        case Z_OK: return (read, made, made == output.count || read < input.count ? .more : .input)
        default: return (read, made, .failed(.corrupt(name, message: Self.message(stream.pointee.msg, status))))
        }
    }

    /// Starts zlib for the data that begins with `input`: a `deflate` body without a zlib or gzip
    /// header is raw deflate data. A `deflate` body's first byte alone waits for the second; once
    /// zlib has started, it reads that byte first.
    private func start(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> CodingStep {
        var bits = Self.wrapped
        if format == .deflate {
            guard let second = first == nil ? input.dropFirst().first : input.first else {
                first = input.first
                return (input.count, 0, .input)
            }
            if !Self.hasHeader(first ?? input[0], second) { bits = Self.raw }
        }
        let status = CStrataZlib_inflateInit2(stream, bits)
        guard status == Z_OK else {
            return (0, 0, .failed(.corrupt(name, message: Self.message(stream.pointee.msg, status))))
        }
        started = true
        guard var byte = first else { return (0, 0, .more) }
        first = nil
        let (_, made, stop) = withUnsafeBytes(of: &byte) { step($0, into: output) }
        if case .input = stop { return (0, made, .more) }
        return (0, made, stop)
    }

    /// Whether data beginning with `method` and `flags` begins with a zlib header (RFC 1950, 2.2:
    /// deflate, a window of at most 32 KiB, check bits that make the pair a multiple of 31) or
    /// gzip's magic bytes (RFC 1952).
    private static func hasHeader(_ method: UInt8, _ flags: UInt8) -> Bool {
        let (method, flags) = (Int(method), Int(flags))
        if method == 0x1F, flags == 0x8B { return true }
        return method & 0x0F == 8 && method >> 4 <= 7 && (method * 256 + flags) % 31 == 0
    }
}

/// `br` data, decoded by brotli.
private final class BrotliStage: CodingStage {
    let name = "br"
    private(set) var complete = false
    var total: Int64 = 0
    private let library: BrotliDecoderLibrary
    private let state: OpaquePointer?

    init(_ library: BrotliDecoderLibrary) {
        self.library = library
        state = library.create(nil, nil, nil)
    }

    deinit {
        if let state { library.destroy(state) }
    }

    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> CodingStep {
        if complete { return (0, 0, .ended) }
        guard let state else { return (0, 0, .failed(.corrupt(name, message: "brotli made no decoder"))) }
        var (available, next) = (input.count, input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        var (room, out) = (output.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self))
        let result = library.decompress(state, &available, &next, &room, &out, nil)
        let (read, made) = (input.count - available, output.count - room)
        switch result {
        case BrotliDecoderLibrary.succeeded:
            complete = true
            return (read, made, .ended)
        case BrotliDecoderLibrary.needsOutput: return (read, made, .more)
        case BrotliDecoderLibrary.needsInput: return (read, made, .input)
        default:
            let code = library.errorCode(state)
            return (read, made, .failed(.corrupt(name, message: Self.message(library.errorString(code), code))))
        }
    }
}

/// `zstd` data, decoded by zstd: one frame or several, each in a window of at most 8 MiB
/// (RFC 9659, 2: what encoders of the content coding make, so that no body holds more).
private final class ZstdStage: CodingStage {
    let name = "zstd"
    private(set) var complete = false
    var total: Int64 = 0
    private let library: ZstdDecoderLibrary
    private let context: OpaquePointer?

    /// 2^23 bytes: 8 MiB.
    private static let windowLog: Int32 = 23

    init(_ library: ZstdDecoderLibrary) {
        self.library = library
        var context = library.create()
        // A decoder without the limit is none: the body fails as one it could not decode.
        if let created = context,
            library.isError(library.setParameter(created, ZstdDecoderLibrary.windowLogMax, Self.windowLog)) != 0
        {
            _ = library.free(created)
            context = nil
        }
        self.context = context
    }

    deinit {
        if let context { _ = library.free(context) }
    }

    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> CodingStep {
        guard let context else { return (0, 0, .failed(.corrupt(name, message: "zstd made no decoder"))) }
        var source = CStrataZstdInput(src: input.baseAddress, size: input.count, pos: 0)
        var destination = CStrataZstdOutput(dst: output.baseAddress, size: output.count, pos: 0)
        let result = library.decompress(context, &destination, &source)
        let (read, made) = (source.pos, destination.pos)
        guard library.isError(result) == 0 else {
            return (read, made, .failed(.corrupt(name, message: Self.message(library.errorName(result), result))))
        }
        // 0: a frame has ended and all of it is out; another may follow.
        complete = result == 0
        return (read, made, made == output.count || read < input.count ? .more : .input)
    }
}
