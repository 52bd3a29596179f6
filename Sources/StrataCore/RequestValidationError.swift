import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a request cannot be sent as it is. Mostly a part of it breaks HTTP's grammar (RFC 9110), so
/// that on the wire it would read as something else — a CR LF in a header ends the header and
/// starts another, or a second request. Strata checks every request before it is sent; nothing
/// invalid leaves.
public enum RequestValidationError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// The method is not a token (RFC 9110 §9.1): empty, or holding a space, a control character or
    /// a separator.
    case invalidMethod(String)
    /// The method is `CONNECT` (in any case of letters), which asks a proxy for a tunnel (RFC 9110
    /// §9.3.6): its target is a host and port, where Strata sends a URL's path, and a server that
    /// grants it turns the connection into the tunnel instead of answering, so no request after it
    /// on that connection would get an answer. Strata sends requests that get responses.
    case tunnelMethod(String)
    /// A header name is not a token (RFC 9110 §5.1).
    case invalidHeaderName(String)
    /// A header value holds CR, LF, NUL or another control character (RFC 9110 §5.5). The value
    /// itself is not kept: it may be a credential.
    case invalidHeaderValue(name: String)
    /// The timeout is not a positive number of seconds (zero, negative, or not a number).
    case invalidTimeout(Double)
    /// The request has no URL (an adapter removed it, say).
    case missingURL
    /// The URL is one the transport cannot send to (see ``HTTPURLCheck``): shown redacted.
    case unsupportedURL(String, reason: UnsupportedURLReason)
    /// A download's destination (this path) is a folder, which a download never replaces.
    case downloadDestinationIsAFolder(String)
    /// A download's destination (this path) is a device, a pipe or a socket — `/dev/null`, say —
    /// which a download never replaces either: it would remove the device (as root, the system's)
    /// and leave a file in its place.
    case downloadDestinationIsNotAFile(String)
    /// An option of the request's (``RequestOptions``, named by `name`) is out of its range: a
    /// stream timeout that is not a positive number of seconds, a stream buffer limit that is not a
    /// positive number of bytes, a negative body length. `value` is the option's, as given.
    case invalidOption(name: String, value: String)
    /// The file a body is uploaded from (this path) cannot be sent as the request announces it:
    /// it is not a regular file (a folder, a device, a pipe), it cannot be read, or its size has
    /// changed since the request was made, so its `Content-Length` would no longer tell where the
    /// body ends. `reason` says which.
    case unusableBodyFile(path: String, reason: String)
    /// The body stream held more or fewer bytes than the `Content-Length` announced for it
    /// (`announced`); the exchange ended before the body was complete. A stream keeps the length a
    /// request announces for it, over either transport (over `URLSession` on Linux, where every
    /// stream goes chunked, the length is checked as the stream is read): announce none for a
    /// stream whose length is not known.
    case bodyStreamLengthMismatch(announced: Int64)
    /// The body stream failed as it was read: it could not be opened (a file that is not there),
    /// or a read returned an error. The body was cut short, so whatever the server answered is
    /// not the answer to the request: the outcome is this error.
    case unreadableBodyStream
    /// The request has a body, and the transport sends none with its method (`method`, as the
    /// request names it); `reason` says which transport and what to do instead. `URLSession` sends
    /// no body with `GET` or `HEAD`.
    case bodyNotSendable(method: String, reason: String)

    /// A sentence saying what is wrong; text is shown escaped, so a control character cannot
    /// break a log line either.
    public var errorDescription: String? {
        switch self {
        case .invalidMethod(let method):
            return "The method \(Self.shown(method)) is not an HTTP token; the request was not sent."
        case .tunnelMethod(let method):
            return "The method \(Self.shown(method)) asks a proxy for a tunnel, whose target is a host and port, "
                + "and turns the connection into the tunnel; Strata sends requests that get responses, so the "
                + "request was not sent."
        case .invalidHeaderName(let name):
            return "The header name \(Self.shown(name)) is not an HTTP token; the request was not sent."
        case .invalidHeaderValue(let name):
            return "The value of header \(Self.shown(name)) holds a control character such as CR, LF or NUL; "
                + "the request was not sent."
        case .invalidTimeout(let seconds):
            return "The timeout \(seconds) is not a positive number of seconds; the request was not sent."
        case .missingURL:
            return "The request has no URL; it was not sent."
        case .unsupportedURL(let url, let reason):
            return "The URL \(Self.shown(url, limit: 200)) cannot be sent: \(reason); the request was not sent."
        case .downloadDestinationIsAFolder(let path):
            return "The download's destination \(Self.shown(path, limit: 200)) is a folder, which a download never "
                + "replaces; name a file in it."
        case .downloadDestinationIsNotAFile(let path):
            return "The download's destination \(Self.shown(path, limit: 200)) is a device, a pipe or a socket, "
                + "which a download never replaces; name a file, or stream the body to discard it."
        case .invalidOption(let name, let value):
            let range =
                switch name {
                case "maximumBodyLength": "zero or more bytes"
                case "streamBufferLimit": "a positive number of bytes"
                default: "a positive number of seconds"
                }
            return "RequestOptions.\(name) is \(value), which is not \(range); the request was not sent."
        case .unusableBodyFile(let path, let reason):
            // The reason may quote the path (the file system's own words): escaped as the path is.
            return "The body's file \(Self.shown(path, limit: 200)) cannot be uploaded: "
                + "\(Self.shown(reason, limit: 300).dropFirst().dropLast()); the request was not sent."
        case .bodyStreamLengthMismatch(let announced):
            return "The body stream held more or fewer bytes than the \(announced) its Content-Length announced; "
                + "the exchange ended before the body was complete. Announce no length for a stream of "
                + "unknown length: it is sent chunked."
        case .unreadableBodyStream:
            return "The body stream could not be read (it failed to open, or a read failed), so the body was "
                + "cut short; the request failed."
        case .bodyNotSendable(let method, let reason):
            return "The \(Self.shown(method)) request has a body, which cannot be sent: \(reason); "
                + "the request was not sent."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }

    /// Why a download must not be placed at `destination`: a folder (or a link to one), whose
    /// contents it would replace, or a device, a pipe or a socket, which is no file to replace.
    /// `nil` when nothing is there, a file, or a link to anything else (the link is replaced; what
    /// it names is left as it is).
    package static func refusingDownload(to destination: URL) -> RequestValidationError? {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: destination.path, isDirectory: &isFolder), isFolder.boolValue {
            return .downloadDestinationIsAFolder(destination.path)
        }
        // What the path itself is (a link is not followed here).
        guard let type = try? manager.attributesOfItem(atPath: destination.path)[.type] as? FileAttributeType,
            type != .typeRegular, type != .typeSymbolicLink
        else { return nil }
        return .downloadDestinationIsNotAFile(destination.path)
    }

    /// `text` quoted with control characters escaped, at most `limit` characters of it.
    static func shown(_ text: String, limit: Int = 64) -> String {
        let escaped = text.prefix(limit).debugDescription
        return text.count > limit ? escaped + "…" : escaped
    }
}

