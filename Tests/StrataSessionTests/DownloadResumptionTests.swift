import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a download that resumes reads of a server's answer — its validator and its
/// `Content-Range` — and how one request at a time holds a destination's kept bytes. Resuming
/// against a server, over both transports, is shown by the integration tests.
@Suite struct DownloadResumptionTests {
    private static let url = URL(string: "https://example.com/file.bin") ?? URL(fileURLWithPath: "/")

    private func head(_ status: Int = 200, _ fields: [String: String]) -> ResponseHead {
        ResponseHead(url: Self.url, statusCode: status, httpVersion: "HTTP/1.1", headers: HTTPHeaders(fields))
    }

    @Test(
        arguments: [
            ("bytes 10-99/100", true, 10, 99, 100 as Int64?),
            ("bytes 0-0/1", true, 0, 0, 1),
            ("bytes 10-99/*", true, 10, 99, nil),
            ("Bytes  5-9/10", true, 5, 9, 10),
            ("bytes 10-99/99", false, 0, 0, nil),  // past the complete length
            ("bytes 99-10/100", false, 0, 0, nil),  // backwards
            ("bytes */100", false, 0, 0, nil),  // the form of a 416
            ("bytes -5-9/10", false, 0, 0, nil),
            ("bytes +5-9/10", false, 0, 0, nil),
            ("bytes 5-9/10/11", false, 0, 0, nil),
            ("bytes 99999999999999999999-99999999999999999999/*", false, 0, 0, nil),  // beyond Int64
            ("items 0-9/10", false, 0, 0, nil),
            ("", false, 0, 0, nil),
        ] as [(String, Bool, Int64, Int64, Int64?)])
    func aContentRangeIsReadOrRefused(field: String, valid: Bool, first: Int64, last: Int64, complete: Int64?) {
        let range = DownloadResumption.contentRange(field)
        #expect((range != nil) == valid)
        if let range {
            #expect(range.first == first && range.last == last && range.complete == complete)
        }
    }

