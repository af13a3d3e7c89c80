import Foundation

/// Real players run to the end of an HLS stream, counting the frames they decoded: ffmpeg's HLS
/// demuxer, and GStreamer's two (hlsdemux, which playbin uses, and hlsdemux2, which playbin3 uses).
public enum HLSPlayers {
    /// What ffmpeg decoded.
    public struct FFmpegPlayback: Sendable, CustomStringConvertible {
        public var videoFrames: Int
        public var audioFrames: Int
        /// The requests ffmpeg reported as failed (`HTTP error 404 Not Found`, `Failed to open
        /// segment 2 of playlist 0`), in order.
        public var failedRequests: [String]
        /// The frames of each video stream, in order (a DASH MPD read whole lists each
        /// Representation as a stream of its own).
        public var videoStreamFrames: [Int] = []
        /// The frames of each audio stream, in order.
        public var audioStreamFrames: [Int] = []

        public init(videoFrames: Int, audioFrames: Int, failedRequests: [String]) {
            self.videoFrames = videoFrames
            self.audioFrames = audioFrames
            self.failedRequests = failedRequests
        }

        public var description: String {
            "ffmpeg: \(videoFrames) video, \(audioFrames) audio frames; failed requests: \(failedRequests)"
        }
    }

    /// What `ffprobe -count_frames -show_entries stream=codec_type,nb_read_frames -of json` prints.
    public struct FrameReport: Decodable, Sendable {
        public struct Stream: Decodable, Sendable {
            public let codecType: String
            public let frames: String?
            enum CodingKeys: String, CodingKey {
                case codecType = "codec_type"
                case frames = "nb_read_frames"
            }
        }
        /// The top-level streams; ffprobe lists HLS streams again under their program.
        public let streams: [Stream]
    }

    /// Decodes every stream of `input` (a URL or a playlist file) with ffprobe `-count_frames`.
    ///
    /// - Parameter fromTheStart: For a playlist without EXT-X-ENDLIST, which ffmpeg plays as live
    ///   from three segments before its end, start at its first segment (`-live_start_index 0`)
    ///   and follow it as it grows, to its EXT-X-ENDLIST.
    /// - Throws: ``TestSupportError`` when ffprobe is missing, fails or prints no frame counts.
    public static func ffmpeg(_ input: String, fromTheStart: Bool = false) async throws -> FFmpegPlayback {
        let output = try await Tool.ffprobe.run(
            (fromTheStart ? ["-live_start_index", "0"] : []) + [
                // Warnings: where ffmpeg reports a segment it could not fetch and played on without.
                "-v", "warning", "-protocol_whitelist", "file,http,tcp,crypto,data", "-allowed_extensions", "ALL",
                "-count_frames", "-show_entries", "stream=codec_type,nb_read_frames", "-of", "json", input,
            ], timeout: .seconds(120))
        let probe: FrameReport
        do {
            probe = try JSONDecoder().decode(FrameReport.self, from: Data(output.standardOutput.utf8))
        } catch {
            throw TestSupportError("ffprobe \(input) printed no frame counts: \(output.standardError.suffix(1_000))")
        }
        func frames(_ type: String) -> Int {
            probe.streams.filter { $0.codecType == type }.reduce(0) { $0 + (Int($1.frames ?? "") ?? 0) }
        }
        let failed = output.standardError.split(separator: "\n").filter {
            $0.contains("HTTP error") || $0.contains("Server returned") || $0.contains("Failed to open")
        }
        var playback = FFmpegPlayback(
            videoFrames: frames("video"), audioFrames: frames("audio"), failedRequests: failed.map(String.init))
        func each(_ type: String) -> [Int] {
            probe.streams.filter { $0.codecType == type }.map { Int($0.frames ?? "") ?? 0 }
        }
        playback.videoStreamFrames = each("video")
        playback.audioStreamFrames = each("audio")
        return playback
    }

    /// A GStreamer HLS demuxer, chosen by the decoding bin that picks it.
    public enum GStreamerDemuxer: String, CaseIterable, Sendable, CustomStringConvertible {
        /// The legacy demuxer (gstreamer1.0-plugins-bad), under `uridecodebin` as in playbin.
        case hlsdemux
        /// The newer demuxer (gstreamer1.0-plugins-good), under `uridecodebin3` as in playbin3.
        case hlsdemux2

