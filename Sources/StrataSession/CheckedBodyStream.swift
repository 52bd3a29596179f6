import Foundation
import StrataCore

#if canImport(FoundationNetworking)

    /// A body stream of the caller's as `URLSessionTransport` hands it to FoundationNetworking: the same
    /// bytes, and a note of whether the stream failed as it was read.
    ///
    /// FoundationNetworking takes a stream that says it has no bytes available for one that has ended,
    /// and a stream that could not be opened (a file that is not there) says so: the request went with
    /// an empty body, and its answer came back as a success. A read that fails is reported as an error
    /// of the transfer, with nothing to say it was the body's. With this wrapper the transport ends
    /// either with ``/StrataCore/RequestValidationError/unreadableBodyStream``.
    ///
    /// Its `streamError` is never read (reading one traps on Linux); the wrapped stream's status says
    /// whether it failed.
    final class CheckedBodyStream: InputStream {
        private let stream: InputStream
        /// Whether the stream failed to open or to read: for the session's delegate to read as the
        /// task completes (the stream itself is not `Sendable`).
        let failed = Locked(false)

        init(_ stream: InputStream) {
            self.stream = stream
            super.init(data: Data())
        }

        /// Notes a failure if the wrapped stream is in error.
        private func noteStatus() {
            if stream.streamStatus == .error {
                failed.withLock { $0 = true }
            }
        }

        override func open() {
            stream.open()
            noteStatus()
        }

        override func close() {
            stream.close()
        }

        override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
            let count = stream.read(buffer, maxLength: len)
            if count < 0 {
                failed.withLock { $0 = true }
            }
            return count
        }

        override func getBuffer(
            _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
        ) -> Bool {
            false
        }

        override var hasBytesAvailable: Bool {
            let available = stream.hasBytesAvailable
            if !available {
                noteStatus()
            }
            return available
        }

        override var streamStatus: Stream.Status {
            stream.streamStatus
        }
    }
#endif
