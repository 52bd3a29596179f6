import Foundation
import StrataCore

/// One Server-Sent Event, as the HTML standard's event-stream format dispatches it.
public struct ServerSentEvent: Hashable, Sendable, CustomStringConvertible {
    /// The event type: the last `event` field's value, `message` when there was none.
    public var event: String
    /// The `data` fields' values, joined by line feeds.
    public var data: String
    /// The last event ID when the event was dispatched: the last `id` field's value so far in the
    /// stream (it carries over from earlier events), `""` when none was set.
    public var lastEventID: String
    /// The reconnection time the stream asked for (`retry`) since the previous event, in milliseconds.
    public var retry: Int?

    /// Creates an event.
    public init(event: String = "message", data: String, lastEventID: String = "", retry: Int? = nil) {
        self.event = event
        self.data = data
        self.lastEventID = lastEventID
        self.retry = retry
    }

    /// `message: {"delta":"Hi"}` with the ID when there is one.
    public var description: String {
        (lastEventID.isEmpty ? "" : "[\(lastEventID)] ") + "\(event): \(data)"
    }
}

/// Parses a `text/event-stream` body exactly as the HTML standard's "event stream interpretation"
/// says: a UTF-8 byte order mark at the start is skipped; lines end with CRLF, LF or CR; a line
/// that starts with `:` is a comment; `field: value` (one space after the colon dropped), a line
/// without a colon is a field with an empty value; `data` lines are joined by LF; `event` sets the
/// type; `id` sets the last event ID unless its value contains NUL, as of the blank line that ends
/// its event; `retry` sets the reconnection time when its value is ASCII digits only; other fields
/// are ignored; a blank line dispatches the event, unless it has no data; an event the body ends in
/// the middle of is dropped, and so is its `id`.
public struct ServerSentEventDecoder: StreamDecoder {
    private var splitter: LineSplitter
    private let maximumEventSize: Int
    private var atStart = true
    private var startBytes: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType: String?
    /// The last `id` field's value so far, which becomes ``lastEventID`` at the next blank line.
    private var lastEventIDBuffer = ""
    private var retrySinceLastEvent: Int?

    /// The reconnection time the stream last asked for, in milliseconds; `nil` if it never did.
    public private(set) var reconnectionTime: Int?
    /// The last event ID as of the last blank line (the standard's "last event ID string"), to
    /// send as `Last-Event-ID` when reconnecting. An `id` field counts only once the blank line
    /// that ends its event has arrived: a connection cut in the middle of an event resumes from
    /// the event before it, which the server then sends again, rather than after one the caller
    /// never got. A blank line ends an event that has only an `id` too.
    public private(set) var lastEventID: String

    /// Parses events of at most `maximumEventSize` bytes of data, in lines of at most
    /// `maximumLineLength` bytes; past either the stream ends with a
    /// ``/StrataCore/StreamError``, however much of it has arrived.
    /// `lastEventID` carries the last event ID over from an earlier connection of the same event
    /// source, as the standard keeps it.
    public init(
        maximumEventSize: Int = ServerSentEventDecoder.defaultMaximumEventSize,
        maximumLineLength: Int = ServerSentEventDecoder.defaultMaximumEventSize,
        lastEventID: String = ""
    ) {
        self.maximumEventSize = maximumEventSize
        splitter = LineSplitter(limit: maximumLineLength)
        lastEventIDBuffer = lastEventID
        self.lastEventID = lastEventID
    }

    /// 1 MiB: the largest event and the longest line by default.
    public static let defaultMaximumEventSize = 1_048_576

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Parses `bytes`, handing on each event they complete.
    public mutating func decode(_ bytes: Data, _ emit: (ServerSentEvent) throws -> Void) throws {
        guard atStart else { return try parse(bytes, emit) }
        // A byte order mark may arrive split across parts: up to two bytes of one wait for the rest.
        var input = Data(startBytes)
        input.append(bytes)
        let start = Array(input.prefix(3))
        if start.count < 3, start == Array(Self.byteOrderMark.prefix(start.count)) {
            startBytes = start
            return
        }
        atStart = false
        startBytes = []
        try parse(start == Self.byteOrderMark ? input.dropFirst(3) : input, emit)
    }

    private mutating func parse(_ bytes: Data, _ emit: (ServerSentEvent) throws -> Void) throws {
        // The splitter is taken out while it runs, so that its buffer is not copied.
        var splitter = self.splitter
        self.splitter = LineSplitter(limit: 0)
        defer { self.splitter = splitter }
        try splitter.split(bytes) { line in
            if let event = try process(line) { try emit(event) }
        }
    }

    /// The body has ended: a last line without its end, and an event without its blank line, are
    /// dropped, as the standard says.
    public mutating func finish(_ emit: (ServerSentEvent) throws -> Void) throws {
        splitter = LineSplitter(limit: splitter.limit)
        startBytes = []
        data = []
        hasData = false
        eventType = nil
    }

    /// Interprets one line; returns the event a blank line dispatches.
    private mutating func process(_ line: UnsafeBufferPointer<UInt8>) throws -> ServerSentEvent? {
        guard let first = line.first else { return dispatch() }
        if first == 0x3A { return nil }  // ":" — a comment.
        let colon = line.firstIndex(of: 0x3A)
        let name = UnsafeBufferPointer(rebasing: line[..<(colon ?? line.endIndex)])
        var valueStart = colon.map { $0 + 1 } ?? line.endIndex
        if valueStart < line.endIndex, line[valueStart] == 0x20 { valueStart += 1 }
        let value = UnsafeBufferPointer(rebasing: line[valueStart...])
        switch name.count {
        case 4 where name.elementsEqual("data".utf8):
            guard data.count + value.count + 1 <= maximumEventSize else {
                throw StreamError.eventTooLarge(limit: maximumEventSize)
            }
            data.append(contentsOf: value)
            data.append(0x0A)
            hasData = true
        case 5 where name.elementsEqual("event".utf8):
            eventType = String(decoding: value, as: UTF8.self)
        case 2 where name.elementsEqual("id".utf8):
            if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
        case 5 where name.elementsEqual("retry".utf8):
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                let time = value.count > 18 ? Int.max : Int(String(decoding: value, as: UTF8.self)) ?? Int.max
                reconnectionTime = time
                retrySinceLastEvent = time
            }
        default:
            break
        }
        return nil
    }

    /// A blank line: the last event ID is now the buffer's; the event so far, if it has data; the
    /// type and data are reset either way.
    private mutating func dispatch() -> ServerSentEvent? {
        lastEventID = lastEventIDBuffer
        defer {
            data.removeAll(keepingCapacity: data.capacity <= 65_536)
            hasData = false
            eventType = nil
        }
        guard hasData else { return nil }
        data.removeLast()
        let event = ServerSentEvent(
            event: eventType.flatMap { $0.isEmpty ? nil : $0 } ?? "message",
            data: String(decoding: data, as: UTF8.self),
            lastEventID: lastEventID,
            retry: retrySinceLastEvent)
        retrySinceLastEvent = nil
        return event
    }
}

extension StreamDecoder where Self == ServerSentEventDecoder {
    /// The body as Server-Sent Events (`text/event-stream`), parsed as the HTML standard says.
    public static func serverSentEvents(
        maximumEventSize: Int = ServerSentEventDecoder.defaultMaximumEventSize
    ) -> ServerSentEventDecoder {
        ServerSentEventDecoder(maximumEventSize: maximumEventSize, maximumLineLength: maximumEventSize)
    }
}
