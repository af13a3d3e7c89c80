// swift-tools-version: 6.1
import PackageDescription

/// Every Swift target gets the same strictness: Swift 6 mode (the package default) plus these.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The C shims exist on Linux only; Apple platforms use CommonCrypto, SQLite3 and URLSession.
let linuxOnly = TargetDependencyCondition.when(platforms: [.linux])

/// Every library target. Each name starts with `StreamKit`: SwiftPM target names are global in a
/// package graph, so an app with its own `Core` or `HTTP` target can still depend on StreamKit.
let libraryTargets = [
    "StreamKitCore",
    "StreamKitHTTP",
    "StreamKitHTTPClient",
    "StreamKitHTTPServer",
    "StreamKitHLS",
    "StreamKitDASH",
    "StreamKitAMF",
    "StreamKitFLV",
    "StreamKitMPEGTS",
    "StreamKitRTMP",
    "StreamKitMediaCache",
    "StreamKitDownloads",
    "StreamKitMediaServer",
    "StreamKitCLI",
]

let package = Package(
    name: "StreamKit",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        // One dependency line for an app: every library module.
        .library(name: "StreamKit", targets: libraryTargets),
        .executable(name: "streamkit", targets: ["streamkit"]),
    ] + libraryTargets.map { .library(name: $0, targets: [$0]) },
    targets: [
        // System-library shims (Debian: libcurl4-openssl-dev, libssl-dev, libsqlite3-dev).
        .systemLibrary(
            name: "CStreamKitCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        .systemLibrary(
            name: "CStreamKitOpenSSL", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
        .systemLibrary(
            name: "CStreamKitSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // Not a library: declarations of epoll, eventfd, accept4 and openat2, which Glibc's module map leaves out.
        .systemLibrary(name: "CStreamKitLinux"),

        // Bytes, ranges, crypto, SQLite, atomic files, logging, the event poller and the connect
        // routine: what every other module shares.
        .target(
            name: "StreamKitCore",
            dependencies: [
                .target(name: "CStreamKitOpenSSL", condition: linuxOnly),
                .target(name: "CStreamKitSQLite", condition: linuxOnly),
                .target(name: "CStreamKitLinux", condition: linuxOnly),
            ],
            swiftSettings: strictSettings),
        // HTTP's vocabulary: methods, statuses, headers, dates, entity tags, ranges, file regions.
        .target(name: "StreamKitHTTP", dependencies: ["StreamKitCore"], swiftSettings: strictSettings),
        // The client: libcurl, its own HTTP/1.1 connections (Linux), URLSession (Apple), file downloads.
        .target(
            name: "StreamKitHTTPClient",
            dependencies: [
                "StreamKitCore", "StreamKitHTTP",
                .target(name: "CStreamKitCurl", condition: linuxOnly),
                .target(name: "CStreamKitLinux", condition: linuxOnly),
            ],
            swiftSettings: strictSettings),
        // The server: epoll event loops, the request parser, routing, static files.
        .target(
            name: "StreamKitHTTPServer",
            dependencies: [
                "StreamKitCore", "StreamKitHTTP", .target(name: "CStreamKitLinux", condition: linuxOnly),
            ],
            swiftSettings: strictSettings),
        .target(name: "StreamKitHLS", dependencies: ["StreamKitCore"], swiftSettings: strictSettings),
        // MPEG-DASH: the MPD as values, our own XML reader, segment resolution (URI resolution and
        // selection words shared with HLS).
        .target(name: "StreamKitDASH", dependencies: ["StreamKitCore", "StreamKitHLS"], swiftSettings: strictSettings),
        // Wire formats and the RTMP client: AMF0/AMF3 values, FLV files, RTMP state machines and the socket
        // edge (TCP, and TLS for RTMPS).
        .target(name: "StreamKitAMF", dependencies: ["StreamKitCore"], swiftSettings: strictSettings),
        .target(name: "StreamKitFLV", dependencies: ["StreamKitCore", "StreamKitAMF"], swiftSettings: strictSettings),
        // FLV media into MPEG-TS segments and a live HLS playlist: value types, no I/O.
        .target(
            name: "StreamKitMPEGTS", dependencies: ["StreamKitCore", "StreamKitFLV", "StreamKitHLS"],
            swiftSettings: strictSettings),
        .target(
            name: "StreamKitRTMP",
            dependencies: [
                "StreamKitCore", "StreamKitAMF", "StreamKitFLV", "StreamKitMPEGTS",
                // RTMPS: libssl's TLS client.
                .target(name: "CStreamKitOpenSSL", condition: linuxOnly),
            ],
            swiftSettings: strictSettings),
        // The byte-range media cache: sparse data files, an SQLite index of cached spans, read-through, eviction.
        .target(
            name: "StreamKitMediaCache",
            dependencies: ["StreamKitCore", "StreamKitHTTP", "StreamKitHTTPClient", "StreamKitHLS", "StreamKitDASH"],
            swiftSettings: strictSettings),
        // Download jobs: HLS streams into local packages (segments, keys, maps, byte ranges, live),
        // files, the persistent queue, export.
        .target(
            name: "StreamKitDownloads",
            dependencies: [
                "StreamKitCore", "StreamKitHTTP", "StreamKitHTTPClient", "StreamKitHLS", "StreamKitDASH",
                "StreamKitMPEGTS",
            ],
            swiftSettings: strictSettings),
        // The server on 127.0.0.1: the library, the caching proxy and its playlist rewriting, the page.
        .target(
            name: "StreamKitMediaServer",
            dependencies: [
                "StreamKitCore", "StreamKitHTTP", "StreamKitHTTPClient", "StreamKitHTTPServer", "StreamKitHLS",
                "StreamKitDASH", "StreamKitMediaCache",
            ],
            swiftSettings: strictSettings),
        // The command-line tool's commands and framework, as a library so that tests run them in process.
        .target(
            name: "StreamKitCLI",
            dependencies: [
                "StreamKitCore", "StreamKitHTTP", "StreamKitHTTPClient", "StreamKitHTTPServer", "StreamKitHLS",
                "StreamKitDASH", "StreamKitFLV", "StreamKitRTMP", "StreamKitDownloads", "StreamKitMediaCache",
                "StreamKitMediaServer",
            ],
            // The sample stream `streamkit demo` serves (scripts/make-demo-sample.sh).
            resources: [.copy("DemoSample")],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "streamkit",
            dependencies: ["StreamKitCLI"],
            swiftSettings: strictSettings),

        // Benchmarks (bench/): the StreamKit side of bench/hls-parse.sh.
        .executableTarget(
            name: "bench-hls-parse", dependencies: ["StreamKitHLS"], path: "bench/Sources/bench-hls-parse",
            swiftSettings: strictSettings),
        // Benchmark helper: a queue of many tasks made through the manager's API (bench/scale.sh).
        .executableTarget(
            name: "bench-queue", dependencies: ["StreamKitDownloads"], path: "bench/Sources/bench-queue",
            swiftSettings: strictSettings),
        // Benchmark helper: a day of live recording in minutes (bench/scale.sh live).
        .executableTarget(
            name: "bench-live",
            dependencies: ["StreamKitDownloads", "StreamKitHTTP", "StreamKitHTTPClient", "StreamKitHTTPServer"],
            path: "bench/Sources/bench-live", swiftSettings: strictSettings),
        // Benchmark helper: a delayed, paced link in front of nginx (bench/network.sh).
        .executableTarget(
            name: "bench-relay", dependencies: ["StreamKitTestSupport"], path: "bench/Sources/bench-relay",
            swiftSettings: strictSettings),
        // Benchmark helper: concurrent downloads and failure loops in a process of their own.
        .executableTarget(
            name: "bench-http",
            dependencies: ["StreamKitHTTPClient", "StreamKitCore"],
            path: "bench/Sources/bench-http",
            swiftSettings: strictSettings),

        // Test-only: launchers for real servers (nginx, nginx-rtmp), ffmpeg fixtures, fault responders.
        .target(
            name: "StreamKitTestSupport",
            dependencies: ["StreamKitCore", "StreamKitMPEGTS"],
            swiftSettings: strictSettings),

        .testTarget(
            name: "StreamKitCoreTests", dependencies: ["StreamKitCore", "StreamKitTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitHTTPTests", dependencies: ["StreamKitHTTP", "StreamKitCore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitHTTPClientTests",
            dependencies: ["StreamKitHTTPClient", "StreamKitHTTP", "StreamKitCore", "StreamKitTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitHTTPServerTests",
            dependencies: ["StreamKitHTTPServer", "StreamKitHTTP", "StreamKitCore", "StreamKitTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitAMFTests", dependencies: ["StreamKitAMF", "StreamKitCore", "StreamKitTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitFLVTests",
            dependencies: ["StreamKitFLV", "StreamKitAMF", "StreamKitCore", "StreamKitTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitMPEGTSTests",
            dependencies: [
                "StreamKitMPEGTS", "StreamKitFLV", "StreamKitHLS", "StreamKitCore", "StreamKitTestSupport",
                "StreamKitRTMP",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitRTMPTests",
            dependencies: [
                "StreamKitRTMP", "StreamKitFLV", "StreamKitAMF", "StreamKitCore", "StreamKitTestSupport",
                "StreamKitCLI",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitDASHTests",
            dependencies: ["StreamKitDASH", "StreamKitHLS", "StreamKitCore", "StreamKitTestSupport"],
            exclude: ["Corpus"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitHLSTests", dependencies: ["StreamKitHLS", "StreamKitCore", "StreamKitTestSupport"],
            exclude: ["Corpus"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitMediaServerTests",
            dependencies: [
                "StreamKitMediaServer", "StreamKitMediaCache", "StreamKitHTTP", "StreamKitHTTPClient",
                "StreamKitHTTPServer", "StreamKitHLS", "StreamKitCore", "StreamKitTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitMediaCacheTests",
            dependencies: [
                "StreamKitMediaCache", "StreamKitHTTP", "StreamKitHTTPClient", "StreamKitHLS", "StreamKitCore",
                "StreamKitTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitShimTests",
            dependencies: [
                "StreamKitTestSupport",
                .target(name: "CStreamKitCurl", condition: linuxOnly),
                .target(name: "CStreamKitOpenSSL", condition: linuxOnly),
                .target(name: "CStreamKitSQLite", condition: linuxOnly),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitTestSupportTests", dependencies: ["StreamKitTestSupport", "StreamKitCore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitDownloadsTests",
            dependencies: [
                "StreamKitDownloads", "StreamKitHLS", "StreamKitDASH", "StreamKitHTTP", "StreamKitHTTPClient",
                "StreamKitMediaServer", "StreamKitCore", "StreamKitTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StreamKitCLITests",
            dependencies: [
                "StreamKitCLI", "StreamKitCore", "StreamKitHTTP", "StreamKitHTTPClient", "StreamKitHLS",
                "StreamKitDASH", "StreamKitDownloads", "StreamKitMediaCache", "StreamKitMediaServer", "StreamKitRTMP",
                "StreamKitTestSupport",
            ],
            exclude: ["HelpSnapshots", "PlaylistQuirks"],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
