import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fault matrix: every answer of ``FaultCase`` — from a raw-socket server whose bytes the case
/// writes — runs through every Strata layer in a `FaultProbe` process of its own, and so does a
/// storm of requests with random cancellations. Each must end with a value or a typed error, within
/// its bound, with its completion called exactly once, and the process alive: a crash is this one
/// case failing, reported with its signal.
@Suite(.serialized) struct FaultMatrixTests {
    /// The `FaultProbe` executable, built with the tests, next to the test bundle.
    static let probe: URL? = {
        let candidates = [CommandLine.arguments.first, Bundle.main.executablePath].compactMap { $0 }.map {
            URL(fileURLWithPath: $0).deletingLastPathComponent()
        }
        return candidates.lazy.map { $0.appendingPathComponent("FaultProbe") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    @Test(arguments: FaultCase.allCases)
    func eachFaultEndsWithAValueOrATypedErrorInBoundedTimeOnce(fault: FaultCase) async throws {
        let probe = try #require(Self.probe, "FaultProbe was not built next to the tests")
        let run = try await Self.run(probe, arguments: [fault.rawValue], limit: .seconds(60))
        #if canImport(FoundationNetworking)
            if fault.crashesFoundationNetworking, TestTransport.current == .urlSession {
                // FoundationNetworking traps inside its loading system, before any delegate is
                // asked: on a Location it cannot turn into a URL (its redirect handling), on a
                // trailer field after a chunked body (which it takes for the head of a response
                // that has none), and on a head the connection's close cuts short (libcurl ends
                // such a transfer without an error, with no response made). Over URLSession on
                // Linux no client can step in. Kept in the matrix so that the day one stops
                // crashing, its known issue fails and is removed. Over AsyncHTTPClient all reach
                // Strata and pass.
                withKnownIssue("FoundationNetworking traps on this answer before any delegate is asked") {
                    #expect(run.signal == nil, "\(fault.rawValue) crashed the process with signal \(run.signal ?? 0)")
                }
                return
            }
        #endif
        guard run.signal == nil else {
            Issue.record("\(fault.rawValue) crashed the process with signal \(run.signal ?? 0):\n\(run.errors)")
            return
        }
        let line = run.output.split(separator: "\n").last.map(String.init) ?? ""
        let report = try #require(
            try? JSONDecoder().decode(FaultReport.self, from: Data(line.utf8)),
            "no report from FaultProbe \(fault.rawValue): \(run.output)\n\(run.errors)")
        var losesContent = false
        #if canImport(FoundationNetworking)
            losesContent = fault.losesContentOverFoundationNetworking && TestTransport.current == .urlSession
        #endif
        if losesContent {
            // libcurl decodes a gzip or brotli body cut short, within its length, without a word,
            // and only the decoded bytes reach FoundationNetworking's client: nobody above can
            // count what is missing. Kept so that the day it is caught, its known issue fails and
            // is removed.
            withKnownIssue("FoundationNetworking hands over a compressed body cut short as if it were whole") {
                #expect(report.problems.isEmpty, "\(fault.rawValue): \(report.problems.joined(separator: "; "))")
                #expect(run.status == 0)
            }
        } else {
            #expect(report.problems.isEmpty, "\(fault.rawValue): \(report.problems.joined(separator: "; "))")
            #expect(run.status == 0)
        }
        #expect(report.calls == 1)
        #expect(report.elapsedMilliseconds <= report.boundMilliseconds)
        #expect(run.leftFiles.isEmpty, "\(fault.rawValue) left files behind: \(run.leftFiles)")
        print("fault matrix: \(fault.rawValue) -> \(report.outcome) in \(report.elapsedMilliseconds) ms")
    }

    /// 2,000 requests of every kind the test server serves, a third of them cancelled at a random
    /// moment, in a process of its own (see `Storm` in `FaultProbe`): each completes exactly once
    /// with its value or a typed error, and the stack still works after.
    @Test func aStormOfRequestsWithRandomCancellationsCompletesEachExactlyOnce() async throws {
        let probe = try #require(Self.probe, "FaultProbe was not built next to the tests")
        let run = try await Self.run(probe, arguments: ["storm"], limit: .seconds(120))
        #expect(run.signal == nil, "the storm crashed the process with signal \(run.signal ?? 0):\n\(run.errors)")
        #expect(run.status == 0, "\(run.output)\n\(run.errors)")
        #expect(run.leftFiles.isEmpty, "the storm left files behind: \(run.leftFiles)")
        print(run.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// What a child process did.
    struct Run {
        var status: Int32
        var signal: Int32?
        var output: String
        var errors: String
        /// What the process left in its temporary folder, a folder of its own.
        var leftFiles: [String]
    }

    /// Runs `executable` and waits for it, at most `limit` (then it is terminated).
    static func run(_ executable: URL, arguments: [String], limit: Duration) async throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // A temporary folder of its own, which must be empty when it ends: a file of a failed or
        // cancelled download left there by any layer (or by the loading system) would stay for good.
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("fault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        // A crash writes a long backtrace: to a file, which never fills up as a pipe would.
        let errorsFile = FileManager.default.temporaryDirectory.appendingPathComponent("fault-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorsFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorsFile) }
        process.standardError = try FileHandle(forWritingTo: errorsFile)
        let finished = CompletionRecorder<Void>()
        process.terminationHandler = { _ in finished.record(()) }
        try process.run()
        if await finished.first(timeout: TimeInterval(limit.components.seconds)) == nil {
            process.terminate()
            _ = await finished.first(timeout: 5)
        }
        let errors = (try? String(contentsOf: errorsFile, encoding: .utf8)) ?? ""
        return Run(
            status: process.terminationStatus,
            signal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil,
            output: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            errors: String(errors.suffix(4_000)),
            leftFiles: (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        )
    }
}
