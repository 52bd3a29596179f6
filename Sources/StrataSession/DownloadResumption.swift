import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a download that resumes keeps beside its destination, and the claim on it.
///
/// A download cut short (a lost connection, a cancellation, a deadline) keeps the bytes it wrote in
/// `.<name>.download` beside its destination, and in `.<name>.download-resume` the URL asked for
/// and the response's validator: its `ETag` when strong, else a `Last-Modified` at least a second
/// older than the response's `Date` (RFC 9110, 8.8.2.2). The next attempt — the retry of the same
/// request, or a later request to the same URL and destination — asks for the rest
/// (`Range: bytes=<kept>-`, `If-Range: <validator>`): a `206` continuing where the file stops is
/// appended to it, a `200` (the resource changed, or the server sends whole bodies only) replaces
/// it, a `416` (kept bytes past the end) removes them and the request asks for the whole body. A
/// body without a validator, or in a content coding (whose bytes on the wire are not those
/// written), is never kept.
///
/// One request at a time holds a destination's kept bytes: another to the same destination, in
/// this process, meanwhile downloads as if nothing were kept, to a file of its own. A request that
/// has completed holds them only until its writer has ended (a moment after a cancellation), and a
/// request started meanwhile — as one is from the cancelled download's completion, to resume it —
/// waits for that writer and then continues what it kept.
final class DownloadResumption: Sendable {
    /// The destination's kept bytes.
    let partial: URL
    private let record: URL
    /// The destination, its folder's links resolved: what holding it means.
    private let destination: URL
    /// The URL the caller asked for, before any redirect: what the kept bytes are a part of.
    private let source: String
    private let state = Locked(Holding())

    private struct Holding {
        var holds = false
        var writers = 0
        var callEnded = false
    }

    /// Who holds a destination, and the requests waiting for it.
    private struct Holder {
        /// The request holding it.
        var owner: DownloadResumption
        /// The requests waiting for it, in turn: each takes it when the one before lets it go.
        var waiting: [Waiter] = []
    }

    /// A request waiting for a destination, and what it does once it has it or has given up.
    private struct Waiter {
        let resumption: DownloadResumption
        let proceed: @Sendable () -> Void
    }

    /// Destinations held, by path.
    private static let held = Locked([String: Holder]())

    /// How long a request waits for the writer of a completed one to end before it downloads as if
    /// nothing were kept: a writer ends milliseconds after its request was cancelled.
    static let waitLimit: TimeInterval = 2

    /// The resumption of a download of `url` to `destination`; `nil` for a request that asks for a
    /// range of its own, whose body is not the whole of anything, and for one whose method is not
    /// `GET`, the only one ranges are defined for (RFC 9110, 14.2).
    init?(of request: URLRequest, to destination: URL) {
        guard let url = request.url, request.headerField("Range") == nil, (request.httpMethod ?? "GET") == "GET"
        else { return nil }
        let folder = destination.deletingLastPathComponent()
        // Held by the file the kept bytes are: one folder reached through a link is the same one.
        self.destination = folder.resolvingSymlinksInPath().appendingPathComponent(destination.lastPathComponent)
        partial = folder.appendingPathComponent(".\(destination.lastPathComponent).download")
        record = folder.appendingPathComponent(".\(destination.lastPathComponent).download-resume")
        source = url.absoluteString
    }

    /// Takes the destination for this request, then runs `proceed`: at once when no other request
    /// of this process holds it, or when one under way does (this one then holds nothing, and
    /// downloads whole); when the one holding it has completed and only its writer is ending, once
    /// that writer has ended — or, holding nothing, after `limit` seconds (at most ``waitLimit``)
    /// — on a thread of Strata's.
    func claim(waitingAtMost limit: TimeInterval = waitLimit, then proceed: @escaping @Sendable () -> Void) {
        let path = destination.path
        let waits = Self.held.withLock { held -> Bool in
            guard var holder = held[path] else {
                held[path] = Holder(owner: self)
                state.withLock { $0.holds = true }
                return false
            }
            // Read under the owner's lock: it lets go under this one, after it has completed.
            guard holder.owner.state.withLock({ $0.callEnded }) else { return false }
            holder.waiting.append(Waiter(resumption: self, proceed: proceed))
            held[path] = holder
            return true
        }
        guard waits else { return proceed() }
        StrataQueue.async(after: min(limit, Self.waitLimit)) { [self] in
            // Still waiting: the writer has not ended; go on without the kept bytes.
            let gaveUp = Self.held.withLock { held -> Bool in
                guard let index = held[path]?.waiting.firstIndex(where: { $0.resumption === self }) else {
                    return false
                }
                held[path]?.waiting.remove(at: index)
                return true
            }
            if gaveUp { proceed() }
        }
    }

    /// Whether this request holds the destination's kept bytes.
    var holds: Bool { state.withLock { $0.holds } }

