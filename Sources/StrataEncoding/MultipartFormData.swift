import Foundation
import StrataCore

/// A `multipart/form-data` body (RFC 7578): text fields, data and files, written in memory or
/// streamed to a file without loading file parts whole.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append(["title": "Holiday", "public": true, "rating": 4.5])
/// form.append(Data(thumbnail), name: "thumbnail", fileName: "thumb.png")
/// try form.append(fileURL: videoURL, name: "video")        // type from the extension
/// let endpoint = Endpoint<Upload>(path: "uploads", method: .post, bodyEncoding: MultipartEncoding(form: form))
/// ```
///
/// Field names and file names are quoted; `"`, CR and LF in them are written as `%22`, `%0D` and
/// `%0A`, as the HTML standard's form encoding does (RFC 7578 §4.2 defers to it); other characters,
/// non-ASCII included, are written as UTF-8. A MIME type that is not `type/subtype` (with optional
/// parameters, and no control character) and a boundary that is not 1 to 70 letters, digits and
/// `'+-._` are refused when the body is written, so no part header can be injected.
public struct MultipartFormData: Sendable {
    /// Where a part's bytes come from.
    public enum Body: Hashable, Sendable {
        /// Bytes in memory.
        case data(Data)
        /// A file, read in chunks when the body is written.
        case file(URL, length: UInt64)
    }

    /// One part.
    public struct Part: Hashable, Sendable {
        /// The field name.
        public var name: String
        /// The file name, for file and data parts.
        public var fileName: String?
        /// The part's `Content-Type`; `nil` for text fields.
        public var mimeType: String?
        /// The bytes.
        public var body: Body
    }

    /// The boundary between parts.
    public let boundary: String
    /// The parts, in order.
    public private(set) var parts: [Part] = []
    /// The first value appended that no field can hold (a date outside ISO 8601's years), which
    /// building the body reports.
    private var refusal: MultipartError?

    /// Creates an empty form with `boundary` (by default a random one).
    public init(boundary: String = MultipartFormData.makeBoundary()) {
        self.boundary = boundary
    }

    /// `strata.` followed by 32 random letters and digits, from `SystemRandomNumberGenerator`.
    public static func makeBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return "strata." + String((0..<32).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }

    /// `multipart/form-data; boundary=…`
    public var contentType: String {
        "multipart/form-data; boundary=\(boundary)"
    }

    /// Appends text fields for `value` under `name`: every kind is written, none dropped. Arrays
    /// become `name[]` fields and objects `name[key]` fields (in sorted key order); `.null` is an
    /// empty field; dates are ISO 8601. A date ISO 8601 cannot write, or a number that is not
    /// finite, makes ``encoded()`` and ``write(to:)`` throw. Walked without recursion, so a value
    /// of any depth is safe here (``MultipartEncoding`` refuses one deeper than its `maximumDepth`
    /// before).
    public mutating func append(_ value: ParameterValue, name: String) {
        // Depth first with a stack; `path` holds the name's pieces down to the value at hand, and a
        // field's name is joined from it only when the field is written.
        var path = [name]
        var pending: [(value: ParameterValue, suffix: String?, level: Int)] = [(value, nil, 1)]
        while let (value, suffix, level) = pending.popLast() {
            path.removeSubrange(level...)
            if let suffix { path.append(suffix) }
            switch value {
            case .array(let elements):
                pending += elements.reversed().lazy.map { ($0, "[]", path.count) }
            case .object(let members):
                pending += members.sorted { $0.key > $1.key }.lazy.map { ($0.value, "[\($0.key)]", path.count) }
            case .string(let text): appendText(text, name: path.joined())
            case .int(let number): appendText(String(number), name: path.joined())
            case .double(let number):
                guard number.isFinite else {
                    refusal = refusal ?? .unwritableNumber(name: path.joined(), value: number.description)
                    continue
                }
                appendText(String(number), name: path.joined())
            case .bool(let flag): appendText(flag ? "true" : "false", name: path.joined())
            case .date(let date):
                guard URLEncodedFormEncoder.DateEncoding.iso8601Range.contains(date.timeIntervalSince1970) else {
                    refusal =
                        refusal ?? .unwritableDate(name: path.joined(), secondsSince1970: date.timeIntervalSince1970)
                    continue
                }
                appendText(date.formatted(.iso8601), name: path.joined())
            case .null: appendText("", name: path.joined())
            }
        }
    }

