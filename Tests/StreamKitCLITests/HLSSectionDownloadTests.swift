import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// `download --section` and `--exclude-segments` (issue 25) of a 20 s stream of 2 s segments
/// served by nginx: only the segments that cover the sections are fetched, the package starts at
/// the section and decodes, left-out segments are closed with a discontinuity, a resume with
/// other sections is refused, and a live playlist's recording begins at the section.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .ffprobe)) struct HLSSectionDownloadTests {
    /// A copy of the fixture with hand-written playlists beside it: `ads.m3u8` (an ad segment,
    /// `ad/break000.ts`, after the second segment) and `live.m3u8` (no ENDLIST: a live window).
    struct Origin {
        let fixture: Fixture
        let root: URL
        let nginx: Nginx
        let text: String

        func url(_ name: String) -> String { nginx.url(name).absoluteString }

        static func make() async throws -> Origin {
            let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS, seconds: 20, segmentSeconds: 2))
            let root = try TestRun.makeTemporaryDirectory("section-origin")
            for file in try fixture.files() {
                try FileManager.default.copyItem(
                    at: fixture.directory.appendingPathComponent(file), to: root.appendingPathComponent(file))
            }
            let text = try String(contentsOf: fixture.entryFile, encoding: .utf8)
            #expect(text.components(separatedBy: "#EXTINF:2.0").count - 1 == 10, "\(text)")
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("ad"), withIntermediateDirectories: true)
            // Another stretch of the stream stands for the ad: its timestamps jump, as an ad's do.
            try FileManager.default.copyItem(
                at: root.appendingPathComponent("seg009.ts"), to: root.appendingPathComponent("ad/break000.ts"))
            let ads = text.replacingOccurrences(
                of: "seg001.ts\n", with: "seg001.ts\n#EXTINF:2.000000,\nad/break000.ts\n")
            try ads.write(to: root.appendingPathComponent("ads.m3u8"), atomically: true, encoding: .utf8)
            let live = text.replacingOccurrences(of: "#EXT-X-ENDLIST\n", with: "")
                .replacingOccurrences(of: "#EXT-X-PLAYLIST-TYPE:VOD\n", with: "")
            try live.write(to: root.appendingPathComponent("live.m3u8"), atomically: true, encoding: .utf8)
            return Origin(fixture: fixture, root: root, nginx: try await Nginx.static(root: root), text: text)
        }

        /// What ffmpeg decodes of the origin's segments at `positions`, as one playlist.
        func frames(of positions: Range<Int>) async throws -> HLSPlayers.FFmpegPlayback {
            let name = "part-\(positions.lowerBound)-\(positions.upperBound).m3u8"
            try GapFormPlaybackTests.Origin.playlist(text, keeping: positions).write(
                to: root.appendingPathComponent(name), atomically: true, encoding: .utf8)
            return try await HLSPlayers.ffmpeg(root.appendingPathComponent(name).path)
        }
    }

    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    /// `download URL -o PACKAGE` with a home of its own, and the package's media playlist.
    private func download(
        _ url: String, into package: URL, _ extra: [String]
    ) async throws -> (code: ExitCode, output: String, error: String, playlist: String) {
        let home = try TestRun.makeTemporaryDirectory("section-home")
        let (code, output, error) = await run(["download", url, "-o", package.path, "--home", home.path] + extra)
        let playlist =
            (try? String(contentsOf: package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)) ?? ""
        return (code, output, error, playlist)
    }

    private func uris(_ playlist: String) -> [String] {
        playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// The time of the first video frame ffprobe reads from `input`.
    private func firstVideoFrameTime(_ input: String) async throws -> Double {
        let output = try await Tool.ffprobe.run(
            [
                "-v", "error", "-allowed_extensions", "ALL", "-select_streams", "v:0", "-read_intervals", "%+#1",
                "-show_entries", "frame=pts_time,best_effort_timestamp_time", "-of", "csv=p=0", input,
            ], timeout: .seconds(60))
        let fields = output.standardOutput.split(whereSeparator: { $0 == "," || $0 == "\n" })
        return try #require(fields.compactMap { Double($0) }.first, "\(output.standardOutput)")
    }

    /// The issue's acceptance: `--section 0:04-0:10` of 20 s is 6 s (segments 2 to 4), starts at
    /// 4 s of the source, decodes to the frames of those segments, and nothing else is fetched.
    @Test func aSectionFetchesOnlyTheSegmentsThatCoverItAndDecodes() async throws {
        let origin = try await Origin.make()
        let package = try TestRun.makeTemporaryDirectory("section").appendingPathComponent("cut")
        let (code, output, error, playlist) = try await download(
            origin.url("index.m3u8"), into: package, ["--section", "0:04-0:10"])
        #expect(code == .success, "\(error)")
        #expect(error.contains("  video: 3 segments, 6.0 s; 7 outside the sections\n"), "\(error)")
        #expect(output.contains("6.0 s of media"), "\(output)")
        #expect(uris(playlist) == ["00002.ts", "00003.ts", "00004.ts"], "\(playlist)")
        #expect(!playlist.contains("#EXT-X-DISCONTINUITY"))
        for (local, source) in [("00002.ts", "seg002.ts"), ("00004.ts", "seg004.ts")] {
            #expect(
                try Data(contentsOf: package.appendingPathComponent("video/" + local))
                    == Data(contentsOf: origin.root.appendingPathComponent(source)))
        }
        let requested = try await origin.nginx.settledAccessLog().map(\.uri).filter { $0.hasSuffix(".ts") }
        #expect(requested.sorted() == ["/seg002.ts", "/seg003.ts", "/seg004.ts"], "\(requested)")

        let decoded = try await HLSPlayers.ffmpeg(package.appendingPathComponent("index.m3u8").path)
        let expected = try await origin.frames(of: 2..<5)
        #expect(decoded.videoFrames == expected.videoFrames && decoded.audioFrames == expected.audioFrames)
        #expect(abs(decoded.videoFrames - 150) <= 50, "\(decoded): 6 s at 25 fps, give or take a segment")
        let start = try await firstVideoFrameTime(package.appendingPathComponent("index.m3u8").path)
        let sourceStart = try await firstVideoFrameTime(origin.fixture.entryFile.path)
        #expect(abs(start - sourceStart - 4) < 0.1, "first frame at \(start), the source's at \(sourceStart)")
        await origin.nginx.stop()
    }

    /// Two sections: one playlist, EXT-X-DISCONTINUITY between them, decoding to both.
    @Test func twoSectionsAreJoinedByADiscontinuity() async throws {
        let origin = try await Origin.make()
        let package = try TestRun.makeTemporaryDirectory("section").appendingPathComponent("two")
        let (code, _, error, playlist) = try await download(
            origin.url("index.m3u8"), into: package, ["--section", "15-16", "--section", "0:02-0:04", "--json"])
        #expect(code == .success, "\(error)")
        #expect(uris(playlist) == ["00001.ts", "00007.ts"], "\(playlist)")
        #expect(playlist.contains("00001.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:2"), "\(playlist)")
        let media = try #require(try Playlist.parse(playlist, options: .strict).playlist.media)
        #expect(media.segments.map(\.isDiscontinuity) == [false, true])
        let decoded = try await HLSPlayers.ffmpeg(package.appendingPathComponent("index.m3u8").path)
        let first = try await origin.frames(of: 1..<2)
        let second = try await origin.frames(of: 7..<8)
        #expect(decoded.videoFrames == first.videoFrames + second.videoFrames, "\(decoded)")
        await origin.nginx.stop()
    }

    /// Every selected rendition is cut at the same media times: video, both audio languages and
    /// the subtitles keep the same segments, and the package decodes.
    @Test func everyRenditionIsCutAtTheSameTimes() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsMaster))
        let nginx = try await Nginx.static(root: fixture.directory)
        let package = try TestRun.makeTemporaryDirectory("section").appendingPathComponent("master")
        let (code, _, error, _) = try await download(
            nginx.url("master.m3u8").absoluteString, into: package, ["--audio", "all", "--section", "0:04.5-0:07"])
        #expect(code == .success, "\(error)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: package.path).filter {
            FileManager.default.fileExists(atPath: package.appendingPathComponent("\($0)/index.m3u8").path)
        }
        #expect(folders.count == 4, "\(folders)")
        for folder in folders {
            let playlist = try String(
                contentsOf: package.appendingPathComponent("\(folder)/index.m3u8"), encoding: .utf8)
            let names = uris(playlist).map { String($0.prefix(5)) }
            #expect(names == ["00002", "00003"], "\(folder): \(playlist)")
        }
        let decoded = try await HLSPlayers.ffmpeg(package.appendingPathComponent("index.m3u8").path)
        #expect(abs(decoded.videoFrames - 100) <= 50, "\(decoded)")
        await nginx.stop()
    }

    /// `--exclude-segments`: the ad is never fetched, the package's playlist leaves it out with a
    /// discontinuity after the segment before it, and the package decodes to the stream without it.
    @Test func excludedSegmentsAreNeverFetchedAndTheGapIsClosed() async throws {
        let origin = try await Origin.make()
        let package = try TestRun.makeTemporaryDirectory("section").appendingPathComponent("ads")
        let (code, _, error, playlist) = try await download(
            origin.url("ads.m3u8"), into: package, ["--exclude-segments", "/ad/break\\d+\\.ts$"])
        #expect(code == .success, "\(error)")
        #expect(error.contains("  video: 10 segments, 20.0 s; 1 excluded\n"), "\(error)")
        #expect(!uris(playlist).contains("00002.ts") && uris(playlist).count == 10, "\(playlist)")
        #expect(playlist.contains("00001.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:2"), "\(playlist)")
        #expect(playlist.components(separatedBy: "#EXT-X-DISCONTINUITY").count == 2)
        let requested = try await origin.nginx.settledAccessLog().map(\.uri)
        #expect(!requested.contains { $0.contains("/ad/") }, "\(requested)")
        let decoded = try await HLSPlayers.ffmpeg(package.appendingPathComponent("index.m3u8").path)
        let whole = try await HLSPlayers.ffmpeg(origin.fixture.entryFile.path)
        #expect(decoded.failedRequests.isEmpty, "\(decoded)")
        #expect(decoded.videoFrames == whole.videoFrames && decoded.audioFrames == whole.audioFrames, "\(decoded)")

        // The JSON summary counts it too.
        let json = try TestRun.makeTemporaryDirectory("section").appendingPathComponent("ads-json")
        let (jsonCode, jsonOutput, _, _) = try await download(
            origin.url("ads.m3u8"), into: json,
            ["--exclude-segments", "break", "--exclude-segments", "seg00[0-3]", "--json"])
        #expect(jsonCode == .success)
        #expect(jsonOutput.contains(#""segmentsExcluded":5"#), "\(jsonOutput)")
        await origin.nginx.stop()
    }

    /// Sections and patterns make the package: a run with others into the same folder is refused
    /// as another download's package, and the same command resumes.
    @Test func aResumeWithOtherSectionsOrPatternsIsRefused() async throws {
        let origin = try await Origin.make()
        let package = try TestRun.makeTemporaryDirectory("section").appendingPathComponent("resume")
        let url = origin.url("index.m3u8")
        #expect(try await download(url, into: package, ["--section", "0:04-0:10"]).code == .success)
        for other in [["--section", "0:02-0:10"], [], ["--section", "0:04-0:10", "--exclude-segments", "seg003"]] {
            let (code, _, error, _) = try await download(url, into: package, other)
            #expect(code == .failure, "\(other)")
            #expect(
                error.contains("package conflict") && error.contains("sections 0:04-0:10)"), "\(other): \(error)")
        }
        let (again, output, error, playlist) = try await download(
            url, into: package, ["--section", "4-6", "--section", "6-10"])
        #expect(again == .success, "\(error)")
        #expect(output.contains("3 already in place") && uris(playlist).count == 3, "\(output)")
        await origin.nginx.stop()
    }

    /// A section after the stream's end, a bad section and a bad pattern are usage errors
    /// (exit 64) that leave nothing behind.
    @Test func whatDoesNotFitIsAUsageError() async throws {
        let origin = try await Origin.make()
        let folder = try TestRun.makeTemporaryDirectory("section")
        let after = try await download(
            origin.url("index.m3u8"), into: folder.appendingPathComponent("after"), ["--section", "0:30-1:00"])
        #expect(after.code == .usage)
        #expect(
            after.error.contains(
                "--section 0:30-1:00 starts after the end of the stream, which lasts 0:20.008 (20.008 s)"),
            "\(after.error)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("after").path))
        let reversed = try await download(
            origin.url("index.m3u8"), into: folder.appendingPathComponent("r"), ["--section", "10-5"])
        #expect(
            reversed.code == .usage && reversed.error.contains("the end is not after the start"), "\(reversed.error)")
        let pattern = try await download(
            origin.url("index.m3u8"), into: folder.appendingPathComponent("p"), ["--exclude-segments", "ad("])
        #expect(pattern.code == .usage && pattern.error.contains("'ad('"), "\(pattern.error)")
        await origin.nginx.stop()
    }

    /// A live playlist: the section's start picks the segment of the window the recording
    /// begins with, its end how much is recorded; the package is left as VOD.
    @Test func aLiveSectionBeginsInTheWindowAndBoundsTheRecording() async throws {
        let origin = try await Origin.make()
        let folder = try TestRun.makeTemporaryDirectory("section")
        let (code, _, error, playlist) = try await download(
            origin.url("live.m3u8"), into: folder.appendingPathComponent("live"), ["--section", "0:05-0:11"])
        #expect(code == .success, "\(error)")
        #expect(error.contains("live: recording"), "\(error)")
        #expect(uris(playlist) == ["00002.ts", "00003.ts", "00004.ts"], "\(playlist)")
        #expect(playlist.contains("#EXT-X-PLAYLIST-TYPE:VOD") && playlist.hasSuffix("#EXT-X-ENDLIST\n"))
        let beyond = try await download(
            origin.url("live.m3u8"), into: folder.appendingPathComponent("beyond"), ["--section", "0:21-"])
        #expect(
            beyond.code == .usage && beyond.error.contains("window, which lasts 0:20.008 (20.008 s)"), "\(beyond.error)"
        )
        await origin.nginx.stop()
    }

    /// `queue add --section --exclude-segments`: the task carries both into its download.
    @Test func theQueueCarriesSectionsAndPatterns() async throws {
        let origin = try await Origin.make()
        let home = try TestRun.makeTemporaryDirectory("section-queue-home").path
        let (added, _, addError) = await run(
            [
                "queue", "add", origin.url("ads.m3u8"), "--section", "0:00-0:07", "--exclude-segments", "/ad/",
                "--start",
                "--home", home,
            ])
        #expect(added == .success, "\(addError)")
        let (ran, _, runError) = await run(["queue", "run", "--exit-when-done", "--home", home])
        #expect(ran == .success, "\(runError)")
        let library = URL(fileURLWithPath: home).appendingPathComponent("library")
        let id = try #require(try FileManager.default.contentsOfDirectory(atPath: library.path).first)
        let playlist = try String(
            contentsOf: library.appendingPathComponent("\(id)/video/index.m3u8"), encoding: .utf8)
        #expect(uris(playlist) == ["00000.ts", "00001.ts", "00003.ts"], "\(playlist)")
        #expect(playlist.contains("00001.ts\n#EXT-X-DISCONTINUITY\n"))
        await origin.nginx.stop()
    }
}
