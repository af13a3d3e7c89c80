import Foundation
import StreamKitCLI
import StreamKitDownloads
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `streamkit queue add rtmp://… --duration D [--hls]`: a recording task in the queue, run by
/// `streamkit queue run` in a child process against nginx-rtmp, with ffmpeg publishing a live
/// stream in real time (issue 25 point 7).
@Suite(.serialized, .requires(.nginxRTMP, .ffmpeg, .ffprobe))
struct QueueRTMPRecordingTests {
    /// ffmpeg publishing a test pattern and a tone for `seconds` at 25 fps, a key frame every second.
    static func publisher(_ url: String, seconds: Int) throws -> ChildProcess {
        try ChildProcess(
            executable: try Tool.ffmpeg.requirePath(),
            arguments: [
                "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
                "testsrc=duration=\(seconds):size=320x240:rate=25", "-f", "lavfi", "-i",
                "sine=frequency=440:duration=\(seconds)", "-c:v", "libx264", "-preset", "veryfast", "-g", "25",
                "-pix_fmt", "yuv420p", "-c:a", "aac", "-ar", "44100", "-f", "flv", url,
            ], logName: "ffmpeg-publish-queue")
    }

    static func queueRun(home: URL) throws -> ChildProcess {
        try ChildProcess(
            executable: try DownloadBinaryTests.streamkit(),
            arguments: ["queue", "run", "--exit-when-done", "--home", home.path], logName: "streamkit-queue-rtmp")
    }

    /// Adds `arguments` to the queue in `home`; returns the task id.
    static func add(_ arguments: [String], home: URL) async throws -> String {
        let (code, context) = await QueueCommandTests.run(["queue", "add"] + arguments + ["--home", home.path])
        #expect(code == .success, "\(context.errorOutput.text)")
        return context.output.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The task as `queue list --json` prints it.
    static func listed(_ id: String, home: URL) async throws -> DownloadTaskInfo? {
        let (code, context) = await QueueCommandTests.run(["queue", "list", "--json", "--home", home.path])
        #expect(code == .success, "\(context.errorOutput.text)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try context.output.text.split(separator: "\n").map {
            try decoder.decode(DownloadTaskInfo.self, from: Data($0.utf8))
        }.first { $0.id == id }
    }

