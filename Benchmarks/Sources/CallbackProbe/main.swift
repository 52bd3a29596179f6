import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import StackFixture
import Strata
import StrataAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Runs GETs of `/items` one at a time through a callback API, for a profiler to watch (the figures
// are the side-by-side benchmarks' "Loopback GET, callback API …"):
//
//   CallbackProbe raw|strata BASE-URL COUNT      # one side: perf record -g CallbackProbe strata …
//   CallbackProbe both BASE-URL COUNT ROUNDS     # both in turn, blocks of COUNT, medians per GET
//   CallbackProbe both BASE-URL COUNT ROUNDS 64  # the same with 64 GETs in flight
//   CallbackProbe LAYER BASE-URL COUNT ROUNDS    # one layer against `raw`, the median of the rounds' ratios
//   CallbackProbe LAYER BASE-URL COUNT 0         # the layer alone
//
// `raw` is AsyncHTTPClient's future API, the body decoded on a serial queue of the caller's;
// `strata` is Strata's callback API over AsyncHTTPClientTransport, completing on a serial queue.
// The layers stop lower down, each decoding where its completion runs: `transport` is
// AsyncHTTPClientTransport alone (the body handed to the caller's queue, as `raw` does), `manager`
// a SessionManager over it, `service` a DefaultNetworkService over that; `raw-no-deadline` is
// `raw` without the deadline it gives AsyncHTTPClient; `raw-objects` is `raw` with 40 objects of
// its own a GET, made on the caller's thread and each touched on the event loop and on the
// caller's queue, as a request's objects are; `raw-one-loop` is `raw` with every GET's delegate,
// and so its connection, on one event loop (AsyncHTTPClient otherwise takes the group's loops in
// turn for a caller off the loops, while the one idle connection stays on one of them).
// `raw-burn-before` and `raw-burn-after` are `raw` with a fixed amount of work (STRATA_PROBE_BURN
// steps) on the caller's thread before or after the request is handed to AsyncHTTPClient: which
// of a layer's work lies on the path from one response to the next request. `minimal` is a sketch
// of a pipeline of one object over AsyncHTTPClientTransport (see `MinimalCall`). `raw-accumulator`
// is `raw` through AsyncHTTPClient's generic delegate API with its own `ResponseAccumulator`, and
// `raw-delegate` the same with the smallest delegate a streaming transport could have (see
// `BareDelegate`): what any transport built on that API pays before a line of Strata runs.
// `STRATA_PROBE_LOOPS=N` gives the client a group of N event loops of its own instead of the
// default group's (one per core): with one, every GET's delegate runs on its connection's loop.
let arguments = CommandLine.arguments
guard arguments.count >= 4, let base = URL(string: arguments[2]), let count = Int(arguments[3]), count > 0 else {
    print("usage: CallbackProbe raw|strata|both BASE-URL COUNT [ROUNDS [WIDTH]]")
    exit(2)
}
do {
    try HTTPURLCheck.validate(base)
} catch {
    print("CallbackProbe: \(arguments[2]) cannot be sent to: \(error)")
    exit(2)
}
let rounds = arguments.count > 4 ? Int(arguments[4]) ?? 20 : 20
let width = arguments.count > 5 ? max(1, Int(arguments[5]) ?? 1) : 1

let loops = Int(ProcessInfo.processInfo.environment["STRATA_PROBE_LOOPS"] ?? "").map {
    MultiThreadedEventLoopGroup(numberOfThreads: max(1, $0))
}
let client = HTTPClient(
    eventLoopGroup: loops ?? HTTPClient.defaultEventLoopGroup,
    configuration: AsyncHTTPClientTransport.strataConfiguration())
let request = try HTTPClient.Request(url: base.appendingPathComponent("items").absoluteString)
let transport = AsyncHTTPClientTransport(client: client, decompresses: true)
let strata = DefaultDataTransferService(
    networkService: DefaultNetworkService(
        configuration: NetworkConfiguration(baseURL: base), sessionManager: SessionManager(transport: transport)),
    completionQueue: DispatchQueue(label: "Probe.strata"))
let callerQueue = DispatchQueue(label: "Probe.caller")

typealias Side = @Sendable (@escaping @Sendable (StackOverhead.Page?) -> Void) -> Void

@Sendable func decodePage(_ body: Data?) -> StackOverhead.Page? {
    body.flatMap { try? JSONDecoder().decode(StackOverhead.Page.self, from: $0) }
}

/// Collects a body from the transport, then hands it on, asking for each part once the last has
/// come. The head may come before `send` has returned the exchange to ask: `start` asks then.
final class Collector: ResponseReceiver, @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
    private let lock = NSLock()
    private var body = Data()
    private var exchange: (any ResponseExchange)?
    private var headArrived = false
    private let done: @Sendable (Data?) -> Void
    init(_ done: @escaping @Sendable (Data?) -> Void) { self.done = done }

    /// Sets the exchange to ask; asks for the first part if the head has come.
    func start(_ exchange: any ResponseExchange) {
        let asks = lock.withLock {
            self.exchange = exchange
            return headArrived
        }
        if asks { exchange.demand() }
    }

    func receive(_ head: ResponseHead) {
        lock.withLock { () -> (any ResponseExchange)? in
            headArrived = true
            return exchange
        }?.demand()
    }
    func receive(_ part: Data) {
        lock.withLock { () -> (any ResponseExchange)? in
            body.append(part)
            return exchange
        }?.demand()
    }
    func finish(_ error: (any Error)?) {
        let body = lock.withLock {
            exchange = nil
            return self.body
        }
        done(error == nil ? body : nil)
    }
}