    /// Appends a text field for each parameter, in sorted key order.
    public mutating func append(_ parameters: [String: ParameterValue]) {
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) {
            append(value, name: name)
        }
    }

    /// Appends bytes as a file part. The MIME type defaults to the file name's extension's.
    public mutating func append(_ data: Data, name: String, fileName: String, mimeType: String? = nil) {
        let type = mimeType ?? MIMEType.forPathExtension((fileName as NSString).pathExtension)
        parts.append(Part(name: name, fileName: fileName, mimeType: type, body: .data(data)))
    }

    /// Appends a file part, read in chunks when the body is written. The file name defaults to the
    /// file's, the MIME type to its extension's.
    /// - Throws: ``MultipartError/unreadableFile(path:reason:)`` when the file's size cannot be read,
    ///   or it is not a regular file (a folder, a device, a pipe: none has a length to frame).
    public mutating func append(
        fileURL: URL, name: String, fileName: String? = nil, mimeType: String? = nil
    )
        throws(MultipartError)
    {
        let length: UInt64
        do {
            length = try FileBodyStream.regularFileLength(at: fileURL)
        } catch {
            throw MultipartError(error)
        }
        let type = mimeType ?? MIMEType.forPathExtension(fileURL.pathExtension)
        parts.append(
            Part(
                name: name, fileName: fileName ?? fileURL.lastPathComponent, mimeType: type,
                body: .file(fileURL, length: length)))
    }

    /// Appends every part of `other`, in order (its boundary is not used).
    public mutating func append(contentsOf other: MultipartFormData) {
        parts += other.parts
    }

    private mutating func appendText(_ text: String, name: String) {
        parts.append(Part(name: name, fileName: nil, mimeType: nil, body: .data(Data(text.utf8))))
    }

    /// The body's length in bytes.
    public var contentLength: UInt64 {
        parts.reduce(UInt64(closingDelimiter.count)) { total, part in
            let bodyLength: UInt64
            switch part.body {
            case .data(let data): bodyLength = UInt64(data.count)
            case .file(_, let length): bodyLength = length
            }
            return total + UInt64(header(of: part).count) + bodyLength + 2
        }
    }

    /// The whole body in memory. Files are read whole: use ``write(to:)`` for large ones.
    /// - Throws: ``MultipartError`` when a file cannot be read or a part holds the boundary
    ///   delimiter (``MultipartError/boundaryInPart(name:)``).
    public func encoded() throws(MultipartError) -> Data {
        var data = Data()
        data.reserveCapacity(Int(clamping: contentLength))
        try write { data.append($0) }
        return data
    }

    /// Writes the body to a new file at `url`, reading file parts in 1 MiB chunks.
    /// - Throws: ``MultipartError`` when a file cannot be read, a part holds the boundary
    ///   delimiter or the output cannot be written; the file is removed then.
    public func write(to url: URL) throws(MultipartError) {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw .unwritableFile(path: url.path, reason: "the file could not be created")
        }
        let output: FileHandle
        do {
            output = try FileHandle(forWritingTo: url)
        } catch {
            throw .unwritableFile(path: url.path, reason: error.localizedDescription)
        }
        defer { try? output.close() }
        do {
            try write { chunk throws(MultipartError) in
                do {
                    try output.write(contentsOf: chunk)
                } catch {
                    throw .unwritableFile(path: url.path, reason: error.localizedDescription)
                }
            }
        } catch {
            // No half-written body is left to be taken for a whole one.
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }

    /// Hands the body to `sink` in pieces: part headers, part bodies (files in 1 MiB chunks), delimiters.
    /// Each part's content is searched for the line that would start a part as it goes by.
    private func write(_ sink: (Data) throws(MultipartError) -> Void) throws(MultipartError) {
        try validateHeaders()
        var search = PartDelimiterSearch(boundary: boundary)
        for part in parts {
            try sink(header(of: part))
            search.startPart()
            func content(_ chunk: Data) throws(MultipartError) {
                if search.finds(in: chunk) { throw .boundaryInPart(name: part.name) }
                try sink(chunk)
            }
            switch part.body {
            case .data(let data):
                try content(data)
            case .file(let url, let length):
                try copy(url, expectedLength: length, to: content)
            }
            try sink(Data("\r\n".utf8))
        }
        try sink(closingDelimiter)
    }

    private func copy(
        _ url: URL, expectedLength: UInt64, to sink: (Data) throws(MultipartError) -> Void
    ) throws(MultipartError) {
        let input: FileHandle
        do {
            input = try FileHandle(forReadingFrom: url)
        } catch {
            throw .unreadableFile(path: url.path, reason: error.localizedDescription)
        }
        defer { try? input.close() }
        var copied: UInt64 = 0
        while true {
            let chunk: Data?
            do {
                chunk = try input.read(upToCount: 1_048_576)
            } catch {
                throw .unreadableFile(path: url.path, reason: error.localizedDescription)
            }
            guard let chunk, !chunk.isEmpty else { break }
            copied += UInt64(chunk.count)
            guard copied <= expectedLength else { break }
            try sink(chunk)
        }
        guard copied == expectedLength else {
            throw .unreadableFile(path: url.path, reason: "its size changed from \(expectedLength) to \(copied) bytes")
        }
    }

    private func header(of part: Part) -> Data {
        var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(part.name))\""
        if let fileName = part.fileName {
            header += "; filename=\"\(Self.escape(fileName))\""
        }
        header += "\r\n"
        if let mimeType = part.mimeType {
            header += "Content-Type: \(mimeType)\r\n"
        }
        return Data((header + "\r\n").utf8)
    }

    private var closingDelimiter: Data {
        Data("--\(boundary)--\r\n".utf8)
    }

    /// Throws unless the boundary and every part's MIME type can stand in a header as they are, and
    /// every value appended could be written.
    private func validateHeaders() throws(MultipartError) {
        if let refusal { throw refusal }
        let boundaryCharacters = "'+-._"
        guard (1...70).contains(boundary.utf8.count),
            boundary.unicodeScalars.allSatisfy({
                ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
                    || boundaryCharacters.unicodeScalars.contains($0)
            })
        else { throw .invalidBoundary(boundary) }
        for case let type? in parts.map(\.mimeType) {
            let essence = type.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
            let pieces = essence.split(separator: "/", omittingEmptySubsequences: false)
            guard HTTPGrammar.isFieldValue(type), pieces.count == 2,
                pieces.allSatisfy({ HTTPGrammar.isToken(String($0)) })
            else { throw .invalidMIMEType(type) }
        }
    }

    /// `"`, CR and LF as `%22`, `%0D`, `%0A` (HTML form encoding, per RFC 7578 §4.2).
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

