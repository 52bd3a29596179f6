import Foundation
import MultipartKit
import NIOCore

/// Parses a `multipart/form-data` body with MultipartKit's parser as it arrives, keeping per part
/// its headers, size, CRC-32 and first 64 KiB, so bodies of any size pass in bounded memory. It
/// answers with a ``MultipartEcho`` as JSON, or `400` for a body it cannot parse.
///
/// ```swift
/// router.addStreaming("POST", "/uploads") { MultipartConsumer(contentType: $0.header("Content-Type") ?? "") }
/// ```
public final class MultipartConsumer: BodyConsumer {
    private static let keptBytes = 65_536

    private let parser: MultipartParser?
    private var parts: [MultipartEchoPart] = []
    private var headers: [String: String] = [:]
    private var kept: [UInt8] = []
    private var size = 0
    private var crc = CRC32()
    private var failed = false

    /// A consumer for a body with this `Content-Type` (which carries the boundary).
    public init(contentType: String) {
        parser = StandardRoutes.boundary(of: contentType).map { MultipartParser(boundary: $0) }
        parser?.onHeader = { [unowned self] name, value in headers[name.lowercased()] = value }
        parser?.onBody = { [unowned self] buffer in
            let view = buffer.readableBytesView
            size += view.count
            crc.update(view)
            if kept.count < Self.keptBytes {
                kept += view.prefix(Self.keptBytes - kept.count)
            }
            buffer.moveReaderIndex(forwardBy: view.count)
        }
        parser?.onPartComplete = { [unowned self] in
            let disposition = StandardRoutes.dispositionParameters(headers["content-disposition"] ?? "")
            parts.append(
                MultipartEchoPart(
                    headers: headers,
                    name: disposition["name"],
                    filename: disposition["filename"],
                    contentType: headers["content-type"],
                    size: size,
                    text: String(validating: kept, as: UTF8.self),
                    base64: Data(kept).base64EncodedString(),
                    crc32: crc.value
                )
            )
            headers = [:]
            kept = []
            size = 0
            crc = CRC32()
        }
    }

    /// Parses the next chunk.
    public func consume(_ chunk: ByteBuffer) {
        guard let parser, !failed else { return }
        do {
            try parser.execute(chunk)
        } catch {
            failed = true
        }
    }

    /// The parts, as JSON.
    public func finish() -> TestReply {
        guard parser != nil else { return .json(#"{"error": "no multipart boundary"}"#, status: 400) }
        guard !failed else { return .json(#"{"error": "malformed multipart body"}"#, status: 400) }
        return TestReply.encoded(MultipartEcho(parts: parts))
    }
}