    /// The range to ask for: how many bytes are kept and the validator they were sent with; `nil`
    /// when nothing is kept for this URL (what is kept for another is removed).
    func kept() -> (length: Int64, validator: String)? {
        guard holds else { return nil }
        let manager = FileManager.default
        guard let data = manager.contents(atPath: record.path),
            let saved = try? JSONDecoder().decode(Record.self, from: data), saved.url == source,
            let attributes = try? manager.attributesOfItem(atPath: partial.path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let length = (attributes[.size] as? NSNumber)?.int64Value, length > 0
        else {
            discard()
            return nil
        }
        return (length, saved.validator)
    }

    /// Notes that `head`, the answer to be written to ``partial``, may be resumed, and returns
    /// `true` — or that it may not, and nothing is to be kept of it.
    @discardableResult
    func begin(_ head: ResponseHead) -> Bool {
        guard let validator = Self.validator(of: head),
            let data = try? JSONEncoder().encode(Record(url: source, validator: validator))
        else {
            try? FileManager.default.removeItem(at: record)
            return false
        }
        try? data.write(to: record, options: .atomic)
        return true
    }

    /// Removes what is kept.
    func discard() {
        try? FileManager.default.removeItem(at: partial)
        try? FileManager.default.removeItem(at: record)
    }

    /// The download's file has been moved into place: nothing is left to resume.
    func completed() {
        try? FileManager.default.removeItem(at: record)
    }

    /// A writer of ``partial`` starts; the destination stays held until it has ended.
    func writerStarted() {
        state.withLock { $0.writers += 1 }
    }

    /// A writer of ``partial`` has ended.
    func writerEnded() {
        release { $0.writers -= 1 }
    }

    /// The request has completed; the destination is let go once its last writer has ended.
    func callEnded() {
        release { $0.callEnded = true }
    }

    /// Changes the holding as `change` says, and lets the destination go — to the first request
    /// waiting for it, if any — once this request has completed and its last writer has ended.
    private func release(_ change: (inout Holding) -> Void) {
        let releases = state.withLock { state -> Bool in
            change(&state)
            guard state.holds, state.callEnded, state.writers == 0 else { return false }
            state.holds = false
            return true
        }
        guard releases else { return }
        let path = destination.path
        let next = Self.held.withLock { held -> Waiter? in
            guard var holder = held[path], holder.owner === self else { return nil }
            guard !holder.waiting.isEmpty else {
                held[path] = nil
                return nil
            }
            let next = holder.waiting.removeFirst()
            held[path] = Holder(owner: next.resumption, waiting: holder.waiting)
            return next
        }
        guard let next else { return }
        next.resumption.release { $0.holds = true }
        StrataQueue.async(next.proceed)
    }

    /// The validator a range may be asked for with (RFC 9110, 13.1.5): a strong `ETag`, or a
    /// `Last-Modified` at least a second before the response's `Date`; `nil` for a body in a content
    /// coding, or one whose status is not `200` or `206`.
    static func validator(of head: ResponseHead) -> String? {
        guard head.statusCode == 200 || head.statusCode == 206 else { return nil }
        if let coding = head.headers["Content-Encoding"], coding.lowercased() != "identity" { return nil }
        if let tag = head.headers["ETag"]?.trimmingCharacters(in: .whitespaces), isStrongEntityTag(tag) {
            return tag
        }
        // Sent back in `If-Range`: it must pass the check every header sent passes.
        guard let modified = head.headers["Last-Modified"]?.trimmingCharacters(in: .whitespaces),
            HTTPGrammar.isFieldValue(modified), let date = head.headers["Date"],
            let modifiedAt = HTTPDate.parse(modified), let sentAt = HTTPDate.parse(date),
            sentAt.timeIntervalSince(modifiedAt) >= 1
        else { return nil }
        return modified
    }

    /// `"…"` of visible ASCII characters (RFC 9110, 8.8.3), not `W/"…"`: one that may go in
    /// `If-Range`. A tag some servers send unquoted (httpbin's `range1000`), visible ASCII with
    /// neither quote nor comma, is taken as it is: sent back, it is either the server's own tag or,
    /// to a server that reads it as no strong validator, a reason to send the whole body.
    private static func isStrongEntityTag(_ tag: String) -> Bool {
        let bytes = Array(tag.utf8)
        guard !bytes.isEmpty, !tag.hasPrefix("W/") else { return false }
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else {
            return bytes.allSatisfy {
                (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: ",")
            }
        }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) }
    }

    /// The first byte and the complete length of a `206`'s `Content-Range` (`bytes 10-99/100`, or
    /// `/*` for a length unknown); `nil` for anything else (RFC 9110, 14.4).
    static func contentRange(_ value: String) -> (first: Int64, last: Int64, complete: Int64?)? {
        let value = value.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes ") else { return nil }
        let range = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = range.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let ends = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let first = digits(ends[0]), let last = digits(ends[1]), first <= last else {
            return nil
        }
        if parts[1] == "*" { return (first, last, nil) }
        guard let complete = digits(parts[1]), last < complete else { return nil }
        return (first, last, complete)
    }

    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }

    private struct Record: Codable {
        var url: String
        var validator: String
    }
}
