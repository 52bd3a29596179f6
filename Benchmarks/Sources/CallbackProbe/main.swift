import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import StackFixture
import Strata
import StrataAsyncHTTPClient

// Runs GETs of `/items` one at a time through a callback API, for a profiler to watch (the figures
// are the side-by-side benchmarks' "Loopback GET, callback API …"):
//
//   CallbackProbe raw|strata BASE-URL COUNT      # one side: perf record -g CallbackProbe strata …
//   CallbackProbe both BASE-URL COUNT ROUNDS     # both in turn, blocks of COUNT, medians per GET
//   CallbackProbe both BASE-URL COUNT ROUNDS 64  # the same with 64 GETs in flight
//
// `raw` is AsyncHTTPClient's future API, the body decoded on a serial queue of the caller's;
// `strata` is Strata's callback API over AsyncHTTPClientTransport, completing on a serial queue.
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

switch arguments[1] {
case "raw": print("raw: \(block(raw)) µs per GET")
case "strata": print("strata: \(block(overStrata)) µs per GET")
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
try await client.shutdown()
