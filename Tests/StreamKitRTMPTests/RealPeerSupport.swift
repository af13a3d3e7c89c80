import Foundation
import StreamKitCLI
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What ffprobe says about a media file.
struct Probe {
    var duration: Double
    var codecs: Set<String>
    var videoPackets: Int
    var audioPackets: Int
    /// Video packet timestamps in seconds, in file order.
    var videoTimes: [Double]

    static func of(_ file: URL) async throws -> Probe {
        let output = try await Tool.ffprobe.run([
            "-v", "error", "-count_packets", "-show_entries",
            "stream=codec_type,codec_name,nb_read_packets:format=duration", "-of", "json", file.path,
        ]).standardOutput
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let streams = json["streams"] as? [[String: Any]] ?? []
        let format = json["format"] as? [String: Any] ?? [:]
        func packets(_ type: String) -> Int {
            Int(streams.first { $0["codec_type"] as? String == type }?["nb_read_packets"] as? String ?? "") ?? 0
        }
        let times = try await Tool.ffprobe.run([
            "-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time", "-of", "csv=p=0", file.path,
        ]).standardOutput.split(separator: "\n").compactMap { Double($0) }
        return Probe(
            duration: Double(format["duration"] as? String ?? "") ?? 0,
            codecs: Set(streams.compactMap { $0["codec_name"] as? String }),
            videoPackets: packets("video"), audioPackets: packets("audio"), videoTimes: times)
    }
}

enum RealPeers {
    /// Runs `streamkit rtmp record <url> <arguments>` while ffmpeg publishes a 6 s file to
    /// nginx-rtmp, which is killed two seconds after `recorded` returns (the first media is out)
    /// and restarted on the same port, where ffmpeg publishes the file again. Returns the
    /// command's exit code, standard output and standard error once it ends.
    static func recordAcrossARestart(
        stream: String, arguments: [String], recorded: () async throws -> Void
    ) async throws -> (ExitCode, String, String) {
        let source = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: 6, segmentSeconds: 1)).entryFile
        let first = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let port = try #require(first.rtmpPort)
        let url = first.rtmpURL(application: "live", stream: stream)
        let recording = Task { await CommandRunner.runCapturing(arguments: ["rtmp", "record", url] + arguments) }
        try await first.waitForErrorLog("play: name='\(stream)'")
        let firstPublisher = try ffmpegPublisher(source, to: url)
        try await recorded()
        try await Task.sleep(for: .seconds(2))
        first.process.signal(SIGKILL)
        await first.stop()
        await firstPublisher.stop()

        let second = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")], rtmpPort: port)
        try await second.waitForErrorLog("play: name='\(stream)'")
        let secondPublisher = try ffmpegPublisher(source, to: url)
        let result = await recording.value
        _ = try? await secondPublisher.wait(timeout: .seconds(30))
        await second.stop()
        return result
    }

    /// ffmpeg publishing `file` at its own pace (`-re`).
    static func ffmpegPublisher(_ file: URL, to url: String) throws -> ChildProcess {
        try ChildProcess(
            executable: try Tool.ffmpeg.requirePath(),
            arguments: ["-nostdin", "-loglevel", "error", "-re", "-i", file.path, "-c", "copy", "-f", "flv", url],
            logName: "ffmpeg-publish")
    }

    /// ffmpeg recording `url` to `file`; it ends when the stream is unpublished, or 10 s after it
    /// stops sending. (With 3 s it gave up with an I/O error, leaving an empty file, when a loaded
    /// machine took longer than that to start the publisher, as rtmpdump did.)
    static func ffmpegRecorder(_ url: String, to file: URL) throws -> ChildProcess {
        try ChildProcess(
            executable: try Tool.ffmpeg.requirePath(),
            arguments: [
                "-nostdin", "-loglevel", "error", "-rw_timeout", "10000000", "-i", url, "-c", "copy", "-f", "flv", "-y",
                file.path,
            ],
            logName: "ffmpeg-record")
    }

    /// rtmpdump recording `url` live. Its idle timeout is 10 s: with 3 s it gave up (leaving an
    /// empty file) when a loaded machine took longer than that to start the publisher.
    static func rtmpdump(_ url: String, to file: URL) throws -> ChildProcess {
        try ChildProcess(
            executable: try Tool.rtmpdump.requirePath(),
            arguments: ["-q", "--live", "--timeout", "10", "-r", url, "-o", file.path], logName: "rtmpdump")
    }

    /// Checks a recording against its source: the same codecs, the duration within 0.5 s,
    /// at least 95% of the video frames.
    static func expectFaithful(
        _ recording: Probe, to source: Probe, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(recording.codecs == source.codecs, "\(what): codecs", sourceLocation: sourceLocation)
        #expect(
            abs(recording.duration - source.duration) <= 0.5,
            "\(what): duration \(recording.duration) s against \(source.duration) s", sourceLocation: sourceLocation)
        #expect(
            Double(recording.videoPackets) >= 0.95 * Double(source.videoPackets),
            "\(what): \(recording.videoPackets) of \(source.videoPackets) video frames", sourceLocation: sourceLocation)
        #expect(
            zip(recording.videoTimes, recording.videoTimes.dropFirst()).allSatisfy { $0 < $1 },
            "\(what): video timestamps increase", sourceLocation: sourceLocation)
        #expect((recording.videoTimes.first ?? 1) < 0.1, "\(what): starts at zero", sourceLocation: sourceLocation)
    }
}