/// The pieces of RFC 9110's grammar a request must satisfy before it is sent.
package enum HTTPGrammar {
    /// Whether `text` is a `token` (§5.6.2): one or more of `tchar`.
    package static func isToken(_ text: String) -> Bool {
        !text.isEmpty && all(of: text) { tokenCharacters[Int($0)] }
    }

    /// Whether `byte` is a `tchar`, a byte of a token.
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        tokenCharacters[Int(byte)]
    }

    /// Whether `text` can stand as a field value (§5.5): no control character but horizontal tab.
    package static func isFieldValue(_ text: String) -> Bool {
        all(of: text) { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    /// Whether a `Content-Length` value (repeated fields arrive joined by commas) is one length, in
    /// decimal digits that fit in 63 bits, perhaps repeated.
    package static func isOneLength(_ value: String) -> Bool {
        let lengths = value.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let first = lengths[0].utf8
        return (1...18).contains(first.count) && first.allSatisfy { (0x30...0x39).contains($0) }
            && lengths.allSatisfy { $0 == lengths[0] }
    }

    /// Whether every UTF-8 byte of `text` passes `test`, read from contiguous storage when the
    /// string has it (every native string does: this runs for every header of every request).
    private static func all(of text: String, _ test: (UInt8) -> Bool) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(test) } ?? text.utf8.allSatisfy(test)
    }

    /// `tchar` by byte: an ASCII letter or digit, or one of ``!#$%&'*+-.^_`|~``.
    private static let tokenCharacters: [Bool] = (0...255).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(UInt8(value))
        }
    }
}

extension HTTPMethod {
    /// Whether the method is a token (RFC 9110 §9.1), so it can be sent.
    public var isValid: Bool { HTTPGrammar.isToken(rawValue) }

    /// Throws unless Strata sends the method: a token (RFC 9110 §9.1), and not `CONNECT` in any
    /// case of letters, which asks for a tunnel rather than a response
    /// (``RequestValidationError/tunnelMethod(_:)``).
    public func validate() throws(RequestValidationError) {
        guard isValid else { throw .invalidMethod(rawValue) }
        // Without its 0x20 bit a lowercase letter is its capital; no other byte of a token becomes
        // one of CONNECT's letters.
        let connect = "CONNECT".utf8
        guard rawValue.utf8.count != connect.count || !rawValue.utf8.elementsEqual(connect, by: { $0 & 0xDF == $1 })
        else { throw .tunnelMethod(rawValue) }
    }
}

extension HTTPHeader {
    /// Throws unless the name is a token and the value holds no control character (RFC 9110 §5).
    public func validate() throws(RequestValidationError) {
        guard HTTPGrammar.isToken(name) else { throw .invalidHeaderName(name) }
        guard HTTPGrammar.isFieldValue(value) else { throw .invalidHeaderValue(name: name) }
    }
}

extension URLRequest {
    /// Throws unless what the request puts on the wire as it is follows HTTP's grammar (RFC 9110):
    /// its method a token, and each header field a token name with a value free of control
    /// characters. A session manager checks every request it hands to a transport; Strata's
    /// transports check again one handed to them directly, where SwiftNIO would trap on a field name
    /// that is not ASCII and either transport would write a method holding CR LF as it is.
    public func validateMethodAndHeaders() throws(RequestValidationError) {
        try HTTPMethod(rawValue: httpMethod ?? HTTPMethod.get.rawValue).validate()
        for (name, value) in allHTTPHeaderFields ?? [:] {
            try HTTPHeader(name: name, value: value).validate()
        }
    }
}
