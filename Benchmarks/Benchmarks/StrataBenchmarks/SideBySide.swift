import Benchmark
import Foundation
import MallocInterposerSwift

/// A baseline and Strata measured in the same process and the same run: every iteration runs both,
/// in alternating order, and records each side's wall-clock time and allocations. Drift on a shared
/// machine then moves both sides alike, where separate runs minutes apart can differ by ±20 %.
enum SideBySide {
    static let baselineTime = BenchmarkMetric.custom("Baseline time (ns)", useScalingFactor: false)
    static let strataTime = BenchmarkMetric.custom("Strata time (ns)", useScalingFactor: false)
    static let baselineMallocs = BenchmarkMetric.custom("Baseline mallocs", useScalingFactor: false)
    static let strataMallocs = BenchmarkMetric.custom("Strata mallocs", useScalingFactor: false)

    /// Registers "`group`": each iteration runs `baseline` and `strata` once each, and each runs
    /// `operations` operations (requests, documents) of `bytes` bytes each. With
    /// `oneSidePerIteration`, iterations run the two in turn instead: for sides of a second or
    /// more, as the benchmark package records no throughput for an iteration past two seconds, and
    /// its JMH export needs one.
    static func register(
        _ group: String,
        operations: Int,
        bytes: Int = 0,
        iterations: Int = 100_000,
        seconds: Int = 3,
        oneSidePerIteration: Bool = false,
        setup: Benchmark.BenchmarkSetupHook? = nil,
        teardown: Benchmark.BenchmarkTeardownHook? = nil,
        baseline: @escaping @Sendable () async throws -> Void,
        strata: @escaping @Sendable () async throws -> Void
    ) {
        // Malloc counting must be on for the interposer's statistics to count.
        let configuration = Settings.configuration(
            metrics: [.wallClock, .mallocCountTotal, baselineTime, strataTime, baselineMallocs, strataMallocs],
            seconds: seconds,
            iterations: iterations
        )
        let turn = Shared<Int>()
        Benchmark(group, configuration: configuration) { benchmark in
            let iteration = (turn.value ?? 0) + 1
            turn.value = iteration
            let sides = [
                (baseline, baselineTime, baselineMallocs), (strata, strataTime, strataMallocs),
            ]
            let turn = iteration.isMultiple(of: 2) ? sides : sides.reversed()
            for (run, time, mallocs) in oneSidePerIteration ? Array(turn.prefix(1)) : turn {
                let allocated = MallocInterposerSwift.getStatistics().mallocCount
                let started = ContinuousClock.now
                try await run()
                let elapsed = ContinuousClock.now - started
                benchmark.measurement(mallocs, MallocInterposerSwift.getStatistics().mallocCount - allocated)
                let (seconds, attoseconds) = elapsed.components
                benchmark.measurement(time, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
            }
            benchmark.record(operations: operations, bytes: bytes)
        } setup: {
            try await setup?()
        } teardown: {
            try await teardown?()
        }
    }
}
