import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// `download --subs-format vtt|srt` (issue 25) of the master fixture served by nginx, with a
/// second subtitle rendition beside the fixture's: the same cues written with segment-local times
/// and an `X-TIMESTAMP-MAP` that advances with the segments, some segments repeating the cue
/// before them. Both renditions must merge to the cues ffmpeg reads from the fixture's
/// rendition (whose times are already on the media's clock), and ffmpeg must read our files the
/// same way.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .ffprobe)) struct SubtitleMergeTests {
    struct Cue: Hashable, CustomStringConvertible {
        let start: Int64
        let end: Int64
        let text: String
        var description: String { "\(start)-\(end) \(text)" }
    }

    /// The fixture plus `subs_local/`: the English cues in segment-local times.
    static func origin() async throws -> (root: URL, nginx: Nginx, segments: Int) {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsMaster))
        let root = try TestRun.makeTemporaryDirectory("subtitle-origin")
        for file in try fixture.files() {
            let target = root.appendingPathComponent(file)
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: fixture.directory.appendingPathComponent(file), to: target)
        }
        let source = root.appendingPathComponent("subs_eng")
        let localFolder = root.appendingPathComponent("subs_local")
        try FileManager.default.createDirectory(at: localFolder, withIntermediateDirectories: true)
        let playlist = try String(contentsOf: source.appendingPathComponent("index.m3u8"), encoding: .utf8)
        try playlist.write(to: localFolder.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let names = playlist.split(separator: "\n").filter { $0.hasSuffix(".vtt") }.map(String.init)
        var previousLast: Cue?
        for (index, name) in names.enumerated() {
            let text = try String(contentsOf: source.appendingPathComponent(name), encoding: .utf8)
            #expect(text.contains("X-TIMESTAMP-MAP=MPEGTS:126000,LOCAL:00:00:00.000\n"), "\(text)")
            let cues = parseVTT(text)
            let start = cues.map(\.start).min() ?? 0
            // Odd segments count local time from 10 s and repeat the cue before them, as a
            // packager does with a cue that spans the boundary.
            let odd = index % 2 == 1
            let local: Int64 = odd ? 10_000 : 0
            var segment = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:\(126_000 + start * 90),LOCAL:\(vtt(local))\n\n"
            for cue in (odd ? previousLast.map { [$0] } ?? [] : []) + cues {
                segment += "\(vtt(cue.start - start + local)) --> \(vtt(cue.end - start + local))\n\(cue.text)\n\n"
            }
            previousLast = cues.last
            try segment.write(to: localFolder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let masterURL = root.appendingPathComponent("master.m3u8")
        let master = try String(contentsOf: masterURL, encoding: .utf8)
        let first = try #require(master.range(of: "#EXT-X-STREAM-INF"))
        try master.replacingCharacters(
            in: first,
            with: "#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"Local\",LANGUAGE=\"und\","
                + "URI=\"subs_local/index.m3u8\"\n#EXT-X-STREAM-INF"
        ).write(to: masterURL, atomically: true, encoding: .utf8)
        return (root, try await Nginx.static(root: root), names.count)
    }

    /// `HH:MM:SS.mmm`.
    static func vtt(_ milliseconds: Int64) -> String {
        String(
            format: "%02lld:%02lld:%02lld.%03lld", milliseconds / 3_600_000, milliseconds / 60_000 % 60,
            milliseconds / 1000 % 60, milliseconds % 1000)
    }

    /// The cues of WebVTT or SubRip text (either decimal mark), by this test's own reading.
    static func parseVTT(_ text: String) -> [Cue] {
        func time(_ text: Substring) -> Int64? {
            let fields = text.replacingOccurrences(of: ",", with: ".").split(separator: ":")
            guard fields.count == 3, let hours = Int64(fields[0]), let minutes = Int64(fields[1]),
                let seconds = Double(fields[2])
            else { return nil }
            return (hours * 3600 + minutes * 60) * 1000 + Int64((seconds * 1000).rounded())
        }
        var cues: [Cue] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() where line.contains(" --> ") {
            let parts = line.components(separatedBy: " --> ")
            guard let start = time(Substring(parts[0])),
                let end = time(Substring(parts[1].split(separator: " ").first ?? ""))
            else { continue }
            let text = lines[(index + 1)...].prefix { !$0.isEmpty }.joined(separator: "\n")
            cues.append(Cue(start: start, end: end, text: text))
        }
        return cues
    }

    /// What ffmpeg reads from `input` (a playlist or a subtitle file), written as SubRip.
    static func ffmpegCues(_ input: String, in directory: URL) async throws -> [Cue] {
        let name = "ffmpeg-\(UUID().uuidString).srt"
        try await Tool.ffmpeg.run(
            ["-nostdin", "-v", "error", "-y"] + (input.hasSuffix(".m3u8") ? ["-allowed_extensions", "ALL"] : [])
                + ["-i", input, "-map", "0:s:0", name],
            workingDirectory: directory)
        return parseVTT(try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))
    }

    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    /// Both renditions merge to the cues ffmpeg reads from the fixture's rendition, in WebVTT and
    /// in SubRip, listed in the output; the package's own subtitle playlists are unchanged.
    @Test func mergedCuesMatchWhatFFmpegReads() async throws {
        let (root, nginx, segments) = try await Self.origin()
        let reference = try await Self.ffmpegCues("subs_eng/index.m3u8", in: root)
        #expect(reference.count == 10 && segments == 5, "\(reference)")
        // The first map's MPEGTS is where the media starts (its earliest stream, the audio here):
        // the merged times count from there.
        let probe = try await Tool.ffprobe.run(
            ["-v", "error", "-show_entries", "format=start_time", "-of", "csv=p=0", "master.m3u8"],
            workingDirectory: root)
        #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "1.400000")

        let package = try TestRun.makeTemporaryDirectory("subtitles").appendingPathComponent("package")
        let home = try TestRun.makeTemporaryDirectory("subtitles-home")
        let url = nginx.url("master.m3u8").absoluteString
        for format in ["vtt", "srt"] {
            let (code, output, error) = await run(
                ["download", url, "-o", package.path, "--home", home.path, "--subs-format", format])
            #expect(code == .success, "\(error)")
            for folder in ["subtitles-eng", "subtitles-und"] {
                let file = package.appendingPathComponent("\(folder).\(format)")
                #expect(output.contains("Subtitles \(folder): \(file.path) (10 cues)\n"), "\(output)")
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(text.hasPrefix(format == "vtt" ? "WEBVTT\n" : "1\n"), "\(text)")
                #expect(Self.parseVTT(text) == reference, "\(folder).\(format):\n\(text)")
                // ffmpeg reads our file as the same cues.
                #expect(try await Self.ffmpegCues(file.path, in: package) == reference, "\(folder).\(format)")
            }
        }
        for folder in ["subtitles-eng", "subtitles-und"] {
            let playlist = try String(
                contentsOf: package.appendingPathComponent("\(folder)/index.m3u8"), encoding: .utf8)
            #expect(playlist.components(separatedBy: ".vtt\n").count - 1 == segments, "\(playlist)")
        }
        await nginx.stop()
    }

    /// `queue add --subs-format srt`: the task merges the subtitles once its package is complete,
    /// to the same cues; `queue info` says so. A file task or a recording cannot ask for it.
    @Test func theQueueMergesSubtitlesOnceComplete() async throws {
        let (root, nginx, _) = try await Self.origin()
        let reference = try await Self.ffmpegCues("subs_eng/index.m3u8", in: root)
        let home = try TestRun.makeTemporaryDirectory("subtitles-queue-home").path
        let url = nginx.url("master.m3u8").absoluteString
        let (added, id, addError) = await run(["queue", "add", url, "--subs-format", "srt", "--start", "--home", home])
        #expect(added == .success, "\(addError)")
        let (ran, _, runError) = await run(["queue", "run", "--exit-when-done", "--home", home])
        #expect(ran == .success, "\(runError)")
        let taskID = id.trimmingCharacters(in: .whitespacesAndNewlines)
        let package = URL(fileURLWithPath: home).appendingPathComponent("library/\(taskID)")
        for folder in ["subtitles-eng", "subtitles-und"] {
            let text = try String(contentsOf: package.appendingPathComponent("\(folder).srt"), encoding: .utf8)
            #expect(text.hasPrefix("1\n") && Self.parseVTT(text) == reference, "\(folder).srt:\n\(text)")
        }
        let (_, info, _) = await run(["queue", "info", taskID, "--home", home])
        #expect(info.contains("subtitles       merged into .srt\n"), "\(info)")

        let (file, _, fileError) = await run(
            ["queue", "add", url, "--kind", "file", "--subs-format", "vtt", "--home", home])
        #expect(
            file == .usage && fileError.contains("--subs-format is for HLS and DASH tasks, not --kind file"),
            "\(fileError)")
        let (recording, _, recordingError) = await run(
            ["queue", "add", "rtmp://127.0.0.1/live/show", "--duration", "1m", "--subs-format", "srt", "--home", home])
        #expect(recording == .usage && recordingError.contains("--subs-format are for http(s) downloads"))
        await nginx.stop()
    }
}
