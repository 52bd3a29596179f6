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
/// removed otherwise.
final class FileWriter: ResponseReceiver, @unchecked Sendable {  // Sendable: `queue` serializes the `var`s.
    private let destination: URL
    private let request: URLRequest
    private let exchange: any ResponseExchange
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
    private var written: Int64 = 0
    private var failure: (any Error)?

    init(
        to destination: URL, for request: URLRequest, from exchange: any ResponseExchange,
        progress: (@Sendable (Int64, Int64) -> Void)?, _ completion: @escaping @Sendable (TransportOutcome) -> Void
    ) {
        self.destination = destination
        self.request = request
        self.exchange = exchange
        self.progress = progress
        self.completion = completion
    }

    func receive(_ head: ResponseHead) {
        queue.async { [self] in
            self.head = head
            let partial = destination.deletingLastPathComponent()
                .appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).download")
            do {
                try FileManager.default.createDirectory(
                    at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
                    throw URLError(.cannotCreateFile, userInfo: [NSURLErrorFailingURLErrorKey: destination])
                }
                file = try FileHandle(forWritingTo: partial)
                self.partial = partial
                exchange.demand()
            } catch {
                fail(error)
            }
        }
    }

    func receive(_ part: Data) {
        queue.async { [self] in
            guard failure == nil, let file else { return }
            do {
                if let bomb = head?.decompressionBomb(written + Int64(part.count)) { throw bomb }
                try file.write(contentsOf: part)
                written += Int64(part.count)
                progress?(written, head?.progressTotal ?? -1)
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
            if error == nil, let head, head.isShorterThanAnnounced(written, for: request) {
                error = SessionError.incompleteBody(
                    expected: Int(clamping: head.expectedContentLength), received: Int(clamping: written))
            }
            if error == nil, let partial {
                do {
                    try Self.place(partial, at: destination)
                    self.partial = nil
                } catch let moveError {
                    error = moveError
                }
            }
            if let partial {
                try? FileManager.default.removeItem(at: partial)
            }
            completion(TransportOutcome(head: head, fileURL: error == nil ? destination : nil, error: error))
        }
    }

    /// Takes a body the transport already wrote to disk: moved into place as it is, when nothing
    /// has been written yet.
    func take(bodyFile url: URL) -> Bool {
        // Asked from the writer's own queue when its demand is answered at once.
        DispatchQueue.getSpecific(key: Self.onQueue) == true ? takeOnQueue(url) : queue.sync { takeOnQueue(url) }
    }

    private func takeOnQueue(_ url: URL) -> Bool {
        guard failure == nil, written == 0, let head else { return false }
        try? file?.close()
        file = nil
        if let partial { try? FileManager.default.removeItem(at: partial) }
        partial = nil
        var error: (any Error)?
        var size: Int64 = 0
        do {
            size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int64) ?? 0
            if let bomb = head.decompressionBomb(size) { throw bomb }
            if head.isShorterThanAnnounced(size, for: request) {
                throw SessionError.incompleteBody(
                    expected: Int(clamping: head.expectedContentLength), received: Int(clamping: size))
            }
            try Self.place(url, at: destination)
        } catch let moveError {
            error = moveError
            try? FileManager.default.removeItem(at: url)
        }
        completion(TransportOutcome(head: head, fileURL: error == nil ? destination : nil, error: error))
        // Nothing more is written.
        failure = error ?? CancellationError()
        return true
    }

    /// Moves the body at `source` to `destination`, replacing a file (or a link) there, never a
    /// folder or a device (the pipeline refuses both before sending; one may have been made since).
    private static func place(_ source: URL, at destination: URL) throws {
        if let refusal = RequestValidationError.refusingDownload(to: destination) { throw refusal }
        let manager = FileManager.default
        // Anything there, a link to nothing included.
        if (try? manager.attributesOfItem(atPath: destination.path)) != nil {
            try manager.removeItem(at: destination)
        }
        try manager.moveItem(at: source, to: destination)
    }

    /// Writing failed: the exchange is ended, the partial file removed, and the outcome is the error.
    private func fail(_ error: any Error) {
        failure = error
        exchange.cancel()
        try? file?.close()
        file = nil
        if let partial {
            try? FileManager.default.removeItem(at: partial)
        }
        completion(TransportOutcome(head: head, error: error))
    }
}
