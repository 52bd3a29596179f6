// Runs the stack-overhead pair a given number of times, for valgrind's callgrind to count the
// instructions each side executes: unlike wall-clock time on a shared machine, the count is the
// same on every run. `scripts/bench.sh` runs it at two counts and takes the difference per request.
//
//   StackInstructions baseline 1000
//   StackInstructions strata 1000
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

let arguments = CommandLine.arguments.dropFirst()
let side = arguments.first ?? "strata"
let count = Int(arguments.dropFirst().first ?? "") ?? 1_000

guard ["baseline", "strata"].contains(side) else {
    print("usage: StackInstructions baseline|strata [count]")
    exit(2)
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
