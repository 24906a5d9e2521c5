// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Trove",
    products: [
        .library(name: "Trove", targets: ["Trove"]),
        .executable(name: "PhotoDiary", targets: ["PhotoDiary"]),
        .executable(name: "Inventory", targets: ["Inventory"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .target(name: "TroveStorage", dependencies: ["CLMDB"]),
        .target(name: "Trove", dependencies: ["TroveStorage"]),
        .executableTarget(name: "PhotoDiary", dependencies: ["Trove"], path: "Examples/PhotoDiary"),
        .executableTarget(name: "Inventory", dependencies: ["Trove"], path: "Examples/Inventory"),
        .testTarget(name: "TroveStorageTests", dependencies: ["TroveStorage"]),
        .testTarget(name: "TroveTests", dependencies: ["Trove"]),
    ],
    swiftLanguageModes: [.v6]
)
