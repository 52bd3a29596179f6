import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import Strata
import StrataAsyncHTTPClient
import StrataTestServer

// Streams one large body to a consumer that only counts it, for a profiler to watch (the figures
// are the benchmarks' "Memory, 1 GiB stream over AsyncHTTPClient"), from a server of your own
// (nginx serving a large file on loopback, say) or, for `in-process`, 1 GiB from the test server
// in this process, as the benchmark does:
//
//   StreamProbe raw|strata|delegate|handoff|batch|callbacks URL|in-process   # one side: perf record -g …
//   StreamProbe both URL|in-process [ROUNDS]   # raw, strata and callbacks in turn, medians
//   StreamProbe all URL|in-process [ROUNDS]    # the same, each round also the three below
//
// `raw` reads AsyncHTTPClient's `response.body`; `strata` reads
// `networkService.stream(endpoint:decoding: .bytes)` over AsyncHTTPClientTransport; `callbacks` the
// same stream through the callback API. What the transport's AsyncHTTPClient API costs by itself:
// `delegate` counts the parts in AsyncHTTPClient's delegate, which the transport is built on, and
// `handoff` hands each part from that delegate to a task through an `AsyncStream`, the least a
// consumer in a task of its own needs, and `batch` hands over the parts of one turn of the event
// loop together, one wake-up of the task for all of them.
let arguments = CommandLine.arguments
let server = arguments.count >= 3 && arguments[2] == "in-process" ? try await TestServer.start() : nil
guard arguments.count >= 3,
    let url = server?.url("/stream-bytes/1073741824?chunked=1") ?? URL(string: arguments[2])
else {
    print("usage: StreamProbe raw|strata|delegate|handoff|batch|callbacks|both|all URL|in-process [ROUNDS]")
    exit(2)
}
let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 5 : 5

let client = HTTPClient(
    eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: AsyncHTTPClientTransport.strataConfiguration())
let service = DefaultNetworkService(
    configuration: NetworkConfiguration(baseURL: url.deletingLastPathComponent(), timeoutInterval: 600),
    sessionManager: SessionManager(transport: AsyncHTTPClientTransport(client: client, decompresses: true)))

/// Reads the body once; its byte count and the parts it came in.
func raw() async throws -> (bytes: Int, parts: Int) {
    let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(600))
    var (bytes, parts) = (0, 0)
    for try await buffer in response.body {
        bytes += buffer.readableBytes
        parts += 1
    }
    return (bytes, parts)
}

/// AsyncHTTPClient's delegate API, which Strata's transport is built on, counting what it is handed.
final class Counter: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = (bytes: Int, parts: Int)
    var bytes = 0
    var parts = 0
    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        bytes += buffer.readableBytes
        parts += 1
        return task.eventLoop.makeSucceededVoidFuture()
    }
    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response { (bytes, parts) }
}

func delegate() async throws -> (bytes: Int, parts: Int) {
    try await client.execute(request: try HTTPClient.Request(url: url), delegate: Counter()).get()
}

func callbacks() async throws -> (bytes: Int, parts: Int) {
    final class Count: @unchecked Sendable { var bytes = 0; var parts = 0 }
    let count = Count()
    let endpoint = Endpoint<Void>(path: url.lastPathComponent, queryParameters: server == nil ? [:] : ["chunked": "1"])
    return try await withCheckedThrowingContinuation { continuation in
        service.stream(endpoint: endpoint, decoding: .bytes) { part in
            count.bytes += part.count
            count.parts += 1
        } completion: { result in
            continuation.resume(with: result.map { _ in (count.bytes, count.parts) })
        }
    }
}

/// The delegate API handing each part, as `Data`, to a task through an `AsyncStream`.
final class Handoff: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Void
    let continuation: AsyncStream<Data>.Continuation
    init(_ continuation: AsyncStream<Data>.Continuation) { self.continuation = continuation }
    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        continuation.yield(Data(buffer: buffer, byteTransferStrategy: .noCopy))
        return task.eventLoop.makeSucceededVoidFuture()
    }
    func didFinishRequest(task: HTTPClient.Task<Void>) throws { continuation.finish() }
}

