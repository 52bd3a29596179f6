// Runs the stack-overhead pair a given number of times, for valgrind's callgrind to count the
// instructions each side executes: unlike wall-clock time on a shared machine, the count is the
// same on every run. `scripts/bench.sh` runs it at two counts and takes the difference per request.
//
//   StackInstructions baseline 1000
//   StackInstructions strata 1000
//   StackInstructions get-request 1000      # the stack's GET endpoint's URLRequest, built
//   StackInstructions post-request 1000     # a JSON POST endpoint's URLRequest, built
//   StackInstructions headers-adapter 1000  # a HeadersAdapter writing two fields
//   StackInstructions framing 1000          # an attempt's framing, read from its fields
//
// Each side runs as the wall-clock benchmark runs it: the Strata side awaits the data transfer
// service's async method, request after request, in one task. The in-memory session answers at
// once, so the task never waits and the count is the stack's own work, the async bridge included.
// The main thread waits on a semaphore rather than awaiting the task (valgrind fails on a program
// whose top-level code awaits).

import Dispatch
import Foundation
import StackFixture
import Strata

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let arguments = CommandLine.arguments.dropFirst()
let side = arguments.first ?? "strata"
let count = Int(arguments.dropFirst().first ?? "") ?? 1_000

guard ["baseline", "strata", "get-request", "post-request", "headers-adapter", "framing"].contains(side) else {
    print("usage: StackInstructions baseline|strata|get-request|post-request|headers-adapter|framing [count]")
    exit(2)
}

/// A JSON body for `post-request`.
struct NewItem: Encodable, Sendable {
    let name: String
    let count: Int
}

// What a request's fields cost to read and write, on their own: an encoding's `Content-Type`, an adapter's
// fields (on Linux, FoundationNetworking's `setValue(_:forHTTPHeaderField:)` copies every field and
// capitalizes the name on each call).
switch side {
case "get-request":
    // Three fields (two shared, one the endpoint's) and a query.
    var fields = 0
    for _ in 0..<count {
        fields &+=
            (try? StackOverhead.endpoint.urlRequest(with: StackOverhead.configuration))?.allHTTPHeaderFields?.count ?? 0
    }
    print(fields)
    exit(0)
case "post-request":
    var fields = 0
    for index in 0..<count {
        let endpoint = Endpoint<Void>(
            path: "items", method: .post, bodyParametersEncodable: NewItem(name: "item", count: index))
        fields &+= (try? endpoint.urlRequest(with: StackOverhead.configuration))?.allHTTPHeaderFields?.count ?? 0
    }
    print(fields)
    exit(0)
case "headers-adapter":
    let adapter = HeadersAdapter(["X-Api-Key": "key", "X-Request-Source": "bench"])
    let request = try StackOverhead.endpoint.urlRequest(with: StackOverhead.configuration)
    // The adapter completes before `adapt` returns.
    nonisolated(unsafe) var fields = 0
    for _ in 0..<count {
        adapter.adapt(request) { result in fields &+= (try? result.get())?.allHTTPHeaderFields?.count ?? 0 }
    }
    print(fields)
    exit(0)
case "framing":
    // The pipeline frames every attempt, and a transport a request handed to it directly.
    let request = try StackOverhead.endpoint.urlRequest(with: StackOverhead.configuration)
    var fields = 0
    for _ in 0..<count {
        fields &+= request.framedByItsBody().allHTTPHeaderFields?.count ?? 0
    }
    print(fields)
    exit(0)
default: break
}

let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        if side == "baseline" {
            let decoder = JSONDecoder()
            for _ in 0..<count {
                _ = try StackOverhead.baseline(decoder: decoder)
            }
        } else {
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: StackOverhead.configuration, sessionManager: StackOverhead.InMemorySessionManager())
            )
            for _ in 0..<count {
                _ = try await transfer.request(StackOverhead.endpoint)
            }
        }
    } catch {
        print("failed: \(error)")
        exit(1)
    }
    finished.signal()
}
finished.wait()
