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
        .library(name: "HLS", targets: ["HLS"]),
        .library(name: "AMF", targets: ["AMF"]),
        .library(name: "FLV", targets: ["FLV"]),
        .library(name: "RTMP", targets: ["RTMP"]),
        .library(name: "MediaCache", targets: ["MediaCache"]),
        .library(name: "Downloads", targets: ["Downloads"]),
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
        // The byte-range media cache: sparse data files, an SQLite index of cached spans, read-through, eviction.
        .target(
            name: "MediaCache",
            dependencies: ["HTTP", "HLS", "Core"],
            swiftSettings: strictSettings),
        .target(
            name: "MediaServer",
            dependencies: ["MediaCache", "HTTP", "HLS", "Core"],
            swiftSettings: strictSettings),
        // Wire formats and the RTMP client: AMF0/AMF3 values, FLV files, RTMP state machines and the socket edge.
        .target(name: "AMF", dependencies: ["Core"], swiftSettings: strictSettings),
        .target(name: "FLV", dependencies: ["Core", "AMF"], swiftSettings: strictSettings),
        .target(
            name: "RTMP",
            dependencies: ["Core", "AMF", "FLV", .target(name: "CLinuxSystem", condition: linuxOnly)],
            swiftSettings: strictSettings),
        .target(
            name: "HLS",
            dependencies: ["Core"],
            swiftSettings: strictSettings),
        // Download jobs: HLS streams into local packages (segments, keys, maps, byte ranges, live), export.
        .target(
            name: "Downloads",
            dependencies: ["Core", "HTTP", "HLS"],
            swiftSettings: strictSettings),
        .target(
            name: "StreamKitCLI",
            dependencies: ["Core", "HTTP", "HLS", "RTMP", "FLV", "Downloads", "MediaCache", "MediaServer"],
            // The sample stream `streamkit demo` serves (scripts/make-demo-sample.sh).
            resources: [.copy("DemoSample")],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "streamkit",
            dependencies: ["StreamKitCLI"],
            swiftSettings: strictSettings),

        // Benchmarks (bench/): the StreamKit side of bench/hls-parse.sh.
        .executableTarget(
            name: "bench-hls-parse", dependencies: ["HLS"], path: "bench/Sources/bench-hls-parse",
            swiftSettings: strictSettings),
        // Benchmark helper: concurrent downloads and failure loops in a process of their own.
        .executableTarget(
            name: "bench-http",
            dependencies: ["HTTP", "Core"],
            path: "bench/Sources/bench-http",
            swiftSettings: strictSettings),

        // Test-only: launchers for real servers (nginx, nginx-rtmp), ffmpeg fixtures, fault responders.
        .target(
            name: "TestSupport",
            dependencies: ["Core"],
            swiftSettings: strictSettings),

        .testTarget(name: "CoreTests", dependencies: ["Core", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Core", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "AMFTests", dependencies: ["AMF", "Core"], swiftSettings: strictSettings),
        .testTarget(
            name: "FLVTests", dependencies: ["FLV", "AMF", "Core", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "RTMPTests", dependencies: ["RTMP", "FLV", "AMF", "Core", "TestSupport", "StreamKitCLI"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "HLSTests", dependencies: ["HLS", "Core", "TestSupport"], exclude: ["Corpus"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MediaServerTests",
            dependencies: ["MediaServer", "MediaCache", "HTTP", "HLS", "Core", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MediaCacheTests", dependencies: ["MediaCache", "HTTP", "HLS", "Core", "TestSupport"],
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
            name: "DownloadsTests", dependencies: ["Downloads", "HLS", "HTTP", "MediaServer", "Core", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitCLITests",
            dependencies: [
                "StreamKitCLI", "Core", "HTTP", "HLS", "Downloads", "MediaCache", "MediaServer", "RTMP", "TestSupport",
            ],
            exclude: ["HelpSnapshots"],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
