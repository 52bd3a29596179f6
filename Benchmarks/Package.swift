// swift-tools-version: 6.1
import PackageDescription

// Benchmarks: what Strata costs on top of URLSession, measured side by side in one process with
// ordo-one/benchmark. Its own package, so the framework keeps no dependencies.
//
//   swift package --package-path Benchmarks benchmark          # every benchmark
//   scripts/bench.sh                                           # the same, with one table of ratios

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(name: "StrataIntegrationTests", path: "../IntegrationTests"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataTestServer", package: "StrataIntegrationTests"),
            ],
            path: "Benchmarks/StrataBenchmarks",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
            ],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
