/// The cases of the fault matrix: answers a hostile or broken server gives, each run through every
/// Strata layer by the `FaultProbe` executable in a process of its own, so that a crash is one
/// failed case and not the end of the suite.
///
/// Each must end with a value or a typed error, within its bound, with the completion called
/// exactly once, and the process alive.
public enum FaultCase: String, CaseIterable, Codable, Sendable {
    /// The connection closes before a byte of the response.
    case closeBeforeAnyByte = "close-before-any-byte"
    /// The status line and headers, then a reset before the body.
    case resetBeforeBody = "reset-before-body"
    /// A reset in the middle of the body.
    case resetMidBody = "reset-mid-body"
    /// `Content-Length: 1000`, 10 bytes, then the connection closes.
    case contentLengthLongerThanBody = "content-length-longer"
    /// `Content-Length: 5` and 10 bytes.
    case contentLengthShorterThanBody = "content-length-shorter"
    /// Two `Content-Length` fields that disagree (5 and 10), and 10 bytes.
    case conflictingContentLengths = "conflicting-content-lengths"
    /// A `Content-Length` of 99,999,999,999,999,999,999, beyond any integer, and 2 bytes.
    case hugeContentLength = "huge-content-length"
    /// `Content-Length: -5`.
    case negativeContentLength = "negative-content-length"
    /// `Transfer-Encoding: chunked` and `Content-Length: 3` together, the body chunked (`hello`).
    case chunkedWithContentLength = "chunked-with-content-length"
    /// Two `Content-Length` fields with the same value, which RFC 9110 lets a recipient read as one.
    case repeatedContentLength = "repeated-content-length"
    /// One `Content-Length` field holding a list of the same value (`2, 2`), likewise.
    case contentLengthList = "content-length-list"
    /// A `Content-Length` with a sign (`+2`), which is not a length.
    case signedContentLength = "signed-content-length"
    /// A chunk size larger than any integer.
    case chunkSizeOverflow = "chunk-size-overflow"
    /// A transfer coding nobody knows (`Transfer-Encoding: x-custom`), the body then closed.
    case unknownTransferCoding = "unknown-transfer-coding"
    /// A body in the `gzip` transfer coding, then chunked (`Transfer-Encoding: gzip, chunked`).
    case gzipTransferCoding = "gzip-transfer-coding"
    /// `101 Switching Protocols` to a request that asked for no upgrade, then bytes of another protocol.
    case unaskedSwitchingProtocols = "unasked-switching-protocols"
    /// A status line that is not one.
    case malformedStatusLine = "malformed-status-line"
    /// Bytes with no status line at all, as HTTP/0.9 would answer.
    case http09Garbage = "http09-garbage"
    /// Status 999.
    case status999 = "status-999"
    /// The status line and one field, then the connection closes in order: a head cut short.
    case headCutShort = "head-cut-short"
    /// Status `000`, no body: below every status there is, and not an interim `1xx` either.
    case statusZero = "status-000"
    /// Status `099`, with a chunked body.
    case statusBelow100WithBody = "status-099-with-body"
    /// Status `099`, its body delimited by the connection's close.
    case statusBelow100UntilClose = "status-099-until-close"
    /// A status line with no reason phrase and no space after the code (`HTTP/1.1 200`), as some
    /// small servers write it; RFC 9112 asks for the space.
    case statusWithoutReason = "status-without-reason"
    /// A status line with an empty reason phrase after its space (`HTTP/1.1 200 `): valid.
    case emptyReasonPhrase = "empty-reason-phrase"
    /// A field value with a byte outside ASCII and not UTF-8 (`caf\xE9`, Latin-1): obs-text,
    /// which RFC 9110 allows in a field value.
    case latin1FieldValue = "latin1-field-value"
    /// Lines ended by a bare LF, which RFC 9112 allows a recipient to take for CRLF.
    case bareLFLineEnds = "bare-lf-line-ends"
    /// A field value folded onto a second line (obs-fold), which RFC 9112 tells a user agent to
    /// read as one space, or to reject.
    case obsFoldedField = "obs-folded-field"
    /// Whitespace between a field name and its colon (`X-Spaced : yes`), which RFC 9112 forbids.
    case spaceBeforeColon = "space-before-colon"
    /// `100 Continue`, then nothing, with the connection open.
    case continueThenNothing = "continue-then-nothing"
    /// A `413` as soon as the head of an 8 MiB POST arrives, the body then read and dropped, as
    /// nginx answers a body over its limit.
    case answerBeforeBody = "answer-before-body"
    /// A `413` as soon as the head of an 8 MiB POST arrives, then the connection closed with the
    /// body unread, which the client sees as a reset, perhaps before it reads the answer.
    case closeWithBodyUnread = "close-with-body-unread"
    /// `103 Early Hints` (with a `Link` field), then the answer: the hints are not the answer.
    case earlyHintsThenAnswer = "early-hints-then-answer"
    /// Two `100 Continue` heads to a GET that did not ask for one, then the answer.
    case unaskedContinuesThenAnswer = "unasked-continues-then-answer"
    /// HTTP/1.0 with no `Content-Length`, part of the body, then a reset instead of a close: the
    /// body does not end at a reset.
    case closeDelimitedBodyReset = "close-delimited-body-reset"
    /// A chunk size that is not hexadecimal.
    case badChunkSize = "bad-chunk-size"
    /// HTTP/1.0 with no `Content-Length`: the body ends where the server closes the connection
    /// (RFC 9112, 6.3). Valid, and the answer of many small servers.
    case closeDelimitedBody = "close-delimited-body"
    /// A chunked body whose chunk sizes carry extensions (`5;name=value`), which a client ignores.
    case chunkExtensions = "chunk-extensions"
    /// A chunked body followed by a trailer field (`Trailer: X-Checksum`), which a client may
    /// drop; sent unasked, as some servers do.
    case chunkedWithTrailers = "chunked-with-trailers"
    /// A download (its body to a file) whose `Content-Length` is longer than the body sent before
    /// the close: it fails, and leaves no file.
    case downloadCutShort = "download-cut-short"
    /// A download reset in the middle of its body: it fails, and leaves no file.
    case downloadResetMidBody = "download-reset-mid-body"
    /// A download cancelled by its caller in the middle of its body: it ends cancelled, once, and
    /// leaves no file.
    case downloadCancelledMidBody = "download-cancelled-mid-body"
    /// A download answered `404` with a page of its own: it fails with the status, and leaves no file.
    case downloadNotFound = "download-not-found"
    /// A download of HTTP/1.0 with no `Content-Length`, its body ended by the close: the file holds it.
    case downloadCloseDelimited = "download-close-delimited"
    /// The request is read and never answered.
    case neverAnswers = "never-answers"
    /// A body dripped a byte every 100 ms, forever.
    case slowDrip = "slow-drip"
    /// 1 MB of header lines.
    case megabyteOfHeaders = "megabyte-of-headers"
    /// 20,000 short header lines (250 KB, under libcurl's limit for a head), which
    /// FoundationNetworking takes some seconds to parse.
    case headerLineFlood = "header-line-flood"
    /// `Content-Encoding: gzip` over bytes that are not gzip.
    case invalidGzip = "invalid-gzip"
    /// A gzip body cut in the middle of its compressed data, its `Content-Length` that of the cut:
    /// nothing on the wire is missing, but the content is.
    case gzipCutShort = "gzip-cut-short"
    /// A brotli body cut in the middle of its compressed data, its `Content-Length` that of the
    /// cut.
    case brotliCutShort = "brotli-cut-short"
    /// A gzip body whose compressed data is whole, without its trailer (the CRC and length).
    case gzipWithoutTrailer = "gzip-without-trailer"
    /// A whole gzip body followed by bytes that are not gzip, all within its `Content-Length`.
    case gzipThenGarbage = "gzip-then-garbage"
    /// A JSON body that is not JSON.
    case invalidJSON = "invalid-json"
    /// JSON arrays nested 100,000 deep.
    case deepJSON = "deep-json"
    /// An XML body that is not well-formed.
    case invalidXML = "invalid-xml"
    /// XML elements nested 100,000 deep.
    case deepXML = "deep-xml"
    /// Entities that expand a billion times ("billion laughs").
    case entityExpansion = "entity-expansion"
    /// An external entity naming a local file.
    case externalEntity = "external-entity"
    /// A redirect to a `file:` URL.
    case redirectToFile = "redirect-to-file"
    /// A redirect to an `ftp:` URL.
    case redirectToFTP = "redirect-to-ftp"
    /// A `Location` that is not a URL.
    case invalidLocation = "invalid-location"
    /// A redirect back to the same URL.
    case redirectLoop = "redirect-loop"
    /// A redirect from `https` down to `http`.
    case downgrade = "downgrade"
    /// A protocol-relative `Location` whose host is percent-encoded (`//ex%20ample.com/`), which
    /// FoundationNetworking turns into no URL and traps on, before any delegate is asked.
    case unparsableRedirectHost = "unparsable-redirect-host"
    /// A redirect to a port above 65535, which `URL` accepts and SwiftNIO traps on.
    case redirectToPortOutOfRange = "redirect-to-port-99999"
    /// A redirect to an IPv6 address with a zone (`[fe80::1%25eth0]`).
    case redirectToZoneIdentifier = "redirect-to-zone-id"
    /// A redirect to an empty bracketed host (`http://[]/`).
    case redirectToEmptyHost = "redirect-to-empty-host"
    /// A redirect to a host holding a percent-encoded NUL, which would cut it short in the resolver.
    case redirectToNULHost = "redirect-to-nul-host"
    /// A redirect to an IPvFuture literal (`[v1.…]`), which no transport connects to.
    case redirectToIPvFuture = "redirect-to-ipvfuture"

