import Benchmark

let benchmarks: @Sendable () -> Void = {
    StackOverhead.register()
    Loopback.register()
    Encoders.register()
    Memory.register()
}
