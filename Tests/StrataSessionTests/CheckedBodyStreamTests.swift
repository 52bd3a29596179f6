import Foundation
import StrataCore
import Testing

@testable import StrataSession

#if canImport(FoundationNetworking)

    /// The wrapper `URLSessionTransport` puts around a body stream of the caller's on Linux, read as
    /// FoundationNetworking reads it: ask whether bytes are available, then read, until it says none
    /// are or a read returns 0 or fails.
    @Suite struct CheckedBodyStreamTests {
        /// What FoundationNetworking would send of `stream`, read `chunk` bytes at a time, and
        /// whether a read failed.
        private static func drain(_ stream: CheckedBodyStream, chunk: Int = 4) -> (sent: Int, failed: Bool) {
            stream.open()
            defer { stream.close() }
            var buffer = [UInt8](repeating: 0, count: chunk)
            var sent = 0
            while stream.hasBytesAvailable {
                let count = stream.read(&buffer, maxLength: chunk)
                if count < 0 { return (sent, true) }
                if count == 0 { break }
                sent += count
            }
            return (sent, false)
        }

        @Test(arguments: [nil, 10] as [Int64?])
        func aStreamOfItsAnnouncedLengthOrOfNoneGoesWhole(announced: Int64?) {
            let stream = CheckedBodyStream(InputStream(data: Data(count: 10)), announced: announced)
            let (sent, failed) = Self.drain(stream)
            #expect(sent == 10 && !failed)
            #expect(stream.failure.value == nil)
        }

        @Test(arguments: [(9, 10), (10, 1_000), (11, 10), (10_000, 10), (1, 0)] as [(Int64, Int)])
        func aStreamShorterOrLongerThanItsLengthFailsTheRead(announced: Int64, size: Int) {
            let stream = CheckedBodyStream(InputStream(data: Data(count: size)), announced: announced)
            let (sent, failed) = Self.drain(stream)
            #expect(failed)
            // No byte beyond the announced length is handed over.
            #expect(Int64(sent) == min(announced, Int64(size)))
            #expect(stream.failure.value == .bodyStreamLengthMismatch(announced: announced))
        }

        @Test func aReadOfNothingIsNotTakenForTheEnd() {
            let stream = CheckedBodyStream(InputStream(data: Data(count: 3)), announced: 3)
            stream.open()
            var buffer = [UInt8](repeating: 0, count: 3)
            #expect(stream.read(&buffer, maxLength: 0) == 0)
            #expect(stream.read(&buffer, maxLength: 3) == 3)
            #expect(stream.failure.value == nil)
        }

        @Test(arguments: [nil, 10] as [Int64?])
        func aStreamThatCannotBeOpenedIsUnreadable(announced: Int64?) throws {
            let missing = InputStream(url: URL(fileURLWithPath: "/nonexistent/strata-body"))
            let stream = CheckedBodyStream(try #require(missing), announced: announced)
            let (sent, _) = Self.drain(stream)
            #expect(sent == 0)
            #expect(stream.failure.value == .unreadableBodyStream)
        }
    }
#endif
