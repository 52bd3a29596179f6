import Foundation

/// What the server does in answer to a request: a response, a slow or streamed one, or a fault.
public indirect enum TestReply: Sendable {
    /// A complete response. `Content-Length` is added unless the headers set it or
    /// `Transfer-Encoding`; a `HEAD` request gets the headers only.
    case response(status: Int, headers: [(String, String)] = [], body: [UInt8] = [])
    /// A body of `size` bytes generated on the fly (byte `i` is `i % 251`), written in pieces of
    /// `chunkSize` bytes, `interval` apart; each piece is written only after the previous one was
    /// flushed, so memory stays bounded whatever the size. `chunked` uses chunked transfer
    /// encoding instead of `Content-Length`.
    case stream(
        status: Int = 200,
        headers: [(String, String)] = [],
        size: Int,
        chunkSize: Int = 65_536,
        interval: Duration = .zero,
        chunked: Bool = false
    )
    /// A chunked body of these pieces, `interval` apart — again and again while `repeats`, until the
    /// client goes — then the last chunk, or the connection closed when `cut`. `written` is told
    /// the size of each piece once the socket took it.
    case pieces(
        status: Int = 200, headers: [(String, String)] = [], [[UInt8]], interval: Duration = .zero,
        repeats: Bool = false, cut: Bool = false, written: (@Sendable (Int) -> Void)? = nil)
    /// This reply after a delay.
    case delayed(Duration, TestReply)
    /// These bytes exactly, then the connection is closed or left open without another byte.
    case raw([UInt8], thenClose: Bool)
    /// Close the connection without answering.
    case close
    /// Keep the connection open and never answer.
    case never

    /// A JSON response with `Content-Type: application/json`.
    public static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> TestReply {
        .response(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(text.utf8))
    }

    /// `value` as JSON (keys sorted) with `Content-Type: application/json`; a `500` if it cannot be encoded.
    public static func encoded(_ value: some Encodable, status: Int = 200) -> TestReply {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else {
            return .json(#"{"error": "encoding failed"}"#, status: 500)
        }
        return .response(status: status, headers: [("Content-Type", "application/json")], body: Array(data))
    }

    /// The byte at position `index` of a generated body.
    public static func generatedByte(at index: Int) -> UInt8 {
        UInt8(index % 251)
    }

    /// Bytes `offset..<offset + count` of a generated body, appended to `sink` in slices of a
    /// precomputed pattern (byte by byte would be slow enough to stall the event loop).
    public static func appendGeneratedBytes(offset: Int, count: Int, to sink: (ArraySlice<UInt8>) -> Void) {
        var written = 0
        while written < count {
            let start = (offset + written) % 251
            let length = min(count - written, pattern.count - 251)
            sink(pattern[start..<start + length])
            written += length
        }
    }

    /// A whole generated body of `size` bytes.
    public static func generatedBody(size: Int) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(size)
        appendGeneratedBytes(offset: 0, count: size) { body.append(contentsOf: $0) }
        return body
    }

    private static let pattern: [UInt8] = (0..<(65_536 + 251)).map { UInt8($0 % 251) }
}
