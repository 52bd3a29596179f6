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
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
        // The XML peer, measured side by side on the same documents; never a dependency of Strata.
        .package(url: "https://github.com/CoreOffice/XMLCoder.git", from: "0.18.2"),
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
            ],
            path: "Benchmarks/StrataBenchmarks",
            swiftSettings: settings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
