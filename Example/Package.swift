// swift-tools-version: 6.1
import PackageDescription

// A command-line shop client built in clean architecture on Strata:
//
//   ShopDomain   entities, repository protocols and domain errors; knows nothing of HTTP
//   ShopData     endpoints per API area, repository implementations over an injected
//                DataTransferService, the error resolver and the token authenticator
//   ShopDemoAPI  the demo API served in-process on loopback for the `local` environment
//   ShopApp      the composition root: picks the environment, wires the layers, runs the tour
//   StrataExample  the executable: `swift run --package-path Example`

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "StrataExample",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(name: "StrataAsyncHTTPClient", path: "../StrataAsyncHTTPClient"),
        .package(name: "StrataIntegrationTests", path: "../IntegrationTests"),
    ],
    targets: [
        .target(name: "ShopDomain", swiftSettings: settings),
        .target(
            name: "ShopData",
            dependencies: ["ShopDomain", .product(name: "Strata", package: "Strata")],
            swiftSettings: settings
        ),
        .target(
            name: "ShopDemoAPI",
            dependencies: [.product(name: "StrataTestServer", package: "StrataIntegrationTests")],
            swiftSettings: settings
        ),
        .target(
            name: "ShopApp",
            dependencies: [
                "ShopDomain", "ShopData", "ShopDemoAPI", .product(name: "Strata", package: "Strata"),
                .product(name: "StrataAsyncHTTPClient", package: "StrataAsyncHTTPClient"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(name: "StrataExample", dependencies: ["ShopApp"], swiftSettings: settings),
        .testTarget(
            name: "ShopTests",
            dependencies: [
                "ShopDomain", "ShopData", "ShopApp",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataTesting", package: "Strata"),
            ],
            swiftSettings: settings
        ),
    ],
    swiftLanguageModes: [.v6]
)
