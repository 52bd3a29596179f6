// Runs the stack-overhead pair a given number of times, for valgrind's callgrind to count the
// instructions each side executes: unlike wall-clock time on a shared machine, the count is the
// same on every run. `scripts/bench.sh` runs it at two counts and takes the difference per request.
//
//   StackInstructions baseline 1000
//   StackInstructions strata 1000
//
// The Strata side uses the callback API with completions on the main queue, which never runs
// here: no thread starts (valgrind does not follow Swift's thread pool), and the figure is the
// stack's own work up to handing the result to its queue.

import Dispatch
import Foundation
import StackFixture
import Strata

let arguments = CommandLine.arguments.dropFirst()
let side = arguments.first ?? "strata"
let count = Int(arguments.dropFirst().first ?? "") ?? 1_000

switch side {
case "baseline":
    let decoder = JSONDecoder()
    for _ in 0..<count {
        _ = try StackOverhead.baseline(decoder: decoder)
    }
case "strata":
    let transfer = DefaultDataTransferService(
        networkService: DefaultNetworkService(
            configuration: StackOverhead.configuration, sessionManager: StackOverhead.InMemorySessionManager()),
        completionQueue: .main
    )
    for _ in 0..<count {
        transfer.request(with: StackOverhead.endpoint) { _ in }
    }
default:
    print("usage: StackInstructions baseline|strata [count]")
    exit(2)
}
