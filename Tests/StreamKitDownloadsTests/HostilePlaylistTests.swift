import Dispatch
import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitTestSupport
import Testing

@testable import StreamKitDownloads

/// Playlists that try to write outside the package, reach other schemes, loop, overwhelm, or lie
/// about lengths: each gets a clear error or is handled, and nothing is written outside the package
/// folder (every test walks the disk).
@Suite(.serialized, .requires(.nginx)) struct HostilePlaylistTests {
    typealias Support = DownloadTestSupport

    /// An origin whose playlists are written by the test, a sandbox for the package, and a check
    /// that the sandbox holds nothing outside the package.
    struct Setup {
        let origin: Nginx
        let originRoot: URL
        let sandbox: URL
        var package: URL { sandbox.appendingPathComponent("pkg") }

        static func make(files: [String: Data]) async throws -> Setup {
            let originRoot = try TestRun.makeTemporaryDirectory("hostile-origin")
            for (path, data) in files {
                let url = originRoot.appendingPathComponent(path)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: url)
            }
            return Setup(
                origin: try await Nginx.static(root: originRoot), originRoot: originRoot,
                sandbox: try TestRun.makeTemporaryDirectory("hostile-sandbox"))
        }

        func job(_ path: String, skipBroken: Bool = false, maximumSegments: Int = 100_000) -> HLSDownloadJob {
            var options = Support.fastOptions(skipBroken: skipBroken)
            options.maximumSegments = maximumSegments
            return HLSDownloadJob(source: origin.url(path).absoluteString, options: options, packageDirectory: package)
        }

        /// Every file in the sandbox is inside the package folder, named by the package layout.
        func expectNothingOutsideThePackage(sourceLocation: SourceLocation = #_sourceLocation) {
            for path in Support.files(under: sandbox) {
                #expect(path.hasPrefix("pkg/"), "written outside the package: \(path)", sourceLocation: sourceLocation)
                #expect(
                    PackageLayout.isContained(String(path.dropFirst(4)))
                        && !path.contains("passwd") && !path.contains("escape"),
                    "not a name of ours: \(path)", sourceLocation: sourceLocation)
            }
        }
    }

    static func playlist(_ lines: [String], version: Int = 3) -> Data {
        Data(
            (["#EXTM3U", "#EXT-X-VERSION:\(version)", "#EXT-X-TARGETDURATION:2"] + lines + ["#EXT-X-ENDLIST", ""])
                .joined(separator: "\n").utf8)
    }

    /// URIs with dot segments, absolute paths and encoded slashes are URLs on the origin, fetched
    /// and stored under names of ours.
    @Test func traversalURIsAreOnlyURLs() async throws {
        let setup = try await Setup.make(files: [
            "etc/passwd": Data("root:x:0:0\n".utf8),
            "escape.ts": Data("escaped".utf8),
            "a/b/c/index.m3u8": Self.playlist([
                "#EXTINF:2,", "../../../etc/passwd",
                "#EXTINF:2,", "/etc/passwd",
                "#EXTINF:2,", "../../../../../../../../escape.ts",
                "#EXTINF:2,", "..%2F..%2F..%2Fescape.ts",
            ]),
        ])
        let job = setup.job("a/b/c/index.m3u8")
        let (result, _) = try await Support.run(job)
        #expect(result.status == .complete)
        // The first two are one URL (so one file); nginx decodes %2F, so the last is /escape.ts too.
        let local = try Support.segmentFiles(ofPlaylist: setup.package.appendingPathComponent("video/index.m3u8"))
        #expect(
            local.map { URL(fileURLWithPath: $0.path).lastPathComponent } == [
                "00000.ts", "00000.ts", "00002.ts", "00003.ts",
            ])
        #expect(
            try Data(contentsOf: setup.package.appendingPathComponent("video/00000.ts")) == Data("root:x:0:0\n".utf8))
        #expect(try Data(contentsOf: setup.package.appendingPathComponent("video/00002.ts")) == Data("escaped".utf8))
        #expect(try Data(contentsOf: setup.package.appendingPathComponent("video/00003.ts")) == Data("escaped".utf8))
        #expect(
            Set((try await setup.origin.settledAccessLog()).map(\.uri)) == [
                "/a/b/c/index.m3u8", "/etc/passwd", "/escape.ts", "/a/b/c/..%2F..%2F..%2Fescape.ts",
            ])
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }

    /// Durations and bandwidths no integer holds (a segment of 1e-21 s is a rate of 8e27 bit/s;
    /// one of 1e19 s a target duration past Int.max) are carried through, not trapped on.
    @Test func absurdDurationsAndBandwidthsAreHandled() async throws {
        let media = Self.playlist([
            "#EXTINF:0.000000000000000000001,", "a.ts",
            "#EXTINF:10000000000000000000,", "b.ts",
        ])
        let master = Data(
            """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=9000000000000000000
            media.m3u8

            """.utf8)
        let setup = try await Setup.make(files: [
            "master.m3u8": master, "media.m3u8": media, "a.ts": Data([1, 2, 3]), "b.ts": Data([4, 5]),
        ])
        let (result, _) = try await Support.run(setup.job("master.m3u8"))
        #expect(result.status == .complete)
        let local = try Support.segmentFiles(ofPlaylist: setup.package.appendingPathComponent("video/index.m3u8"))
        #expect(local.count == 2)
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }

    /// `file://`, `ftp://` and other schemes, for segments, maps and keys, are refused before
    /// anything is fetched, naming the URI; the folder is not left behind.
    @Test(arguments: [
        ["#EXTINF:2,", "file:///etc/passwd"],
        ["#EXTINF:2,", "ftp://127.0.0.1/a.ts"],
        ["#EXT-X-MAP:URI=\"file:///etc/passwd\"", "#EXTINF:2,", "a.m4s"],
        ["#EXT-X-KEY:METHOD=AES-128,URI=\"file:///etc/passwd\"", "#EXTINF:2,", "a.ts"],
        ["#EXTINF:2,", "gopher://127.0.0.1/1"],
    ])
    func otherSchemesAreRefused(lines: [String]) async throws {
        let setup = try await Setup.make(files: ["index.m3u8": Self.playlist(lines, version: 7), "a.ts": Data([1])])
        do {
            _ = try await Support.run(setup.job("index.m3u8"))
            Issue.record("accepted \(lines)")
        } catch let error as HLSDownloadError {
            #expect(error.kind == .unsupportedURI)
            #expect(
                error.url.map { !$0.hasPrefix("http") } == true
                    && error.description.contains("not an http or https URL"))
        }
        #expect(!FileManager.default.fileExists(atPath: setup.package.path))
        setup.expectNothingOutsideThePackage()
        #expect(try await setup.origin.settledAccessLog().map(\.uri) == ["/index.m3u8"])
        await setup.origin.stop()
    }

    /// A playlist, or a segment, that redirects to itself fails with the URL, not forever.
    @Test func redirectLoopsFail() async throws {
        let sandbox = try TestRun.makeTemporaryDirectory("hostile-sandbox")
        let looping = try ScriptedTCPResponder { _ in
            [
                .readRequestHead,
                .send(
                    ScriptedTCPResponder.httpResponse(
                        status: 302,
                        headers: [("Location", "/loop.m3u8"), ("Content-Length", "0"), ("Connection", "close")],
                        body: [])),
                .close,
            ]
        }
        let url = looping.url("loop.m3u8").absoluteString
        let job = HLSDownloadJob(
            source: url, options: Support.fastOptions(), packageDirectory: sandbox.appendingPathComponent("pkg"))
        do {
            _ = try await Support.run(job)
            Issue.record("the loop was followed to the end")
        } catch let error as HLSDownloadError {
            #expect(error.kind == .playlistUnavailable && error.underlying?.kind == .tooManyRedirects, "\(error)")
            #expect(error.description.contains("loop.m3u8"))
        }
        #expect(looping.connectionCount <= 24)
        await looping.stop()

        // The playlist is fine; its segment loops.
        let playlist = Self.playlist(["#EXTINF:2,", "seg.ts"])
        let segmentLoop = try ScriptedTCPResponder { index in
            let response =
                index == 0
                ? ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "\(playlist.count)"), ("Connection", "close")],
                    body: Array(playlist))
                : ScriptedTCPResponder.httpResponse(
                    status: 301, headers: [("Location", "/seg.ts"), ("Content-Length", "0"), ("Connection", "close")],
                    body: [])
            return [.readRequestHead, .send(response), .close]
        }
        let second = HLSDownloadJob(
            source: segmentLoop.url("index.m3u8").absoluteString, options: Support.fastOptions(),
            packageDirectory: sandbox.appendingPathComponent("pkg2"))
        do {
            _ = try await Support.run(second)
            Issue.record("the segment loop was followed to the end")
        } catch let error as HLSDownloadError {
            #expect(error.kind == .fileFailed && error.underlying?.kind == .tooManyRedirects, "\(error)")
            #expect(error.url?.hasSuffix("/seg.ts") == true)
        }
        for path in Support.files(under: sandbox) {
            #expect(path.hasPrefix("pkg2/") && !path.hasSuffix(".ts"), "\(path)")
        }
        await segmentLoop.stop()
    }

    /// A million segments hit the (configurable) limit with a clear error, quickly.
    @Test func aMillionSegmentsHitTheLimit() async throws {
        // Written on a Dispatch thread: a long loop would hold one of the few threads other tests share.
        let huge: Data = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var bytes: [UInt8] = Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n".utf8)
                bytes.reserveCapacity(24_000_000)
                for index in 0..<1_000_000 { bytes += Array("#EXTINF:1,\n\(index).ts\n".utf8) }
                bytes += Array("#EXT-X-ENDLIST\n".utf8)
                continuation.resume(returning: Data(bytes))
            }
        }
        let setup = try await Setup.make(files: ["huge.m3u8": huge])
        let started = ContinuousClock.now
        do {
            _ = try await Support.run(setup.job("huge.m3u8"))
            Issue.record("a million segments were accepted")
        } catch let error as HLSDownloadError {
            #expect(error.kind == .tooManySegments)
            #expect(error.description.contains("1000000 segments, more than the limit of 100000"), "\(error)")
        }
        #expect(started.duration(to: .now) < .seconds(60))
        setup.expectNothingOutsideThePackage()
        #expect(try await setup.origin.settledAccessLog().map(\.uri) == ["/huge.m3u8"])

        // The limit is an option.
        let small = try await Setup.make(files: [
            "ten.m3u8": Self.playlist((0..<10).flatMap { ["#EXTINF:2,", "s.ts?\($0)"] }), "s.ts": Data([0x47]),
        ])
        await #expect(throws: HLSDownloadError(.tooManySegments)) {
            try await Support.run(small.job("ten.m3u8", maximumSegments: 9))
        }
        let (result, _) = try await Support.run(small.job("ten.m3u8", maximumSegments: 10))
        #expect(result.status == .complete && result.files == 10)
        await setup.origin.stop()
        await small.origin.stop()
    }

    /// A byte range past the end of its resource, or longer than it, fails naming the URL; with
    /// `skipBroken` the segment becomes a gap and the rest is kept.
    @Test func rangesThatDoNotFitTheResource() async throws {
        let media = Data((0..<10_000).map { UInt8($0 % 251) })
        let setup = try await Setup.make(files: [
            "media.ts": media,
            "short.m3u8": Self.playlist(
                [
                    "#EXTINF:2,", "#EXT-X-BYTERANGE:4000@0", "media.ts", "#EXTINF:2,", "#EXT-X-BYTERANGE:8000@4000",
                    "media.ts",
                ],
                version: 4),
            "past.m3u8": Self.playlist(
                [
                    "#EXTINF:2,", "#EXT-X-BYTERANGE:4000@0", "media.ts", "#EXTINF:2,", "#EXT-X-BYTERANGE:100@20000",
                    "media.ts",
                ],
                version: 4),
        ])
        for name in ["short.m3u8", "past.m3u8"] {
            do {
                _ = try await Support.run(setup.job(name))
                Issue.record("\(name) was accepted")
            } catch let error as HLSDownloadError {
                #expect(error.kind == .rangeMismatch, "\(error)")
                #expect(error.url == setup.origin.url("media.ts").absoluteString)
                #expect(
                    error.description.contains(name == "short.m3u8" ? "shorter than its byte range" : "past the end"))
            }
            try? FileManager.default.removeItem(at: setup.package)
        }
        let (result, _) = try await Support.run(setup.job("short.m3u8", skipBroken: true))
        #expect(result.status == .completeWithGaps)
        var local = try String(contentsOf: setup.package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(local.hasSuffix("#EXT-X-BYTERANGE:4000@0\nmedia-0.ts\n#EXT-X-ENDLIST\n"), "\(local)")
        var tagged = setup.job("short.m3u8", skipBroken: true)
        tagged.options.gapTags = true
        #expect(try await Support.run(tagged).0.status == .completeWithGaps)
        local = try String(contentsOf: setup.package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(local.contains("#EXT-X-GAP\n#EXTINF:2,\n#EXT-X-BYTERANGE:8000@4000\nmedia-0.ts"))
        let file = try Data(contentsOf: setup.package.appendingPathComponent("video/media-0.ts"))
        #expect(file.prefix(4000) == media.prefix(4000))
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }

    /// Keys that are not 16 bytes are refused naming the key URL; a `data:` key is used as given.
    @Test func keysOfTheWrongSize() async throws {
        let segment = try AES128CBC.encrypt(
            Array(repeating: 0x47, count: 376), key: Fixtures.key, iv: AES128CBC.iv(mediaSequence: 0))
        let base64 = Data(Fixtures.key).base64EncodedString()
        let setup = try await Setup.make(
            files: [
                "k15": Data(Fixtures.key.prefix(15)), "k17": Data(Fixtures.key + [0]), "k0": Data(),
                "page": Data(String(repeating: "<html>", count: 2000).utf8), "s.ts": Data(segment),
                "data.m3u8": Self.playlist([
                    "#EXT-X-KEY:METHOD=AES-128,URI=\"data:text/plain;base64,\(base64)\"", "#EXTINF:2,", "s.ts",
                ]),
            ].merging(
                ["k15", "k17", "k0", "page"].map {
                    ("\($0).m3u8", Self.playlist(["#EXT-X-KEY:METHOD=AES-128,URI=\"\($0)\"", "#EXTINF:2,", "s.ts"]))
                },
                uniquingKeysWith: { first, _ in first }))
        for key in ["k15", "k17", "k0", "page"] {
            do {
                _ = try await Support.run(setup.job("\(key).m3u8"))
                Issue.record("key \(key) was accepted")
            } catch let error as HLSDownloadError {
                #expect(error.kind == .invalidKey, "\(error)")
                #expect(error.url == setup.origin.url(key).absoluteString && error.description.contains("16 bytes"))
            }
            try? FileManager.default.removeItem(at: setup.package)
        }
        var job = setup.job("data.m3u8")
        job.options.decrypt = true
        let (result, _) = try await Support.run(job)
        #expect(result.status == .complete)
        #expect(
            try Data(contentsOf: setup.package.appendingPathComponent("video/00000.ts"))
                == Data(repeating: 0x47, count: 376))
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }
}
