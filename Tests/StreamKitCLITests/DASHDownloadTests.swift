import Foundation
import StreamKitCore
import StreamKitDASH
import StreamKitDownloads
import StreamKitHLS
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

#if canImport(Glibc)
import Glibc
#endif

/// `streamkit download URL.mpd`: ffmpeg's DASH forms served by nginx download into packages that
/// play from `streamkit serve` with the origin stopped, in ffmpeg and GStreamer's dashdemux, each
/// decoding the frames of the origin; a segment the origin lacks, with and without
/// `--skip-broken`; the choice of Representations; encrypted content.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .gstLaunch)) struct DASHDownloadTests {
    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    /// A copy of `kind`'s fixture served by nginx, and what ffmpeg decodes of it.
    struct Origin {
        let root: URL
        let nginx: Nginx
        let playback: HLSPlayers.FFmpegPlayback
        var url: String { nginx.url("manifest.mpd").absoluteString }

        static func make(_ kind: FixtureRecipe.Kind, seconds: Int = 8) async throws -> Origin {
            let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind, seconds: seconds))
            let root = try TestRun.makeTemporaryDirectory("dash-origin")
            for file in try fixture.files() {
                try FileManager.default.copyItem(
                    at: fixture.directory.appendingPathComponent(file), to: root.appendingPathComponent(file))
            }
            let nginx = try await Nginx.static(root: root)
            let playback = try await HLSPlayers.ffmpeg(nginx.url("manifest.mpd").absoluteString)
            return Origin(root: root, nginx: nginx, playback: playback)
        }
    }

    /// `streamkit serve` of `library`, and the URL of `name`'s package file `file` in it.
    private func serve(_ library: URL, _ name: String, _ file: String) async throws -> (ServeProcess, String) {
        let server = try await ServeProcess.start(arguments: ["--root", library.path, "--port", "0"])
        return (server, "http://127.0.0.1:\(server.port)/library/\(name)/\(file)")
    }

    private func stop(_ server: ServeProcess) async throws {
        server.process.signal(SIGTERM)
        #expect(try await server.process.wait(timeout: .seconds(10)) == 0)
    }

    /// Every frame of the 8 s recipes: 25 a second of video.
    private let videoFrames = 8 * 25

    /// The AAC frames (1024 samples at 48 kHz) of the segments `kind`'s MPD describes. ffmpeg's
    /// encoder ends on a partial frame, frame 376, just after 8 s. The `@duration` template MPD
    /// says `PT8.0S`, so its segments are the spec's ceil(8.0 / 2) = 4 and end at 8 s: 375
    /// frames; the fifth file ffmpeg wrote beside them holds frame 376 and is not described.
    /// ffmpeg's own DASH demuxer is not the reference at the origin: it reads a segment past the
    /// `@duration` count, and stops a segment short on a single-file SegmentList.
    private func audioFrames(_ kind: FixtureRecipe.Kind) -> Int {
        kind == .dashNumber ? 8 * 48_000 / 1024 : 8 * 48_000 / 1024 + 1
    }

    /// What ffmpeg's DASH demuxer decodes of the package's audio: the described frames, but for
    /// the SegmentBase file, whose last AAC frame it drops when it reads the file's fragments
    /// beside the video, from the origin's MPD as from the package's (the file alone, and the
    /// package's HLS, decode all 376).
    private func ffmpegDASHAudioFrames(_ kind: FixtureRecipe.Kind) -> Int {
        kind == .dashSegmentBase ? audioFrames(kind) - 1 : audioFrames(kind)
    }

    @Test(arguments: [
        FixtureRecipe.Kind.dashTimeline, .dashNumber, .dashSingleFile, .dashSegmentBase,
    ])
    func eachFormPlaysOfflineInFFmpegAndGStreamer(_ kind: FixtureRecipe.Kind) async throws {
        let origin = try await Origin.make(kind)
        let languages = kind == .dashSegmentBase ? ["eng"] : Fixtures.dashLanguages
        #expect(origin.playback.audioStreamFrames.count == languages.count, "\(origin.playback)")
        if kind == .dashSegmentBase {
            #expect(origin.playback.audioStreamFrames == [ffmpegDASHAudioFrames(kind)], "\(origin.playback)")
        }
        let library = try TestRun.makeTemporaryDirectory("dash-library")
        let home = try TestRun.makeTemporaryDirectory("dash-home")
        let package = library.appendingPathComponent("movie")
        let (code, output, error) = await run([
            "download", origin.url, "-o", package.path, "--home", home.path, "--audio",
            languages.joined(separator: ","),
        ])
        #expect(code == .success, "\(output)\n\(error)")
        #expect(output.contains("DASH") && output.contains("manifest.mpd"), "\(output)")
        let mpdText = try String(contentsOf: package.appendingPathComponent("manifest.mpd"), encoding: .utf8)
        let mpd = try MPD.parse(Array(mpdText.utf8))
        let sets = try #require(mpd.periods.first?.adaptationSets)
        #expect(sets.map(\.kind) == ["video"] + languages.map { _ in "audio" }, "\(mpdText)")
        #expect(sets.dropFirst().map(\.lang) == languages.map { $0 })
        // The best video Representation, and only it.
        #expect(sets[0].representations.map(\.bandwidth) == [400_000], "\(mpdText)")
        // Nothing in the package's MPD leaves the package: no BaseURL, every file named relative
        // to it and inside it.
        #expect(!mpdText.contains("BaseURL"), "\(mpdText)")
        let references = mpdText.matches(of: /(?:media|initialization|sourceURL)="([^"]*)"/).map { String($0.1) }
        #expect(!references.isEmpty)
        #expect(
            references.allSatisfy { !$0.contains(":") && !$0.hasPrefix("/") && !$0.contains("..") }, "\(references)")
        await origin.nginx.stop()
        if kind == .dashSegmentBase {
            // The package's copy of the file has its sidx back between the init section and the
            // first fragment: it plays alone, every frame.
            let folder = package.appendingPathComponent("video")
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".mp4") }
            #expect(files.count == 1, "\(files)")
            let alone = try await HLSPlayers.ffmpeg(folder.appendingPathComponent(files[0]).path)
            #expect(alone.videoFrames == videoFrames, "\(alone)")
        }

        let (server, url) = try await serve(library, "movie", "manifest.mpd")
        let ffmpeg = try await HLSPlayers.ffmpeg(url)
        #expect(ffmpeg.failedRequests.isEmpty, "\(ffmpeg)")
        #expect(ffmpeg.videoStreamFrames == [videoFrames], "\(ffmpeg)\n\(mpdText)")
        #expect(ffmpeg.audioStreamFrames == languages.map { _ in ffmpegDASHAudioFrames(kind) }, "\(ffmpeg)")
        let gstreamer = try await HLSPlayers.gstreamer(url, dashDemuxer: .dashdemux)
        #expect(gstreamer.playedToTheEnd, "\(gstreamer)\n\(mpdText)")
        #expect(gstreamer.videoFrames == videoFrames, "\(gstreamer)")
        // The library's API and page name the MPD beside the playlist.
        let api = try await Tool.curl.run(["-s", "http://127.0.0.1:\(server.port)/api/library"]).standardOutput
        #expect(api.contains("\"dashPlayPath\":\"/library/movie/manifest.mpd\""), "\(api)")
        let page = try await Tool.curl.run(["-s", "http://127.0.0.1:\(server.port)/"]).standardOutput
        #expect(page.contains("<a href=\"/library/movie/manifest.mpd\">manifest.mpd</a>"), "\(page.prefix(2_000))")
        // The same files as HLS, for players that only know HLS.
        let hls = try await HLSPlayers.ffmpeg("http://127.0.0.1:\(server.port)/library/movie/index.m3u8")
        #expect(hls.videoFrames == videoFrames, "\(hls)")
        #expect(hls.audioStreamFrames == languages.map { _ in audioFrames(kind) }, "\(hls)")
        try await stop(server)
    }

    /// The worst video and the French audio alone; a language the MPD lacks is refused naming
    /// those it has.
    @Test func selectionChoosesRepresentationsAndLanguages() async throws {
        let origin = try await Origin.make(.dashTimeline)
        let home = try TestRun.makeTemporaryDirectory("dash-home")
        let package = try TestRun.makeTemporaryDirectory("dash-worst").appendingPathComponent("p")
        let (code, output, error) = await run([
            "download", origin.url, "-o", package.path, "--home", home.path, "--variant", "worst", "--audio", "fra",
        ])
        #expect(code == .success, "\(output)\n\(error)")
        let mpd = try MPD.parse(Array(try Data(contentsOf: package.appendingPathComponent("manifest.mpd"))))
        let sets = try #require(mpd.periods.first?.adaptationSets)
        #expect(sets.count == 2 && sets[0].representations.map(\.bandwidth) == [150_000])
        #expect(sets[1].lang == "fra")

        let (missingCode, _, missingError) = await run([
            "download", origin.url, "-o", package.path + "-de", "--home", home.path, "--audio", "eng,de",
        ])
        #expect(missingCode == .failure)
        #expect(missingError.contains("--audio de matches none of: eng (eng), fra (fra)"), "\(missingError)")
        await origin.nginx.stop()
    }

    /// A media segment the origin does not have: the download fails naming it; with
    /// `--skip-broken` it finishes with gaps (exit 2), the package's MPD steps over the missing
    /// segment, and ffmpeg plays every other frame.
    @Test func aMissingSegmentFailsOrBecomesAGap() async throws {
        let origin = try await Origin.make(.dashTimeline)
        let missing = "chunk-stream0-00002.m4s"
        try FileManager.default.removeItem(at: origin.root.appendingPathComponent(missing))
        let library = try TestRun.makeTemporaryDirectory("dash-gap-library")
        let home = try TestRun.makeTemporaryDirectory("dash-home")
        let package = library.appendingPathComponent("gap")

        let (failedCode, _, failedError) = await run([
            "download", origin.url, "-o", package.path, "--home", home.path, "--retries", "0",
        ])
        #expect(failedCode == .failure)
        #expect(failedError.contains(missing) && failedError.contains("404"), "\(failedError)")

        let (code, output, error) = await run([
            "download", origin.url, "-o", package.path, "--home", home.path, "--retries", "0", "--skip-broken",
        ])
        #expect(code == .finishedWithGaps, "\(output)\n\(error)")
        let mpdText = try String(contentsOf: package.appendingPathComponent("manifest.mpd"), encoding: .utf8)
        // Segments 1, 3 and 4 of 2 s at 12800 a second, the gap stepped over with S@t.
        #expect(mpdText.contains("<S t=\"0\" d=\"25600\"/>"), "\(mpdText)")
        #expect(mpdText.contains("<S t=\"51200\" d=\"25600\" r=\"1\"/>"), "\(mpdText)")
        await origin.nginx.stop()

        let (server, url) = try await serve(library, "gap", "manifest.mpd")
        let ffmpeg = try await HLSPlayers.ffmpeg(url)
        #expect(ffmpeg.failedRequests.isEmpty, "\(ffmpeg)")
        #expect(ffmpeg.videoStreamFrames == [origin.playback.videoStreamFrames[0] - 50], "\(ffmpeg)\n\(mpdText)")
        try await stop(server)
    }

    /// A Representation under ContentProtection is refused with a message that says what to do;
    /// `--keep-encrypted` downloads it and keeps its ContentProtection.
    @Test func encryptedContentIsRefusedUnlessKept() async throws {
        let origin = try await Origin.make(.dashTimeline)
        let manifest = origin.root.appendingPathComponent("manifest.mpd")
        try Self.protect(manifest, into: manifest)
        let home = try TestRun.makeTemporaryDirectory("dash-home")
        let package = try TestRun.makeTemporaryDirectory("dash-cenc").appendingPathComponent("p")
        let (code, _, error) = await run(["download", origin.url, "-o", package.path, "--home", home.path])
        #expect(code == .failure)
        #expect(
            error.contains("encrypted") && error.contains("urn:mpeg:dash:mp4protection:2011")
                && error.contains("--keep-encrypted"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: package.path))

        let (keptCode, _, keptError) = await run([
            "download", origin.url, "-o", package.path, "--home", home.path, "--keep-encrypted",
        ])
        #expect(keptCode == .success, "\(keptError)")
        let written = try String(contentsOf: package.appendingPathComponent("manifest.mpd"), encoding: .utf8)
        #expect(written.contains("urn:mpeg:dash:mp4protection:2011") && written.contains("cenc:default_KID"))
        await origin.nginx.stop()
    }

    /// Writes the MPD `source` with a CENC ContentProtection before its first Representation.
    static func protect(_ source: URL, into destination: URL) throws {
        let protection =
            "<ContentProtection schemeIdUri=\"urn:mpeg:dash:mp4protection:2011\" value=\"cenc\" "
            + "xmlns:cenc=\"urn:mpeg:cenc:2013\" cenc:default_KID=\"10000000-1000-1000-1000-100000000001\"/>"
        let text = try String(contentsOf: source, encoding: .utf8)
        try text.replacingOccurrences(of: "<Representation id=\"0\"", with: protection + "\n<Representation id=\"0\"")
            .write(to: destination, atomically: true, encoding: .utf8)
    }

    /// The real binary killed with SIGKILL three times at random moments of a throttled DASH
    /// download, then run to the end: segments in place at a kill are only checked (HEAD), never
    /// fetched again, and the package plays every frame from its own MPD.
    @Test func killedThreeTimesItResumesWithoutFetchingAgain() async throws {
        let seconds = 30
        let fixture = try await Fixtures.shared.fixture(
            FixtureRecipe(.dashTimeline, seconds: seconds, segmentSeconds: 1))
        // About 50 KB video segments at 30 KB/s a connection: the download takes several seconds.
        let nginx = try await Nginx.static(
            root: fixture.directory, limitRatePerConnection: 30_000, unthrottledHeader: "X-Unthrottled")
        let url = nginx.url("manifest.mpd").absoluteString
        let home = try TestRun.makeTemporaryDirectory("dash-kill-home")
        let library = try TestRun.makeTemporaryDirectory("dash-kill")
        let package = library.appendingPathComponent("p")
        let video = package.appendingPathComponent("video")
        func names() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: video.path)) ?? []) }
        var generator = SplitMix64(seed: UInt64(UInt32(truncatingIfNeeded: getpid())))
        var kills: [(logCount: Int, done: Set<String>)] = []
        for round in 0..<3 {
            let before = names()
            let process = try ChildProcess(
                executable: DownloadBinaryTests.streamkit(),
                arguments: ["download", url, "-o", package.path, "--home", home.path, "--json"],
                logName: "streamkit-dash-kill-\(round)")
            let writing = ContinuousClock.now + .seconds(20)
            while names() == before, ContinuousClock.now < writing { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(Int64.random(in: 200...800, using: &generator)))
            process.signal(SIGKILL)
            #expect(try await process.wait(timeout: .seconds(20)) == 128 + SIGKILL, "round \(round) ended by itself")
            kills.append((nginx.accessLog.count, names().filter { $0.hasSuffix(".m4s") && !$0.contains("streamkit") }))
        }
        let doneAtLastKill = kills.last?.done.count ?? 0
        #expect(doneAtLastKill > 1 && doneAtLastKill < seconds, "\(doneAtLastKill) segments in place after 3 kills")

        let (code, output, error) = await run([
            "download", url, "-o", package.path, "--home", home.path, "--json", "-H", "X-Unthrottled: 1",
        ])
        #expect(code == .success, "\(output)\n\(error)")
        let planned = try #require(
            output.split(separator: "\n").lazy.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.first { $0["event"] as? String == "planned" })
        let alreadyDone = (planned["filesAlreadyDone"] as? NSNumber)?.intValue ?? 0
        #expect(alreadyDone >= doneAtLastKill, "\(planned)")
        // Each segment in place at a kill is asked for again only as a HEAD, with no body.
        let log = try await nginx.settledAccessLog()
        var refetched: [String] = []
        for kill in kills {
            for entry in log.dropFirst(kill.logCount) where entry.uri.hasPrefix("/chunk-stream0-") {
                let local = String(entry.uri.dropFirst("/chunk-stream0-".count))
                if kill.done.contains(local), entry.method != "HEAD" || entry.bytesSent > 0 {
                    refetched.append("\(entry.method) \(entry.uri)")
                }
            }
        }
        #expect(refetched.isEmpty, "fetched again after they were in place: \(refetched)")
        await nginx.stop()

        let (server, mpdURL) = try await serve(library, "p", "manifest.mpd")
        let ffmpeg = try await HLSPlayers.ffmpeg(mpdURL)
        #expect(ffmpeg.videoStreamFrames == [seconds * 25], "\(ffmpeg)")
        #expect(ffmpeg.failedRequests.isEmpty, "\(ffmpeg)")
        try await stop(server)
    }

    /// MPDs written to hurt: what the user sees, and nothing written outside the package.
    @Test func hostileMPDsAreRefusedWithAReason() async throws {
        let root = try TestRun.makeTemporaryDirectory("dash-hostile")
        func write(_ name: String, _ body: String) throws {
            try body.write(to: root.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        func mpd(_ inside: String, base: String = "") -> String {
            """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S">\(base)
              <Period><AdaptationSet contentType="video" mimeType="video/mp4">\(inside)
                <Representation id="v" bandwidth="1000"/></AdaptationSet></Period>
            </MPD>
            """
        }
        let template = "<SegmentTemplate duration=\"2\" media=\"$Number$.m4s\"/>"
        try write("file.mpd", mpd(template, base: "<BaseURL>file:///etc/</BaseURL>"))
        try write(
            "billion.mpd",
            mpd(
                "<SegmentTemplate media=\"$Time$.m4s\"><SegmentTimeline><S d=\"1\" r=\"999999999\"/></SegmentTimeline></SegmentTemplate>"
            ))
        try write(
            "laughs.mpd",
            "<?xml version=\"1.0\"?><!DOCTYPE MPD [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;\">]>"
                + mpd(template).replacingOccurrences(of: "<?xml version=\"1.0\"?>", with: ""))
        try write("escape.mpd", mpd("<SegmentTemplate duration=\"2\" media=\"../../../escape-$Number$.m4s\"/>"))
        for number in 1...2 { try write("escape-\(number).m4s", "segment \(number)") }
        let nginx = try await Nginx.static(root: root)
        let home = try TestRun.makeTemporaryDirectory("dash-home")
        let out = try TestRun.makeTemporaryDirectory("dash-hostile-out")

        let cases: [(file: String, words: [String])] = [
            ("file.mpd", ["file:///etc/1.m4s", "http"]),
            ("billion.mpd", ["more than 100000 segments", "--max-segments"]),
            ("laughs.mpd", ["document type declaration"]),
        ]
        for (file, words) in cases {
            let clock = ContinuousClock()
            let started = clock.now
            let (code, _, error) = await run([
                "download", nginx.url(file).absoluteString, "-o", out.appendingPathComponent(file).path,
                "--home", home.path,
            ])
            #expect(code == .failure, "\(file): \(error)")
            #expect(words.allSatisfy { error.contains($0) }, "\(file): \(error)")
            #expect(clock.now - started < .seconds(10), "\(file)")
        }
        // `..` past the root resolves to the server's root (RFC 3986 §5.2.4): fetched from there,
        // stored under the package's own names.
        let package = out.appendingPathComponent("escape")
        let (code, _, error) = await run([
            "download", nginx.url("escape.mpd").absoluteString, "-o", package.path, "--home", home.path,
        ])
        #expect(code == .success, "\(error)")
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: package.appendingPathComponent("video").path))
                .isSuperset(of: ["00001.m4s", "00002.m4s"]))
        let everything = try FileManager.default.subpathsOfDirectory(atPath: out.path)
        #expect(everything.allSatisfy { !$0.hasPrefix("escape-") && !$0.contains("/escape-") }, "\(everything)")
        await nginx.stop()
    }

    /// A dynamic MPD that ffmpeg writes live (`-f dash -window_size`, 1 s segments, the window
    /// sliding under the recording) is recorded for 20 s and left as a static MPD that plays
    /// every recorded frame in ffmpeg and GStreamer's dashdemux: with a SegmentTimeline, and
    /// (10 s) with a `@duration` template, whose window the wall clock places.
    @Test(arguments: [(timeline: true, seconds: 20), (timeline: false, seconds: 10)])
    func aLiveMPDIsRecordedForADurationAndPlaysBack(_ form: (timeline: Bool, seconds: Int)) async throws {
        let root = try TestRun.makeTemporaryDirectory("dash-live-origin")
        let nginx = try await Nginx.static(root: root)
        let encoder = try ChildProcess(
            executable: try Tool.ffmpeg.requirePath(),
            arguments: [
                "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "60", "-map", "0:v", "-map", "1:a",
                "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-keyint_min", "25",
                "-sc_threshold", "0", "-b:v", "300k", "-c:a", "aac", "-b:a", "64k", "-f", "dash", "-window_size", "5",
                "-extra_window_size", "2", "-seg_duration", "1", "-use_template", "1", "-use_timeline",
                form.timeline ? "1" : "0",
                "-remove_at_exit", "0", root.appendingPathComponent("manifest.mpd").path,
            ],
            logName: "ffmpeg-dash-live")
        let manifest = root.appendingPathComponent("manifest.mpd")
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline,
            !((try? String(contentsOf: manifest, encoding: .utf8))?.contains("type=\"dynamic\"") ?? false)
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        let library = try TestRun.makeTemporaryDirectory("dash-live-library")
        let home = try TestRun.makeTemporaryDirectory("dash-home")
        let package = library.appendingPathComponent("live")
        let (code, output, error) = await run([
            "download", nginx.url("manifest.mpd").absoluteString, "-o", package.path, "--home", home.path,
            "--live-duration", "\(form.seconds)",
        ])
        await encoder.stop()
        await nginx.stop()
        #expect(code == .success, "\(output)\n\(error)")
        // The two renditions reload the MPD together: one fetch serves both (fetched apart, the
        // two come within milliseconds), so fetches start at least 0.5 s apart, less the
        // scheduling noise of a loaded machine.
        let fetches = nginx.accessLog.filter { $0.uri.hasPrefix("/manifest.mpd") }.compactMap(\.started).sorted()
        #expect(fetches.count >= form.seconds, "\(fetches)")
        let closest = zip(fetches, fetches.dropFirst()).map { $1 - $0 }.min() ?? 1
        #expect(closest >= 0.25, "\(fetches)")
        let mpdText = try String(contentsOf: package.appendingPathComponent("manifest.mpd"), encoding: .utf8)
        let mpd = try MPD.parse(Array(mpdText.utf8))
        #expect(mpd.type == .static, "\(mpdText)")
        let recorded = mpd.mediaPresentationDuration ?? 0
        #expect(recorded >= Double(form.seconds) && recorded < Double(form.seconds + 2), "\(mpdText)")
        let segments = try FileManager.default.contentsOfDirectory(
            atPath: package.appendingPathComponent("video").path
        ).filter { $0.hasSuffix(".m4s") && !$0.hasPrefix("init") }
        #expect(segments.count >= form.seconds && segments.count < form.seconds + 2, "\(segments)")
        // One after the other, none twice, none missing.
        let numbers = segments.compactMap { $0.split(separator: ".").first.flatMap { Int($0) } }.sorted()
        #expect(numbers.count == segments.count && Set(numbers).count == numbers.count, "\(segments)")
        #expect(numbers.last.map { $0 - numbers[0] + 1 } == numbers.count, "\(segments)")

        let (server, url) = try await serve(library, "live", "manifest.mpd")
        let ffmpeg = try await HLSPlayers.ffmpeg(url)
        #expect(ffmpeg.videoStreamFrames == [segments.count * 25], "\(ffmpeg)\n\(mpdText)")
        #expect(ffmpeg.audioFrames > 0 && ffmpeg.failedRequests.isEmpty, "\(ffmpeg)")
        let gstreamer = try await HLSPlayers.gstreamer(url, dashDemuxer: .dashdemux)
        #expect(gstreamer.playedToTheEnd && gstreamer.videoFrames == segments.count * 25, "\(gstreamer)")
        try await stop(server)
    }

    /// A live `@duration` MPD from a server whose clock is 100 s ahead of ours, which it says in
    /// its UTCTiming (the time itself, or a URL answering it): the window is placed on the
    /// server's clock. On ours the stream would not have started yet (no segment for 39 s).
    @Test(arguments: ["direct", "http-xsdate"])
    func aLiveMPDIsPlacedOnTheServersClock(_ scheme: String) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.dashNumber, seconds: 8))
        let root = try TestRun.makeTemporaryDirectory("dash-clock-origin")
        let init0 = "init-stream0.m4s"
        try FileManager.default.copyItem(
            at: fixture.directory.appendingPathComponent(init0), to: root.appendingPathComponent(init0))
        // Numbers 1 to 60 from the fixture's four video segments, over and over: the request
        // log tells which the window named.
        for number in 1...60 {
            try FileManager.default.copyItem(
                at: fixture.directory.appendingPathComponent(
                    String(format: "chunk-stream0-%05d.m4s", (number - 1) % 4 + 1)),
                to: root.appendingPathComponent(String(format: "chunk-stream0-%05d.m4s", number)))
        }
        let serverNow = Date().addingTimeInterval(100)
        // Started 61 s ago on the server's clock: 30 whole 2 s segments, the window of 10 s the
        // five before the one at the edge, numbers 25 to 29.
        let start = HLSDateTime(serverNow.addingTimeInterval(-61)).description
        let nginx = try await Nginx.static(root: root)
        let timing: String
        if scheme == "direct" {
            timing = "<UTCTiming schemeIdUri=\"urn:mpeg:dash:utc:direct:2014\" value=\"\(HLSDateTime(serverNow))\"/>"
        } else {
            try HLSDateTime(serverNow).description.write(
                to: root.appendingPathComponent("time.txt"), atomically: true, encoding: .utf8)
            timing = "<UTCTiming schemeIdUri=\"urn:mpeg:dash:utc:http-xsdate:2014\" value=\"time.txt\"/>"
        }
        try """
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="\(start)" \
        timeShiftBufferDepth="PT10S" minimumUpdatePeriod="PT500S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
        <Period id="0" start="PT0S"><AdaptationSet contentType="video" mimeType="video/mp4">
        <Representation id="0" bandwidth="400000" codecs="avc1.42c00d" width="320" height="240">
        <SegmentTemplate timescale="1" duration="2" initialization="init-stream$RepresentationID$.m4s" \
        media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1"/>
        </Representation></AdaptationSet></Period>\(timing)</MPD>
        """.write(to: root.appendingPathComponent("manifest.mpd"), atomically: true, encoding: .utf8)
        let home = try TestRun.makeTemporaryDirectory("dash-home")
        let package = try TestRun.makeTemporaryDirectory("dash-clock").appendingPathComponent("live")
        let (code, output, error) = await run([
            "download", nginx.url("manifest.mpd").absoluteString, "-o", package.path, "--home", home.path,
            "--live-duration", "6",
        ])
        await nginx.stop()
        #expect(code == .success, "\(output)\n\(error)")
        let fetched = nginx.accessLog.filter { $0.uri.hasPrefix("/chunk-") }.map(\.uri).sorted()
        #expect(
            fetched == ["/chunk-stream0-00025.m4s", "/chunk-stream0-00026.m4s", "/chunk-stream0-00027.m4s"],
            "\(fetched)")
    }

    /// `inspect` of an MPD over HTTP and from a file: the summary names the sets and
    /// Representations; `--json` lists every segment resolved; SegmentBase names its index; a
    /// broken MPD exits 1 with the reason.
    @Test func inspectSummarizesAndResolvesMPDs() async throws {
        let origin = try await Origin.make(.dashTimeline)
        let (code, output, error) = await run(["inspect", origin.url])
        #expect(code == .success, "\(error)")
        #expect(output.contains("DASH MPD, static, 1 Period(s)") && output.contains("language fra"), "\(output)")
        #expect(
            output.contains("0: 400000 bit/s") && output.contains("template: 4 segments, 8.000 s (0:08)"), "\(output)")

        let (jsonCode, json, _) = await run(["inspect", origin.url, "--json"])
        #expect(jsonCode == .success)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(report["kind"] as? String == "mpd" && report["type"] as? String == "static")
        let periods = try #require(report["periods"] as? [[String: Any]])
        let sets = try #require(periods.first?["adaptationSets"] as? [[String: Any]])
        #expect(sets.map { $0["kind"] as? String } == ["video", "audio", "audio"])
        let video = try #require((sets[0]["representations"] as? [[String: Any]])?.first)
        let segments = try #require(video["segments"] as? [[String: Any]])
        #expect(
            segments.map { $0["url"] as? String }
                == (1...4).map { origin.nginx.url("chunk-stream0-0000\($0).m4s").absoluteString })
        #expect(segments.map { ($0["start"] as? NSNumber)?.doubleValue } == [0, 2, 4, 6])
        #expect(
            (video["initialization"] as? [String: Any])?["url"] as? String
                == origin.nginx.url("init-stream0.m4s").absoluteString)

        // From a file, relative URLs resolve against the file.
        let file = origin.root.appendingPathComponent("manifest.mpd")
        let (fileCode, fileOutput, _) = await run(["inspect", file.path])
        #expect(fileCode == .success && fileOutput.contains("first file://"), "\(fileOutput)")

        let base = try await Origin.make(.dashSegmentBase)
        let (baseCode, baseOutput, _) = await run(["inspect", base.url])
        #expect(baseCode == .success && baseOutput.contains("SegmentBase, index at bytes"), "\(baseOutput)")

        // A live `@duration` template: the segments available now, 60 s after its start with
        // 10 s of time shift, 2 s segments: the 5 before the one ending at the edge.
        let start = HLSDateTime(Date().addingTimeInterval(-61)).description
        let live = origin.root.appendingPathComponent("live.mpd")
        try """
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="\(start)" \
        timeShiftBufferDepth="PT10S" minimumUpdatePeriod="PT2S"><Period id="0" start="PT0S">
        <AdaptationSet contentType="video" mimeType="video/mp4"><Representation id="v" bandwidth="1">
        <SegmentTemplate timescale="1" duration="2" media="$Number$.m4s" startNumber="1"/>
        </Representation></AdaptationSet></Period></MPD>
        """.write(to: live, atomically: true, encoding: .utf8)
        let (liveCode, liveOutput, liveError) = await run(["inspect", live.path])
        #expect(liveCode == .success && liveOutput.contains("dynamic"), "\(liveOutput)\n\(liveError)")
        #expect(liveOutput.contains("template: 5 segments, 10.000 s"), "\(liveOutput)")

        try "<MPD><Period></MPD>".write(to: file, atomically: true, encoding: .utf8)
        let (brokenCode, _, brokenError) = await run(["inspect", file.path])
        #expect(brokenCode == .failure && brokenError.hasPrefix("error: \(file.path): "), "\(brokenError)")
        await origin.nginx.stop()
        await base.nginx.stop()
    }

    /// `cache preload URL.mpd` caches the MPD and every Representation's first seconds (a
    /// SegmentBase's `sidx` read for its ranges); with the origin stopped, `/proxy/dash` of
    /// `serve` plays what ffmpeg played from the origin.
    @Test(arguments: [FixtureRecipe.Kind.dashTimeline, .dashSegmentBase])
    func aPreloadedMPDPlaysOfflineThroughTheProxy(_ kind: FixtureRecipe.Kind) async throws {
        let origin = try await Origin.make(kind)
        let home = try TestRun.makeTemporaryDirectory("dash-preload-home")
        let (code, output, error) = await run(["cache", "preload", origin.url, "--seconds", "8", "--home", home.path])
        #expect(code == .success, "\(output)\n\(error)")
        // Four segments of each Representation: two video and two audio, or one of each.
        let representations = kind == .dashSegmentBase ? 2 : 4
        #expect(output.hasPrefix("Cached \(representations * 4) segments (8.0 s"), "\(output)")
        await origin.nginx.stop()

        let library = try TestRun.makeTemporaryDirectory("dash-preload-library")
        let server = try await ServeProcess.start(
            arguments: ["--root", library.path, "--port", "0"], environment: ["STREAMKIT_HOME": home.path])
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = try #require(origin.url.addingPercentEncoding(withAllowedCharacters: allowed))
        let offline = try await HLSPlayers.ffmpeg("http://127.0.0.1:\(server.port)/proxy/dash?url=\(encoded)")
        #expect(offline.failedRequests.isEmpty, "\(offline)")
        #expect(offline.videoStreamFrames == origin.playback.videoStreamFrames, "\(offline)")
        #expect(offline.audioStreamFrames == origin.playback.audioStreamFrames, "\(offline)")
        try await stop(server)
    }
}
