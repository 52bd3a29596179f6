// swift-tools-version: 6.1
import PackageDescription

// Strata in the server-side Swift ecosystem's observability: logging through swift-log, metrics
// through swift-metrics, tracing through swift-distributed-tracing. Its own package, so the framework itself keeps no dependencies; it depends
// on Strata by path.

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "StrataObservability",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "StrataObservability", targets: ["StrataObservability"])
    ],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "StrataObservability",
            dependencies: [
                .product(name: "StrataCore", package: "Strata"),
                .product(name: "StrataSession", package: "Strata"),
                .product(name: "StrataService", package: "Strata"),
                .product(name: "StrataTransfer", package: "Strata"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: settings
        ),
        .testTarget(
            name: "StrataObservabilityTests",
            dependencies: [
                "StrataObservability",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataTesting", package: "Strata"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: settings
        ),
    ],
    swiftLanguageModes: [.v6]
)
