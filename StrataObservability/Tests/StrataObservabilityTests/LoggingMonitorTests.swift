import Foundation
import InMemoryLogging
import Logging
import Strata
import StrataObservability
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// `Tenant` and `TenantMonitor`, which keeps the caller's tenant as a tracing monitor keeps a trace
// context, are the README's (ReadmeSnippets.swift).

/// A logger whose lines stay in memory, at `level`, with the caller's tenant added by a metadata
/// provider (which reads a task-local when the line is written).
private func memoryLogger(_ level: Logger.Level) -> (Logger, InMemoryLogHandler) {
    var handler = InMemoryLogHandler()
    handler.logLevel = level
    handler.metadataProvider = Logger.MetadataProvider { Tenant.current.map { ["tenant": "\($0)"] } ?? [:] }
    return (Logger(label: "strata.test") { _ in handler }, handler)
}

/// Waits until `handler` holds a line with `message`, for the monitor's queue to catch up.
private func lines(
    of handler: InMemoryLogHandler, until message: String = "request finished"
) async throws -> [InMemoryLogHandler.Entry] {
    for _ in 0..<400 where !handler.entries.contains(where: { "\($0.message)" == message }) {
        try await Task.sleep(for: .milliseconds(5))
    }
    return handler.entries
}

@Suite struct LoggingMonitorTests {
    private let stub = URLProtocolStub { request in
        switch request.url?.path {
        case "/busy": .response(statusCode: 503, headers: ["Retry-After": "0"])
        case "/missing": .response(statusCode: 404)
        case "/garbled": .response(statusCode: 200, body: Data("<html>".utf8))
        default: .response(statusCode: 200, body: Data("{}".utf8))
        }
    }

