import Foundation

/// A request body read from a file: an `InputStream` that also tells the transport which file it
/// reads, so a session manager can upload from the file directly (with a known length, and again
/// on a retry) instead of streaming it.
///
/// Encodings that build large bodies on disk (multipart above its memory threshold) set one as a
/// request's `httpBodyStream`. With `removesFileOnRelease`, the file is deleted when the stream is
/// released, which is when the last copy of the request is gone.
///
/// Reading uses `FileHandle`, in chunks; `streamError` is never consulted (reading it traps on Linux).
/// Not `Sendable`, as no `Stream` is; its read state is behind a lock all the same.
public final class FileBodyStream: InputStream {
    /// The file the body is read from.
    public let fileURL: URL
    /// The body's length in bytes.
    public let length: UInt64
    /// Whether the file is deleted when this stream is released.
    public let removesFileOnRelease: Bool

    private let lock = PlainLock.make()
    private var handle: FileHandle?
    private var status: Stream.Status = .notOpen

    /// Creates a stream over `fileURL`, whose length is the file's size now.
    /// - Throws: ``RequestValidationError/unusableBodyFile(path:reason:)`` when `fileURL` does not
    ///   name a regular file (after links are followed) whose size can be read.
    public init(fileURL: URL, removesFileOnRelease: Bool = false) throws(RequestValidationError) {
        self.length = try Self.regularFileLength(at: fileURL)
        self.fileURL = fileURL
        self.removesFileOnRelease = removesFileOnRelease
        super.init(data: Data())
    }

    /// Throws unless the file still has the length the stream announces: one that grew or shrank
    /// since would send a body its `Content-Length` does not frame (the bytes past it read by the
    /// server as the next request on the connection), or one that never ends.
    public func checkUnchanged() throws(RequestValidationError) {
        try checkLength(try Self.regularFileLength(at: fileURL))
    }

    /// Throws unless `now`, the file's length as just found (its size, or the bytes just read from
    /// it), is the length the stream announces.
    package func checkLength(_ now: UInt64) throws(RequestValidationError) {
        guard now == length else {
            throw .unusableBodyFile(
                path: fileURL.path, reason: "it held \(length) bytes when the request was made and holds \(now) now")
        }
    }

    /// The size of the regular file at `url`, links followed. A folder, a device such as
    /// `/dev/zero`, a pipe (whose opening blocks until a writer comes) or a socket has no length a
    /// body could announce, so each is refused.
    /// - Throws: ``RequestValidationError/unusableBodyFile(path:reason:)``, saying why.
    package static func regularFileLength(at url: URL) throws(RequestValidationError) -> UInt64 {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
        } catch {
            throw .unusableBodyFile(path: url.path, reason: error.localizedDescription)
        }
        let type = attributes[.type] as? FileAttributeType
        guard type == .typeRegular else {
            let kind =
                switch type {
                case .typeDirectory?: "a folder"
                case .typeCharacterSpecial?, .typeBlockSpecial?: "a device"
                case .typeSocket?: "a socket"
                default: "a pipe or another special file"
                }
            throw .unusableBodyFile(path: url.path, reason: "it is \(kind), not a regular file")
        }
        return (attributes[.size] as? NSNumber)?.uint64Value ?? 0
    }

    deinit {
        try? handle?.close()
        if removesFileOnRelease {
            try? FileManager.default.removeItem(at: fileURL)
        }
    }

    /// Opens the file for reading.
    public override func open() {
        lock.lock()
        defer { lock.unlock() }
        guard status == .notOpen else { return }
        handle = try? FileHandle(forReadingFrom: fileURL)
        status = handle == nil ? .error : .open
    }

    /// Closes the file.
    public override func close() {
        lock.lock()
        defer { lock.unlock() }
        try? handle?.close()
        handle = nil
        status = .closed
    }

    /// Reads up to `len` bytes; 0 at the end, -1 on an error.
    public override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard let handle, status == .open || status == .reading else { return status == .atEnd ? 0 : -1 }
        guard let chunk = try? handle.read(upToCount: len) else {
            status = .error
            return -1
        }
        guard !chunk.isEmpty else {
            status = .atEnd
            return 0
        }
        chunk.copyBytes(to: buffer, count: chunk.count)
        status = .reading
        return chunk.count
    }

    /// `false`: the bytes are not available in memory.
    public override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
        length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }

    /// Whether a read may return bytes.
    public override var hasBytesAvailable: Bool {
        lock.lock()
        defer { lock.unlock() }
        return status == .open || status == .reading
    }

    /// The stream's status.
    public override var streamStatus: Stream.Status {
        lock.lock()
        defer { lock.unlock() }
        return status
    }
}
