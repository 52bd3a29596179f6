import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
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
let arguments = CommandLine.arguments
guard arguments.count >= 4, let base = URL(string: arguments[2]), let count = Int(arguments[3]), count > 0 else {
    print("usage: CallbackProbe raw|strata|both BASE-URL COUNT [ROUNDS [WIDTH]]")
    exit(2)
}
let rounds = arguments.count > 4 ? Int(arguments[4]) ?? 20 : 20
let width = arguments.count > 5 ? max(1, Int(arguments[5]) ?? 1) : 1

let client = HTTPClient(
    eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: AsyncHTTPClientTransport.strataConfiguration())
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

/// The event loop `raw-one-loop` runs every GET's delegate on (and so its connection).
let oneLoop = HTTPClient.defaultEventLoopGroup.next()
let layers: [String: Side] = [
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

let raw: Side = { done in
    client.execute(request: request, deadline: .now() + .seconds(60)).whenComplete { result in
        callerQueue.async {
            let body = try? result.get().body
            done(body.flatMap { try? JSONDecoder().decode(StackOverhead.Page.self, from: $0) })
        }
    }
}
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
try await client.shutdown().get()
