// swift-tools-version: 6.1
// An app that depends on StreamKit while having targets of its own named `Core` and `HTTP`:
// SwiftPM target names are global in a package graph, so this builds only because every
// StreamKit target carries the `StreamKit` prefix. `.ci/run` builds and runs it.
import Foundation
import PackageDescription

/// StreamKit's checkout, two folders up. A path dependency's identity is its folder's name,
/// lower-cased, which differs between checkouts (a CI clone is not named `streamkit`).
let streamKitRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().standardizedFileURL
let streamKit = streamKitRoot.lastPathComponent.lowercased()

let package = Package(
    name: "ConsumerPackage",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(path: streamKitRoot.path)],
    targets: [
        .target(name: "Core"),
        .target(name: "HTTP", dependencies: ["Core"]),
        .executableTarget(
            name: "Consumer",
            dependencies: ["Core", "HTTP", .product(name: "StreamKit", package: streamKit)]),
    ],
    swiftLanguageModes: [.v6]
)
