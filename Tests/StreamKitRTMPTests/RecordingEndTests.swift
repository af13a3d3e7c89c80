import Foundation
import StreamKitCLI
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `streamkit rtmp record` never destroys a file, leaves nothing when nothing was recorded, and
/// keeps (exit 0) what was recorded however the stream ended.
@Suite(.requires(.nginxRTMP, .ffmpeg, .ffprobe))
struct RecordingEndTests {
    private func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        await CommandRunner.runCapturing(arguments: arguments)
    }

    /// The names in `directory`, sorted.
    private func contents(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// Waits until the recording has media: the output appears under its own name with the first of it.
    private func waitForMedia(_ output: URL) async throws {
        let appeared = await eventually(timeout: .seconds(30), interval: .milliseconds(20)) {
            FileManager.default.fileExists(atPath: output.path)
        }
        try #require(appeared, "no media recorded to \(output.lastPathComponent)")
    }

    @Test func anExistingFileIsRefusedOrSurvivesAFailure() async throws {
        let directory = try TestRun.makeTemporaryDirectory("rtmp-keep")
        let output = directory.appendingPathComponent("kept.flv")
        let original = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try original.write(to: output)
        let refused = "rtmp://127.0.0.1:\(try LocalNetwork.freePort())/live/none"

        let (code, _, error) = await run(["rtmp", "record", refused, "-o", output.path])
        #expect(code == .usage && error.contains("exists") && error.contains("--overwrite"), "\(error)")
        #expect(try Data(contentsOf: output) == original)

        let (overwriteCode, _, overwriteError) = await run([
            "rtmp", "record", refused, "-o", output.path, "--overwrite",
        ])
        #expect(overwriteCode == .failure && overwriteError.contains("refused"), "\(overwriteError)")
        #expect(try Data(contentsOf: output) == original, "a failed recording left the file as it was")
        #expect(try contents(directory) == ["kept.flv"])
    }

    @Test func nothingIsLeftWhenNothingWasRecorded() async throws {
        let directory = try TestRun.makeTemporaryDirectory("rtmp-nothing")
        let output = directory.appendingPathComponent("none.flv")
        let refused = "rtmp://127.0.0.1:\(try LocalNetwork.freePort())/live/none"
        let (code, _, _) = await run(["rtmp", "record", refused, "-o", output.path])
        #expect(code == .failure)
        #expect(try contents(directory).isEmpty, "left behind after a refused connection")

        // A `.part` another recording holds is refused and left to it; one a killed recording left
        // behind is taken over (and, with nothing recorded, removed).
        let part = directory.appendingPathComponent("none.flv.part")
        try Data("half a recording".utf8).write(to: part)
        let held = open(part.path, O_RDONLY | O_CLOEXEC)
        try #require(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0)
        let (heldCode, _, heldError) = await run(["rtmp", "record", refused, "-o", output.path])
        #expect(heldCode == .failure && heldError.contains("another recording"), "\(heldError)")
        #expect(try Data(contentsOf: part) == Data("half a recording".utf8))
        close(held)
        let (staleCode, _, staleError) = await run(["rtmp", "record", refused, "-o", output.path])
        #expect(staleCode == .failure && staleError.contains("refused"), "\(staleError)")
        #expect(try contents(directory).isEmpty, "a stale .part stayed")

        // Nobody publishes: nginx starts the play anyway, and the idle timeout ends it.
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let (idleCode, _, idleError) = await run([
            "rtmp", "record", nginx.rtmpURL(application: "live", stream: "nobody"), "-o", output.path,
            "--idle-timeout", "1",
        ])
        #expect(idleCode == .failure && idleError.contains("idle timeout"), "\(idleError)")
        #expect(try contents(directory).isEmpty, "left behind after an idle timeout")
        await nginx.stop()
    }

    /// nginx killed under a recording: the reconnect is refused, what was recorded stays a valid
    /// file, and the result says why it ended. (A 30 s stream: an 8 s one could end on its own
    /// while a busy machine held the test back from the kill.)
    @Test func aKilledServerAfterMediaExits0() async throws {
        let source = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: 30, segmentSeconds: 1)).entryFile
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "killed")
        let output = try TestRun.makeTemporaryDirectory("rtmp-killed").appendingPathComponent("killed.flv")
        let recording = Task { await run(["rtmp", "record", url, "-o", output.path, "--json"]) }
        try await nginx.waitForErrorLog("play: name='killed'")
        let publisher = try RealPeers.ffmpegPublisher(source, to: url)
        try await waitForMedia(output)
        try await Task.sleep(for: .seconds(1))
        nginx.process.signal(SIGKILL)
        let (code, text, error) = await recording.value
        #expect(code == .success, "\(error)")
        let result = text.split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            result.contains("\"event\":\"result\"") && result.contains("\"endReason\":\"connectionLost\"")
                && result.contains("the connection was lost"), "\(text)")
        let probe = try await Probe.of(output)
        #expect(probe.videoPackets > 0 && probe.duration > 0.5, "\(probe)")
        await publisher.stop()
        await nginx.stop()
    }

    /// The stream ends before `--duration`: the recording is kept, with exit code 2.
    @Test func aStreamShorterThanTheDurationExits2() async throws {
        let source = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: NginxRTMPTests.seconds))
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "short")
        let output = try TestRun.makeTemporaryDirectory("rtmp-short").appendingPathComponent("short.flv")
        let recording = Task { await run(["rtmp", "record", url, "-o", output.path, "--duration", "60"]) }
        try await nginx.waitForErrorLog("play: name='short'")
        let (publishCode, _, publishError) = await run(["rtmp", "publish", source.entryFile.path, url, "--realtime"])
        #expect(publishCode == .success, "\(publishError)")
        let (code, text, error) = await recording.value
        #expect(code == ExitCode(2), "\(text)\(error)")
        #expect(text.contains("Recorded") && text.contains("the server ended the stream"), "\(text)")
        #expect(try await Probe.of(output).videoPackets > 0)
        await nginx.stop()
    }

    /// nginx restarted on the same port under a recording: it reconnects and the same file
    /// continues, its timestamps increasing across the restart.
    @Test func reconnectsAcrossAServerRestart() async throws {
        let output = try TestRun.makeTemporaryDirectory("rtmp-restart").appendingPathComponent("again.flv")
        // Six attempts (waits of 1, 2, 4, 8, 16 and 30 s): three, 7 s in all, ran out on a loaded
        // machine (a full parallel test run) before the restarted nginx answered its handshake.
        let (code, text, error) = try await RealPeers.recordAcrossARestart(
            stream: "again", arguments: ["-o", output.path, "--reconnect", "6", "--json"]
        ) { try await waitForMedia(output) }
        #expect(code == .success, "\(error)")
        let result = text.split(separator: "\n").last.map(String.init) ?? ""
        #expect(result.contains("\"reconnects\":1") && result.contains("\"endReason\":\"streamEnded\""), "\(text)")
        let probe = try await Probe.of(output)
        #expect(
            zip(probe.videoTimes, probe.videoTimes.dropFirst()).allSatisfy { $0 < $1 }, "timestamps keep increasing")
        // Over a second before the restart, and most of the six seconds after it.
        #expect(probe.duration > 6.5, "\(probe.duration) s")
    }
}