/// Why a multipart body could not be built.
public enum MultipartError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// A file part's file, or an upload's (``UploadEncoding/file(_:contentType:)``), could not be read.
    case unreadableFile(path: String, reason: String)
    /// The body could not be written to a file.
    case unwritableFile(path: String, reason: String)
    /// A part's MIME type is not `type/subtype` with optional parameters, or holds a control
    /// character (which would end its header line and start another).
    case invalidMIMEType(String)
    /// The boundary is not 1 to 70 ASCII letters, digits and `'+-._`.
    case invalidBoundary(String)
    /// A date appended as a field is not one of the years 0001 to 9999 that ISO 8601 writes (or
    /// not a number of seconds at all).
    case unwritableDate(name: String, secondsSince1970: Double)
    /// A number appended as a field is not finite (`nan`, `inf`), which no server reads as a number.
    case unwritableNumber(name: String, value: String)
    /// The content of the part `name` holds the line that starts a part — CR LF, `--` and the
    /// boundary (RFC 2046 §5.1.1) — so a server would end the part there and read what follows
    /// as parts of the content's choosing. Only a boundary of the caller's own can meet its
    /// content: the default one is random.
    case boundaryInPart(name: String)

    /// The refusal of a file as a body (``FileBodyStream/regularFileLength(at:)``), as a part's.
    init(_ refusal: RequestValidationError) {
        guard case .unusableBodyFile(let path, let reason) = refusal else {
            self = .unreadableFile(path: "", reason: refusal.description)
            return
        }
        self = .unreadableFile(path: path, reason: reason)
    }

    /// A sentence saying what was wrong.
    public var errorDescription: String? {
        switch self {
        case .unreadableFile(let path, let reason):
            return "The file \(path) could not be read for a request body: \(reason)"
        case .unwritableFile(let path, let reason):
            return "The multipart body could not be written to \(path): \(reason)"
        case .invalidMIMEType(let type):
            return "The MIME type \(type.debugDescription) of a multipart part is not a valid media type."
        case .invalidBoundary(let boundary):
            return "The multipart boundary \(boundary.debugDescription) is not 1 to 70 letters, digits and '+-._."
        case .unwritableDate(let name, let seconds):
            return "The date of field \(name.debugDescription), \(seconds) seconds from 1970, lies outside the years "
                + "0001 to 9999 that ISO 8601 writes."
        case .unwritableNumber(let name, let value):
            return "The number of field \(name.debugDescription), \(value), is not finite, so has no text a server "
                + "reads as a number."
        case .boundaryInPart(let name):
            return "The content of multipart part \(name.debugDescription) holds a line that starts a new part "
                + "(CR LF, \"--\" and the boundary); use a boundary that does not occur in the content."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}

/// Finds the line that starts a part — CR LF, `--`, the boundary — in a part's content as it is
/// written, across the chunks it is written in.
struct PartDelimiterSearch {
    private let delimiter: [UInt8]
    /// The part's last bytes so far, fewer than the delimiter's: the start of one that the next
    /// chunk may end.
    private var tail: [UInt8] = []

    init(boundary: String) {
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// A part's content starts after the CR LF that ends its header, which a delimiter may begin with.
    mutating func startPart() {
        tail = [0x0D, 0x0A]
    }

    /// Whether the delimiter ends within `chunk`, the part's next bytes.
    mutating func finds(in chunk: Data) -> Bool {
        chunk.withUnsafeBytes { bytes in
            let kept = delimiter.count - 1
            // One that begins in the tail ends within the chunk's first bytes.
            let joint = tail + bytes.prefix(kept)
            if joint.withUnsafeBytes({ Self.contains(delimiter, in: $0) }) || Self.contains(delimiter, in: bytes) {
                return true
            }
            tail = bytes.count > kept ? Array(bytes.suffix(kept)) : Array(joint.suffix(kept))
            return false
        }
    }

    /// Whether `needle` occurs in `haystack`: each first byte found by `memchr`, then compared.
    private static func contains(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let base = haystack.baseAddress, let first = needle.first, haystack.count >= needle.count else {
            return false
        }
        let lastStart = haystack.count - needle.count
        var offset = 0
        while offset <= lastStart {
            guard let found = memchr(base + offset, Int32(first), lastStart - offset + 1) else { return false }
            let start = base.distance(to: UnsafeRawPointer(found))
            if memcmp(base + start, needle, needle.count) == 0 { return true }
            offset = start + 1
        }
        return false
    }
}
