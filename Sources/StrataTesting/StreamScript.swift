import Foundation
import StrataCore
import StrataEncoding
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A streamed response for a test double to play: its status and headers, then body parts, pauses
/// and a cut connection, in order — so that streaming code (an SSE chat, a JSON Lines export) can
/// be tested without a server, at any layer: ``MockNetworkSessionManager``, ``MockNetworkService``
/// and ``MockDataTransferService`` each take one. What the script sends goes through the same
/// decoders as a server's body.
///
/// ```swift
/// let script = StreamScript.events(
///     [ServerSentEvent(data: "Hel"), ServerSentEvent(data: "lo")], every: 0.05
/// ).cut()
/// transfer.enqueue(.stream(script))
/// ```
public struct StreamScript: Sendable {
    /// The status code.
    public var statusCode: Int
    /// The header fields.
    public var headers: [String: String]
    /// How long before the head arrives, in seconds.
    public var pauseBeforeHead: TimeInterval
    /// What follows the head: parts, pauses, a failure.
    public var steps: [ResponsePlayback.Step]

    /// Describes a streamed response.
    public init(
        statusCode: Int = 200, headers: [String: String] = [:], pauseBeforeHead: TimeInterval = 0,
        steps: [ResponsePlayback.Step]
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.pauseBeforeHead = pauseBeforeHead
        self.steps = steps
    }

    /// `parts`, one after the other, with `pause` seconds before each after the first.
    public static func chunks(
        _ parts: [Data], every pause: TimeInterval = 0, statusCode: Int = 200,
        headers: [String: String] = ["Content-Type": "application/octet-stream"]
    ) -> StreamScript {
        var steps: [ResponsePlayback.Step] = []
        for (index, part) in parts.enumerated() {
            if index > 0, pause > 0 { steps.append(.pause(pause)) }
            steps.append(.part(part))
        }
        return StreamScript(statusCode: statusCode, headers: headers, steps: steps)
    }

    /// `events` as a `text/event-stream` body, one event per part. Data is written a `data:` line
    /// for each of its lines (cut at CR, LF and CR LF, as the stream reads them back); a type or ID,
    /// which no line break can stand in, up to its first one.
    public static func events(_ events: [ServerSentEvent], every pause: TimeInterval = 0) -> StreamScript {
        chunks(events.map(Self.encode), every: pause, headers: ["Content-Type": "text/event-stream"])
    }

    /// `lines`, each ended by a line feed, one per part.
    public static func lines(_ lines: [String], every pause: TimeInterval = 0) -> StreamScript {
        chunks(lines.map { Data(($0 + "\n").utf8) }, every: pause, headers: ["Content-Type": "text/plain"])
    }

    /// `values` as JSON Lines, one per part.
    public static func jsonLines<Value: Encodable>(
        _ values: [Value], every pause: TimeInterval = 0, encoder: JSONEncoder = JSONEncoder()
    ) throws -> StreamScript {
        let parts = try values.map { value -> Data in
            var line = try encoder.encode(value)
            line.append(0x0A)
            return line
        }
        return chunks(parts, every: pause, headers: ["Content-Type": "application/jsonl"])
    }

    /// The same script, then the connection fails with `error` (by default, lost).
    public func cut(_ error: any Error = URLError(.networkConnectionLost)) -> StreamScript {
        var script = self
        script.steps.append(.fail(error))
        return script
    }

    /// `event` in the event-stream format.
    static func encode(_ event: ServerSentEvent) -> Data {
        var text = ""
        if event.event != "message" { text += "event: \(firstLine(of: event.event))\n" }
        if !event.lastEventID.isEmpty { text += "id: \(firstLine(of: event.lastEventID))\n" }
        if let retry = event.retry { text += "retry: \(retry)\n" }
        for line in lines(of: event.data) {
            text += "data: \(line)\n"
        }
        return Data((text + "\n").utf8)
    }

    /// `text` cut at CR, LF and CR LF, the line endings of an event stream.
    private static func lines(of text: String) -> [Substring] {
        var lines: [Substring] = []
        var rest = text[...]
        // CR LF is one grapheme cluster in Swift: the ending is found among the scalars.
        while let end = rest.unicodeScalars.firstIndex(where: { $0 == "\r" || $0 == "\n" }) {
            lines.append(rest[..<end])
            var next = rest.unicodeScalars.index(after: end)
            if rest.unicodeScalars[end] == "\r", next < rest.endIndex, rest.unicodeScalars[next] == "\n" {
                next = rest.unicodeScalars.index(after: next)
            }
            rest = rest[next...]
        }
        lines.append(rest)
        return lines
    }

    /// What a field's value can be on the wire: `text` up to its first line break.
    private static func firstLine(of text: String) -> Substring {
        lines(of: text)[0]
    }

    /// Plays the script for a request to `url` to `receiver`: as it comes when the status is in
    /// `acceptable`; otherwise the body is collected (up to 1 MiB) and the stream ends with what
    /// `failure` makes of the outcome, whose error is ``/StrataSession/SessionError/unacceptableStatusCode(_:)``.
    func play(
        url: URL, acceptable: Set<Int>, to receiver: any ResponseReceiver,
        failure: @escaping @Sendable (TransportOutcome) -> any Error
    ) -> any ResponseExchange {
        let head = ResponseHead(
            url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headers: HTTPHeaders(headers))
        if acceptable.contains(statusCode) {
            return ResponsePlayback.start(head: head, pauseBeforeHead: pauseBeforeHead, steps: steps, to: receiver)
        }
        let call = BufferedStream(to: receiver, failure: failure)
        let slot = ExchangeSlot()
        let status = statusCode
        let collector = BodyCollector(limit: 1_048_576, truncates: true, from: slot) { outcome in
            var outcome = outcome
            if outcome.error == nil { outcome.error = SessionError.unacceptableStatusCode(status) }
            call.arrived(outcome)
        }
        slot.set(ResponsePlayback.start(head: head, pauseBeforeHead: pauseBeforeHead, steps: steps, to: collector))
        call.start(slot)
        return call
    }
}
