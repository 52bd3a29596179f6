// What the observability monitors (StrataObservability) cost a request, measured on the path users
// call: the data transfer service's callback API over a `SessionManager`, one request at a time.
//
//   MonitorCost instructions SIDE COUNT            # in-memory stack, for callgrind (scripts/bench.sh)
//   MonitorCost memory COUNT ROUNDS                # in-memory stack, sides in turn, wall clock
//   MonitorCost loopback urlsession|ahc BASE-URL COUNT ROUNDS   # GETs of BASE-URL/items, wall clock
//
// SIDE is one of:
//   none      no monitor: what a manager without monitors costs
//   logging   LoggingMonitor whose logger is at `info`: nothing is written (success logs at `debug`)
//   metrics   MetricsMonitor over a factory that keeps its metrics as a metrics backend does
//   tracing   TracingMonitor and its injector over InMemoryTracer, a span per request
//   all       the three together
//   tracing-otel, all-otel   the same over swift-otel's tracer, as a server runs it: every span
//             sampled, recorded and handed to its batch processor, whose exporter sends nowhere
//
// and, for `instructions` alone, `tracing-noop` and `all-noop`: the same over `NoOpTracer`, which
// records nothing and injects no field — what the monitors cost by themselves, whatever the tracer.
//
// Monitors run on the manager's event queue, beside the caller's requests, so each side reports
// its wall-clock time and its process CPU time (user and system, every thread) per GET; between
// blocks the queues are left to settle. The in-memory transport answers at once, with the same
// 1 KiB JSON body as the stack-overhead pair.

import AsyncHTTPClient
import CoreMetrics
import Dispatch
import Foundation
import InMemoryTracing
import Logging
import OTel
import ServiceLifecycle
import StackFixture
import Strata
import StrataAsyncHTTPClient
import StrataObservability
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let sides = ["none", "logging", "metrics", "tracing", "all", "tracing-otel", "all-otel"]
/// The sides counted by instructions alone.
let instructionSides = sides + ["tracing-noop", "all-noop"]

/// swift-otel's tracer, made once and run for the whole process (its batch processor drains the
/// ended spans on a task of its own): W3C trace context, every span sampled, no exporter.
let otelTracer: any Tracer = {
    var configuration = OTel.Configuration.default
    configuration.traces.exporter = .none
    configuration.metrics.enabled = false
    configuration.logs.enabled = false
    do {
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        Task { try await backend.service.run() }
        return backend.factory
    } catch {
        fatalError("swift-otel's tracer could not be made: \(error)")
    }
}()

// MARK: - The stacks

/// Answers every request with the stack-overhead body, before `send` returns.
struct InMemoryTransport: Transport {
    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let relay = ResponseRelay(to: receiver)
        relay.push(
            ResponseHead(
                url: attempt.request.url ?? StackOverhead.baseURL, statusCode: 200, httpVersion: "HTTP/1.1",
                headers: ["Content-Type": "application/json"]))
        relay.push(StackOverhead.body)
        relay.end(nil)
        return relay
    }
}

/// A metrics backend as swift-prometheus keeps one: each label and dimensions looked up under a
/// lock, each value added under the metric's own.
final class BackendFactory: MetricsFactory, @unchecked Sendable {  // Sendable: `lock` guards `metrics`.
    final class Metric: CounterHandler, FloatingPointCounterHandler, RecorderHandler, TimerHandler, MeterHandler,
        @unchecked Sendable
    {  // Sendable: `lock` guards `value`.
        private let lock = NSLock()
        private var value: Double = 0
        private func add(_ amount: Double) {
            lock.lock()
            value += amount
            lock.unlock()
        }
        func increment(by amount: Int64) { add(Double(amount)) }
        func increment(by amount: Double) { add(amount) }
        func decrement(by amount: Double) { add(-amount) }
        func set(_ value: Double) { add(value) }
        func set(_ value: Int64) { add(Double(value)) }
        func record(_ value: Int64) { add(Double(value)) }
        func record(_ value: Double) { add(value) }
        func recordNanoseconds(_ duration: Int64) { add(Double(duration)) }
        func reset() {}
    }

    private struct Key: Hashable {
        let label: String
        let dimensions: [String]
    }

    private let lock = NSLock()
    private var metrics: [Key: Metric] = [:]

    private func metric(_ label: String, _ dimensions: [(String, String)]) -> Metric {
        let key = Key(label: label, dimensions: dimensions.flatMap { [$0.0, $0.1] })
        lock.lock()
        defer { lock.unlock() }
        if let metric = metrics[key] { return metric }
        let metric = Metric()
        metrics[key] = metric
        return metric
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        metric(label, dimensions)
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        metric(label, dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        metric(label, dimensions)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        metric(label, dimensions)
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        metric(label, dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
}

/// One side: the service the caller uses.
struct Stack {
    let transfer: DefaultDataTransferService

    init(_ side: String, transport: any Transport, baseURL: URL) {
        var monitors: [any EventMonitor] = []
        var adapters: [any RequestAdapter] = []
        let (side, tracer): (String, any Tracer) =
            if side.hasSuffix("-noop") {
                (String(side.dropLast(5)), NoOpTracer())
            } else if side.hasSuffix("-otel") {
                (String(side.dropLast(5)), otelTracer)
            } else {
                (side, InMemoryTracer())
            }
        if side == "logging" || side == "all" {
            var logger = Logger(label: "strata.bench") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = .info
            monitors.append(LoggingMonitor(logger: logger))
        }
        if side == "metrics" || side == "all" {
            monitors.append(MetricsMonitor(factory: BackendFactory()))
        }
        if side == "tracing" || side == "all" {
            let tracing = TracingMonitor(tracer: tracer)
            monitors.append(tracing)
            adapters.append(tracing.injector())
        }
        let manager = SessionManager(transport: transport, adapters: adapters, monitors: monitors)
        transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: baseURL, headers: ["Accept": "application/json"]),
                sessionManager: manager),
            completionQueue: DispatchQueue(label: "MonitorCost.completions"))
    }

