import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends raw bytes as the body: data in memory, or a file that is uploaded straight from disk
/// (never loaded whole), with upload progress like any other body.
///
/// ```swift
/// Endpoint<Void>(path: "backups/latest", method: .put,
///                bodyEncoding: UploadEncoding.file(backupURL, contentType: "application/gzip"),
///                uploadProgress: { print($0.fractionCompleted) })
/// ```
///
/// `Content-Type` is set only if absent (by default `application/octet-stream`), `Content-Length`
/// to the exact size; parameters, if any, are ignored. The caller's file is never deleted.
public enum UploadEncoding: ParameterEncoding {
    /// These bytes.
    case data(Data, contentType: String = MIMEType.fallback)
    /// The contents of this file.
    case file(URL, contentType: String = MIMEType.fallback)

    /// `true`: the body is written whatever the parameters.
    public var writesBodyWithoutParameters: Bool { true }

    /// Returns `request` with the upload as its body.
    /// - Throws: ``ParameterEncodingError/multipart(_:)`` with ``MultipartError/unreadableFile(path:reason:)``
    ///   when the file's size cannot be read, or it is not a regular file.
    public func encode(
        _ request: URLRequest, with parameters: [String: ParameterValue]
    ) throws(ParameterEncodingError)
        -> URLRequest
    {
        var request = try request.encodable()
        switch self {
        case .data(let data, let contentType):
            request.httpBody = data
            request.setHeaderField("Content-Length", String(data.count))
            setContentType(contentType, on: &request)
        case .file(let url, let contentType):
            do {
                let stream = try FileBodyStream(fileURL: url, removesFileOnRelease: false)
                request.httpBodyStream = stream
                request.setHeaderField("Content-Length", String(stream.length))
            } catch {
                throw .multipart(MultipartError(error))
            }
            setContentType(contentType, on: &request)
        }
        return request
    }

    private func setContentType(_ contentType: String, on request: inout URLRequest) {
        request.setHeaderField("Content-Type", contentType, keepingExisting: true)
    }
}
