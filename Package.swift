// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Trove",
    products: [
        .library(name: "Trove", targets: ["Trove"]),
        .library(name: "TroveRealm", targets: ["TroveRealm"]),
        .library(name: "TroveSync", targets: ["TroveSync"]),
        .executable(name: "PhotoDiary", targets: ["PhotoDiary"]),
        .executable(name: "Inventory", targets: ["Inventory"]),
        .executable(name: "Chat", targets: ["Chat"]),
        .executable(name: "trove-bench", targets: ["TroveBenchmarks"]),
        .executable(name: "trove", targets: ["trove"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // The HTTP server of `trove studio` (the tool's only; the library never links it).
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // libpq, for TroveSync only: the Trove library never links it.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(
            name: "TroveStorage",
            dependencies: ["CLMDB", .target(name: "CCrypto", condition: .when(platforms: [.linux]))]),
        .target(name: "Trove", dependencies: ["TroveStorage", "CTroveRuntime"]),
        .target(name: "CTroveRuntime"),
        .target(name: "TroveSync", dependencies: ["Trove", "TroveStorage", "CLibPQ"]),
        .target(name: "TroveRealm", dependencies: ["Trove", "TroveStorage", "CTroveRuntime"]),
        .executableTarget(name: "PhotoDiary", dependencies: ["Trove"], path: "Examples/PhotoDiary"),
        .executableTarget(name: "Inventory", dependencies: ["Trove"], path: "Examples/Inventory"),
        .executableTarget(name: "Chat", dependencies: ["Trove"], path: "Examples/Chat"),
        .executableTarget(
            name: "trove",
            dependencies: ["Trove", "TroveSync", "CMicroHTTPD"],
            resources: [
                .embedInCode("Studio/Assets/index.html"),
                .embedInCode("Studio/Assets/studio.js"),
                .embedInCode("Studio/Assets/studio.css"),
                .embedInCode("Studio/Assets/openapi.json"),
            ]
        ),
        .executableTarget(name: "TroveBenchmarks", dependencies: ["Trove", "TroveStorage", "TroveSync", "CLMDB", "CSQLite"]),
        // What the test targets share: starting child processes (never shipped).
        .target(name: "TroveTestSupport", path: "Tests/TroveTestSupport"),
        .testTarget(name: "TroveStorageTests", dependencies: ["TroveStorage"]),
        .testTarget(
            name: "TroveTests", dependencies: ["Trove", "TroveStorage", "CLMDB", "TroveTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "TroveCLITests", dependencies: ["Trove", "TroveSync", "TroveTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "TroveRealmTests", dependencies: ["TroveRealm"]),
        .testTarget(name: "TroveSyncTests", dependencies: ["TroveSync", "TroveStorage", "TroveTestSupport"]),
        // A device process of the sync convergence test (run by TroveSyncTests, never shipped).
        .executableTarget(
            name: "TroveSyncDevice", dependencies: ["Trove", "TroveSync", "TroveStorage"], path: "Tests/SyncDevice"),
    ],
    swiftLanguageModes: [.v6]
)
