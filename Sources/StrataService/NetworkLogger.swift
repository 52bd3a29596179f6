import Foundation
import StrataCore
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How much a ``ConsoleNetworkLogger`` writes.
public enum NetworkLogLevel: Int, Comparable, Sendable {
    /// Failures only, one line each.
    case error
    /// A line per request and per outcome.
    case info
    /// Also headers.
    case debug
    /// Also bodies (JSON, form, multipart and XML with secret fields redacted; others summarized)
    /// and a cURL command per request.
    case verbose

    /// Orders levels from the least to the most verbose.
    public static func < (lhs: NetworkLogLevel, rhs: NetworkLogLevel) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

/// An event monitor that writes each request as it goes on the wire and its outcome, with
/// credentials redacted at every level.
///
/// Add it to a session manager: it then sees every request after the adapters ran — the
/// `Authorization` and `User-Agent` they add included, redacted — each retry and redirect, and the
/// outcome the caller gets. Logging is off unless a logger is added.
///
/// Header values of `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and the names
/// in ``redaction``, query values and body fields with secret names (`password`, `token`,
/// `access_token`, …, and yours) in JSON, form, multipart and XML bodies, and any user or password
/// in the URL are replaced by a placeholder. Any other body (plain text, HTML, binary, or one that
/// does not parse as its type says) is written as its type and size only; see
/// `Redaction.redact(body:contentType:)`.
///
/// ```swift
/// let logger = ConsoleNetworkLogger(level: .verbose, redaction: Redaction(extraHeaderNames: ["X-Partner-Id"]))
/// let manager = SessionManager(monitors: [logger])
/// ```
///
/// Lines are written from the manager's event queue (see `EventMonitor`).
public struct ConsoleNetworkLogger: EventMonitor {
    /// How much is written.
    public var level: NetworkLogLevel
    /// What is hidden.
    public var redaction: Redaction
    /// The most body bytes written per message.
    public var maximumBodyLength: Int
    /// Where lines go; by default, standard error.
    public var output: @Sendable (String) -> Void

    /// Creates a logger.
    public init(
        level: NetworkLogLevel = .info,
        redaction: Redaction = .standard,
        maximumBodyLength: Int = 4096,
        output: @escaping @Sendable (String) -> Void = ConsoleNetworkLogger.writeToStandardError
    ) {
        self.level = level
        self.redaction = redaction
        self.maximumBodyLength = maximumBodyLength
        self.output = output
    }

    /// Writes `line` and a newline to standard error.
    public static func writeToStandardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Writes the method and redacted URL; at `.debug` the headers; at `.verbose` the body and a
    /// cURL command.
    public func log(request: URLRequest) {
        guard level >= .info else { return }
        var lines = ["→ \(target(of: request))"]
        let headers = HTTPHeaders(request.allHTTPHeaderFields ?? [:])
        if level >= .debug { lines += headerLines(headers) }
        if level >= .verbose {
            if let body = request.httpBody, !body.isEmpty {
                lines.append(bodyLines(body, contentType: headers["Content-Type"]))
            }
            lines.append(cURL(request))
        }
        output(lines.joined(separator: "\n"))
    }

    /// Writes the status or error and the duration; failures only at `.error`; at `.debug` the
    /// headers; at `.verbose` the body.
    public func log(result: Result<NetworkResponse, NetworkError>, for request: URLRequest, duration: Duration) {
        log(result: result, for: request, duration: duration, fromCache: false)
    }

    private func log(
        result: Result<NetworkResponse, NetworkError>, for request: URLRequest, duration: Duration, fromCache: Bool
    ) {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        let elapsed = String(format: "%.1f ms", milliseconds) + (fromCache ? ", from cache" : "")
        var lines: [String]
        let response: NetworkResponse?
        switch result {
        case .success(let success):
            guard level >= .info else { return }
            response = success
            lines = ["← \(success.statusCode) \(target(of: request)) (\(elapsed))"]
        case .failure(let error):
            response = error.response
            lines = ["← failed \(target(of: request)) (\(elapsed)): \(Self.printable(error.localizedDescription))"]
        }
        if let response, level >= .debug {
            lines += headerLines(response.headers)
            if level >= .verbose, !response.body.isEmpty {
                lines.append(bodyLines(response.body, contentType: response.headers["Content-Type"]))
            }
        }
        output(lines.joined(separator: "\n"))
    }