    private func service(_ monitor: LoggingMonitor, retries: Int = 0) -> DefaultDataTransferService {
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(),
            retriers: retries > 0 ? [RetryPolicy(maximumAttempts: retries + 1, initialDelay: 0, jitter: 0)] : [],
            monitors: [TenantMonitor(), monitor])
        return DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: stub.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
    }

    @Test func aSuccessLogsATraceLineForTheWireAndADebugLineForItsEndWithItsMetadata() async throws {
        let (logger, handler) = memoryLogger(.trace)
        try await service(LoggingMonitor(logger: logger)).request(Endpoint<Void>(path: "items", method: .post))
        let entries = try await lines(of: handler)
        #expect(entries.map(\.level) == [.trace, .debug])
        #expect(entries.map { "\($0.message)" } == ["sending request", "request finished"])
        let finished = try #require(entries.last?.metadata)
        #expect(finished["http.request.method"] == "POST")
        #expect(finished["url.full"] == "\(stub.baseURL.absoluteString)/items")
        #expect(finished["http.response.status_code"] == "200")
        #expect(finished["strata.attempts"] == "1")
        #expect(finished["strata.request.id"] == entries.first?.metadata["strata.request.id"])
        #expect(finished["error.type"] == nil)
    }

    @Test func atInfoASuccessWritesNothing() async throws {
        let (logger, handler) = memoryLogger(.info)
        try await service(LoggingMonitor(logger: logger)).request(Endpoint<Void>(path: "items"))
        try await Task.sleep(for: .milliseconds(100))
        #expect(handler.entries.isEmpty)
    }

    @Test func aRetryIsLoggedAtInfoAndAFailureAtDebugWithItsErrorType() async throws {
        let (logger, handler) = memoryLogger(.debug)
        await #expect(throws: DataTransferError.self) {
            try await service(LoggingMonitor(logger: logger), retries: 1).request(Endpoint<Void>(path: "busy"))
        }
        let entries = try await lines(of: handler, until: "request failed")
        #expect(entries.map { "\($0.message)" } == ["retrying request", "request failed"])
        #expect(entries.map(\.level) == [.info, .debug])
        #expect(entries.first?.metadata["error.type"] == "503")
        #expect(entries.last?.metadata["strata.attempts"] == "2")
        #expect(entries.last?.metadata["http.response.status_code"] == "503")
        #expect(entries.allSatisfy { $0.level <= .info })
    }

    @Test func aBodyThatDoesNotDecodeIsLoggedAsTheFailureTheCallerGot() async throws {
        let (logger, handler) = memoryLogger(.debug)
        await #expect(throws: DataTransferError.self) {
            try await service(LoggingMonitor(logger: logger)).request(Endpoint<[String: Int]>(path: "garbled"))
        }
        let entries = try await lines(of: handler, until: "request failed")
        #expect(entries.map { "\($0.message)" } == ["request failed"])
        #expect(entries.last?.metadata["http.response.status_code"] == "200")
        #expect(entries.last?.metadata["error.type"] == "Swift.DecodingError")
    }

    @Test func noCredentialReachesAnyLine() async throws {
        let (logger, handler) = memoryLogger(.trace)
        let endpoint = Endpoint<Void>(
            path: "busy", headerParameters: ["Authorization": "Bearer s3cr3t-token", "Cookie": "session=s3cr3t"],
            queryParameters: ["access_token": "s3cr3t-query", "page": "2"])
        await #expect(throws: DataTransferError.self) {
            try await service(LoggingMonitor(logger: logger), retries: 1).request(endpoint)
        }
        let entries = try await lines(of: handler, until: "request failed")
        #expect(
            entries.map { "\($0.message)" } == [
                "sending request", "retrying request", "sending request", "request failed",
            ])
        let written = entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(!written.contains("s3cr3t"), "\(written)")
        #expect(written.contains("page=2"))
    }

    @Test func aRequestsOwnLoggerTakesItsLinesAndTheCallersTaskLocalsReachThem() async throws {
        let (managerLogger, managerLines) = memoryLogger(.debug)
        let (requestLogger, requestLines) = memoryLogger(.debug)
        var options = RequestOptions()
        options.logger = requestLogger
        let service = service(LoggingMonitor(logger: managerLogger))
        try await Tenant.$current.withValue("acme") {
            try await service.request(Endpoint<Void>(path: "items", options: options))
        }
        let entries = try await lines(of: requestLines)
        #expect(entries.map { "\($0.message)" } == ["request finished"])
        #expect(entries.first?.metadata["tenant"] == "acme")
        #expect(managerLines.entries.isEmpty)
    }

    /// Two monitors on one manager — a debug log and an audit of retries, say — each write to their
    /// own logger at its own level; a request's own logger takes the lines of both.
    @Test func twoMonitorsEachLogToTheirOwnLogger() async throws {
        let (debugLogger, debugLines) = memoryLogger(.debug)
        let (infoLogger, infoLines) = memoryLogger(.info)
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(),
            retriers: [RetryPolicy(maximumAttempts: 2, initialDelay: 0, jitter: 0)],
            monitors: [LoggingMonitor(logger: debugLogger), LoggingMonitor(logger: infoLogger)])
        let service = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: stub.baseURL), sessionManager: manager),
            completionQueue: DispatchQueue(label: "completions"))
        await #expect(throws: DataTransferError.self) { try await service.request(Endpoint<Void>(path: "busy")) }
        let debugEntries = try await lines(of: debugLines, until: "request failed")
        #expect(debugEntries.map { "\($0.message)" } == ["retrying request", "request failed"])
        try await Task.sleep(for: .milliseconds(50))
        #expect(infoLines.entries.map { "\($0.message)" } == ["retrying request"])

        let (requestLogger, requestLines) = memoryLogger(.debug)
        var options = RequestOptions()
        options.logger = requestLogger
        try await service.request(Endpoint<Void>(path: "items", options: options))
        _ = try await lines(of: requestLines)
        try await Task.sleep(for: .milliseconds(50))
        #expect(requestLines.entries.map { "\($0.message)" } == ["request finished", "request finished"])
        #expect(debugLines.entries.count == 2)
        #expect(infoLines.entries.count == 1)
    }

    /// A method that is not a token — CR LF in it, say — is refused unsent (by the endpoint's
    /// builder, or by the manager for a `URLRequest` made by hand), and its line must not carry it:
    /// a log line is no place for what could forge another line.
    @Test func aMethodThatIsNotATokenIsLoggedAsOther() async throws {
        let (logger, handler) = memoryLogger(.debug)
        let manager = SessionManager(
            configuration: stub.makeSessionConfiguration(), monitors: [LoggingMonitor(logger: logger)])
        for method in ["GET\r\nforged: 1", "PURGE"] {
            var request = URLRequest(url: stub.baseURL.appendingPathComponent("items"))
            request.httpMethod = method
            let recorder = CompletionRecorder<Bool>()
            manager.request(request, options: RequestOptions()) { _, _, error in recorder.record(error == nil) }
            _ = await recorder.first()
        }
        let entries = try await lines(of: handler)
        #expect(entries.map { "\($0.message)" } == ["request failed", "request finished"])
        #expect(entries.map { $0.metadata["http.request.method"] } == ["_OTHER", "PURGE"])
    }
}
