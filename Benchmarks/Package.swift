// swift-tools-version: 6.1
import PackageDescription

// Benchmarks: what Strata costs on top of URLSession, measured side by side in one process with
// ordo-one/benchmark. Its own package, so the framework keeps no dependencies.
//
//   swift package --package-path Benchmarks benchmark          # every benchmark
//   scripts/bench.sh                                           # the same, with one table of ratios

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(name: "StrataIntegrationTests", path: "../IntegrationTests"),
        .package(name: "StrataAsyncHTTPClient", path: "../StrataAsyncHTTPClient"),
        .package(name: "StrataObservability", path: "../StrataObservability"),
        // What the monitors log, count and trace through: the cost of each monitor is measured.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // A tracer as a server runs one: swift-otel's, its spans batched and exported to nowhere.
        // The HTTP exporter's trait alone (without one, 1.6.0 does not build on Linux): no gRPC.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The transport's peer: raw AsyncHTTPClient, measured side by side with Strata over it.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
        // The XML peer, measured side by side on the same documents; never a dependency of Strata.
        .package(url: "https://github.com/CoreOffice/XMLCoder.git", from: "0.18.2"),
        // The Server-Sent Events peer, measured side by side on the same bytes. (mattt/EventSource
        // 1.1.1, the other one, does not build on Linux: it calls `URLSession.bytes(for:)`, which
        // FoundationNetworking lacks, in the module that holds its parser.)
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
    ],
    targets: [
        // The stack-overhead fixture, shared by the benchmark and by StackInstructions.
        .target(
            name: "StackFixture",
            dependencies: [.product(name: "Strata", package: "Strata")],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "StackInstructions",
            dependencies: ["StackFixture", .product(name: "Strata", package: "Strata")],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "StreamProbe",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataTestServer", package: "StrataIntegrationTests"),
                .product(name: "StrataAsyncHTTPClient", package: "StrataAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "CallbackProbe",
            dependencies: [
                "StackFixture", .product(name: "Strata", package: "Strata"),
                .product(name: "StrataAsyncHTTPClient", package: "StrataAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "MonitorCost",
            dependencies: [
                "StackFixture", .product(name: "Strata", package: "Strata"),
                .product(name: "StrataObservability", package: "StrataObservability"),
                .product(name: "StrataAsyncHTTPClient", package: "StrataAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "LoopbackBody",
            dependencies: ["StackFixture"],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "XMLInstructions",
            dependencies: [
                "StackFixture", .product(name: "StrataEncoding", package: "Strata"),
                .product(name: "XMLCoder", package: "XMLCoder"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                "StackFixture",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataEncoding", package: "Strata"),
                .product(name: "StrataTestServer", package: "StrataIntegrationTests"),
                .product(name: "XMLCoder", package: "XMLCoder"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "StrataAsyncHTTPClient", package: "StrataAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
            ],
            path: "Benchmarks/StrataBenchmarks",
            swiftSettings: settings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
