import Dispatch
import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hands an exchange's calls to the consumer chosen for its response once the head has arrived —
/// the pipeline decides at the head where the body goes — and reports an exchange that ended
/// without a head itself.
final class BodyRouter: ResponseReceiver, @unchecked Sendable {  // The relay's lock orders the calls.
    private var consumer: (any ResponseReceiver)?
    private let choose: @Sendable (ResponseHead) -> any ResponseReceiver
    private let completion: @Sendable (TransportOutcome) -> Void

    /// Routes to what `choose` returns for the head; `completion` gets an exchange that ended headless.
    init(
        choose: @escaping @Sendable (ResponseHead) -> any ResponseReceiver,
        headless completion: @escaping @Sendable (TransportOutcome) -> Void
    ) {
        self.choose = choose
        self.completion = completion
    }

    func receive(_ head: ResponseHead) {
        let consumer = choose(head)
        self.consumer = consumer
        consumer.receive(head)
    }

    func receive(_ part: Data) {
        consumer?.receive(part)
    }

    func take(bodyFile url: URL) -> Bool {
        consumer?.take(bodyFile: url) ?? false
    }

    func finish(_ error: (any Error)?) {
        if let consumer {
            consumer.finish(error)
        } else {
            completion(TransportOutcome(head: nil, error: error ?? SessionError.invalidResponse))
        }
    }
}

/// The consumer that writes a body to a file: into a partial file beside `destination`, one part
/// at a time on a queue of its own (the next part is asked for once the last is written, so a
/// slow disk holds back the network), moved into place when the whole body has arrived and
/// removed otherwise — or, for a download that resumes, kept for the next attempt
/// (``DownloadResumption``), to which a `206` continuing it is appended.
final class FileWriter: ResponseReceiver, @unchecked Sendable {  // Sendable: `queue` serializes the `var`s.
    private let destination: URL
    private let request: URLRequest
    private let exchange: ExchangeSlot
    private let resumption: DownloadResumption?
    /// How many bytes of the body the request asked to skip, as kept by an earlier attempt.
    private let kept: Int64
    private let progress: (@Sendable (Int64, Int64) -> Void)?
    private let completion: @Sendable (TransportOutcome) -> Void
    private let queue: DispatchQueue = {
        let queue = StrataQueue.make("Strata.FileWriter")
        queue.setSpecific(key: FileWriter.onQueue, value: true)
        return queue
    }()
    private static let onQueue = DispatchSpecificKey<Bool>()
    private var head: ResponseHead?
    private var file: FileHandle?
    private var partial: URL?
    /// The bytes in the partial file, and of them those of this response.
    private var written: Int64 = 0
    private var received: Int64 = 0
    private var total: Int64 = -1
    /// Whether what is written may be kept for a later attempt (see ``DownloadResumption/begin(_:)``).
    private var resumable = false
    private var failure: (any Error)?

    /// A writer of the body to `destination`; with `resumption`, which this request holds, into
    /// its partial file, of which the request asked for the bytes after the first `kept`.
    init(
        to destination: URL, for request: URLRequest, from exchange: ExchangeSlot,
        resuming resumption: DownloadResumption? = nil, after kept: Int64 = 0,
        progress: (@Sendable (Int64, Int64) -> Void)?, _ completion: @escaping @Sendable (TransportOutcome) -> Void
    ) {
        self.destination = destination
        self.request = request
        self.exchange = exchange
        self.resumption = resumption
        self.kept = kept
        self.progress = progress
        self.completion = completion
        resumption?.writerStarted()
    }

    func receive(_ head: ResponseHead) {
        queue.async { [self] in
            self.head = head
            total = head.progressTotal
            do {
                try FileManager.default.createDirectory(
                    at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                if let resumption {
                    try open(resumption, for: head)
                } else {
                    let partial = destination.deletingLastPathComponent()
                        .appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).download")
                    try create(partial)
                }
                exchange.demand()
            } catch {
                fail(error)
            }
        }
    }

    /// Opens `resumption`'s partial file for `head`: a `206` that continues it is appended to it,
    /// anything else replaces it.
    private func open(_ resumption: DownloadResumption, for head: ResponseHead) throws {
        guard head.statusCode == 206 else {
            try create(resumption.partial)
            resumable = resumption.begin(head)
            return
        }
        let field = head.headers["Content-Range"]
        // The range continues the kept bytes, and the body is as long as the range says.
        guard kept > 0, let range = field.flatMap(DownloadResumption.contentRange), range.first == kept,
            head.expectedContentLength < 0 || head.expectedContentLength == range.last - range.first + 1,
            resumption.begin(head)
        else {
            throw SessionError.unexpectedContentRange(field ?? "")
        }
        partial = resumption.partial
        let file = try FileHandle(forWritingTo: resumption.partial)
        self.file = file
        guard try file.seekToEnd() == UInt64(kept) else { throw SessionError.unexpectedContentRange(field ?? "") }
        written = kept
        // Without a complete length, the range's end says at least how long the whole is.
        total = range.complete ?? (range.last < Int64.max ? range.last + 1 : -1)
        resumable = true
    }