/// The same, with the parts of one event-loop turn handed over together, at the end of the turn.
final class BatchHandoff: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Void
    let continuation: AsyncStream<[Data]>.Continuation
    var pending: [Data] = []
    init(_ continuation: AsyncStream<[Data]>.Continuation) { self.continuation = continuation }
    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        if pending.isEmpty {
            task.eventLoop.execute { [self] in
                continuation.yield(pending)
                pending = []
            }
        }
        pending.append(Data(buffer: buffer, byteTransferStrategy: .noCopy))
        return task.eventLoop.makeSucceededVoidFuture()
    }
    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        task.eventLoop.execute { [self] in continuation.finish() }
    }
}

func batchHandoff() async throws -> (bytes: Int, parts: Int) {
    let (stream, continuation) = AsyncStream<[Data]>.makeStream()
    _ = client.execute(request: try HTTPClient.Request(url: url), delegate: BatchHandoff(continuation))
    var (bytes, parts) = (0, 0)
    for await batch in stream {
        for part in batch {
            bytes += part.count
            parts += 1
        }
    }
    return (bytes, parts)
}

func handoff() async throws -> (bytes: Int, parts: Int) {
    let (stream, continuation) = AsyncStream<Data>.makeStream()
    _ = client.execute(request: try HTTPClient.Request(url: url), delegate: Handoff(continuation))
    var (bytes, parts) = (0, 0)
    for await part in stream {
        bytes += part.count
        parts += 1
    }
    return (bytes, parts)
}

func overStrata() async throws -> (bytes: Int, parts: Int) {
    var (bytes, parts) = (0, 0)
    let endpoint = Endpoint<Void>(
        path: url.lastPathComponent,
        queryParameters: server == nil ? [:] : ["chunked": "1"])
    for try await part in service.stream(endpoint: endpoint, decoding: .bytes) {
        bytes += part.count
        parts += 1
    }
    return (bytes, parts)
}

/// Seconds one read takes, printed with what it read.
func timed(_ name: String, _ read: () async throws -> (bytes: Int, parts: Int)) async throws -> Double {
    let started = ContinuousClock.now
    let (bytes, parts) = try await read()
    let (seconds, attoseconds) = (ContinuousClock.now - started).components
    let elapsed = Double(seconds) + Double(attoseconds) / 1e18
    print("\(name): \(bytes) bytes in \(parts) parts, \(elapsed) s, \(Double(bytes) / elapsed / 1e6) MB/s")
    return elapsed
}

switch arguments[1] {
case "raw": _ = try await timed("raw", raw)
case "strata": _ = try await timed("strata", overStrata)
case "delegate": _ = try await timed("delegate", delegate)
case "callbacks": _ = try await timed("callbacks", callbacks)
case "handoff": _ = try await timed("handoff", handoff)
case "batch": _ = try await timed("batch", batchHandoff)
default:
    // The three ways to read the body, in turn, the order turning each round.
    let sides: [(name: String, read: () async throws -> (bytes: Int, parts: Int))] = [
        ("raw", raw), ("strata", overStrata), ("callbacks", callbacks),
    ]
    var times: [String: [Double]] = [:]
    for round in 0..<rounds {
        for side in round.isMultiple(of: 2) ? sides : sides.reversed() {
            times[side.name, default: []].append(try await timed(side.name, side.read))
        }
        if arguments[1] == "all" {
            _ = try await timed("delegate", delegate)
            _ = try await timed("handoff", handoff)
            _ = try await timed("batch", batchHandoff)
        }
    }
    let median = { (name: String) in (times[name] ?? [0]).sorted()[(times[name] ?? [0]).count / 2] }
    let r = median("raw")
    print("median: raw \(r) s")
    for (name, label) in [("strata", "Strata, for try await"), ("callbacks", "Strata, the callback API")] {
        let s = median(name)
        print("median: \(label) \(s) s, throughput \(String(format: "%.2f", r / s))x of raw")
    }
}
try await client.shutdown().get()
try await server?.shutdown()
