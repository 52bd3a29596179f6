import Foundation
import StrataCore

/// Turns a body that arrives in parts into elements as they are complete: byte chunks, lines,
/// Server-Sent Events, JSON Lines values. A decoder keeps what it needs between parts and nothing
/// more: its limits (a line's, an event's size) bound its memory whatever a server sends.
///
/// Streamed requests take one (`NetworkService.stream(endpoint:decoding:…)` in StrataService):
///
/// ```swift
/// service.stream(endpoint: Endpoint<Void>(path: "chat"), decoding: .serverSentEvents()) { event in
///     print(event.data)
/// } completion: { result in … }
/// ```
public protocol StreamDecoder: Sendable {
    /// What the body is decoded into.
    associatedtype Element: Sendable

    /// Decodes `bytes`, the next part of the body, handing each element it completes to `emit`.
    mutating func decode(_ bytes: Data, _ emit: (Element) throws -> Void) throws

    /// The body has ended: hands `emit` what the last part left complete, if anything.
    mutating func finish(_ emit: (Element) throws -> Void) throws
}

/// The body's parts as they arrive, unchanged.
public struct ByteChunks: StreamDecoder {
    /// Passes parts on as they are.
    public init() {}

    /// Hands `bytes` on.
    public mutating func decode(_ bytes: Data, _ emit: (Data) throws -> Void) throws {
        try emit(bytes)
    }

    /// Nothing is held back.
    public mutating func finish(_ emit: (Data) throws -> Void) throws {}
}

extension StreamDecoder where Self == ByteChunks {
    /// The body's parts as they arrive.
    public static var bytes: ByteChunks { ByteChunks() }
}

/// Splits bytes into lines ended by LF, CR or CRLF — the ends the HTML event-stream format
/// allows, which cover JSON Lines and text too — keeping only an unfinished line between parts.
struct LineSplitter: Sendable {
    /// The longest line, in bytes (without its end); a longer one throws ``StreamError/lineTooLong(limit:)``.
    let limit: Int
    private var pending: [UInt8] = []
    /// The last part ended with a CR: an LF that starts the next one ends nothing.
    private var afterCR = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Hands each line `bytes` completes to `line`, its bytes without the end.
    mutating func split(_ bytes: Data, _ line: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        try bytes.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let count = bytes.count
            var index = 0
            if afterCR, count > 0 {
                afterCR = false
                if bytes[0] == 0x0A { index = 1 }
            }
            var start = index
            while index < count {
                let byte = bytes[index]
                guard byte == 0x0A || byte == 0x0D else {
                    index += 1
                    continue
                }
                let piece = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if pending.isEmpty {
                    guard piece.count <= limit else { throw StreamError.lineTooLong(limit: limit) }
                    try line(piece)
                } else {
                    guard pending.count + piece.count <= limit else { throw StreamError.lineTooLong(limit: limit) }
                    pending.append(contentsOf: piece)
                    try pending.withUnsafeBufferPointer { try line($0) }
                    pending.removeAll(keepingCapacity: pending.capacity <= 65_536)
                }
                index += 1
                if byte == 0x0D {
                    if index < count {
                        if bytes[index] == 0x0A { index += 1 }
                    } else {
                        afterCR = true
                    }
                }
                start = index
            }
            if start < count {
                guard pending.count + (count - start) <= limit else { throw StreamError.lineTooLong(limit: limit) }
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<count]))
            }
        }
    }

    /// The body has ended: an unfinished last line, if any.
    mutating func finish(_ line: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        guard !pending.isEmpty else { return }
        defer { pending = [] }
        try pending.withUnsafeBufferPointer { try line($0) }
    }
}

/// The body as lines of text, decoded as UTF-8 (an invalid sequence becomes U+FFFD), without
/// their ends: LF, CR or CRLF. A last line without an end is a line too.
public struct LineDecoder: StreamDecoder {
    private var splitter: LineSplitter

    /// Splits lines of at most `maximumLength` bytes; a longer one ends the stream with
    /// ``/StrataCore/StreamError/lineTooLong(limit:)``, however much of it has arrived.
    public init(maximumLength: Int = LineDecoder.defaultMaximumLength) {
        splitter = LineSplitter(limit: maximumLength)
    }