    /// The media duration ffprobe reads from `path` (the format's, from the FLV's metadata and its last tag).
    static func probedDuration(_ path: String) async throws -> Double {
        let probe = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path,
        ])
        return Double(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// The last video frame's decoding time ffprobe finds by reading every packet of `path`: the media
    /// actually in the file, whatever its metadata says.
    static func lastVideoTime(_ path: String) async throws -> Double {
        let probe = try await Tool.ffprobe.run([
            "-v", "error", "-select_streams", "v", "-show_entries", "packet=dts_time", "-of", "csv=p=0", path,
        ])
        return probe.standardOutput.split(separator: "\n").compactMap { Double($0) }.max() ?? -1
    }

    @Test func recordsForItsDurationWithALivePackage() async throws {
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "whole")
        let publisher = try Self.publisher(url, seconds: 40)
        try await nginx.waitForErrorLog("publish: name='whole'")
        let home = try TestRun.makeTemporaryDirectory("queue-rtmp-home")
        let id = try await Self.add([url, "--duration", "0:08", "--hls", "--start"], home: home)
        let added = try #require(try await Self.listed(id, home: home))
        #expect(added.kind == .rtmp && added.recording?.duration == 8 && added.recording?.hls == true)

        let run = try Self.queueRun(home: home)
        #expect(try await run.wait(timeout: .seconds(60)) == 0, "\(run.standardError)")
        let task = try #require(try await Self.listed(id, home: home))
        #expect(task.state == .success, "\(task)")
        // The recording stops at the first frame at or past 8 s: within a frame or two of it.
        let recorded = task.recordedSeconds ?? 0
        #expect(recorded > 7.8 && recorded <= 8.0, "\(task)")
        #expect(task.progress == 1 && task.bytesDone > 100_000, "\(task)")
        let file = task.location + "/whole.flv"
        let probed = try await Self.probedDuration(file)
        #expect(abs(probed - 8) < 0.3, "ffprobe reads \(probed) s")
        #expect(task.bytesDone == (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64))
        // The folder is also an HLS package in the library, complete.
        let playlist = try String(contentsOfFile: task.location + "/video/index.m3u8", encoding: .utf8)
        #expect(playlist.hasSuffix("#EXT-X-ENDLIST\n"), "\(playlist)")
        let record = try String(contentsOfFile: task.location + "/package.json", encoding: .utf8)
        #expect(record.contains("\"status\" : \"complete\""), "\(record)")
        // The text views give the time recorded of the duration.
        let (_, list) = await QueueCommandTests.run(["queue", "list", "--home", home.path])
        #expect(list.output.text.contains("success    100.0%  0:08 / 0:08, "), "\(list.output.text)")
        let (_, info) = await QueueCommandTests.run(["queue", "info", id, "--home", home.path])
        #expect(info.output.text.contains("kind            rtmp\n"), "\(info.output.text)")
        #expect(info.output.text.contains("recorded        0:08 of 0:08\n"), "\(info.output.text)")
        let packaged = try await Self.probedDuration(task.location + "/index.m3u8")
        #expect(abs(packaged - 8) < 0.5, "the package holds \(packaged) s")

        await publisher.stop()
        await nginx.stop()
    }

    @Test func aKilledQueueRunResumesTheRecordingToItsDuration() async throws {
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "resumed")
        let publisher = try Self.publisher(url, seconds: 60)
        try await nginx.waitForErrorLog("publish: name='resumed'")
        let home = try TestRun.makeTemporaryDirectory("queue-rtmp-kill-home")
        let id = try await Self.add([url, "--duration", "12s", "--hls", "--start"], home: home)

        // The first run records a few seconds, seen in `queue list --json`, then dies with SIGKILL.
        let first = try Self.queueRun(home: home)
        var during: DownloadTaskInfo?
        let deadline = ContinuousClock.now + .seconds(40)
        while ContinuousClock.now < deadline, first.isRunning {
            if let task = try await Self.listed(id, home: home), (task.recordedSeconds ?? 0) >= 5 {
                during = task
                break
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let seen = try #require(during, "no progress seen: \(first.standardError)")
        #expect(seen.state == .running && seen.kind == .rtmp, "\(seen)")
        #expect(seen.progress > 0.3 && seen.progress < 1 && seen.bytesDone > 0, "\(seen)")
        first.signal(SIGKILL)
        _ = try await first.wait(timeout: .seconds(10))
        let file = seen.location + "/resumed.flv"
        let killedAt = try await Self.lastVideoTime(file)
        #expect(killedAt >= 4 && killedAt < 12, "the killed run left \(killedAt) s")
        let segmentsBefore = try String(contentsOfFile: seen.location + "/video/index.m3u8", encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }.count

        // The next run continues the same file and package, and ends when the file holds 12 s.
        let second = try Self.queueRun(home: home)
        #expect(try await second.wait(timeout: .seconds(60)) == 0, "\(second.standardError)")
        let task = try #require(try await Self.listed(id, home: home))
        #expect(task.state == .success, "\(task)")
        let recorded = task.recordedSeconds ?? 0
        #expect(recorded > 11.8 && recorded <= 12.0, "\(task)")
        // One file, its timestamps continuing: ffprobe reads 12 s of metadata and of packets.
        let probed = try await Self.probedDuration(file)
        #expect(abs(probed - 12) < 0.3, "ffprobe reads \(probed) s")
        let lastFrame = try await Self.lastVideoTime(file)
        #expect(lastFrame > 11.5 && lastFrame <= 12.0, "the last video frame is at \(lastFrame) s")
        let decode = try await Tool.ffmpeg.run(["-v", "error", "-i", file, "-f", "null", "-"])
        #expect(decode.status == 0, "\(decode.standardError)")
        // The package kept its first segments and goes on after a discontinuity.
        let playlist = try String(contentsOfFile: task.location + "/video/index.m3u8", encoding: .utf8)
        let segments = playlist.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }.count
        #expect(segmentsBefore > 0 && segments > segmentsBefore, "\(playlist)")
        #expect(playlist.contains("#EXT-X-DISCONTINUITY") && playlist.hasSuffix("#EXT-X-ENDLIST\n"), "\(playlist)")

        await publisher.stop()
        await nginx.stop()
    }

    @Test func stopStartAndRemoveARecording() async throws {
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "paused")
        let publisher = try Self.publisher(url, seconds: 60)
        try await nginx.waitForErrorLog("publish: name='paused'")
        let home = try TestRun.makeTemporaryDirectory("queue-rtmp-stop-home")
        let id = try await Self.add([url, "--duration", "10", "--hls", "--start"], home: home)

        // `queue stop` reaches the running `queue run`: the files end whole, the package says stopped.
        let first = try Self.queueRun(home: home)
        #expect(
            try await eventually(timeout: .seconds(40)) {
                (try await Self.listed(id, home: home)?.recordedSeconds ?? 0) >= 3
            })
        let (code, stop) = await QueueCommandTests.run(["queue", "stop", id, "--home", home.path])
        #expect(code == .success, "\(stop.errorOutput.text)")
        #expect(try await first.wait(timeout: .seconds(30)) == 0, "\(first.standardError)")
        let stopped = try #require(try await Self.listed(id, home: home))
        #expect(stopped.state == .stopped && (stopped.recordedSeconds ?? 0) >= 3, "\(stopped)")
        let file = stopped.location + "/paused.flv"
        let partial = try await Self.probedDuration(file)
        #expect(abs(partial - (stopped.recordedSeconds ?? 0)) < 0.6, "ffprobe reads \(partial) s, \(stopped)")
        let record = try String(contentsOfFile: stopped.location + "/package.json", encoding: .utf8)
        #expect(record.contains("\"status\" : \"stopped\""), "\(record)")

        // Started again, it records the rest into the same file.
        #expect(await QueueCommandTests.run(["queue", "start", id, "--home", home.path]).0 == .success)
        let second = try Self.queueRun(home: home)
        #expect(try await second.wait(timeout: .seconds(60)) == 0, "\(second.standardError)")
        let done = try #require(try await Self.listed(id, home: home))
        let total = try await Self.probedDuration(file)
        #expect(done.state == .success && abs(total - 10) < 0.3, "\(done), ffprobe reads \(total) s")

        // Removed, its folder goes.
        #expect(await QueueCommandTests.run(["queue", "remove", id, "--home", home.path]).0 == .success)
        #expect(!FileManager.default.fileExists(atPath: done.location))

        await publisher.stop()
        await nginx.stop()
    }

    @Test func anUnreachableServerFailsTheTaskAfterTheRetries() async throws {
        let refusing = try LocalNetwork.refusingPort()
        let home = try TestRun.makeTemporaryDirectory("queue-rtmp-refused-home")
        let url = "rtmp://127.0.0.1:\(refusing.port)/live/nobody"
        let id = try await Self.add([url, "--duration", "1m", "--start"], home: home)
        let run = try Self.queueRun(home: home)
        #expect(try await run.wait(timeout: .seconds(60)) == 1, "\(run.standardError)")
        let task = try #require(try await Self.listed(id, home: home))
        #expect(task.state == .failed, "\(task)")
        let error = task.lastError ?? ""
        #expect(error.contains("recording \(url)") && error.contains("errors in a row"), "\(error)")
        withExtendedLifetime(refusing) {}
    }

    @Test(arguments: [
        (["http://127.0.0.1/a.m3u8", "--duration", "10"], "--duration, --hls and --idle-timeout are for rtmp://"),
        (["rtmp://127.0.0.1/live/s"], "give --duration"),
        (["rtmp://127.0.0.1/live/s", "--duration", "soon"], "invalid value 'soon' for --duration"),
        (["rtmp://127.0.0.1/live/s", "--duration", "1h", "--export", "a.ts"], "not recordings"),
    ])
    func refusesBadRecordings(arguments: [String], message: String) async throws {
        let home = try TestRun.makeTemporaryDirectory("queue-rtmp-bad-home")
        let (code, context) = await QueueCommandTests.run(["queue", "add"] + arguments + ["--home", home.path])
        #expect(code != .success)
        #expect(context.errorOutput.text.contains(message), "\(context.errorOutput.text)")
        #expect(try DownloadQueueRemote.tasks(directory: home).isEmpty)
    }
}