let manager = SessionManager(transport: transport)
let service = DefaultNetworkService(configuration: NetworkConfiguration(baseURL: base), sessionManager: manager)
let urlRequest = URLRequest(url: base.appendingPathComponent("items"))
/// One of `raw-objects`' objects: a link of a chain, with a count to touch.
final class Link: @unchecked Sendable {  // Sendable: touched by one thread at a time, in turn.
    var touches = 0
    let next: Link?
    init(_ next: Link?) { self.next = next }
    static func chain(_ count: Int) -> Link? { (0..<count).reduce(nil) { chain, _ in Link(chain) } }
    func touch() {
        var link: Link? = self
        while let current = link {
            current.touches += 1
            link = current.next
        }
    }
}

let minimalConfiguration = NetworkConfiguration(baseURL: base)
/// `minimal`: what a request costs in a pipeline of one object. It keeps what every plain GET of
/// Strata's needs — the endpoint's `URLRequest`, the checks of the URL and the headers, one
/// completion guarded against cancellation, a deadline entry, the status check — and nothing else:
/// no layers, no steps, no closures of its own. (Sendable: `lock` guards the `var`s.)
final class MinimalCall: ResponseReceiver, NetworkCancellable, @unchecked Sendable {
    /// The deadline entries, as a session's table keeps them.
    final class Deadlines: @unchecked Sendable {  // Sendable: `lock` guards the `var`s.
        let lock = NSLock()
        var entries: [Int: (UInt64, MinimalCall)] = [:]
        var next = 0
        func start(_ call: MinimalCall) -> Int {
            let deadline = DispatchTime.now().uptimeNanoseconds + 60_000_000_000
            return lock.withLock {
                defer { next += 1 }
                entries[next] = (deadline, call)
                return next
            }
        }
        func cancel(_ id: Int) { _ = lock.withLock { entries.removeValue(forKey: id) } }
    }
    static let deadlines = Deadlines()
    private let lock = NSLock()
    private var exchange: (any ResponseExchange)?
    private var status = 0
    private var body = Data()
    private var done: (@Sendable (StackOverhead.Page?) -> Void)?
    private var deadline: Int?
    private let queue: DispatchQueue
    init(_ queue: DispatchQueue, _ done: @escaping @Sendable (StackOverhead.Page?) -> Void) {
        (self.queue, self.done) = (queue, done)
    }

    static func start(
        over transport: some Transport, with configuration: NetworkConfiguration, completingOn queue: DispatchQueue,
        _ done: @escaping @Sendable (StackOverhead.Page?) -> Void
    ) {
        let call = MinimalCall(queue, done)
        guard let request = try? Endpoint<StackOverhead.Page>(path: "items").urlRequest(with: configuration),
            let url = request.url, (try? transport.validate(url)) != nil,
            (request.allHTTPHeaderFields ?? [:]).allSatisfy({ (try? HTTPHeader(name: $0, value: $1).validate()) != nil }
            )
        else { return call.complete(nil) }
        // The entry first: the response may come, and complete the call, before `send` returns.
        let id = deadlines.start(call)
        call.lock.withLock { call.deadline = id }
        let exchange = transport.send(TransportAttempt(request: request), to: call)
        let asks = call.lock.withLock {
            call.exchange = exchange
            return call.status != 0
        }
        if asks { exchange.demand() }
    }

