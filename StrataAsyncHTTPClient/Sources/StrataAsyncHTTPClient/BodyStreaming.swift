import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix
import StrataCore

/// Request bodies streamed to AsyncHTTPClient a chunk at a time: each chunk is read on the NIO
/// thread pool (never on an event loop) and the next only after the last was written, so a body of
/// any size costs one chunk of memory.
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
                pump(to: writer, on: loop) { try handle.value.read(upToCount: chunkSize) ?? Data() }
                    .always { _ in
                        try? handle.value.close()
                        withExtendedLifetime(body) {}
                    }
            }
        }
    }

    /// A body read from a stream of the caller's, sent once (`Transfer-Encoding: chunked` unless the
    /// request's `Content-Length` says how long it is).
    static func stream(_ stream: InputStream, length: Int64?) -> HTTPClient.Body {
        let stream = SendableBox(stream)
        return .stream(contentLength: length) { writer in
            let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
            return pump(to: writer, on: loop) {
                let stream = stream.value
                if stream.streamStatus == .notOpen { stream.open() }
                var chunk = [UInt8](repeating: 0, count: chunkSize)
                let count = stream.read(&chunk, maxLength: chunkSize)
                guard count >= 0 else { throw RequestValidationError.unreadableBodyStream }
                return Data(chunk[..<count])
            }.always { _ in stream.value.close() }
        }
    }

    /// Reads a chunk on the thread pool, writes it, and goes on until a read returns nothing.
    private static func pump(
        to writer: HTTPClient.Body.StreamWriter, on loop: any EventLoop, read: @escaping @Sendable () throws -> Data
    ) -> EventLoopFuture<Void> {
        NIOThreadPool.singleton.runIfActive(eventLoop: loop, read).flatMap { chunk in
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
