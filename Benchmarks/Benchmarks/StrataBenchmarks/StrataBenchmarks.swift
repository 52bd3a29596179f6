import Benchmark
import Foundation
import Strata

let benchmarks: @Sendable () -> Void = {
    StackOverhead.register()
}
