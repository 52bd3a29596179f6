// swift-tools-version: 6.1
import PackageDescription

// Strata over AsyncHTTPClient: a transport for Strata's pipeline on SwiftNIO. Its own package, so
// the framework itself keeps no dependencies; it depends on Strata by path.

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "StrataAsyncHTTPClient",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "StrataAsyncHTTPClient", targets: ["StrataAsyncHTTPClient"])
    ],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    ],
    targets: [
        .target(
            name: "StrataAsyncHTTPClient",
            dependencies: [
                .product(name: "StrataCore", package: "Strata"),
                .product(name: "StrataSession", package: "Strata"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                "CStrataCompression",
            ],
            swiftSettings: settings
        ),
        // The system's zlib (on Debian, `zlib1g-dev`; in every Apple SDK), which decodes bodies;
        // brotli and zstd are opened at run time, so building needs no headers of theirs.
        .target(name: "CStrataCompression", linkerSettings: [.linkedLibrary("z")]),
        .testTarget(
            name: "StrataAsyncHTTPClientTests",
            dependencies: [
                "StrataAsyncHTTPClient",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataCore", package: "Strata"),
                .product(name: "StrataSession", package: "Strata"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                "CStrataCompression",
            ],
            swiftSettings: settings
        ),
    ],
    swiftLanguageModes: [.v6]
)
