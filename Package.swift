// swift-tools-version: 6.1
import PackageDescription

/// One settings list for every target: Swift 6 language mode (complete concurrency checking)
/// plus the upcoming features the project relies on.
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The layers, bottom to top. Each names only the layers directly below it that it imports.
let layers: [(name: String, dependencies: [String])] = [
    ("StrataCore", []),
    ("StrataConfiguration", ["StrataCore"]),
    ("StrataEncoding", ["StrataCore"]),
    ("StrataSession", ["StrataCore"]),
    ("StrataEndpoint", ["StrataCore", "StrataConfiguration", "StrataEncoding"]),
    ("StrataService", ["StrataCore", "StrataConfiguration", "StrataEncoding", "StrataEndpoint", "StrataSession"]),
    ("StrataTransfer", ["StrataCore", "StrataEncoding", "StrataEndpoint", "StrataService"]),
    (
        "StrataTesting",
        ["StrataCore", "StrataConfiguration", "StrataEndpoint", "StrataSession", "StrataService", "StrataTransfer"]
    ),
    (
        "Strata",
        [
            "StrataCore", "StrataConfiguration", "StrataEncoding", "StrataEndpoint", "StrataSession",
            "StrataService", "StrataTransfer",
        ]
    ),
]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: layers.map { .library(name: $0.name, targets: [$0.name]) },
    dependencies: [],
    targets: layers.map { layer in
        .target(
            name: layer.name,
            dependencies: layer.dependencies.map { .target(name: $0) },
            swiftSettings: settings
        )
    }
        + layers.map { layer in
            // One test target per module: the module, what it builds on, and the mocks.
            .testTarget(
                name: "\(layer.name)Tests",
                dependencies: Set([layer.name, "StrataTesting"] + layer.dependencies).sorted().map {
                    .target(name: $0)
                },
                swiftSettings: settings
            )
        },
    swiftLanguageModes: [.v6]
)