    @Test(
        arguments: [
            (200, ["ETag": "\"v1\""], "\"v1\"" as String?),
            (206, ["ETag": " \"v1\" "], "\"v1\""),
            (200, ["ETag": "W/\"v1\""], nil),  // weak
            (200, ["ETag": "range1000"], "range1000"),  // unquoted, as httpbin sends it
            (200, ["ETag": "W/range1000"], nil),
            (200, ["ETag": "a b"], nil),
            (200, ["ETag": "a,b"], nil),
            (200, ["ETag": "\"v1"], nil),
            (200, ["ETag": "\"v\u{0}1\""], nil),  // NUL
            (200, ["ETag": "v\u{0}1"], nil),
            (200, ["ETag": "\"v\u{7F}1\""], nil),  // DEL
            (
                200, ["Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT\u{7F}", "Date": "Tue, 01 Dec 2026 11:00:00 GMT"],
                nil
            ),
            (200, ["ETag": "\"v\u{1}1\""], nil),  // a control character
            (200, ["ETag": "\"v\"1\""], nil),  // a quote inside
            (200, ["ETag": "\"v1\"", "Content-Encoding": "gzip"], nil),  // bytes on the wire are not those written
            (200, ["ETag": "\"v1\"", "Content-Encoding": "identity"], "\"v1\""),
            (404, ["ETag": "\"v1\""], nil),
            (
                200, ["Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT", "Date": "Tue, 01 Dec 2026 10:00:01 GMT"],
                "Tue, 01 Dec 2026 10:00:00 GMT"
            ),
            // Modified within the second it was sent: not a strong validator (RFC 9110, 8.8.2.2).
            (200, ["Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT", "Date": "Tue, 01 Dec 2026 10:00:00 GMT"], nil),
            (200, ["Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"], nil),  // no Date
            (200, ["Last-Modified": "yesterday", "Date": "Tue, 01 Dec 2026 10:00:00 GMT"], nil),
            (
                200,
                [
                    "ETag": "W/\"weak\"", "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT",
                    "Date": "Tue, 01 Dec 2026 11:00:00 GMT",
                ], "Tue, 01 Dec 2026 10:00:00 GMT"
            ),
            (200, [:], nil),
        ] as [(Int, [String: String], String?)])
    func theValidatorIsAStrongOneOrNone(status: Int, fields: [String: String], validator: String?) {
        #expect(DownloadResumption.validator(of: head(status, fields)) == validator)
    }

    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// One request at a time holds a destination; it lets it go once it has completed and its
    /// last writer has ended, in either order. Another request meanwhile goes on at once, holding
    /// nothing, while the holder is under way, and waits for the holder's writer once the holder has
    /// completed — a download cancelled a moment ago — then holds the destination.
    @Test(arguments: [false, true])
    func aDestinationIsHeldByOneRequestUntilItAndItsWriterHaveEnded(writerEndsFirst: Bool) async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let request = URLRequest(url: Self.url)
        let first = try #require(DownloadResumption(of: request, to: destination))
        let second = try #require(DownloadResumption(of: request, to: destination))
        let elsewhere = try #require(DownloadResumption(of: request, to: folder.appendingPathComponent("other.bin")))
        #expect(first.claim() && second.claim() && elsewhere.claim())
        #expect(first.holds && !second.holds && elsewhere.holds)
        first.writerStarted()
        if writerEndsFirst {
            first.writerEnded()
            #expect(second.claim())
            #expect(!second.holds)
            first.callEnded()
            #expect(!first.holds)
            #expect(second.claim())
        } else {
            first.callEnded()
            let proceeded = CompletionRecorder<Bool>()
            second.claim { proceeded.record(true) }
            // Waiting: it goes on only when the writer ends (or after the wait limit, seconds away).
            #expect(proceeded.callCount == 0)
            #expect(!second.holds)
            first.writerEnded()
            #expect(!first.holds)
            #expect(second.holds)
            #expect(await proceeded.first(timeout: 10) == true)
        }
        #expect(second.holds)
        // One that never held the destination lets nothing go.
        let third = try #require(DownloadResumption(of: request, to: destination))
        #expect(third.claim())
        third.callEnded()
        #expect(second.holds)
        second.callEnded()
        elsewhere.callEnded()
    }

    /// A request waiting for a completed download's writer that does not end goes on without the
    /// kept bytes after the time it may wait (at most ``DownloadResumption/waitLimit``); the
    /// writer's end then lets the destination go.
    @Test func aWriterThatDoesNotEndIsWaitedForAWhileOnly() async throws {
        let (folder, first, others) = try heldByACompletedDownload(others: 2)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (second, third) = (others[0], others[1])
        let proceeded = CompletionRecorder<Bool>()
        let started = ContinuousClock.now
        second.claim(waitingAtMost: 0.2) { proceeded.record(second.holds) }
        #expect(await proceeded.first(timeout: 10) == false)
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        first.writerEnded()
        try await Task.sleep(for: .milliseconds(50))
        #expect(proceeded.callCount == 1)
        #expect(third.claim() && third.holds)
        third.callEnded()
        second.callEnded()
    }

    /// Requests waiting for a destination take it in turn; one that completed while it waited (a
    /// cancellation) passes it on at once, and goes on, holding nothing for long.
    @Test func waitingRequestsTakeTheDestinationInTurn() async throws {
        let (folder, first, others) = try heldByACompletedDownload(others: 2)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (second, third) = (others[0], others[1])
        let proceeded = CompletionRecorder<String>()
        second.claim { proceeded.record("second") }
        third.claim { proceeded.record("third \(third.holds)") }
        second.callEnded()
        first.writerEnded()
        for _ in 0..<1_000 where proceeded.callCount < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(Set(proceeded.values) == ["second", "third true"])
        #expect(!second.holds && third.holds)
        third.callEnded()
        #expect(!third.holds)
    }
    /// A destination in a new folder held by a request that has completed while its writer has
    /// not ended (a download cancelled a moment ago), and `others` requests for it not yet claiming.
    private func heldByACompletedDownload(
        others: Int
    ) throws -> (
        folder: URL, holder: DownloadResumption, others: [DownloadResumption]
    ) {
        let folder = try folder()
        let destination = folder.appendingPathComponent("file.bin")
        let request = URLRequest(url: Self.url)
        let holder = try #require(DownloadResumption(of: request, to: destination))
        #expect(holder.claim())
        holder.writerStarted()
        holder.callEnded()
        let rest = try (0..<others).map { _ in try #require(DownloadResumption(of: request, to: destination)) }
        return (folder, holder, rest)
    }

    /// A folder reached through a link is the same folder: a destination in it is held once.
    @Test func aDestinationReachedThroughALinkIsTheSameDestination() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let real = folder.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let request = URLRequest(url: Self.url)
        let first = try #require(DownloadResumption(of: request, to: real.appendingPathComponent("file.bin")))
        let second = try #require(DownloadResumption(of: request, to: link.appendingPathComponent("file.bin")))
        let dotted = try #require(
            DownloadResumption(of: request, to: link.appendingPathComponent("../real/./file.bin")))
        first.claim()
        second.claim()
        dotted.claim()
        #expect(first.holds && !second.holds && !dotted.holds)
        first.callEnded()
        second.callEnded()
        dotted.callEnded()
    }

    /// Kept bytes are offered only to a request for the URL they came from, and only when they
    /// are a regular file with something in it; anything else is removed.
    @Test func keptBytesAreOfferedOnlyForTheirURL() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let writer = try #require(DownloadResumption(of: URLRequest(url: Self.url), to: destination))
        writer.claim()
        writer.begin(head(200, ["ETag": "\"v1\""]))
        try Data(repeating: 7, count: 1_000).write(to: writer.partial)
        #expect(writer.kept()?.length == 1_000)
        #expect(writer.kept()?.validator == "\"v1\"")
        writer.callEnded()

        let other = try #require(URL(string: "https://example.com/file.bin?v=2"))
        let reader = try #require(DownloadResumption(of: URLRequest(url: other), to: destination))
        reader.claim()
        #expect(reader.kept() == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        reader.callEnded()

        // A request with a range of its own resumes nothing.
        var ranged = URLRequest(url: Self.url)
        ranged.setValue("bytes=0-9", forHTTPHeaderField: "Range")
        #expect(DownloadResumption(of: ranged, to: destination) == nil)
        // Nor one whose method ranges are not defined for.
        var posted = URLRequest(url: Self.url)
        posted.httpMethod = "POST"
        #expect(DownloadResumption(of: posted, to: destination) == nil)
    }

    /// A head that cannot be resumed leaves no record of a validator behind.
    @Test func aHeadWithoutAValidatorRecordsNone() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let resumption = try #require(DownloadResumption(of: URLRequest(url: Self.url), to: destination))
        resumption.claim()
        resumption.begin(head(200, ["ETag": "\"v1\""]))
        resumption.begin(head(200, ["ETag": "W/\"v1\""]))
        try Data(repeating: 7, count: 10).write(to: resumption.partial)
        #expect(resumption.kept() == nil)
        resumption.callEnded()
    }
}

