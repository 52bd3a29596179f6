import Foundation

/// What must never be shown — in logs, in cURL commands, in descriptions of errors and responses —
/// and what must never follow a redirect to another origin: header values and query values that
/// carry credentials.
///
/// Header names, query keys and body fields compare without case. The defaults cover
/// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`; every header, query key and
/// body field named as a credential in any spelling (`X-Api-Key`, `X-Auth-Token`,
/// `X-Amz-Signature`, `accessToken`, `new_password`: see ``namesACredential(_:)``); and the usual
/// secret names (``secretFieldNames``, ``secretQueryKeys``). Add the names your API uses for
/// secrets that read as nothing of the kind:
///
/// ```swift
/// let redaction = Redaction(extraHeaderNames: ["X-Partner-Id"], queryKeys: ["otp"])
/// Redaction.standard = redaction  // at start-up: descriptions, loggers and session managers use it
/// ```
public struct Redaction: Hashable, Sendable {
    /// Header names whose values are always replaced, and never sent to another origin.
    public static let credentialHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie",
    ]

    /// Names of query keys and body fields that usually hold secrets: `password`, `secret`,
    /// `client_secret`, `token`, `access_token`, `refresh_token`, `id_token`, `api_key`, `apikey`.
    public static let secretFieldNames: Set<String> = [
        "password", "passwd", "secret", "client_secret", "token", "access_token", "refresh_token", "id_token",
        "api_key", "apikey",
    ]

    /// Query keys that usually hold secrets: the ``secretFieldNames`` and `key` (an API key, as
    /// Google's APIs name it).
    public static let secretQueryKeys: Set<String> = secretFieldNames.union(["key"])

    /// Header names (lowercased) whose values are replaced.
    public let headerNames: Set<String>
    /// Query keys (lowercased) whose values are replaced, beside those named as a credential
    /// (``namesACredential(_:)``).
    public let queryKeys: Set<String>
    /// Body fields (lowercased) — JSON members, form and multipart fields, XML elements and
    /// attributes — whose values are replaced, at any depth, beside those named as a credential
    /// (``namesACredential(_:)``). Fields named like a covered header are replaced too (an echoed
    /// `authorization`, say).
    public let bodyFields: Set<String>
    /// What a redacted value is replaced by.
    public let placeholder: String

    /// Creates a redaction policy that covers the credential headers, the usual secret field names in
    /// queries and bodies, and the given names, keys and fields.
    public init(
        extraHeaderNames: Set<String> = [],
        queryKeys: Set<String> = [],
        bodyFields: Set<String> = [],
        placeholder: String = "<redacted>"
    ) {
        self.headerNames = Self.credentialHeaderNames.union(extraHeaderNames.map { $0.lowercased() })
        self.queryKeys = Self.secretQueryKeys.union(queryKeys.map { $0.lowercased() })
        self.bodyFields = Self.secretFieldNames.union(bodyFields.map { $0.lowercased() })
        self.placeholder = placeholder
    }

    /// The policy of the process: what descriptions of Strata's errors and responses hide, and the
    /// default of `ConsoleNetworkLogger` and `URLSessionManager` (which removes
    /// its header names from redirects to other origins). Set it once at start-up, before creating
    /// loggers and session managers; reading and setting it are thread-safe.
    public static var standard: Redaction {
        get { standardPolicy.value }
        set { standardPolicy.withLock { $0 = newValue } }
    }

    /// Whether the value of header `name` is hidden: a name in ``headerNames``, or one named as a
    /// credential (``namesACredential(_:)``).
    public func hidesHeader(named name: String) -> Bool {
        headerNames.contains(name.lowercased()) || Self.namesACredential(name)
    }

    /// Whether a name — of a header, a query key or a body field — reads as a credential's whatever
    /// the API: one of its words (split at `-`, `_` and `.` and where camel case starts a word,
    /// without case) is `token`, `secret`, `password`, `passwd`, `pwd`, `passphrase`, `apikey`,
    /// `auth`, `authorization`, `credential`, `credentials`, `cookie`, `session`, `signature` or
    /// `sig`, or two words in a row are `api key`, `access key`, `secret key`, `private key` or
    /// `subscription key`. So `X-Api-Key`, `X-Auth-Token`, `X-Amz-Security-Token`,
    /// `X-Amz-Signature`, `Ocp-Apim-Subscription-Key`, `X-Session-Id`, `accessToken` and
    /// `newPassword` are hidden, and never follow a redirect to another origin, without being
    /// named; `X-Request-Id`, `X-Tokenizer`, `tokens_used` and `passwordless` are not.
    public static func namesACredential(_ name: String) -> Bool {
        // Read as bytes, word by word, with no string made: every header of every request that
        // an adapter changes, or a logger writes, is asked about.
        var previous: Range<Int> = 0..<0
        var start = 0
        return name.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            for end in 0...bytes.count where startsWord(at: end, in: bytes) {
                if end > start {
                    let word = start..<end
                    if credentialWords.contains(where: { equals(bytes[word], $0) })
                        || (equals(bytes[word], key) && keyQualifiers.contains { equals(bytes[previous], $0) })
                    {
                        return true
                    }
                    previous = word
                }
                start = end < bytes.count && isSeparator(bytes[end]) ? end + 1 : end
            }
            return false
        } ?? namesACredential(String(decoding: Array(name.utf8), as: UTF8.self))
    }

    /// Whether a word of `bytes` ends before `index`: at the end, at a separator, or where camel
    /// case starts the next word (`accessToken`, `IDToken`, `APIKey`).
    private static func startsWord(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard index < bytes.count else { return true }
        let byte = bytes[index]
        guard !isSeparator(byte) else { return true }
        guard isUppercase(byte), index > 0 else { return false }
        let before = bytes[index - 1]
        return isLowercase(before) || isDigit(before)
            || (isUppercase(before) && index + 1 < bytes.count && isLowercase(bytes[index + 1]))
    }

    private static func isSeparator(_ byte: UInt8) -> Bool { byte == .hyphen || byte == .underscore || byte == .dot }
    private static func isUppercase(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) }
    private static func isLowercase(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// Whether `word` is `lowercase`, ASCII letters compared without case.
    private static func equals(_ word: Slice<UnsafeBufferPointer<UInt8>>, _ lowercase: [UInt8]) -> Bool {
        word.count == lowercase.count && zip(word, lowercase).allSatisfy { $0 | 0x20 == $1 }
    }

    /// The words that make a name a credential's wherever they stand in it.
    private static let credentialWords: [[UInt8]] = [
        "token", "secret", "password", "passwd", "pwd", "passphrase", "apikey", "auth", "authorization", "credential",
        "credentials", "cookie", "session", "signature", "sig",
    ].map { Array($0.utf8) }

    /// `key`, a credential after one of ``keyQualifiers``.
    private static let key = Array("key".utf8)

    /// The words that make a `key` after them a credential.
    private static let keyQualifiers: [[UInt8]] = ["api", "access", "secret", "private", "subscription"].map {
        Array($0.utf8)
    }

    /// Whether a body field (a JSON member, a form or multipart field, an XML element or attribute)
    /// named `name` is hidden: one of ``bodyFields`` or ``headerNames`` (an echoed
    /// `authorization`), or named as a credential (``namesACredential(_:)``); for a nested form name
    /// (`user[password]`), whether any part is.
    public func hidesField(named name: String) -> Bool {
        Self.covers(name) { bodyFields.contains($0) || headerNames.contains($0) }
    }

    /// Whether the value of query key `name` (percent-decoded) is hidden: one of ``queryKeys``, or
    /// named as a credential (``namesACredential(_:)``); for a nested key (`user[token]`), whether
    /// any part is.
    public func hidesQueryKey(named name: String) -> Bool {
        Self.covers(name) { queryKeys.contains($0) }
    }

    /// Whether `name`, or any part of a nested name (`user[token]`, `token[0]`), is one `isKey`
    /// holds (given lowercased) or is named as a credential.
    private static func covers(_ name: String, _ isKey: (String) -> Bool) -> Bool {
        guard !isKey(name.lowercased()), !namesACredential(name) else { return true }
        guard name.utf8.contains(where: { $0 == .openingBracket || $0 == .closingBracket }) else { return false }
        return name.split(whereSeparator: { $0 == "[" || $0 == "]" }).contains { part in
            isKey(part.lowercased()) || namesACredential(String(part))
        }
    }

    /// `headers` with every covered value replaced by the placeholder.
    public func redact(_ headers: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(
            headers.map { field in
                hidesHeader(named: field.name) ? HTTPHeader(name: field.name, value: placeholder) : field
            }
        )
    }

    /// The text of `url` with the values of covered query keys, and any user and password in the
    /// authority, replaced by the placeholder.
    ///
    /// The result is text for a log, not a URL: the placeholder is inserted as it is.
    public func redact(_ url: URL) -> String {
        redact(urlText: url.absoluteString)
    }

    /// `text`, read as a URL as far as it goes, with user information in the authority and the
    /// values of covered keys in the query and the fragment replaced by the placeholder. Works on
    /// text that is not a valid URL, such as one that failed to parse.
    ///
    /// The delimiters are ASCII, so the text is read as UTF-8 bytes, never as characters: every
    /// log line and span of a request goes through here.
    public func redact(urlText text: String) -> String {
        var hidden: [(range: Range<String.Index>, replacement: String)] = []
        var rest = Substring(text)
        if let separator = Self.schemeSeparator(in: rest) {
            rest = rest[separator...]
            let authorityEnd = rest.utf8.firstIndex { $0 == .slash || $0 == .question || $0 == .hash } ?? rest.endIndex
            if let at = rest[..<authorityEnd].utf8.lastIndex(of: .at) {
                hidden.append((rest.startIndex..<at, placeholder))
            }
            rest = rest[authorityEnd...]
        }
        let fragmentStart = rest.utf8.firstIndex(of: .hash)
        let beforeFragment = rest[..<(fragmentStart ?? rest.endIndex)]
        if let queryStart = beforeFragment.utf8.firstIndex(of: .question) {
            // Slices by byte: a character's index would take a combining mark after the `?` with it.
            appendHiddenValues(
                in: beforeFragment[beforeFragment.utf8.index(after: queryStart)...], keys: queryKeys, to: &hidden)
        }
        if let fragmentStart {
            appendHiddenValues(in: rest[rest.utf8.index(after: fragmentStart)...], keys: queryKeys, to: &hidden)
        }
        return Self.replacing(hidden, in: Substring(text))
    }

    /// Where what follows the first `://` of `text` starts.
    private static func schemeSeparator(in text: Substring) -> String.Index? {
        let bytes = text.utf8
        var next = bytes.startIndex
        while let colon = bytes[next...].firstIndex(of: .colon) {
            let after = bytes.index(after: colon)
            if bytes[after...].starts(with: "//".utf8) {
                return bytes.index(after, offsetBy: 2)
            }
            next = after
        }
        return nil
    }

    /// `key=value` pairs separated by `&`, with the values of covered keys (`keys`, by default the
    /// query keys) replaced. A nested key matches when any part does (`token[0]`, `user[token]`).
    public func redactQuery(_ query: Substring, keys: Set<String>? = nil) -> String {
        var hidden: [(range: Range<String.Index>, replacement: String)] = []
        appendHiddenValues(in: query, keys: keys ?? queryKeys, to: &hidden)
        return Self.replacing(hidden, in: query)
    }

    /// Adds to `hidden`, for each pair of `query` whose key is covered, what follows the key: it
    /// becomes `=` and the placeholder.
    private func appendHiddenValues(
        in query: Substring, keys: Set<String>, to hidden: inout [(range: Range<String.Index>, replacement: String)]
    ) {
        let bytes = query.utf8
        let hiddenValue = "=" + placeholder
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: .ampersand) ?? bytes.endIndex
            let nameEnd = bytes[start..<end].firstIndex(of: .equals) ?? end
            let name = query[start..<nameEnd]
            let decoded =
                name.utf8.contains(.percent) ? String(name).removingPercentEncoding ?? String(name) : String(name)
            if Self.covers(decoded, { keys.contains($0) }) {
                hidden.append((nameEnd..<end, hiddenValue))
            }
            guard end < bytes.endIndex else { return }
            start = bytes.index(after: end)
        }
    }

    /// `text` with each range of `hidden` (in order, apart) replaced; `text` itself if there is none.
    private static func replacing(
        _ hidden: [(range: Range<String.Index>, replacement: String)], in text: Substring
    ) -> String {
        guard !hidden.isEmpty else { return String(text) }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var kept = text.startIndex
        for (range, replacement) in hidden {
            result += text[kept..<range.lowerBound]
            result += replacement
            kept = range.upperBound
        }
        result += text[kept...]
        return result
    }

    /// `error` with the URL it keeps redacted: its failing URL becomes redacted text, and what else
    /// its user information holds (an underlying error, the URL as a `URL`) is left out, so neither
    /// its description nor its `userInfo` shows a secret query value.
    public func redact(_ error: URLError) -> URLError {
        var userInfo: [String: Any] = [:]
        let failing = error.failingURL?.absoluteString ?? error.userInfo[Self.failingURLStringKey] as? String
        let redacted = failing.map { redact(urlText: $0) }
        if let redacted {
            userInfo[Self.failingURLStringKey] = redacted
        }
        if var message = error.userInfo[NSLocalizedDescriptionKey] as? String {
            if let failing, let redacted {
                message = message.replacingOccurrences(of: failing, with: redacted)
            }
            userInfo[NSLocalizedDescriptionKey] = message
        }
        return URLError(error.code, userInfo: userInfo)
    }

    /// The key of a failing URL as text in an error's user information (`NSURLErrorFailingURLStringErrorKey`,
    /// deprecated in favour of a `URL`, which a redacted URL no longer is).
    package static let failingURLStringKey = "NSErrorFailingURLStringKey"
}

/// ``Redaction/standard``'s storage.
private let standardPolicy = Locked(Redaction())

extension UInt8 {
    fileprivate static let slash = UInt8(ascii: "/")
    fileprivate static let question = UInt8(ascii: "?")
    fileprivate static let hash = UInt8(ascii: "#")
    fileprivate static let at = UInt8(ascii: "@")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let ampersand = UInt8(ascii: "&")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let percent = UInt8(ascii: "%")
    fileprivate static let openingBracket = UInt8(ascii: "[")
    fileprivate static let closingBracket = UInt8(ascii: "]")
    fileprivate static let hyphen = UInt8(ascii: "-")
    fileprivate static let underscore = UInt8(ascii: "_")
    fileprivate static let dot = UInt8(ascii: ".")
}