    func receive(_ head: ResponseHead) {
        lock.withLock { () -> (any ResponseExchange)? in
            status = head.statusCode
            return exchange
        }?.demand()
    }
    func receive(_ part: Data) {
        lock.withLock { () -> (any ResponseExchange)? in
            body.append(part)
            return exchange
        }?.demand()
    }
    func finish(_ error: (any Error)?) {
        let ok = error == nil && lock.withLock { (200..<300).contains(status) }
        complete(ok ? lock.withLock { body } : nil)
    }
    var isCancelled: Bool { lock.withLock { done == nil } }
    func cancel() {
        complete(nil)
        lock.withLock { exchange }?.cancel()
    }
    private func complete(_ body: Data?) {
        let (done, deadline) = lock.withLock {
            defer { self.done = nil }
            return (self.done, self.deadline)
        }
        guard let done else { return }
        queue.async { done(decodePage(body)) }
        if let deadline { Self.deadlines.cancel(deadline) }
    }
}

/// `raw-delegate`'s delegate: the body's parts appended as they come, nothing else. A transport
/// that streams over AsyncHTTPClient has a delegate of its own like this one at the least, and so
/// calls the generic `execute(request:delegate:deadline:)` from outside AsyncHTTPClient's module.
final class BareDelegate: HTTPClientResponseDelegate, @unchecked Sendable {  // Sendable: one event loop.
    typealias Response = Data?
    private var status = 0
    private var body = Data()
    func didReceiveHead(task: HTTPClient.Task<Data?>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = Int(head.status.code)
        return task.eventLoop.makeSucceededVoidFuture()
    }
    func didReceiveBodyPart(task: HTTPClient.Task<Data?>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        buffer.withUnsafeReadableBytes { body.append(contentsOf: $0) }
        return task.eventLoop.makeSucceededVoidFuture()
    }
    func didFinishRequest(task: HTTPClient.Task<Data?>) throws -> Data? {
        (200..<300).contains(status) ? body : nil
    }
}

/// The event loop `raw-one-loop` runs every GET's delegate on (and so its connection).
let oneLoop = HTTPClient.defaultEventLoopGroup.next()
/// How many steps the `raw-burn-…` modes burn a GET (`STRATA_PROBE_BURN`).
let burnSteps = max(0, Int(ProcessInfo.processInfo.environment["STRATA_PROBE_BURN"] ?? "") ?? 0)

/// A fixed amount of work on the calling thread, which the optimizer cannot drop.
@inline(never) @Sendable func burn() {
    var value: UInt64 = 1
    for step in 0..<burnSteps { value = value &* 6_364_136_223_846_793_005 &+ UInt64(step) }
    if value == 42 { print("") }
}
if burnSteps > 0 {
    let started = ContinuousClock.now
    for _ in 0..<100 { burn() }
    print("one burn: \((ContinuousClock.now - started) / 100)")
}
let raw: Side = { done in
    client.execute(request: request, deadline: .now() + .seconds(60)).whenComplete { result in
        callerQueue.async {
            let body = try? result.get().body
            done(body.flatMap { try? JSONDecoder().decode(StackOverhead.Page.self, from: $0) })
        }
    }
}
let layers: [String: Side] = [
    "minimal": { done in
        MinimalCall.start(over: transport, with: minimalConfiguration, completingOn: callerQueue, done)
    },
    "raw-burn-before": { done in
        burn()
        raw(done)
    },
    "raw-burn-after": { done in
        raw(done)
        burn()
    },
    "raw-objects": { done in
        let chain = Link.chain(40)
        client.execute(request: request, deadline: .now() + .seconds(60)).whenComplete { result in
            chain?.touch()
            callerQueue.async {
                chain?.touch()
                done(decodePage(try? result.get().body.map { Data(buffer: $0) }))
            }
        }
    },
    "raw-one-loop": { done in
        client.execute(request: request, eventLoop: .delegate(on: oneLoop), deadline: .now() + .seconds(60))
            .whenComplete { result in
                callerQueue.async { done(decodePage(try? result.get().body.map { Data(buffer: $0) })) }
            }
    },
    "raw-accumulator": { done in
        client.execute(
            request: request, delegate: ResponseAccumulator(request: request), deadline: .now() + .seconds(60)
        )
        .futureResult.whenComplete { result in
            callerQueue.async { done(decodePage(try? result.get().body.map { Data(buffer: $0) })) }
        }
    },
    "raw-delegate": { done in
        client.execute(request: request, delegate: BareDelegate(), deadline: .now() + .seconds(60))
            .futureResult.whenComplete { result in
                callerQueue.async { done(decodePage(try? result.get())) }
            }
    },
    "raw-no-deadline": { done in
        client.execute(request: request).whenComplete { result in
            callerQueue.async { done(decodePage(try? result.get().body.map { Data(buffer: $0) })) }
        }
    },
    "transport": { done in
        let collector = Collector { body in callerQueue.async { done(decodePage(body)) } }
        collector.start(transport.send(TransportAttempt(request: urlRequest), to: collector))
    },
    "manager": { done in
        manager.send(urlRequest, options: RequestOptions()) { done(decodePage($0.body)) }
    },
    "service": { done in
        service.request(endpoint: Endpoint<Void>(path: "items")) { done(decodePage(try? $0.get().body)) }
    },
]

