import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `download --skip-broken` of a stream whose origin answers 404 for one segment, played through
/// `streamkit serve` by ffmpeg and GStreamer: the default gap form (the segment left out, a
/// discontinuity after it) decodes every frame of every other segment in both; the `--gap-tags`
/// form (EXT-X-GAP) is well-formed, and what each player makes of it is checked.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .gstLaunch)) struct GapFormPlaybackTests {
    /// A stream and the segment its origin does not have.
    struct Case: Sendable, CustomTestStringConvertible {
        let kind: FixtureRecipe.Kind
        /// The origin's file for the missing segment.
        let missing: String
        /// EXT-X-DISCONTINUITY tags the package's playlist has with the segment left out.
        let discontinuities: Int
        let what: String

        var testDescription: String { "\(kind.rawValue) without \(missing): \(what)" }
    }

    static let cases: [Case] = [
        Case(kind: .hlsTS, missing: "seg002.ts", discontinuities: 1, what: "a middle segment"),
        Case(
            kind: .hlsFMP4, missing: "seg000.m4s", discontinuities: 0,
            what: "the first segment, the only one EXT-X-MAP is written before"),
        Case(
            kind: .hlsAES128SequenceIV, missing: "seg009.ts", discontinuities: 1,
            what: "IVs from the sequence number, which changes for the segments after it"),
        Case(
            kind: .hlsDiscontinuity, missing: "b000.ts", discontinuities: 1,
            what: "the segment that carries the source's EXT-X-DISCONTINUITY"),
    ]

    /// The origin of a case: a copy of the fixture served by nginx without the missing segment,
    /// and the frames ffmpeg decodes of the fixture whole, of the missing segment alone and of
    /// the segments before it.
    struct Origin {
        let fixture: Fixture
        let root: URL
        let nginx: Nginx
        let whole: HLSPlayers.FFmpegPlayback
        let missing: HLSPlayers.FFmpegPlayback
        let beforeMissing: HLSPlayers.FFmpegPlayback
        let segmentCount: Int

        var url: String { nginx.url(fixture.recipe.entry).absoluteString }

        static func make(_ testCase: Case) async throws -> Origin {
            let fixture = try await Fixtures.shared.fixture(FixtureRecipe(testCase.kind))
            let root = try TestRun.makeTemporaryDirectory("gap-origin")
            for file in try fixture.files() {
                try FileManager.default.copyItem(
                    at: fixture.directory.appendingPathComponent(file), to: root.appendingPathComponent(file))
            }
            let text = try String(contentsOf: root.appendingPathComponent(fixture.recipe.entry), encoding: .utf8)
            let uris = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }.map(String.init)
            let index = try #require(uris.firstIndex(of: testCase.missing), "\(uris)")
            func frames(of segments: Range<Int>) async throws -> HLSPlayers.FFmpegPlayback {
                guard !segments.isEmpty else {
                    return HLSPlayers.FFmpegPlayback(videoFrames: 0, audioFrames: 0, failedRequests: [])
                }
                let name = "part-\(segments.lowerBound)-\(segments.upperBound).m3u8"
                try Self.playlist(text, keeping: segments).write(
                    to: root.appendingPathComponent(name), atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(at: root.appendingPathComponent(name)) }
                return try await HLSPlayers.ffmpeg(root.appendingPathComponent(name).path)
            }
            let whole = try await HLSPlayers.ffmpeg(root.appendingPathComponent(fixture.recipe.entry).path)
            let missing = try await frames(of: index..<(index + 1))
            let before = try await frames(of: 0..<index)
            try FileManager.default.removeItem(at: root.appendingPathComponent(testCase.missing))
            return Origin(
                fixture: fixture, root: root, nginx: try await Nginx.static(root: root), whole: whole, missing: missing,
                beforeMissing: before, segmentCount: uris.count)
        }

        /// The media playlist `text` with only the segments `kept` (by position): the lines before
        /// the first EXTINF (where ffmpeg writes EXT-X-KEY and EXT-X-MAP), then each kept
        /// segment's EXTINF and URI, numbered from its own media sequence number.
        static func playlist(_ text: String, keeping kept: Range<Int>) -> String {
            let lines = text.split(separator: "\n").map(String.init)
            let firstSegment = lines.firstIndex { $0.hasPrefix("#EXTINF") } ?? lines.count
            let sequenceTag = "#EXT-X-MEDIA-SEQUENCE:"
            var first = 0
            var output: [String] = lines[..<firstSegment].map { line in
                guard line.hasPrefix(sequenceTag) else { return line }
                first = Int(line.dropFirst(sequenceTag.count)) ?? 0
                return sequenceTag + "\(first + kept.lowerBound)"
            }
            if !output.contains(where: { $0.hasPrefix(sequenceTag) }) {
                output.append(sequenceTag + "\(kept.lowerBound)")
            }
            var position = 0
            var duration = ""
            for line in lines[firstSegment...] {
                if line.hasPrefix("#EXTINF") {
                    duration = line
                } else if !line.hasPrefix("#"), !line.isEmpty {
                    if kept.contains(position) { output += [duration, line] }
                    position += 1
                }
            }
            return (output + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n")
        }
    }

    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    /// Downloads `url` into `library/name` with `--skip-broken` and no retries.
    private func download(
        _ url: String, into library: URL, name: String, _ extra: [String] = []
    ) async throws -> (code: ExitCode, playlist: String, error: String) {
        let home = try TestRun.makeTemporaryDirectory("gap-home")
        let package = library.appendingPathComponent(name)
        let (code, _, error) = await run(
            ["download", url, "-o", package.path, "--home", home.path, "--skip-broken", "--retries", "0"] + extra)
        let playlist =
            (try? String(contentsOf: package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)) ?? ""
        return (code, playlist, error)
    }

    /// `streamkit serve` of `library`, and the URL of `name`'s package in it.
    private func serve(_ library: URL, _ name: String) async throws -> (ServeProcess, String) {
        let server = try await ServeProcess.start(arguments: ["--root", library.path, "--port", "0"])
        return (server, "http://127.0.0.1:\(server.port)/library/\(name)/index.m3u8")
    }

    private func stop(_ server: ServeProcess) async throws {
        server.process.signal(SIGTERM)
        #expect(try await server.process.wait(timeout: .seconds(10)) == 0)
    }

    @Test(arguments: cases) func theDefaultFormPlaysEveryOtherFrameInFFmpegAndGStreamer(_ testCase: Case) async throws {
        let origin = try await Origin.make(testCase)
        let expectedVideo = origin.whole.videoFrames - origin.missing.videoFrames
        let expectedAudio = origin.whole.audioFrames - origin.missing.audioFrames
        #expect(origin.missing.videoFrames > 0 && expectedVideo > 0, "\(origin.whole), \(origin.missing)")
        let library = try TestRun.makeTemporaryDirectory("gap-library")

        let (code, playlist, error) = try await download(origin.url, into: library, name: "gap")
        #expect(code == .finishedWithGaps, "\(error)")
        #expect(!playlist.contains("#EXT-X-GAP"), "\(playlist)")
        #expect(playlist.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count - 1 == testCase.discontinuities)
        let media = try #require(try Playlist.parse(playlist, options: .strict).playlist.media)
        #expect(media.segments.count == origin.segmentCount - 1, "\(playlist)")
        let manifest = try JSONDecoder().decode(
            PackageManifest.self, from: Data(contentsOf: library.appendingPathComponent("gap/package.json")))
        #expect(manifest.status == .completeWithGaps && manifest.files.filter { $0.state == "gap" }.count == 1)

        let (server, url) = try await serve(library, "gap")
        let ffmpeg = try await HLSPlayers.ffmpeg(url)
        #expect(ffmpeg.failedRequests.isEmpty, "\(ffmpeg)")
        #expect(ffmpeg.videoFrames == expectedVideo && ffmpeg.audioFrames == expectedAudio, "\(ffmpeg)\n\(playlist)")
        for demuxer in HLSPlayers.GStreamerDemuxer.allCases {
            let gstreamer = try await HLSPlayers.gstreamer(url, demuxer: demuxer)
            #expect(gstreamer.playedToTheEnd, "\(demuxer): \(gstreamer)\n\(playlist)")
            #expect(gstreamer.videoFrames == expectedVideo, "\(demuxer): \(gstreamer) of \(expectedVideo)")
        }

        // The segment back at the origin: the same command fetches it, and the playlist is the one
        // a download with nothing missing writes (no gap, no discontinuity added).
        try FileManager.default.copyItem(
            at: origin.fixture.directory.appendingPathComponent(testCase.missing),
            to: origin.root.appendingPathComponent(testCase.missing))
        let (healedCode, healed, healedError) = try await download(origin.url, into: library, name: "gap")
        #expect(healedCode == .success, "\(healedError)")
        let (_, whole, _) = try await download(origin.url, into: library, name: "whole")
        #expect(healed == whole && !whole.isEmpty)
        let healedPlayback = try await HLSPlayers.ffmpeg(url)
        #expect(
            healedPlayback.videoFrames == origin.whole.videoFrames
                && healedPlayback.audioFrames == origin.whole.audioFrames, "\(healedPlayback)")
        try await stop(server)
        await origin.nginx.stop()
    }

    /// `--gap-tags` keeps the missing segment as EXT-X-GAP. ffmpeg plays through it (it asks for
    /// the segment, is answered 404 by serve, and goes on). GStreamer 1.22 does not know
    /// EXT-X-GAP: both its demuxers ask for the segment and stop with an error (before the first
    /// frame, or after some of those before the gap); a GStreamer that knows it plays on.
    @Test func theGapTagsFormIsWellFormedAndFFmpegPlaysThroughIt() async throws {
        let testCase = Self.cases[0]
        let origin = try await Origin.make(testCase)
        let expectedVideo = origin.whole.videoFrames - origin.missing.videoFrames
        let library = try TestRun.makeTemporaryDirectory("gap-library")

        let (code, playlist, error) = try await download(origin.url, into: library, name: "gap", ["--gap-tags"])
        #expect(code == .finishedWithGaps, "\(error)")
        #expect(playlist.contains("#EXT-X-GAP\n#EXTINF:2,\n00002.ts\n"), "\(playlist)")
        #expect(!playlist.contains("#EXT-X-DISCONTINUITY"))
        let media = try #require(try Playlist.parse(playlist, options: .strict).playlist.media)
        #expect(media.segments.count == origin.segmentCount && media.segments.filter(\.isGap).count == 1)
        #expect(
            !FileManager.default.fileExists(atPath: library.appendingPathComponent("gap/video/00002.ts").path))

        let (server, url) = try await serve(library, "gap")
        let ffmpeg = try await HLSPlayers.ffmpeg(url)
        // ffmpeg 5.1 asks for the gap segment and plays on (one failed request, or none if it
        // skips EXT-X-GAP segments).
        #expect(ffmpeg.failedRequests.allSatisfy { $0.contains("404") || $0.contains("segment 2") }, "\(ffmpeg)")
        #expect(ffmpeg.videoFrames == expectedVideo, "\(ffmpeg)")
        #expect(ffmpeg.audioFrames == origin.whole.audioFrames - origin.missing.audioFrames, "\(ffmpeg)")
        for demuxer in HLSPlayers.GStreamerDemuxer.allCases {
            let gstreamer = try await HLSPlayers.gstreamer(url, demuxer: demuxer)
            if gstreamer.playedToTheEnd {
                #expect(gstreamer.videoFrames == expectedVideo, "\(demuxer): \(gstreamer)")
            } else {
                // Stopped at the gap: nothing decoded past it.
                #expect(gstreamer.videoFrames <= origin.beforeMissing.videoFrames, "\(demuxer): \(gstreamer)")
            }
        }
        try await stop(server)
        await origin.nginx.stop()
    }
}
