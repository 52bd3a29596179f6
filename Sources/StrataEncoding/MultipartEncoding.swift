import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes a `multipart/form-data` body: the parameters as text fields (in sorted key order), then
/// the parts of ``form``.
///
/// A body smaller than ``memoryThreshold`` (10 MB by default) is built in memory. A larger one is
/// streamed to a temporary file, reading file parts in chunks, and the request's body becomes a
/// ``/StrataCore/FileBodyStream`` over it: `URLSessionManager` uploads straight from the file, and
/// the file is deleted once the request is released. `Content-Type` is set if absent and
/// `Content-Length` to the exact size.
///
/// ```swift
/// var form = MultipartFormData()
/// try form.append(fileURL: photoURL, name: "photo")
/// let endpoint = Endpoint<Upload>(
///     path: "photos", method: .post,
///     bodyParameters: ["caption": "Sunset", "public": true],
///     bodyEncoding: MultipartEncoding(form: form)
/// )
/// ```
public struct MultipartEncoding: ParameterEncoding {
    /// 10 MB: bodies of this size and above are streamed to a temporary file.
    public static let defaultMemoryThreshold: UInt64 = 10_000_000

    /// The parts written after the parameters' text fields.
    public var form: MultipartFormData
    /// The size from which the body is streamed to a temporary file instead of built in memory.
    public var memoryThreshold: UInt64
    /// Where temporary body files are written.
    public var temporaryDirectory: URL
    /// The most levels of arrays and objects the parameters may nest. Defaults to
    /// ``/StrataCore/ParameterValue/defaultMaximumDepth``.
    public var maximumDepth: Int

    /// Creates an encoding.
    public init(
        form: MultipartFormData = MultipartFormData(),
        memoryThreshold: UInt64 = MultipartEncoding.defaultMemoryThreshold,
        temporaryDirectory: URL = FileManager.default.temporaryDirectory,
        maximumDepth: Int = ParameterValue.defaultMaximumDepth
    ) {
        self.form = form
        self.memoryThreshold = memoryThreshold
        self.temporaryDirectory = temporaryDirectory
        self.maximumDepth = maximumDepth
    }

    /// `true`: a form with only file parts is still written.
    public var writesBodyWithoutParameters: Bool { true }

    /// `true`: a form over ``memoryThreshold`` is copied into a temporary file, which can take a
    /// while, so it is never built on the caller's thread.
    public var isSlowToEncode: Bool { true }

    /// Returns `request` with the multipart body of `parameters` and ``form``.
    /// - Throws: ``ParameterEncodingError/multipart(_:)`` when a file cannot be read or written, or
    ///   a part header would be invalid; ``ParameterEncodingError/nestingTooDeep(maximum:)``.
    public func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError)
        -> URLRequest
    {
        guard !ParameterValue.object(parameters).nests(deeperThan: maximumDepth) else {
            throw .nestingTooDeep(maximum: maximumDepth)
        }
        var body = MultipartFormData(boundary: form.boundary)
        body.append(parameters)
        body.append(contentsOf: form)
        var request = try request.encodable()
        request.setHeaderField("Content-Type", body.contentType, keepingExisting: true)
        request.setHeaderField("Content-Length", String(body.contentLength))
        do {
            if body.contentLength < memoryThreshold {
                request.httpBody = try body.encoded()
            } else {
                request.httpBodyStream = try stream(body)
            }
        } catch {
            throw .multipart(error)
        }
        return request
    }

    /// Returns `request` with `value`'s members as text fields, then the parts of ``form``.
    /// - Throws: as ``encode(_:with:)``, and when the value cannot be encoded as members.
    public func encode(
        _ request: URLRequest, withEncodable value: any Encodable & Sendable
    )
        throws(ParameterEncodingError) -> URLRequest
    {
        try encode(request, with: ParameterValueEncoder(maximumDepth: maximumDepth).encodeMembers(value))
    }

    private func stream(_ body: MultipartFormData) throws(MultipartError) -> FileBodyStream {
        let url = temporaryDirectory.appendingPathComponent("strata-multipart-\(UUID().uuidString).body")
        do {
            try body.write(to: url)
            return try FileBodyStream(fileURL: url, removesFileOnRelease: true)
        } catch let error as MultipartError {
            try? FileManager.default.removeItem(at: url)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw .unreadableFile(path: url.path, reason: error.localizedDescription)
        }
    }
}
