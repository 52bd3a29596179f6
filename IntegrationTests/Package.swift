// swift-tools-version: 6.1
import PackageDescription

// Integration tests: a real HTTP/1.1 server on loopback (SwiftNIO) and the suites that run every
// Strata layer through it. Its own package, so the framework itself keeps no dependencies.

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "StrataIntegrationTests",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "StrataTestServer", targets: ["StrataTestServer"])
    ],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(name: "StrataAsyncHTTPClient", path: "../StrataAsyncHTTPClient"),
        .package(name: "StrataObservability", path: "../StrataObservability"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .target(
            name: "StrataTestServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings
        ),
        .target(
            name: "StrataTestTransports",
            dependencies: [
                "StrataTestServer",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataAsyncHTTPClient", package: "StrataAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "UploadMemoryCheck",
            dependencies: [
                "StrataTestServer",
                "StrataTestTransports",
                .product(name: "Strata", package: "Strata"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "FaultProbe",
            dependencies: [
                "StrataTestServer",
                "StrataTestTransports",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataTesting", package: "Strata"),
            ],
            swiftSettings: settings
        ),
        .testTarget(
            name: "StrataIntegrationTests",
            dependencies: [
                "StrataTestServer",
                "StrataTestTransports",
                .product(name: "StrataAsyncHTTPClient", package: "StrataAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataTesting", package: "Strata"),
                .product(name: "StrataObservability", package: "StrataObservability"),
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
