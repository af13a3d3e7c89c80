import Foundation
import StreamKitCore
import StreamKitMPEGTS

/// Turns clear MPEG-TS segments (H.264, AAC in ADTS, AC-3) into HLS `METHOD=SAMPLE-AES` ones, as
/// Apple's sample encryption format has them: the pattern, the stream types and the descriptors.
///
/// It runs the library's transform the other way; tests prove it right by an independent route
/// (ffmpeg's HLS demuxer decrypts what it makes to the clear frames).
public enum SampleAESEncryptor {
    /// The encrypted segment.
    public static func encrypt(_ segment: [UInt8], key: [UInt8], iv: [UInt8]) throws -> [UInt8] {
        try SampleAESTransportStream.encrypt(segment, key: key, iv: iv)
    }
}

/// A SAMPLE-AES HLS stream next to the clear one it was made from.
public struct SampleAESFixture: Sendable {
    /// The audio codec of the stream.
    public enum Audio: String, Sendable, CaseIterable {
        case aac, ac3
    }

    /// Holds `index.m3u8` (SAMPLE-AES, `key.bin`, explicit IV), its segments `seg*.ts`, and the clear
    /// stream `clear.m3u8` with `clear*.ts`.
    public let directory: URL
    public let audio: Audio

    /// The encrypted playlist.
    public var playlist: URL { directory.appendingPathComponent("index.m3u8") }
    /// The clear playlist.
    public var clearPlaylist: URL { directory.appendingPathComponent("clear.m3u8") }
}

/// Makes SAMPLE-AES fixtures with ffmpeg and ``SampleAESEncryptor``, once per audio codec per run.
public actor SampleAESFixtures {
    /// The fixtures of this test run.
    public static let shared = SampleAESFixtures()
    /// The key of every fixture.
    public static let key: [UInt8] = Hex.decode("2b7e151628aed2a6abf7158809cf4f3c")!
    /// The explicit IV of every fixture.
    public static let iv: [UInt8] = Hex.decode("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")!

    private var pending: [SampleAESFixture.Audio: Task<SampleAESFixture, any Error>] = [:]

    /// The fixture with `audio`: 6 s of test pattern and tone in 2 s segments, one audio frame per
    /// PES packet (ffmpeg's HLS demuxer restarts the chain per PES packet, not per frame as the
    /// format says: only such streams can be checked with it), video PES packets with their length.
    public func fixture(_ audio: SampleAESFixture.Audio) async throws -> SampleAESFixture {
        if let task = pending[audio] { return try await task.value }
        let task = Task { try await Self.generate(audio) }
        pending[audio] = task
        return try await task.value
    }

    private static func generate(_ audio: SampleAESFixture.Audio) async throws -> SampleAESFixture {
        let directory = TestRun.directory.appendingPathComponent("fixtures/sample-aes-\(audio)", isDirectory: true)
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let codec = audio == .aac ? ["-c:a", "aac", "-b:a", "128k"] : ["-c:a", "ac3", "-b:a", "96k"]
        try await Tool.ffmpeg.run(
            [
                "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", "6",
                "-map", "0:v", "-map", "1:a", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast",
                "-g", "50", "-keyint_min", "50", "-sc_threshold", "0",
            ] + codec + [
                "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
                "-hls_segment_options", "pes_payload_size=0:omit_video_pes_length=0", "-hls_segment_filename",
                "clear%03d.ts", "clear.m3u8",
            ], timeout: .seconds(300), workingDirectory: directory)
        try Data(SampleAESFixtures.key).write(to: directory.appendingPathComponent("key.bin"))
        let clear = try String(contentsOf: directory.appendingPathComponent("clear.m3u8"), encoding: .utf8)
        var lines: [String] = []
        for line in clear.split(separator: "\n").map(String.init) {
            if line.hasSuffix(".ts") {
                let name = "seg" + line.dropFirst("clear".count)
                let plain = try Data(contentsOf: directory.appendingPathComponent(line))
                let encrypted = try SampleAESEncryptor.encrypt(Array(plain), key: key, iv: iv)
                try Data(encrypted).write(to: directory.appendingPathComponent(name))
                lines.append(name)
            } else {
                lines.append(line)
                if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE") {
                    lines.append("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"key.bin\",IV=0x\(Hex.encode(iv))")
                }
            }
        }
        guard lines.contains(where: { $0.hasPrefix("#EXT-X-KEY") }) else {
            throw TestSupportError("ffmpeg wrote no EXT-X-MEDIA-SEQUENCE in clear.m3u8")
        }
        try (lines.joined(separator: "\n") + "\n").write(
            to: directory.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        return SampleAESFixture(directory: directory, audio: audio)
    }
}