    /// A Server-Sent Events stream cut in the middle of its second event.
    case streamCutMidEvent = "stream-cut-mid-event"
    /// An event stream whose one line never ends: bytes without a line feed, as long as they are read.
    case streamEndlessLine = "stream-endless-line"
    /// An event stream of `data` lines with no blank line, so the event never ends.
    case streamEndlessEvent = "stream-endless-event"
    /// An event stream that sends a byte a second.
    case streamTrickle = "stream-trickle"
    /// An event stream's head, then silence with the connection open.
    case streamSilentAfterHead = "stream-silent-after-head"
    /// An event stream that never ends, of events as fast as they are read.
    case streamEndless = "stream-endless"
    /// A JSON Lines body whose second line is not a value.
    case streamInvalidJSONLine = "stream-invalid-json-line"
    /// An event stream of large events sent as fast as the connection takes them, to a consumer
    /// that takes a millisecond over each.
    case streamFloodToSlowConsumer = "stream-flood-to-slow-consumer"
    /// An event stream announcing `Content-Length: 100000`, two events, then the connection closed:
    /// a body cut short, which must not read as its end.
    case streamShorterThanItsLength = "stream-shorter-than-its-length"
    /// A chunked event stream: a chunk with an event, then, 100 ms later, a chunk size that is not
    /// hexadecimal.
    case streamBadChunkAfterAnEvent = "stream-bad-chunk-after-an-event"
    /// A chunked event stream cut between two chunks, without the last chunk: a clean close that
    /// is not the body's end.
    case streamChunkedWithoutItsLastChunk = "stream-chunked-without-its-last-chunk"
    /// An event stream with `Content-Encoding: gzip` over bytes that are not gzip.
    case streamInvalidGzip = "stream-invalid-gzip"
    /// An event stream of 5,000 events sent in chunks of one byte each (six bytes on the wire for
    /// each byte of the body), so that every event is split at every byte.
    case streamOneByteChunks = "stream-one-byte-chunks"

