import Benchmark
import StackFixture

let benchmarks: @Sendable () -> Void = {
    StackOverhead.register()
    Loopback.register()
    LoopbackAsyncHTTPClient.register()
    LoopbackCallbacks.register()
    Encoders.register()
    XMLPeers.register()
    SSEPeers.register()
    Memory.register()
}