    /// 1 MiB: the longest line by default.
    public static let defaultMaximumLength = 1_048_576

    /// Hands on each line `bytes` completes.
    public mutating func decode(_ bytes: Data, _ emit: (String) throws -> Void) throws {
        try splitter.split(bytes) { try emit(String(decoding: $0, as: UTF8.self)) }
    }

    /// Hands on the last line, if it had no end.
    public mutating func finish(_ emit: (String) throws -> Void) throws {
        try splitter.finish { try emit(String(decoding: $0, as: UTF8.self)) }
    }
}

extension StreamDecoder where Self == LineDecoder {
    /// The body as lines of text; a line longer than `maximumLength` bytes ends the stream with
    /// ``/StrataCore/StreamError/lineTooLong(limit:)``.
    public static func lines(maximumLength: Int = LineDecoder.defaultMaximumLength) -> LineDecoder {
        LineDecoder(maximumLength: maximumLength)
    }
}

/// The body as JSON Lines (`application/jsonl`, also sent as `application/x-ndjson`): one JSON
/// value per line, each decoded into `Value` as its line completes. Blank lines are skipped.
public struct JSONLinesDecoder<Value: Sendable>: StreamDecoder {
    private var splitter: LineSplitter
    private let decoder: @Sendable (Data) throws -> Value

    /// Decodes lines of at most `maximumLength` bytes with `decoder`; a line nesting arrays and
    /// objects deeper than ``/StrataCore/ParameterValue/defaultMaximumDepth`` is refused before it.
    public init(
        _ type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder(),
        maximumLength: Int = LineDecoder.defaultMaximumLength
    ) where Value: Decodable {
        splitter = LineSplitter(limit: maximumLength)
        self.decoder = { line in
            // `JSONDecoder` recurses once per level: a line of a million `[` would exhaust the stack.
            guard !JSONNesting.exceeds(ParameterValue.defaultMaximumDepth, in: line) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: [],
                        debugDescription: "nested deeper than \(ParameterValue.defaultMaximumDepth) levels"))
            }
            return try decoder.decode(Value.self, from: line)
        }
    }

    /// Decodes lines of at most `maximumLength` bytes with `decode` (an endpoint's response
    /// decoder, say).
    public init(
        maximumLength: Int = LineDecoder.defaultMaximumLength, decode: @escaping @Sendable (Data) throws -> Value
    ) {
        splitter = LineSplitter(limit: maximumLength)
        self.decoder = decode
    }

    /// Decodes each line `bytes` completes.
    /// - Throws: ``JSONLinesError`` for a line that is not a `Value`, or ``/StrataCore/StreamError``.
    public mutating func decode(_ bytes: Data, _ emit: (Value) throws -> Void) throws {
        let decoder = self.decoder
        try splitter.split(bytes) { line in
            if let value = try Self.value(of: line, with: decoder) { try emit(value) }
        }
    }

    /// Decodes the last line, if it had no end.
    public mutating func finish(_ emit: (Value) throws -> Void) throws {
        let decoder = self.decoder
        try splitter.finish { line in
            if let value = try Self.value(of: line, with: decoder) { try emit(value) }
        }
    }

    private static func value(
        of line: UnsafeBufferPointer<UInt8>, with decode: @Sendable (Data) throws -> Value
    ) throws -> Value? {
        guard line.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { return nil }
        let data = Data(buffer: line)
        do {
            return try decode(data)
        } catch {
            throw JSONLinesError(line: data, underlying: error)
        }
    }
}

/// A line of a JSON Lines body that could not be decoded: the decoder's error and the line.
public struct JSONLinesError: Error, Sendable, CustomStringConvertible {
    /// The line, without its end.
    public let line: Data
    /// The decoder's error.
    public let underlying: any Error

    /// A sentence saying what happened, with the line's size (not its content, which may be private).
    public var description: String { "A JSON Lines line (\(line.count) bytes) could not be decoded: \(underlying)" }
}