/// The writer of a download's file, driven as a transport drives it.
@Suite struct FileWriterTests {
    private static let url = URL(string: "https://example.com/file.bin") ?? URL(fileURLWithPath: "/")

    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private func head(_ status: Int, _ fields: [String: String]) -> ResponseHead {
        ResponseHead(url: Self.url, statusCode: status, httpVersion: "HTTP/1.1", headers: HTTPHeaders(fields))
    }

    /// A request cancelled after its last byte came, before the writer put the file in place: the
    /// outcome is the cancellation, and nothing is at the destination — the caller was told it
    /// was cancelled. A download that resumes keeps nothing of a whole body either.
    @Test(arguments: [false, true])
    func aBodyWholeButCancelledIsNotPutInPlace(resumes: Bool) async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let request = URLRequest(url: Self.url)
        let resumption = resumes ? DownloadResumption(of: request, to: destination) : nil
        resumption?.claim()
        let slot = ExchangeSlot()
        let outcomes = CompletionRecorder<TransportOutcome>()
        let writer = FileWriter(
            to: destination, for: request, from: slot, resuming: resumption, progress: nil, outcomes.record)
        writer.receive(head(200, ["Content-Length": "4", "ETag": "\"v1\""]))
        writer.receive(Data("body".utf8))
        slot.cancel()
        writer.finish(nil)
        let outcome = try #require(await outcomes.first())
        #expect((outcome.error as? URLError)?.code == .cancelled)
        #expect(outcome.fileURL == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        resumption?.callEnded()
    }

    /// A `206` whose range ends at the largest offset there is, with no complete length, is
    /// appended without its total overflowing.
    @Test func aRangeToTheLargestOffsetIsCountedWithoutOverflow() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let request = URLRequest(url: Self.url)
        let resumption = try #require(DownloadResumption(of: request, to: destination))
        resumption.claim()
        resumption.begin(head(200, ["ETag": "\"v1\""]))
        try Data("0123".utf8).write(to: resumption.partial)
        let outcomes = CompletionRecorder<TransportOutcome>()
        let reported = CompletionRecorder<[Int64]>()
        let writer = FileWriter(
            to: destination, for: request, from: ExchangeSlot(), resuming: resumption, after: 4,
            progress: { reported.record([$0, $1]) }, outcomes.record)
        writer.receive(
            head(
                206,
                ["Content-Range": "bytes 4-\(Int64.max)/*", "Content-Length": "\(Int64.max - 3)", "ETag": "\"v1\""]))
        writer.receive(Data("45".utf8))
        writer.finish(URLError(.networkConnectionLost))
        let outcome = try #require(await outcomes.first())
        #expect((outcome.error as? URLError)?.code == .networkConnectionLost)
        #expect(reported.values == [[6, -1]])
        #expect(resumption.kept()?.length == 6)
        resumption.callEnded()
    }

    /// A `206` that continues the kept bytes is appended to them, with progress counted from them
    /// against the whole length; the file goes in place and nothing else is left.
    @Test func aContinuingRangeIsAppendedToTheKeptBytes() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let request = URLRequest(url: Self.url)
        let resumption = try #require(DownloadResumption(of: request, to: destination))
        resumption.claim()
        resumption.begin(head(200, ["ETag": "\"v1\""]))
        try Data("0123".utf8).write(to: resumption.partial)
        let kept = try #require(resumption.kept())
        let outcomes = CompletionRecorder<TransportOutcome>()
        let reported = CompletionRecorder<[Int64]>()
        let writer = FileWriter(
            to: destination, for: request, from: ExchangeSlot(), resuming: resumption, after: kept.length,
            progress: { reported.record([$0, $1]) }, outcomes.record)
        writer.receive(head(206, ["Content-Length": "6", "Content-Range": "bytes 4-9/10", "ETag": "\"v1\""]))
        writer.receive(Data("456".utf8))
        writer.receive(Data("789".utf8))
        writer.finish(nil)
        let outcome = try #require(await outcomes.first())
        #expect(outcome.error == nil)
        #expect(try Data(contentsOf: destination) == Data("0123456789".utf8))
        #expect(reported.values == [[7, 10], [10, 10]])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["file.bin"])
        resumption.callEnded()
    }
}

extension DownloadResumption {
    /// Claims the destination as a request does; whether the request went on at once.
    @discardableResult
    fileprivate func claim() -> Bool {
        let proceeded = Locked(false)
        claim { proceeded.withLock { $0 = true } }
        return proceeded.withLock { $0 }
    }
}