    /// Logs each request as it was handed to the transport.
    public func requestSent(_ request: URLRequest, id: RequestID, attempt: Int) {
        log(request: request)
    }

    /// Logs a redirect followed, at `.info`.
    public func requestRedirected(_ response: HTTPURLResponse, to next: URLRequest, id: RequestID) {
        guard level >= .info else { return }
        output("↪ \(response.statusCode) → \(target(of: next))")
    }

    /// Logs a retry, at `.info`.
    public func requestRetrying(_ failure: RequestFailure, delay: TimeInterval, id: RequestID) {
        guard level >= .info else { return }
        let after = delay > 0 ? String(format: " in %.2f s", delay) : ""
        output("↻ retrying \(target(of: failure.request)) (attempt \(failure.attemptCount) failed)\(after)")
    }

    /// Logs the outcome the caller gets, with the request's whole duration, and whether the cache
    /// answered it.
    public func requestFinished(
        _ outcome: TransportOutcome, for request: URLRequest, id: RequestID, metrics: RequestMetrics
    ) {
        log(
            result: NetworkError.result(outcome),
            for: request, duration: metrics.duration, fromCache: outcome.isFromCache)
    }

    /// A cURL command that repeats `request`, with every covered value redacted.
    public func cURL(_ request: URLRequest) -> String {
        var parts = ["curl -X \(request.httpMethod ?? "GET") \(Self.quoted(request.url.map(redaction.redact) ?? ""))"]
        for header in redaction.redact(HTTPHeaders(request.allHTTPHeaderFields ?? [:])) {
            parts.append("-H \(Self.quoted("\(header.name): \(header.value)"))")
        }
        if let body = request.httpBody, !body.isEmpty {
            switch redaction.render(body: body, contentType: request.headerField("Content-Type")) {
            case .text(let text): parts.append("--data-binary \(Self.quoted(text))")
            case .outline(let text), .summary(let text): parts.append("--data-binary @body  # \(text)")
            }
        }
        return parts.joined(separator: " \\\n  ")
    }

    private func target(of request: URLRequest) -> String {
        Self.printable("\(request.httpMethod ?? "GET") \(request.url.map(redaction.redact) ?? "<no URL>")")
    }

    private func headerLines(_ headers: HTTPHeaders) -> [String] {
        redaction.redact(headers).map { "  \(Self.printable($0.name)): \(Self.printable($0.value))" }
    }

    /// The body as ``bodyText(_:contentType:)`` renders it, each of its lines indented under the
    /// entry and made ``printable(_:)``: a body cannot start a line that reads as one of the logger's.
    private func bodyLines(_ body: Data, contentType: String?) -> String {
        bodyText(body, contentType: contentType)
            .replacingOccurrences(of: "\r\n", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { "  " + Self.printable(String($0)) }
            .joined(separator: "\n")
    }

    /// `text` with each control character but tab — C0, DEL, C1 — and each bidirectional override or
    /// isolate written as `\u{…}`. What a server sent (a header, a body, words quoted in an error)
    /// then cannot move the terminal's cursor, recolour or clear it, hide text, or begin a line of
    /// its own that reads as the logger's.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnprintable) else { return text }
        var printable = ""
        for scalar in text.unicodeScalars {
            if isUnprintable(scalar) {
                printable += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                printable.unicodeScalars.append(scalar)
            }
        }
        return printable
    }

    private static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: false
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private func bodyText(_ body: Data, contentType: String?) -> String {
        let text: String
        switch redaction.render(body: body, contentType: contentType) {
        case .summary(let summary): return summary
        case .text(let rendered), .outline(let rendered): text = rendered
        }
        guard text.utf8.count > maximumBodyLength else { return text }
        // Cut at a byte count; a character split by the cut is shown as U+FFFD.
        return "\(String(decoding: text.utf8.prefix(maximumBodyLength), as: UTF8.self))… (\(body.count) bytes)"
    }

    /// `text` in single quotes for a POSIX shell.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
