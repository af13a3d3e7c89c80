import Foundation
import StreamKitFLV
import StreamKitHLS
import StreamKitMPEGTS
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// An FLV file that ffmpeg encodes, remuxed into HLS segments by our code, decodes in ffmpeg
/// with every frame and no error.
@Suite(.requires(.ffmpeg, .ffprobe)) struct TransportStreamDecodeTests {
    /// `type,frames read` of each stream of `input`, sorted (HLS lists its streams twice: in
    /// the program and on their own).
    static func frameCounts(_ input: String) async throws -> [String] {
        let output = try await Tool.ffprobe.run([
            "-v", "error", "-allowed_extensions", "ALL", "-count_frames", "-show_entries",
            "stream=codec_type,nb_read_frames", "-of", "csv=p=0", input,
        ])
        return Set(output.standardOutput.split(separator: "\n").map { String($0) }).sorted()
    }

    /// What `ffmpeg -v error` says decoding all of `input`: empty when it decodes cleanly.
    static func decodeErrors(_ input: String) async throws -> String {
        let output = try await Tool.ffmpeg.run([
            "-v", "error", "-allowed_extensions", "ALL", "-i", input, "-f", "null", "-",
        ])
        return output.standardError
    }

    /// Remuxes every tag of the FLV file at `source` into `directory`: segments and `index.m3u8`.
    static func remux(_ source: String, into directory: URL, target: Int64) throws -> LiveMediaPlaylist {
        let reader = try FLVFileReader(path: source)
        var segmenter = TransportStreamSegmenter(targetDuration: target)
        var playlist = LiveMediaPlaylist(targetDuration: Double(target) / 1_000)
        var output: [UInt8] = []
        var discontinuity = false
        func write(_ bytes: ArraySlice<UInt8>, duration: Double) throws {
            let name = "segment-\(playlist.playlist.segments.count).ts"
            try Data(bytes).write(to: directory.appendingPathComponent(name))
            playlist.append(uri: name, duration: duration, discontinuity: discontinuity)
        }
        while let tag = try reader.next() {
            guard let cut = try segmenter.append(tag, time: Int64(tag.timestamp), into: &output) else { continue }
            try write(output[..<cut.offset], duration: cut.duration)
            discontinuity = cut.discontinuity
            output.removeFirst(cut.offset)
            segmenter.outputConsumed(cut.offset)
        }
        if let duration = segmenter.finish() { try write(output[...], duration: duration) }
        playlist.end()
        try Data(playlist.serialized().utf8).write(to: directory.appendingPathComponent("index.m3u8"))
        return playlist
    }

    @Test(arguments: [("libx264", "aac"), ("libx264", nil), (nil, "aac")] as [(String?, String?)])
    func remuxedFLVDecodesFrameForFrame(video: String?, audio: String?) async throws {
        let directory = try TestRun.makeTemporaryDirectory("mpegts-decode")
        let flv = directory.appendingPathComponent("source.flv").path
        var arguments = ["-v", "error", "-y"]
        if video != nil { arguments += ["-f", "lavfi", "-i", "testsrc=duration=10:size=320x240:rate=25"] }
        if audio != nil { arguments += ["-f", "lavfi", "-i", "sine=frequency=440:duration=10"] }
        if let video { arguments += ["-c:v", video, "-g", "25", "-bf", "2", "-pix_fmt", "yuv420p"] }
        if let audio { arguments += ["-c:a", audio, "-ar", "44100"] }
        try await Tool.ffmpeg.run(arguments + ["-f", "flv", flv])

        let playlist = try Self.remux(flv, into: directory, target: 2_000)
        #expect(playlist.playlist.segments.count >= 4)
        #expect(abs(playlist.playlist.totalDuration - 10) < 0.2)
        let index = directory.appendingPathComponent("index.m3u8").path
        #expect(try await Self.frameCounts(index) == Self.frameCounts(flv))
        #expect(try await Self.decodeErrors(index) == "")
        // HLSPlayers' pipeline has an audio branch: it waits forever for a stream without audio.
        if video != nil && audio != nil && Tool.gstLaunch.isAvailable {
            let playback = try await HLSPlayers.gstreamer("file://" + index, demuxer: .hlsdemux)
            #expect(playback.playedToTheEnd, "\(playback)")
            #expect(playback.videoFrames == 250)
        }
    }
}
