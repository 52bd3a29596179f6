import Foundation
import StrataCore

#if canImport(FoundationNetworking)

    /// A body stream of the caller's as `URLSessionTransport` hands it to FoundationNetworking: the same
    /// bytes, held to the length the request announced for them, and a note of why the stream failed
    /// if it did.
    ///
    /// FoundationNetworking takes a stream that says it has no bytes available for one that has ended,
    /// and a stream that could not be opened (a file that is not there) says so: the request went with
    /// an empty body, and its answer came back as a success. A read that fails is reported as an error
    /// of the transfer, with nothing to say it was the body's. With this wrapper the transport ends
    /// either with ``/StrataCore/RequestValidationError/unreadableBodyStream``.
    ///
    /// FoundationNetworking sends every stream chunked, so a stream that holds more or fewer bytes
    /// than its `Content-Length` announced went whole, where AsyncHTTPClient, which sends the length,
    /// fails the request. This wrapper fails it too, with
    /// ``/StrataCore/RequestValidationError/bodyStreamLengthMismatch(announced:)``: a read that would
    /// pass the length, or the stream's end before it, is a failed read, which ends the transfer
    /// before the last chunk is sent, so the server never takes the body for a whole one.
    ///
    /// Its `streamError` is never read (reading one traps on Linux); the wrapped stream's status says
    /// whether it failed.
    final class CheckedBodyStream: InputStream {
        private let stream: InputStream
        /// The length the request announced for the stream, if it announced one.
        private let announced: Int64?
        /// How many bytes have been read so far (FoundationNetworking reads from one thread at a time).
        private var handedOver: Int64 = 0
        /// Why the stream failed, if it did: for the session's delegate to read as the task completes
        /// (the stream itself is not `Sendable`).
        let failure = Locked<RequestValidationError?>(nil)
        /// Whether every further read fails: libcurl asked for the body again, which has been read.
        private let refused = Locked(false)

        /// Wraps `stream`, held to `announced` bytes if that is a length.
        init(_ stream: InputStream, announced: Int64?) {
            self.stream = stream
            self.announced = announced
            super.init(data: Data())
        }

        /// Notes `failure` (the first one noted stays) and returns the failed read's result.
        private func fail(_ failure: RequestValidationError) -> Int {
            self.failure.withLock { $0 = $0 ?? failure }
            return -1
        }

        /// Notes a failure if the wrapped stream is in error.
        private func noteStatus() {
            if stream.streamStatus == .error {
                _ = fail(.unreadableBodyStream)
            }
        }

        /// Whether the wrapped stream has ended short of the announced length.
        private var endedShort: Bool {
            guard let announced else { return false }
            return handedOver < announced
        }

        override func open() {
            stream.open()
            noteStatus()
        }

        override func close() {
            stream.close()
        }

        /// Fails every read from now on, so that libcurl, sending the request again, aborts the
        /// transfer rather than end a body it could not read again where it would look whole.
        func refuseFurtherReads() {
            refused.withLock { $0 = true }
        }

        override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
            if refused.withLock({ $0 }) { return -1 }
            // A read of nothing says nothing of the stream's length.
            guard let announced, len > 0 else { return counted(stream.read(buffer, maxLength: len)) }
            let left = announced - handedOver
            guard left > 0 else {
                // All announced bytes went: one more is a stream longer than its length.
                var extra: UInt8 = 0
                let count = stream.read(&extra, maxLength: 1)
                return count > 0 ? fail(.bodyStreamLengthMismatch(announced: announced)) : counted(count)
            }
            let count = counted(stream.read(buffer, maxLength: Int(clamping: min(Int64(len), left))))
            return count == 0 ? fail(.bodyStreamLengthMismatch(announced: announced)) : count
        }

        /// Counts a read's bytes, or notes its failure.
        private func counted(_ count: Int) -> Int {
            guard count >= 0 else { return fail(.unreadableBodyStream) }
            handedOver += Int64(count)
            return count
        }

        override func getBuffer(
            _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
        ) -> Bool {
            false
        }

        override var hasBytesAvailable: Bool {
            // Said to have bytes, a refused stream is read, and that read fails.
            if refused.withLock({ $0 }) { return true }
            let available = stream.hasBytesAvailable
            if !available {
                noteStatus()
                // Said to have bytes, the stream is read, and its end short of the length fails that read.
                if endedShort, stream.streamStatus != .error { return true }
            }
            return available
        }

        override var streamStatus: Stream.Status {
            stream.streamStatus
        }
    }
#endif