        var decodingBin: String {
            switch self {
            case .hlsdemux: "uridecodebin"
            case .hlsdemux2: "uridecodebin3"
            }
        }

        public var description: String { rawValue }
    }

    /// What GStreamer decoded.
    public struct GStreamerPlayback: Sendable, CustomStringConvertible {
        public var videoFrames: Int
        public var exitStatus: Int32
        /// GStreamer's error lines (`ERROR: from element ...: File not found`).
        public var errors: [String]

        /// Whether it played to the end of the stream without an error.
        public var playedToTheEnd: Bool { exitStatus == 0 && errors.isEmpty }

        public var description: String {
            "GStreamer: \(videoFrames) video frames, exit \(exitStatus), errors: \(errors)"
        }
    }

    /// Side of the square each decoded frame is scaled to, so that every frame of the output file
    /// has the same size (I420: a full-size luma plane and two quarter-size chroma planes).
    private static let frameSide = 16
    private static let frameBytes = frameSide * frameSide * 3 / 2

    /// Plays `url` to the end with `gst-launch-1.0` and counts the video frames decoded: each is
    /// scaled to 16×16 I420 and written to a file, whose size gives the count whatever the
    /// stream's resolution. Audio is decoded too, into a sink that drops it.
    ///
    /// - Throws: ``TestSupportError`` when gst-launch-1.0 is missing or does not finish in time,
    ///   or when the output is not a whole number of frames. A stream it stops playing is not an
    ///   error: the playback says so.
    public static func gstreamer(_ url: String, demuxer: GStreamerDemuxer) async throws -> GStreamerPlayback {
        try await gstreamer(url, decodingBin: demuxer.decodingBin)
    }

    /// A GStreamer DASH demuxer, chosen by the decoding bin that picks it.
    public enum DASHDemuxer: String, CaseIterable, Sendable, CustomStringConvertible {
        /// The legacy demuxer (gstreamer1.0-plugins-bad), under `uridecodebin` as in playbin.
        case dashdemux
        /// The newer demuxer (gstreamer1.0-plugins-good), under `uridecodebin3` as in playbin3.
        case dashdemux2

        var decodingBin: String {
            switch self {
            case .dashdemux: "uridecodebin"
            case .dashdemux2: "uridecodebin3"
            }
        }

        public var description: String { rawValue }
    }

    /// Plays the MPD at `url` to the end, as ``gstreamer(_:demuxer:)`` plays HLS.
    public static func gstreamer(_ url: String, dashDemuxer: DASHDemuxer) async throws -> GStreamerPlayback {
        try await gstreamer(url, decodingBin: dashDemuxer.decodingBin)
    }

    private static func gstreamer(_ url: String, decodingBin: String) async throws -> GStreamerPlayback {
        let output = try TestRun.makeTemporaryDirectory("gstreamer").appendingPathComponent("frames.yuv")
        let pipeline = [
            decodingBin, "uri=\(url)", "name=decoder",
            "decoder.", "!", "video/x-raw", "!", "queue", "!", "videoconvert", "!", "videoscale", "!",
            "video/x-raw,format=I420,width=\(frameSide),height=\(frameSide)", "!",
            "filesink", "location=\(output.path)",
            "decoder.", "!", "audio/x-raw", "!", "queue", "!", "fakesink", "sync=false",
        ]
        let run = try await Tool.gstLaunch.run(["-q"] + pipeline, timeout: .seconds(120), allowFailure: true)
        let size = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
        try? FileManager.default.removeItem(at: output.deletingLastPathComponent())
        guard size % frameBytes == 0 else {
            throw TestSupportError(
                "gst-launch-1.0 wrote \(size) bytes, not a whole number of \(frameBytes)-byte frames")
        }
        let errors = (run.standardOutput + "\n" + run.standardError).split(separator: "\n").filter {
            $0.hasPrefix("ERROR:")
        }
        return GStreamerPlayback(
            videoFrames: size / frameBytes, exitStatus: run.status, errors: errors.map(String.init))
    }
}