    /// Runs `count` GETs of `items`, each started by the last one's completion; wall-clock and
    /// CPU microseconds per GET.
    func block(_ count: Int) -> (wall: Double, cpu: Double) {
        let finished = DispatchSemaphore(value: 0)
        let remaining = Countdown(count)
        let transfer = self.transfer
        @Sendable func next() {
            transfer.request(with: StackOverhead.endpoint) { result in
                guard case .success = result else { fatalError("a GET failed: \(result)") }
                if remaining.tick() == 0 { finished.signal() } else { next() }
            }
        }
        let (started, cpu) = (ContinuousClock.now, processCPU())
        next()
        finished.wait()
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        let spent = processCPU() - cpu
        Thread.sleep(forTimeInterval: 0.02)  // the monitors' queue catches up
        return ((Double(seconds) * 1e6 + Double(attoseconds) / 1e12) / Double(count), spent / Double(count))
    }
}

/// The CPU time the process has used, every thread's, in microseconds.
func processCPU() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e6 + Double(time.tv_nsec) / 1e3
}

/// A count of GETs still to run, taken down from any thread.
final class Countdown: @unchecked Sendable {  // Sendable: `lock` guards `left`.
    private let lock = NSLock()
    private var left: Int
    init(_ count: Int) { left = count }
    func tick() -> Int {
        lock.lock()
        defer { lock.unlock() }
        left -= 1
        return left
    }
}

/// Runs every side in turn, `rounds` blocks of `count` each, the order turning each round, and
/// prints each side's median per GET and its ratio to `none`.
func compare(rounds: Int, count: Int, _ stack: (String) -> Stack) {
    let stacks = sides.map { ($0, stack($0)) }
    for (_, stack) in stacks { _ = stack.block(max(count / 10, 1)) }  // warm up
    var times: [String: (wall: [Double], cpu: [Double])] = [:]
    for round in 0..<rounds {
        let order = round.isMultiple(of: 2) ? stacks : stacks.reversed()
        for (side, stack) in order {
            let (wall, cpu) = stack.block(count)
            times[side, default: ([], [])].wall.append(wall)
            times[side, default: ([], [])].cpu.append(cpu)
        }
    }
    let median = { (values: [Double]) in values.sorted()[values.count / 2] }
    let none = (wall: median(times["none"]?.wall ?? [1]), cpu: median(times["none"]?.cpu ?? [1]))
    print("side            wall µs/GET  ratio   CPU µs/GET  ratio")
    for side in sides {
        let (wall, cpu) = (median(times[side]?.wall ?? [0]), median(times[side]?.cpu ?? [0]))
        print(
            side.padding(toLength: 12, withPad: " ", startingAt: 0)
                + String(format: "  %11.2f  %.3fx  %10.2f  %.3fx", wall, wall / none.wall, cpu, cpu / none.cpu))
    }
}

// MARK: - Main

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "instructions" where arguments.count == 3 && instructionSides.contains(arguments[1]):
    _ = Stack(arguments[1], transport: InMemoryTransport(), baseURL: StackOverhead.baseURL).block(
        Int(arguments[2]) ?? 1_000)
    Thread.sleep(forTimeInterval: 1)  // every hook has run: counted, under callgrind
case "memory" where arguments.count == 3:
    compare(rounds: Int(arguments[2]) ?? 10, count: Int(arguments[1]) ?? 2_000) {
        Stack($0, transport: InMemoryTransport(), baseURL: StackOverhead.baseURL)
    }
case "loopback" where arguments.count == 5 || (arguments.count == 6 && sides.contains(arguments[5])):
    guard let base = URL(string: arguments[2]), let count = Int(arguments[3]), let rounds = Int(arguments[4]) else {
        exit(2)
    }
    print("loopback over \(arguments[1]), \(base.absoluteString)/items")
    let client =
        arguments[1] == "ahc"
        ? HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: AsyncHTTPClientTransport.strataConfiguration()) : nil
    let stack = { (side: String) in
        Stack(
            side,
            transport: client.map { AsyncHTTPClientTransport(client: $0, decompresses: true) } ?? URLSessionTransport(),
            baseURL: base)
    }
    if arguments.count == 6 {
        // One side alone, to be profiled.
        let side = stack(arguments[5])
        for _ in 0..<rounds { _ = side.block(count) }
    } else {
        compare(rounds: rounds, count: count, stack)
    }
    try client?.syncShutdown()
default:
    print(
        """
        usage: MonitorCost instructions none|logging|metrics|tracing|all|tracing-otel|all-otel|tracing-noop|all-noop COUNT
               MonitorCost memory COUNT ROUNDS
               MonitorCost loopback urlsession|ahc BASE-URL COUNT ROUNDS [SIDE]   (a side alone: for a profiler)
        """)
    exit(2)
}
