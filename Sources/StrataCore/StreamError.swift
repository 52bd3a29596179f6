import Foundation

/// Why a streamed response ended early, where no transport error says it: a deadline of the
/// stream's own, or a limit that protects the consumer from what a server sends.
///
/// Each leaves what came before intact: the parts, lines or events already delivered stay
/// delivered, and the error is the stream's one end.
public enum StreamError: Error, Hashable, Sendable, LocalizedError, CustomStringConvertible {
    /// No body part arrived within this many seconds of being asked for
    /// (``RequestOptions/streamIdleTimeout``).
    case idleTimeout(TimeInterval)
    /// The stream lasted longer than this many seconds from the request's start
    /// (``RequestOptions/streamDeadline``).
    case deadlineExceeded(TimeInterval)
    /// A line grew past this many bytes without ending.
    case lineTooLong(limit: Int)
    /// A Server-Sent Event grew past this many bytes before its blank line.
    case eventTooLarge(limit: Int)
    /// The consumer fell more than this many bytes behind a transport that cannot hold the server
    /// back (`URLSession`), which would otherwise have kept whatever the server sent in memory
    /// (``RequestOptions/streamBufferLimit``).
    case consumerFellBehind(limit: Int)

    /// A sentence saying what happened.
    public var errorDescription: String? {
        switch self {
        case .idleTimeout(let seconds):
            return "No part of the streamed body arrived within \(seconds) s of being asked for."
        case .deadlineExceeded(let seconds):
            return "The stream lasted longer than its deadline of \(seconds) s."
        case .lineTooLong(let limit):
            return "A line of the streamed body grew past \(limit) bytes without ending."
        case .eventTooLarge(let limit):
            return "A Server-Sent Event grew past \(limit) bytes before it ended."
        case .consumerFellBehind(let limit):
            return "The consumer fell more than \(limit) bytes behind a transport that cannot hold the server back "
                + "(URLSession): read faster, raise RequestOptions.streamBufferLimit, or use a transport that can."
        }
    }

    /// ``errorDescription``.
    public var description: String { errorDescription ?? "" }
}
