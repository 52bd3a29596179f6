import AsyncHTTPClient
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOPosix
import StrataCore

/// Request bodies streamed to AsyncHTTPClient a chunk at a time: each chunk is read off the event
/// loops (a file's on SwiftNIO's thread pool, a caller's stream on a queue of its own) and the next
/// only after the last was written, so a body of any size costs one chunk of memory.
enum BodyStreaming {
    /// How much is read at a time.
    static let chunkSize = 256 * 1024

    /// A body read from its file; a retry reads the file again from the start. The file, which a
    /// multipart encoding may delete when its stream is released, is kept until the body is sent.
    static func file(_ file: FileBodyStream) -> HTTPClient.Body {
        let url = file.fileURL
        let body = SendableBox(file)
        return .stream(contentLength: Int64(clamping: file.length)) { writer in
            let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
            return NIOThreadPool.singleton.runIfActive(eventLoop: loop) {
                do {
                    return SendableBox(try FileHandle(forReadingFrom: url))
                } catch {
                    throw URLError(.cannotOpenFile, userInfo: [NSURLErrorFailingURLErrorKey: url])
                }
            }.flatMap { handle in
                pump(to: writer, on: loop) {
                    NIOThreadPool.singleton.runIfActive(eventLoop: loop) {
                        try handle.value.read(upToCount: chunkSize) ?? Data()
                    }
                }
                .always { _ in
                    try? handle.value.close()
                    withExtendedLifetime(body) {}
                }
            }
        }
    }

    /// A body in memory, written a chunk at a time as a file's is: each chunk written is reported
    /// to the upload progress, where AsyncHTTPClient writes such a body in parts of 4 MiB — one
    /// report for most bodies, and none until 4 MiB have gone over a slow network.
    static func data(_ data: Data) -> HTTPClient.Body {
        .stream(contentLength: Int64(data.count)) { writer in
            let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
            // Read by one chunk's pump at a time, each read after the last chunk was written.
            let next = NIOLockedValueBox(data.startIndex)
            return pump(to: writer, on: loop) {
                let chunk = next.withLockedValue { start -> Data in
                    let end = data.index(start, offsetBy: chunkSize, limitedBy: data.endIndex) ?? data.endIndex
                    defer { start = end }
                    return data[start..<end]
                }
                return loop.makeSucceededFuture(chunk)
            }
        }
    }

    /// A body read from a stream of the caller's, sent once (`Transfer-Encoding: chunked` unless the
    /// request's `Content-Length` says how long it is).
    ///
    /// Read on a queue of the stream's own, not on SwiftNIO's thread pool: the caller's stream may
    /// wait for its bytes (a slow producer, a pipe), and a few such streams would hold every thread
    /// of the pool, and so every file upload of the process, for as long as they wait.
    static func stream(_ stream: InputStream, length: Int64?) -> HTTPClient.Body {
        let stream = SendableBox(stream)
        return .stream(contentLength: length) { writer in
            let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
            let queue = DispatchQueue(label: "Strata.AsyncHTTPClientTransport.bodyStream")
            return pump(to: writer, on: loop) {
                let read = loop.makePromise(of: Data.self)
                queue.async {
                    read.completeWith(
                        Result {
                            let stream = stream.value
                            if stream.streamStatus == .notOpen { stream.open() }
                            var chunk = [UInt8](repeating: 0, count: chunkSize)
                            let count = stream.read(&chunk, maxLength: chunkSize)
                            guard count >= 0 else { throw RequestValidationError.unreadableBodyStream }
                            return Data(chunk[..<count])
                        })
                }
                return read.futureResult
            }.always { _ in queue.async { stream.value.close() } }
        }
    }

    /// Reads a chunk (`read`), writes it, and goes on until a read returns nothing.
    private static func pump(
        to writer: HTTPClient.Body.StreamWriter, on loop: any EventLoop,
        read: @escaping @Sendable () -> EventLoopFuture<Data>
    ) -> EventLoopFuture<Void> {
        read().flatMap { chunk in
            guard !chunk.isEmpty else { return loop.makeSucceededVoidFuture() }
            return writer.write(.byteBuffer(ByteBuffer(data: chunk))).flatMap {
                pump(to: writer, on: loop, read: read)
            }
        }
    }
}

/// A value passed between threads that is used by one thread at a time (a file handle read by
/// the thread pool, one read after the other).
struct SendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