    /// Makes `partial` an empty file, open for writing.
    private func create(_ partial: URL) throws {
        guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
            throw URLError(.cannotCreateFile, userInfo: [NSURLErrorFailingURLErrorKey: destination])
        }
        self.partial = partial
        file = try FileHandle(forWritingTo: partial)
    }

    func receive(_ part: Data) {
        queue.async { [self] in
            guard failure == nil, let file else { return }
            do {
                if let bomb = head?.decompressionBomb(received + Int64(part.count)) { throw bomb }
                try file.write(contentsOf: part)
                written += Int64(part.count)
                received += Int64(part.count)
                progress?(written, total)
                exchange.demand()
            } catch {
                fail(error)
            }
        }
    }

    func finish(_ error: (any Error)?) {
        queue.async { [self] in
            guard failure == nil else { return }
            var error = error
            try? file?.close()
            file = nil
            if error == nil, let head, head.isShorterThanAnnounced(received, for: request) {
                error = SessionError.incompleteBody(
                    expected: Int(clamping: head.expectedContentLength), received: Int(clamping: received))
            }
            // A whole body is not kept to be resumed: nothing would be left to ask for.
            let isWhole = error == nil
            if error == nil, exchange.isCancelled {
                // Cancelled as the last byte came: the caller is told so, and finds nothing in place.
                error = TransportOutcome.cancelled.error
            }
            if error == nil, let partial {
                do {
                    try FileManager.default.placeDownload(partial, at: destination)
                    self.partial = nil
                    resumption?.completed()
                } catch let moveError {
                    error = moveError
                }
            }
            if error != nil {
                removePartial(keepingWhatResumes: !isWhole)
            }
            resumption?.writerEnded()
            completion(TransportOutcome(head: head, fileURL: error == nil ? destination : nil, error: error))
        }
    }

    /// Removes the partial file — unless, when `keepingWhatResumes`, a later attempt may resume it.
    /// What a download that resumes kept before is removed with it.
    private func removePartial(keepingWhatResumes: Bool) {
        let partial = self.partial
        self.partial = nil
        if let resumption {
            if keepingWhatResumes, partial != nil, written > 0, resumable {
                return
            }
            resumption.discard()
        } else if let partial {
            try? FileManager.default.removeItem(at: partial)
        }
    }

    /// Takes a body the transport already wrote to disk: moved into place as it is, when nothing
    /// has been written yet.
    func take(bodyFile url: URL) -> Bool {
        // Asked from the writer's own queue when its demand is answered at once.
        DispatchQueue.getSpecific(key: Self.onQueue) == true ? takeOnQueue(url) : queue.sync { takeOnQueue(url) }
    }

    private func takeOnQueue(_ url: URL) -> Bool {
        // A download that resumes writes its parts itself, to keep them if it is cut short.
        guard failure == nil, written == 0, resumption == nil, let head else { return false }
        try? file?.close()
        file = nil
        removePartial(keepingWhatResumes: false)
        var error: (any Error)?
        var size: Int64 = 0
        do {
            size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int64) ?? 0
            if let bomb = head.decompressionBomb(size) { throw bomb }
            if head.isShorterThanAnnounced(size, for: request) {
                throw SessionError.incompleteBody(
                    expected: Int(clamping: head.expectedContentLength), received: Int(clamping: size))
            }
            // Cancelled as the last byte came: the caller is told so, and finds nothing in place.
            if exchange.isCancelled, let cancelled = TransportOutcome.cancelled.error { throw cancelled }
            try FileManager.default.placeDownload(url, at: destination)
        } catch let moveError {
            error = moveError
            try? FileManager.default.removeItem(at: url)
        }
        completion(TransportOutcome(head: head, fileURL: error == nil ? destination : nil, error: error))
        // Nothing more is written.
        failure = error ?? CancellationError()
        return true
    }

    /// Writing failed: the exchange is ended, the partial file removed, and the outcome is the error.
    private func fail(_ error: any Error) {
        failure = error
        exchange.cancel()
        try? file?.close()
        file = nil
        removePartial(keepingWhatResumes: false)
        resumption?.writerEnded()
        completion(TransportOutcome(head: head, error: error))
    }
}

extension FileManager {
    /// Moves the body at `source` to `destination`, replacing a file (or a link) there, never a
    /// folder or a device (the pipeline refuses both before sending; one may have been made since).
    ///
    /// In one step (`rename`): two downloads to one destination that finish together each leave
    /// a whole file there, and neither fails on the other's. Removing what was there and then
    /// moving let one find the other's file in place between the two steps.
    package func placeDownload(_ source: URL, at destination: URL) throws {
        if let refusal = RequestValidationError.refusingDownload(to: destination) { throw refusal }
        // A path holding a NUL would reach `rename` cut short there, naming another file: it is
        // left to FileManager below.
        let (sourcePath, destinationPath) = (source.path, destination.path)
        let whole = !sourcePath.utf8.contains(0) && !destinationPath.utf8.contains(0)
        if whole, rename(sourcePath, destinationPath) == 0 { return }
        var from = source
        if whole, errno == EXDEV {
            // On another file system: copied beside the destination, then renamed into place.
            from = destination.deletingLastPathComponent().appendingPathComponent(
                ".\(destination.lastPathComponent).\(UUID().uuidString)")
            try moveItem(at: source, to: from)
            if rename(from.path, destination.path) == 0 { return }
        }
        // Refused: FileManager says why in its own words, or manages where `rename` cannot.
        do {
            // Anything there, a link to nothing included.
            if (try? attributesOfItem(atPath: destination.path)) != nil {
                try removeItem(at: destination)
            }
            try moveItem(at: from, to: destination)
        } catch {
            if from != source { try? removeItem(at: from) }
            throw error
        }
    }
}
