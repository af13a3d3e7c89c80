import Foundation
import StreamKitCLI
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `rtmp record --hls`: the playlist gets EXT-X-ENDLIST however the recording ends, and a
/// reconnect continues the same package with increasing timestamps.
@Suite(.requires(.nginxRTMP, .ffmpeg, .ffprobe))
struct RecordingHLSEndTests {
    private func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        await CommandRunner.runCapturing(arguments: arguments)
    }

    /// Waits for the package's first segment: its media playlist appears with it.
    private func waitForSegment(_ package: URL) async throws {
        let appeared = await eventually(timeout: .seconds(30), interval: .milliseconds(20)) {
            FileManager.default.fileExists(atPath: package.path + "/video/index.m3u8")
        }
        try #require(appeared, "no segment written to \(package.lastPathComponent)")
    }

    /// The video decoding times of the package, and what ffmpeg says decoding it.
    private func check(_ package: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Double] {
        let media = try String(contentsOfFile: package.path + "/video/index.m3u8", encoding: .utf8)
        #expect(media.hasSuffix("#EXT-X-ENDLIST\n"), "\(media)", sourceLocation: sourceLocation)
        let index = package.path + "/index.m3u8"
        let decoding = try await Tool.ffmpeg.run(["-v", "error", "-i", index, "-f", "null", "-"])
        #expect(decoding.standardError == "", sourceLocation: sourceLocation)
        return try await Tool.ffprobe.run([
            "-v", "error", "-select_streams", "v", "-show_entries", "packet=dts_time", "-of", "csv=p=0", index,
        ]).standardOutput.split(separator: "\n").compactMap { $0.split(separator: ",").first.flatMap { Double($0) } }
    }

    /// A stream long enough to be cut while it plays: with 8 s, a test starved for a few seconds on
    /// a busy machine (the CI runner) saw the whole stream end before its kill or Ctrl-C.
    private static let longStream = FixtureRecipe(.flv, seconds: 30, segmentSeconds: 1)

    /// nginx killed under a recording: the reconnect fails, and the playlist still ends.
    @Test func aKilledServerEndsThePlaylist() async throws {
        let source = try await Fixtures.shared.fixture(Self.longStream).entryFile
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "killed")
        let package = try TestRun.makeTemporaryDirectory("rtmp-hls-killed").appendingPathComponent("package")
        let recording = Task { await run(["rtmp", "record", url, "--hls", package.path, "--segment-duration", "1"]) }
        try await nginx.waitForErrorLog("play: name='killed'")
        let publisher = try RealPeers.ffmpegPublisher(source, to: url)
        try await waitForSegment(package)
        try await Task.sleep(for: .seconds(1))
        nginx.process.signal(SIGKILL)
        let (code, text, error) = await recording.value
        #expect(code == .success, "\(error)")
        #expect(text.contains("the connection was lost"), "\(text)")
        #expect(try await check(package).count > 25)
        await publisher.stop()
        await nginx.stop()
    }

    /// nginx restarted on the same port: the recording reconnects into the same package, whose
    /// decoding times keep increasing across the restart.
    @Test func reconnectsIntoTheSamePackage() async throws {
        let package = try TestRun.makeTemporaryDirectory("rtmp-hls-restart").appendingPathComponent("package")
        // Six attempts, as in RecordingEndTests: three ran out on a loaded machine.
        let (code, _, error) = try await RealPeers.recordAcrossARestart(
            stream: "again", arguments: ["--hls", package.path, "--segment-duration", "1", "--reconnect", "6"]
        ) { try await waitForSegment(package) }
        #expect(code == .success, "\(error)")
        let times = try await check(package)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "decoding times keep increasing")
        // Over a second before the restart, and most of the six seconds after it.
        #expect((times.last ?? 0) - (times.first ?? 0) > 6, "\(times.first ?? 0) ... \(times.last ?? 0)")
    }

    /// Ctrl-C (the built executable, signalled) ends the playlist too.
    @Test func interruptEndsThePlaylist() async throws {
        let executable = try BuiltProducts.executable("streamkit")
        let source = try await Fixtures.shared.fixture(Self.longStream).entryFile
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "stop")
        let package = try TestRun.makeTemporaryDirectory("rtmp-hls-sigint").appendingPathComponent("package")
        let recorder = try ChildProcess(
            executable: executable,
            arguments: ["rtmp", "record", url, "--hls", package.path, "--segment-duration", "1"],
            logName: "streamkit-record-hls-sigint")
        try await nginx.waitForErrorLog("play: name='stop'")
        let publisher = try RealPeers.ffmpegPublisher(source, to: url)
        try await waitForSegment(package)
        try await Task.sleep(for: .seconds(1))
        recorder.signal(SIGINT)
        #expect(try await recorder.wait(timeout: .seconds(10)) == 130, "\(recorder.standardError)")
        #expect(try await check(package).count > 25)
        await publisher.stop()
        await nginx.stop()
    }
}
