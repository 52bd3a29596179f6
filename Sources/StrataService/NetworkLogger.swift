import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Receives each request a ``NetworkService`` sends and the outcome it gets.
///
/// Logging is off unless a logger is given to the service. ``ConsoleNetworkLogger`` writes
/// redacted lines; implement the protocol to forward to your own logging system, and redact with
/// ``StrataCore/Redaction`` there too.
public protocol NetworkLogger: Sendable {
    /// Called before `request` is handed to the session manager.
    func log(request: URLRequest)
    /// Called once per request with its outcome and how long it took.
    func log(result: Result<NetworkResponse, NetworkError>, for request: URLRequest, duration: Duration)
}

/// A ``NetworkLogger`` that writes one line per request and per outcome, with credentials redacted.
///
/// Header values of `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and the names
/// in ``redaction``, the query values of its keys, and any user or password in the URL are replaced
/// by a placeholder. Bodies are not written unless ``logsBodies`` is set, and then only text, up to
/// ``maximumBodyLength`` bytes; other bodies are written as their size.
public struct ConsoleNetworkLogger: NetworkLogger {
    /// What is hidden.
    public var redaction: Redaction
    /// Whether bodies are written.
    public var logsBodies: Bool
    /// The most body bytes written per message.
    public var maximumBodyLength: Int
    /// Where lines go; by default, standard error.
    public var output: @Sendable (String) -> Void

    /// Creates a logger.
    public init(
        redaction: Redaction = Redaction(),
        logsBodies: Bool = false,
        maximumBodyLength: Int = 4096,
        output: @escaping @Sendable (String) -> Void = ConsoleNetworkLogger.writeToStandardError
    ) {
        self.redaction = redaction
        self.logsBodies = logsBodies
        self.maximumBodyLength = maximumBodyLength
        self.output = output
    }

    /// Writes `line` and a newline to standard error.
    public static func writeToStandardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Writes the method, redacted URL, redacted headers and (if enabled) the body.
    public func log(request: URLRequest) {
        var lines = ["→ \(request.httpMethod ?? "GET") \(request.url.map(redaction.redact) ?? "<no URL>")"]
        lines += headerLines(HTTPHeaders(request.allHTTPHeaderFields ?? [:]))
        if let body = request.httpBody, !body.isEmpty {
            lines.append(bodyLine(body))
        }
        output(lines.joined(separator: "\n"))
    }

    /// Writes the status or error, the duration, redacted headers and (if enabled) the body.
    public func log(result: Result<NetworkResponse, NetworkError>, for request: URLRequest, duration: Duration) {
        let target = "\(request.httpMethod ?? "GET") \(request.url.map(redaction.redact) ?? "<no URL>")"
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        let elapsed = String(format: "%.1f ms", milliseconds)
        var lines: [String]
        let response: NetworkResponse?
        switch result {
        case .success(let success):
            response = success
            lines = ["← \(success.statusCode) \(target) (\(elapsed))"]
        case .failure(let error):
            response = error.response
            lines = ["← failed \(target) (\(elapsed)): \(error.localizedDescription)"]
        }
        if let response {
            lines += headerLines(response.headers)
            if !response.body.isEmpty { lines.append(bodyLine(response.body)) }
        }
        output(lines.joined(separator: "\n"))
    }

    private func headerLines(_ headers: HTTPHeaders) -> [String] {
        redaction.redact(headers).map { "  \($0.name): \($0.value)" }
    }

    private func bodyLine(_ body: Data) -> String {
        guard logsBodies, let text = String(data: body, encoding: .utf8) else {
            return "  <body: \(body.count) bytes>"
        }
        guard body.count > maximumBodyLength else { return "  \(text)" }
        // Cut at a byte count; a character split by the cut is shown as U+FFFD.
        return "  \(String(decoding: text.utf8.prefix(maximumBodyLength), as: UTF8.self))… (\(body.count) bytes)"
    }
}