let overStrata: Side = { done in
    strata.request(with: Endpoint<StackOverhead.Page>(path: "items")) { done(try? $0.get()) }
}

/// The GETs of a block: how many may still start, and how many are still to finish.
final class Countdown: @unchecked Sendable {  // Sendable: `lock` guards the counts.
    private let lock = NSLock()
    private var toStart: Int
    private var toFinish: Int
    init(_ count: Int) { (toStart, toFinish) = (count, count) }
    func start() -> Bool {
        lock.withLock {
            toStart -= 1
            return toStart >= 0
        }
    }
    func finish() -> Int {
        lock.withLock {
            toFinish -= 1
            return toFinish
        }
    }
}

/// Runs `side` `count` times, `width` at once, each GET started by a completion; microseconds per GET.
func block(_ side: @escaping Side) -> Double {
    let finished = DispatchSemaphore(value: 0)
    let remaining = Countdown(count)
    @Sendable func next() {
        guard remaining.start() else { return }
        side { page in
            guard page != nil else { fatalError("a GET failed") }
            if remaining.finish() == 0 { finished.signal() } else { next() }
        }
    }
    let started = ContinuousClock.now
    for _ in 0..<width { next() }
    finished.wait()
    let (seconds, attoseconds) = (ContinuousClock.now - started).components
    return (Double(seconds) * 1e6 + Double(attoseconds) / 1e12) / Double(count)
}

switch (arguments[1], layers[arguments[1]]) {
case ("raw", _): print("raw: \(block(raw)) µs per GET")
case ("strata", _): print("strata: \(block(overStrata)) µs per GET")
case (let name, let layer?):
    // No rounds: the layer alone, once, for a profiler to watch.
    guard rounds > 0 else {
        print("\(name): \(block(layer)) µs per GET")
        break
    }
    var ratios: [Double] = []
    for round in 0..<rounds {
        let (rawTime, layerTime): (Double, Double)
        if round.isMultiple(of: 2) {
            rawTime = block(raw)
            layerTime = block(layer)
        } else {
            layerTime = block(layer)
            rawTime = block(raw)
        }
        ratios.append(layerTime / rawTime)
    }
    print("\(name): median of the rounds' ratios to raw \(ratios.sorted()[ratios.count / 2])")
default:
    var times: (raw: [Double], strata: [Double]) = ([], [])
    for round in 0..<rounds {
        if round.isMultiple(of: 2) {
            times.raw.append(block(raw))
            times.strata.append(block(overStrata))
        } else {
            times.strata.append(block(overStrata))
            times.raw.append(block(raw))
        }
    }
    let median = { (values: [Double]) in values.sorted()[values.count / 2] }
    let (r, s) = (median(times.raw), median(times.strata))
    // The machine drifts between rounds (a block's time moves by a fifth from one run to the next);
    // each round's two blocks ran back to back, so the median of their ratios drifts less.
    let paired = median(zip(times.strata, times.raw).map { $0 / $1 })
    print("median per GET: raw \(r) µs, Strata \(s) µs, ratio \(s / r), median of the rounds' ratios \(paired)")
}
// Shut down without `await`: an async top level parks the main thread in `dispatch_main`, whose
// `sigsuspend` valgrind 3.19 cannot follow on this kernel.
let shutDown = DispatchSemaphore(value: 0)
client.shutdown { _ in shutDown.signal() }
shutDown.wait()
