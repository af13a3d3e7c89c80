import Foundation
import StreamKitTestSupport
import Testing

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
