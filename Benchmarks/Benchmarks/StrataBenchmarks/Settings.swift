import Benchmark
import Foundation

/// What every benchmark here shares: the smoke switch and the configurations.
enum Settings {
    /// A short run that only proves the benchmarks build and run (`BENCH_SMOKE=1`).
    static let smoke = ProcessInfo.processInfo.environment["BENCH_SMOKE"] == "1"

    /// How many operations (requests, documents) one iteration ran; `scripts/bench.sh` divides the
    /// iteration's time and allocations by it.
    static let operations = BenchmarkMetric.custom("Operations", useScalingFactor: false)

    /// The bytes one operation handled, for throughput in MB/s.
    static let bytes = BenchmarkMetric.custom("Bytes", polarity: .prefersLarger, useScalingFactor: false)

    /// A configuration whose iterations each record how many operations they ran, and how many bytes
    /// each handled, with ``record(_:operations:bytes:)``.
    static func configuration(
        metrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .mallocCountTotal],
        seconds: Int = 3,
        iterations: Int = 100_000
    ) -> Benchmark.Configuration {
        Benchmark.Configuration(
            metrics: metrics + [.throughput, operations, bytes],
            warmupIterations: smoke ? 0 : 10,
            scalingFactor: .one,
            maxDuration: smoke ? .milliseconds(200) : .seconds(seconds),
            maxIterations: smoke ? 2 : iterations
        )
    }
}

extension Benchmark {
    /// Records what one iteration did: `operations` operations of `bytes` bytes each.
    func record(operations: Int, bytes: Int = 0) {
        measurement(Settings.operations, operations)
        measurement(Settings.bytes, bytes)
    }
}