    /// Whether the case is known to lose content over URLSession on Linux, where Strata cannot
    /// tell: libcurl decodes a gzip or brotli body without checking that its stream ended, and
    /// hands over only what it decoded.
    public var losesContentOverFoundationNetworking: Bool {
        self == .gzipCutShort || self == .brotliCutShort
    }

    /// Whether the case is known to crash over URLSession on Linux, where Strata cannot step in.
    public var crashesFoundationNetworking: Bool {
        self == .unparsableRedirectHost || self == .chunkedWithTrailers || self == .headCutShort
    }
}

/// What the `FaultProbe` executable reports for one case, as a line of JSON on its standard output.
public struct FaultReport: Codable, Sendable {
    /// The case.
    public var fault: FaultCase
    /// How the request ended: `value`, or the error's kind (`transport`, `timedOut`, `parsing`,
    /// `status 999`, `redirect.loop`, …).
    public var outcome: String
    /// How long it took.
    public var elapsedMilliseconds: Int
    /// How many times the completion ran.
    public var calls: Int
    /// How long it may take.
    public var boundMilliseconds: Int
    /// What was wrong, empty when nothing was.
    public var problems: [String]

    /// Creates a report.
    public init(
        fault: FaultCase, outcome: String, elapsedMilliseconds: Int, calls: Int, boundMilliseconds: Int,
        problems: [String]
    ) {
        self.fault = fault
        self.outcome = outcome
        self.elapsedMilliseconds = elapsedMilliseconds
        self.calls = calls
        self.boundMilliseconds = boundMilliseconds
        self.problems = problems
    }
}
