import Benchmark
import StackFixture

let benchmarks: @Sendable () -> Void = {
    StackOverhead.register()
    Loopback.register()
    Encoders.register()
    XMLPeers.register()
    Memory.register()
}
