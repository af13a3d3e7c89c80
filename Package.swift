// swift-tools-version: 6.1
import PackageDescription

/// Every Swift target gets the same strictness: Swift 6 mode (the package default) plus these.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The C shims exist on Linux only; Apple platforms use CommonCrypto, SQLite3 and URLSession.
let linuxOnly = TargetDependencyCondition.when(platforms: [.linux])

let package = Package(
    name: "StreamKit",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Core", targets: ["Core"]),
        .library(name: "HTTP", targets: ["HTTP"]),
        .library(name: "MediaServer", targets: ["MediaServer"]),
        .executable(name: "streamkit", targets: ["streamkit"]),
    ],
    targets: [
        // System-library shims (Debian: libcurl4-openssl-dev, libssl-dev, libsqlite3-dev).
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // Not a library: declarations of epoll, eventfd, accept4 and openat2, which Glibc's module map leaves out.
        .systemLibrary(name: "CLinuxSystem"),

        .target(
            name: "Core",
            dependencies: [
                .target(name: "COpenSSL", condition: linuxOnly),
                .target(name: "CSQLite", condition: linuxOnly),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "HTTP",
            dependencies: [
                "Core", .target(name: "CCurl", condition: linuxOnly),
                .target(name: "CLinuxSystem", condition: linuxOnly),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "MediaServer",
            dependencies: ["HTTP", "Core"],
            swiftSettings: strictSettings),
        .target(
            name: "StreamKitCLI",
            dependencies: ["Core", "HTTP", "MediaServer"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "streamkit",
            dependencies: ["StreamKitCLI"],
            swiftSettings: strictSettings),

        // Test-only: launchers for real servers (nginx, nginx-rtmp), ffmpeg fixtures, fault responders.
        .target(
            name: "TestSupport",
            dependencies: ["Core"],
            swiftSettings: strictSettings),

        .testTarget(name: "CoreTests", dependencies: ["Core", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Core", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "MediaServerTests", dependencies: ["MediaServer", "HTTP", "Core", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ShimTests",
            dependencies: [
                "TestSupport",
                .target(name: "CCurl", condition: linuxOnly),
                .target(name: "COpenSSL", condition: linuxOnly),
                .target(name: "CSQLite", condition: linuxOnly),
            ],
            swiftSettings: strictSettings),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport", "Core"], swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitCLITests", dependencies: ["StreamKitCLI", "Core", "TestSupport"],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
