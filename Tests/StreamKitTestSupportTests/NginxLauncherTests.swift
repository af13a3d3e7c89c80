import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@Suite struct NginxLauncherTests {
    /// A directory holding one file of `size` pseudo-random bytes, named `blob.bin`.
    private func rootWithFile(size: Int) throws -> (URL, [UInt8]) {
        let root = try TestRun.makeTemporaryDirectory("nginx-root")
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: root.appendingPathComponent("blob.bin"))
        return (root, bytes)
    }

    @Test(.requires(.nginx, .curl))
    func servesARangeWith206AndLogsIt() async throws {
        let (root, bytes) = try rootWithFile(size: 10_000)
        let nginx = try await Nginx.static(root: root)
        let output = try TestRun.makeTemporaryDirectory("curl").appendingPathComponent("part")
        let result = try await Tool.curl.run([
            "-s", "-r", "100-1099", "-o", output.path, "-w", "%{http_code}", nginx.url("blob.bin").absoluteString,
        ])
        #expect(result.standardOutput == "206")
        #expect(Array(try Data(contentsOf: output)) == Array(bytes[100..<1100]))
        let entry = try #require(try await nginx.settledAccessLog().last)
        #expect(entry.uri == "/blob.bin" && entry.status == 206 && entry.bytesSent == 1_000)
        #expect(entry.range == "bytes=100-1099" && entry.completed)
        await nginx.stop()
    }

    @Test(.requires(.nginx, .curl))
    func ignoresRangeWhenAsked() async throws {
        let (root, _) = try rootWithFile(size: 5_000)
        let nginx = try await Nginx.static(root: root, honourRange: false)
        let result = try await Tool.curl.run([
            "-s", "-r", "0-9", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
            nginx.url("blob.bin").absoluteString,
        ])
        #expect(result.standardOutput == "200 5000")
        await nginx.stop()
    }

    /// 300 KB at 100 KB/s per connection takes about two seconds (nginx lets the first second's
    /// worth through at once); unthrottled it takes a few milliseconds.
    @Test(.requires(.nginx, .curl))
    func perConnectionRateLimitHolds() async throws {
        let (root, _) = try rootWithFile(size: 300_000)
        let throttled = try await Nginx.static(root: root, limitRatePerConnection: 100_000)
        let free = try await Nginx.static(root: root)
        func fetchSeconds(_ nginx: Nginx) async throws -> Double {
            let result = try await Tool.curl.run([
                "-s", "-o", "/dev/null", "-w", "%{time_total} %{size_download}", nginx.url("blob.bin").absoluteString,
            ])
            let fields = result.standardOutput.split(separator: " ")
            #expect(fields.last == "300000")
            return Double(fields[0]) ?? 0
        }
        let slow = try await fetchSeconds(throttled)
        let fast = try await fetchSeconds(free)
        #expect(slow >= 1.5 && slow < 6, "throttled transfer took \(slow) s")
        #expect(fast < 0.5, "unthrottled transfer took \(fast) s")
        await throttled.stop()
        await free.stop()
    }

    /// ffmpeg publishes the FLV fixture in real time while another ffmpeg plays the same stream.
    @Test(.requires(.nginxRTMP, .ffmpeg, .ffprobe))
    func rtmpAcceptsAPublishAndAPlay() async throws {
        let flv = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: 10))
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live", hls: true)])
        let url = nginx.rtmpURL(application: "live", stream: "test")
        let publisher = try ChildProcess(
            executable: try Tool.ffmpeg.requirePath(),
            arguments: [
                "-nostdin", "-loglevel", "error", "-re", "-i", flv.entryFile.path, "-c", "copy", "-f", "flv", url,
            ],
            logName: "ffmpeg-publish")
        try await nginx.waitForErrorLog("publish: name='test'")
        let recording = try TestRun.makeTemporaryDirectory("rtmp-play").appendingPathComponent("played.flv")
        try await Tool.ffmpeg.run(
            ["-nostdin", "-loglevel", "error", "-i", url, "-t", "3", "-c", "copy", "-y", recording.path],
            timeout: .seconds(30))
        let probe = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", recording.path,
        ])
        #expect(Set(probe.standardOutput.split(separator: "\n")) == ["h264", "aac"])

        // nginx-rtmp's HLS output of the same stream is readable over HTTP.
        let playlist = nginx.url("hls/live/test.m3u8").absoluteString
        let hlsProbe = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", playlist,
        ])
        #expect(hlsProbe.standardOutput.contains("h264"))
        await publisher.stop()
        await nginx.stop()
    }
}
