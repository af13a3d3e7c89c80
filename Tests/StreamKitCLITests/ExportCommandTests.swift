import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// `streamkit export`: one file by concatenation (decrypting on the way; fMP4 as init plus
/// fragments), ffmpeg only to remux or add audio renditions.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .ffprobe, .openssl)) struct ExportCommandTests {
    private func run(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing(environment: environment)
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    /// Downloads a fixture into a library and returns the package id, the home and the origin.
    private func package(
        _ kind: FixtureRecipe.Kind, extra: [String] = []
    ) async throws -> (id: String, home: URL, fixture: Fixture, nginx: Nginx) {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let nginx = try await Nginx.static(root: fixture.directory)
        let home = try TestRun.makeTemporaryDirectory("export-home")
        let url = nginx.url(fixture.recipe.entry).absoluteString
        let (code, _, error) = await run(["download", url, "--home", home.path] + extra)
        #expect(code == .success, "\(error)")
        let ids = try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("library").path)
        return (try #require(ids.first), home, fixture, nginx)
    }

    /// Frames decoded per top-level stream, `["audio:432", "video:250"]`, sorted.
    private func frames(_ path: String) async throws -> [String] {
        let output = try await Tool.ffprobe.run([
            "-v", "error", "-count_frames", "-show_entries", "stream=codec_type,nb_read_frames", "-of", "json", path,
        ])
        let object = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any]
        let streams = object?["streams"] as? [[String: Any]] ?? []
        return streams.map { "\($0["codec_type"] ?? "?"):\($0["nb_read_frames"] ?? "?")" }.sorted()
    }

    /// `type:codec:language` per stream, in stream order.
    private func languages(_ path: String) async throws -> [String] {
        let output = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "stream=codec_type,codec_name:stream_tags=language", "-of", "json", path,
        ])
        let object = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any]
        let streams = object?["streams"] as? [[String: Any]] ?? []
        return streams.map { stream in
            let language = (stream["tags"] as? [String: Any])?["language"] as? String ?? ""
            return "\(stream["codec_type"] ?? "?"):\(stream["codec_name"] ?? "?"):\(language == "und" ? "" : language)"
        }
    }

    private func originFrames(_ nginx: Nginx, _ path: String) async throws -> [String] {
        try await frames(nginx.url(path).absoluteString)
    }

    @Test func transportStreamsAreConcatenatedWithoutFFmpeg() async throws {
        let (id, home, fixture, nginx) = try await package(.hlsTS)
        let out = try TestRun.makeTemporaryDirectory("export").appendingPathComponent("talk.ts")
        // No ffmpeg on PATH: concatenation needs none.
        let (code, output, error) = await run(
            ["export", id, out.path, "--home", home.path], environment: ["PATH": "/nonexistent"])
        #expect(code == .success, "\(error)")
        #expect(output.contains("Exported") && output.contains(out.path))
        var expected = Data()
        for index in 0..<5 {
            expected += try Data(contentsOf: fixture.directory.appendingPathComponent("seg00\(index).ts"))
        }
        #expect(try Data(contentsOf: out) == expected)
        #expect(try await frames(out.path) == originFrames(nginx, "index.m3u8"))
        await nginx.stop()
    }

    @Test func encryptedPackagesAreDecryptedOnTheWay() async throws {
        let (id, home, fixture, nginx) = try await package(.hlsAES128SequenceIV)
        let out = try TestRun.makeTemporaryDirectory("export").appendingPathComponent("clear.ts")
        #expect(await run(["export", id, out.path, "--home", home.path]).code == .success)
        var expected = Data()
        for sequence in 7..<12 {
            let clear = out.path + ".\(sequence)"
            try await Tool.openssl.run([
                "enc", "-d", "-aes-128-cbc", "-K", Hex.encode(Fixtures.key), "-iv",
                Hex.encode(AES128CBC.iv(mediaSequence: UInt64(sequence))), "-in",
                fixture.directory.appendingPathComponent("seg0\(sequence < 10 ? "0" : "")\(sequence).ts").path, "-out",
                clear,
            ])
            expected += try Data(contentsOf: URL(fileURLWithPath: clear))
        }
        #expect(try Data(contentsOf: out) == expected)
        await nginx.stop()
    }

    @Test func fragmentedMP4IsTheInitSectionThenEveryFragment() async throws {
        let (id, home, fixture, nginx) = try await package(.hlsFMP4)
        let out = try TestRun.makeTemporaryDirectory("export").appendingPathComponent("talk.mp4")
        let (code, _, error) = await run(
            ["export", home.appendingPathComponent("library/\(id)").path, out.path],
            environment: ["PATH": "/nonexistent"])
        #expect(code == .success, "\(error)")
        var expected = try Data(contentsOf: fixture.directory.appendingPathComponent("init.mp4"))
        for index in 0..<5 {
            expected += try Data(contentsOf: fixture.directory.appendingPathComponent("seg00\(index).m4s"))
        }
        #expect(try Data(contentsOf: out) == expected)
        #expect(try await frames(out.path) == originFrames(nginx, "index.m3u8"))
        await nginx.stop()
    }

    /// Fragmented MP4 whose init section changes mid-stream (two encodes of other sizes, a
    /// discontinuity between them): one MP4 cannot hold it, and a stream copy by ffmpeg carries the
    /// first init section's parameters into the second part (200 decode errors, found in review),
    /// so the export is refused, naming the segment, with ffmpeg installed or not.
    @Test func aChangingInitSectionIsRefusedNamingWhy() async throws {
        let root = try TestRun.makeTemporaryDirectory("export-two-inits")
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:2", "#EXT-X-PLAYLIST-TYPE:VOD"]
        for (name, size) in [("a", "320x240"), ("b", "480x270")] {
            let encoded = try await Tool.ffmpeg.run(
                [
                    "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25", "-t", "4",
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-f", "hls", "-hls_time", "2",
                    "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init-\(name).mp4",
                    "-hls_segment_filename", root.appendingPathComponent("\(name)%d.m4s").path,
                    root.appendingPathComponent("\(name).m3u8").path,
                ], workingDirectory: root)
            #expect(encoded.status == 0, "\(encoded.standardError)")
            let part = try #require(
                try Playlist.parse(Data(contentsOf: root.appendingPathComponent("\(name).m3u8"))).playlist.media)
            if name == "b" { lines.append("#EXT-X-DISCONTINUITY") }
            lines.append("#EXT-X-MAP:URI=\"init-\(name).mp4\"")
            for segment in part.segments { lines += ["#EXTINF:\(segment.duration),", segment.uri] }
        }
        try (lines + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n").write(
            to: root.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let nginx = try await Nginx.static(root: root)
        let home = try TestRun.makeTemporaryDirectory("export-home")
        let url = nginx.url("index.m3u8").absoluteString
        #expect(await run(["download", url, "--home", home.path]).code == .success)
        let id = try #require(
            try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("library").path).first)
        let directory = try TestRun.makeTemporaryDirectory("export")
        for environment in [ProcessInfo.processInfo.environment, ["PATH": "/nonexistent"]] {
            let out = directory.appendingPathComponent("two.mp4")
            let (code, _, error) = await run(["export", id, out.path, "--home", home.path], environment: environment)
            #expect(code == .failure && error.contains("the init section changes at segment 2"), "\(error)")
            #expect(!FileManager.default.fileExists(atPath: out.path))
        }
        await nginx.stop()
    }

    /// An export keeps a fixed number of files open whatever the segment count (one segment at a
    /// time: none of the package's files is open when a segment's progress is reported), and
    /// reports progress per segment.
    @Test func exportKeepsOneSegmentOpenAtATimeAndReportsProgress() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS, seconds: 40, segmentSeconds: 1))
        let nginx = try await Nginx.static(root: fixture.directory)
        let home = try TestRun.makeTemporaryDirectory("export-home")
        #expect(
            await run(["download", nginx.url(fixture.recipe.entry).absoluteString, "--home", home.path]).code
                == .success)
        await nginx.stop()
        let id = try #require(
            try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("library").path).first)
        let package = try HLSPackage(directory: home.appendingPathComponent("library/\(id)"))
        let folder = package.directory.resolvingSymlinksInPath().path
        /// The package's files this process has open (/proc/self/fd, immune to other tests' files).
        func openInPackage() -> Int {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return fds.filter { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"))?.hasPrefix(folder)
                    ?? false
            }.count
        }
        var reports: [PackageExportProgress] = []
        var mostOpen = 0
        let out = try TestRun.makeTemporaryDirectory("export").appendingPathComponent("all.ts")
        try PackageExporter.concatenate(package.main, of: package, to: out) { progress in
            reports.append(progress)
            mostOpen = max(mostOpen, openInPackage())
        }
        let segments = package.main.playlist.segments.count
        #expect(segments >= 40)
        #expect(reports.map(\.segmentsDone) == Array(1...segments))
        #expect(reports.allSatisfy { $0.segmentsTotal == segments })
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesWritten < $1.bytesWritten })
        #expect(mostOpen == 0, "\(mostOpen) of the package's files open between segments")
        #expect(openInPackage() == 0)
    }

    @Test func byteRangePackagesExportTheirRanges() async throws {
        let (id, home, fixture, nginx) = try await package(.hlsByteRange)
        let out = try TestRun.makeTemporaryDirectory("export").appendingPathComponent("br.ts")
        #expect(await run(["export", id, out.path, "--home", home.path]).code == .success)
        #expect(try Data(contentsOf: out) == Data(contentsOf: fixture.directory.appendingPathComponent("media.ts")))
        await nginx.stop()
    }

    /// MP4 from transport stream segments, and alternative audio renditions, go through ffmpeg
    /// (stream copy); without ffmpeg, the remux is refused and audio renditions are written beside
    /// the output as files of their own.
    @Test func remuxingAndAudioRenditionsUseFFmpeg() async throws {
        let (id, home, _, nginx) = try await package(.hlsTS)
        let directory = try TestRun.makeTemporaryDirectory("export")
        let mp4 = directory.appendingPathComponent("talk.mp4")
        let (code, output, error) = await run(["export", id, mp4.path, "--home", home.path])
        #expect(code == .success, "\(error)")
        #expect(output.contains("remuxed with ffmpeg"))
        #expect(try await frames(mp4.path) == originFrames(nginx, "index.m3u8"))
        let (refused, _, refusal) = await run(
            ["export", id, directory.appendingPathComponent("no.mp4").path, "--home", home.path],
            environment: ["PATH": "/nonexistent"])
        #expect(refused == .failure && refusal.contains("needs ffmpeg to remux (not installed); export to .ts instead"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("no.mp4").path))
        await nginx.stop()

        let master = try await package(.hlsMaster, extra: ["--audio", "all"])
        let muxed = directory.appendingPathComponent("master.mp4")
        #expect(await run(["export", master.id, muxed.path, "--home", master.home.path]).code == .success)
        let streams = try await frames(muxed.path)
        #expect(
            streams.filter { $0.hasPrefix("audio:") }.count == 2 && streams.filter { $0.hasPrefix("video:") }.count == 1
        )
        // Every audio language and the subtitles, with their languages, in .mp4 and .mkv.
        for (name, subtitleCodec) in [("master.mp4", "mov_text"), ("master.mkv", "subrip")] {
            let file = directory.appendingPathComponent(name)
            let (code, _, error) = await run(["export", master.id, file.path, "--home", master.home.path])
            #expect(code == .success, "\(error)")
            #expect(
                try await languages(file.path)
                    == ["video:h264:", "audio:aac:eng", "audio:aac:fra", "subtitle:\(subtitleCodec):eng"], "\(name)")
        }
        let subtitleText = try await Tool.ffmpeg.run(
            [
                "-nostdin", "-v", "error", "-i", directory.appendingPathComponent("master.mkv").path, "-map", "0:s:0",
                "-f", "srt", "-",
            ])
        #expect(subtitleText.standardOutput.components(separatedBy: " --> ").count - 1 == 10, "\(subtitleText)")
        #expect(subtitleText.standardOutput.hasPrefix("1\n00:00:00,000 --> 00:00:01,000\nSecond 1\n"))
        let videoOnly = directory.appendingPathComponent("video-only.ts")
        let (partial, _, warning) = await run(
            ["export", master.id, videoOnly.path, "--home", master.home.path], environment: ["PATH": "/nonexistent"])
        #expect(partial == .success, "\(warning)")
        #expect(try await frames(videoOnly.path).allSatisfy { $0.hasPrefix("video:") })
        // The audio renditions, transport streams too, beside it as files of their own.
        let audioFiles = ["video-only.audio-eng.ts", "video-only.audio-fra.ts"]
        #expect(warning.contains("\(audioFiles.joined(separator: ", ")) written beside video-only.ts"), "\(warning)")
        for name in audioFiles {
            let streams = try await frames(directory.appendingPathComponent(name).path)
            #expect(streams.count == 1 && streams[0].hasPrefix("audio:"), "\(name): \(streams)")
        }
        await master.nginx.stop()
    }

    /// A DASH package (video and audio in two languages, fragmented MP4) becomes one .mp4 with
    /// ffmpeg, every stream with its language and every frame; without ffmpeg, one fragmented
    /// MP4 per Representation, each decoding all of its frames, and the warning says so.
    @Test(arguments: [FixtureRecipe.Kind.dashTimeline, .dashSegmentBase])
    func dashPackagesExportWithAndWithoutFFmpeg(_ kind: FixtureRecipe.Kind) async throws {
        let wanted = kind == .dashSegmentBase ? ["eng"] : Fixtures.dashLanguages
        let (id, home, _, nginx) = try await package(kind, extra: ["--audio", wanted.joined(separator: ",")])
        await nginx.stop()
        let directory = try TestRun.makeTemporaryDirectory("export-dash")
        let muxed = directory.appendingPathComponent("movie.mp4")
        let (code, output, error) = await run(["export", id, muxed.path, "--home", home.path])
        #expect(code == .success && output.contains("remuxed with ffmpeg"), "\(output)\n\(error)")
        #expect(try await languages(muxed.path) == ["video:h264:"] + wanted.map { "audio:aac:\($0)" })
        // 10 s: 250 video frames, and per language 469 AAC frames of 1024 samples at 48 kHz (the
        // last one partial) after ffmpeg's encoder's priming frame.
        let muxedFrames = try await frames(muxed.path)
        #expect(muxedFrames == wanted.map { _ in "audio:470" } + ["video:250"], "\(muxedFrames)")

        let alone = directory.appendingPathComponent("alone.mp4")
        let (plain, plainOutput, warning) = await run(
            ["export", id, alone.path, "--home", home.path], environment: ["PATH": "/nonexistent"])
        #expect(plain == .success, "\(warning)")
        let beside = wanted.map { "alone.audio-\($0).mp4" }
        #expect(
            warning.contains(
                "\(beside.joined(separator: ", ")) written beside alone.mp4: joining them into it needs ffmpeg"),
            "\(warning)")
        #expect(plainOutput.contains("\(wanted.count) rendition"), "\(plainOutput)")
        let aloneFrames = try await frames(alone.path)
        #expect(aloneFrames == ["video:250"], "\(aloneFrames)")
        for name in beside {
            let streams = try await frames(directory.appendingPathComponent(name).path)
            #expect(streams == ["audio:470"], "\(name): \(streams)")
        }
    }

    @Test func errorsNameWhatIsWrong() async throws {
        let home = try TestRun.makeTemporaryDirectory("export-home")
        let (missing, _, error) = await run(["export", "0123456789abcdef", "/tmp/x.ts", "--home", home.path])
        #expect(missing == .failure && error.contains("library/0123456789abcdef/index.m3u8: no such file"), "\(error)")
        let (usage, _, usageError) = await run(["export", "0123456789abcdef", "out.avi"])
        #expect(usage == .usage && usageError.hasPrefix("error: <output> must end in .ts, .mp4 or .mkv, got 'out.avi'"))
    }
}
