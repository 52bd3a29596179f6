import AsyncHTTPClient
import Benchmark
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Strata
import StrataAsyncHTTPClient
import StrataTestServer
import _NIOFileSystem

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Peak resident memory of one 1 GiB transfer to or from the loopback test server (in the same
/// process): Strata's multipart upload of a file and download to a file, against `URLSession`'s
/// upload from a file and download task; and the same over AsyncHTTPClient, against its own
/// streaming of a file (`_NIOFileSystem`'s chunks) and its `FileDownloadDelegate`; and a 1 GiB body
/// streamed to a consumer over AsyncHTTPClient, against its own `response.body`.
enum Memory {
    static let size = (Settings.smoke ? 8 : 1_024) * 1_048_576

    /// The server, a folder for what the transfers write and, for uploads, a source file of
    /// ``size`` bytes (downloads go without, so that writing it back to disk does not slow them).
    final class Fixture: Sendable {
        let server: TestServer
        let directory: URL
        let source: URL
        let session: URLSession
        let transfer: DefaultDataTransferService
        let client: HTTPClient
        let asyncTransport: AsyncHTTPClientTransport
        let overAsyncHTTPClient: DefaultDataTransferService

        init(writingSource: Bool) async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "strata-benchmark-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            source = directory.appendingPathComponent("source.bin")
            if writingSource {
                guard FileManager.default.createFile(atPath: source.path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown)
                }
                let handle = try FileHandle(forWritingTo: source)
                let chunk = Data(TestReply.generatedBody(size: 1_048_576))
                for _ in 0..<(size / chunk.count) {
                    try handle.write(contentsOf: chunk)
                }
                try handle.close()
            }

            server = try await TestServer.start()
            let configuration = URLSessionConfiguration.default
            configuration.urlCache = nil
            configuration.timeoutIntervalForRequest = 600
            session = URLSession(configuration: configuration)
            transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 600),
                    sessionManager: URLSessionManager(configuration: configuration)
                ),
                completionQueue: .global()
            )
            client = HTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                configuration: AsyncHTTPClientTransport.strataConfiguration())
            asyncTransport = AsyncHTTPClientTransport()
            overAsyncHTTPClient = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 600),
                    sessionManager: SessionManager(transport: asyncTransport)
                ),
                completionQueue: .global()
            )
        }

        func tearDown() async throws {
            try await client.shutdown()
            try await asyncTransport.shutdown()
            try await server.shutdown()
            try FileManager.default.removeItem(at: directory)
        }

        var downloadURL: URL { server.url("/stream-bytes/\(size)?chunked=1") }

        /// Fails unless `file` holds ``size`` bytes, and removes it.
        func check(_ file: URL) throws {
            let saved = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
            try FileManager.default.removeItem(at: file)
            guard saved == size else { throw TransferCheckFailed(expected: size, actual: saved ?? -1) }
        }
    }

    struct TransferCheckFailed: Error {
        let expected: Int
        let actual: Int
    }

    private static let fixture = Shared<Fixture>()

    static let peakResident = BenchmarkMetric.custom("Peak resident (KiB)", useScalingFactor: false)
    static let transferTime = BenchmarkMetric.custom("Transfer time (µs)", useScalingFactor: false)

    /// Strata's side of a download: the 1 GiB body through every layer of `transfer` into a file.
    private static func download(through transfer: DefaultDataTransferService, fixture: Fixture) async throws {
        let target = fixture.directory.appendingPathComponent("strata-download.bin")
        _ = try await transfer.request(
            Endpoint<Empty>(
                path: "stream-bytes/\(size)", queryParameters: ["chunked": "1"],
                options: RequestOptions(downloadDestination: target)))
        try fixture.check(target)
    }

    /// Strata's side of an upload: the 1 GiB file as a multipart form through every layer of `transfer`.
    private static func upload(through transfer: DefaultDataTransferService, fixture: Fixture) async throws {
        var form = MultipartFormData()
        try form.append(fileURL: fixture.source, name: "file", fileName: "source.bin")
        let echo = try await transfer.request(
            Endpoint<MultipartEcho>(
                path: "multipart", method: .post,
                bodyEncoding: MultipartEncoding(form: form, temporaryDirectory: fixture.directory))
        )
        let uploaded = echo.parts.first?.size ?? -1
        guard uploaded == size else { throw TransferCheckFailed(expected: size, actual: uploaded) }
    }

    static func register() {
        // Peak resident memory is the process's own high-water mark (VmHWM), exact where the
        // sampled metric could miss a short peak. The transfer is timed here too: package-benchmark
        // leaves a benchmark out of its JMH export when an iteration takes over a second, so the
        // measured span is closed at once after the transfer.
        let configuration = Benchmark.Configuration(
            metrics: [.wallClock, .throughput, Settings.operations, Settings.bytes, peakResident, transferTime],
            warmupIterations: 0,
            scalingFactor: .one,
            maxDuration: .seconds(600),
            maxIterations: 1
        )
        func memoryBenchmark(_ name: String, _ body: @escaping @Sendable (Fixture) async throws -> Void) {
            let upload = name.contains("upload")
            Benchmark(name, configuration: configuration) { benchmark in
                guard let fixture = fixture.value else { return }
                let started = ContinuousClock.now
                try await body(fixture)
                let (seconds, attoseconds) = (ContinuousClock.now - started).components
                benchmark.startMeasurement()
                benchmark.stopMeasurement()
                benchmark.measurement(transferTime, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
                benchmark.measurement(peakResident, ProcessMemory.peakResidentBytes() / 1024)
                benchmark.record(operations: 1, bytes: size)
            } setup: {
                fixture.value = try await Fixture(writingSource: upload)
            } teardown: {
                try await fixture.value?.tearDown()
            }
        }

        memoryBenchmark("Memory, 1 GiB download — baseline: URLSession download task") { fixture in
            let target = fixture.directory.appendingPathComponent("raw-download.bin")
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                fixture.session.downloadTask(with: fixture.downloadURL) { location, _, error in
                    // The file at `location` is removed when this handler returns.
                    continuation.resume(
                        with: Result {
                            if let error { throw error }
                            guard let location else { throw URLError(.cannotOpenFile) }
                            try FileManager.default.moveItem(at: location, to: target)
                        })
                }.resume()
            }
            try fixture.check(target)
        }
        memoryBenchmark("Memory, 1 GiB download — Strata: download to a file") { fixture in
            try await download(through: fixture.transfer, fixture: fixture)
        }

        memoryBenchmark("Memory, 1 GiB download over AsyncHTTPClient — baseline: FileDownloadDelegate") { fixture in
            let target = fixture.directory.appendingPathComponent("raw-download.bin")
            let delegate = try FileDownloadDelegate(path: target.path)
            _ = try await fixture.client.execute(
                request: try HTTPClient.Request(url: fixture.downloadURL), delegate: delegate
            ).get()
            try fixture.check(target)
        }
        memoryBenchmark("Memory, 1 GiB download over AsyncHTTPClient — Strata: download to a file") { fixture in
            try await download(through: fixture.overAsyncHTTPClient, fixture: fixture)
        }

        memoryBenchmark("Memory, 1 GiB stream over AsyncHTTPClient — baseline: response.body") { fixture in
            let response = try await fixture.client.execute(
                HTTPClientRequest(url: fixture.downloadURL.absoluteString), timeout: .seconds(600))
            var received = 0
            for try await buffer in response.body {
                received += buffer.readableBytes
            }
            guard received == size else { throw TransferCheckFailed(expected: size, actual: received) }
        }
        memoryBenchmark("Memory, 1 GiB stream over AsyncHTTPClient — Strata: a stream of bytes") { fixture in
            var received = 0
            for try await part in fixture.overAsyncHTTPClient.networkService.stream(
                endpoint: Endpoint<Void>(path: "stream-bytes/\(size)", queryParameters: ["chunked": "1"]),
                decoding: .bytes)
            {
                received += part.count
            }
            guard received == size else { throw TransferCheckFailed(expected: size, actual: received) }
        }

        memoryBenchmark("Memory, 1 GiB upload over AsyncHTTPClient — baseline: a file's chunks streamed") { fixture in
            let count = try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(fixture.source.path)) {
                file in
                var request = HTTPClientRequest(url: fixture.server.url("/count").absoluteString)
                request.method = .POST
                request.body = .stream(file.readChunks(in: 0..<Int64(size)), length: .known(Int64(size)))
                let response = try await fixture.client.execute(request, timeout: .seconds(600))
                return try JSONDecoder().decode(BodyCount.self, from: try await response.body.collect(upTo: 65_536))
            }
            guard count.size == size else { throw TransferCheckFailed(expected: size, actual: count.size) }
        }
        memoryBenchmark("Memory, 1 GiB upload over AsyncHTTPClient — Strata: multipart upload of a file") { fixture in
            try await upload(through: fixture.overAsyncHTTPClient, fixture: fixture)
        }

        memoryBenchmark("Memory, 1 GiB upload — baseline: URLSession upload from a file") { fixture in
            var request = URLRequest(url: fixture.server.url("/count"))
            request.httpMethod = "POST"
            let data = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<Data, any Error>) in
                fixture.session.uploadTask(with: request, fromFile: fixture.source) { data, _, error in
                    continuation.resume(
                        with: Result {
                            if let error { throw error }
                            return data ?? Data()
                        })
                }.resume()
            }
            let count = try JSONDecoder().decode(BodyCount.self, from: data)
            guard count.size == size else { throw TransferCheckFailed(expected: size, actual: count.size) }
        }
        memoryBenchmark("Memory, 1 GiB upload — Strata: multipart upload of a file") { fixture in
            try await upload(through: fixture.transfer, fixture: fixture)
        }
    }
}
