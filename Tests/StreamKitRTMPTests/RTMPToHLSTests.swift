import Foundation
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// A live recording remuxed into HLS as it records.
@Suite struct RTMPToHLSTests {
    static let avcConfiguration: [UInt8] = [0x17, 0, 0, 0, 0] + Hex.decode("0164001fffe100036701020100026803")!

    static func frame(at time: UInt32, key: Bool) -> FLVTag {
        FLVTag(type: .video, timestamp: time, data: [key ? 0x17 : 0x27, 1, 0, 0, 0, 0, 0, 0, 2, 0x65, 0x88])
    }

    static func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The playlist on disk lists each segment as soon as it is complete, never one still being
    /// written; a new decoder configuration starts a segment after EXT-X-DISCONTINUITY; finishing
    /// adds EXT-X-ENDLIST.
    @Test func playlistFollowsTheSegmentsAndEnds() throws {
        let directory = try TestRun.makeTemporaryDirectory("rtmp-hls").appendingPathComponent("package").path
        let hls = try RTMPToHLS(directory: directory, segmentDuration: .seconds(1))
        let playlist = directory + "/" + RTMPToHLS.playlistName
        try hls.write(FLVTag(type: .video, timestamp: 0, data: Self.avcConfiguration))
        #expect(!FileManager.default.fileExists(atPath: directory), "nothing is written before media")
        for frame in 0..<35 { try hls.write(Self.frame(at: UInt32(frame * 40), key: frame % 10 == 0)) }
        // Cuts at 1.2 s (the first key frame past 1 s); the second segment is still open.
        #expect(try Self.read(playlist).contains("#EXTINF:1.2,\n00000.ts\n"))
        #expect(!(try Self.read(playlist)).contains("00001.ts"))

        try hls.write(FLVTag(type: .video, timestamp: 1_400, data: Self.avcConfiguration.dropLast() + [0x04]))
        try hls.write(Self.frame(at: 1_400, key: true))
        try hls.write(Self.frame(at: 1_440, key: false))
        try hls.finish()
        let text = try Self.read(playlist)
        #expect(
            text.hasSuffix("#EXTINF:0.2,\n00001.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:0.08,\n00002.ts\n#EXT-X-ENDLIST\n"))
        #expect(hls.segmentCount == 3)
        let sizes = try (0..<3).map {
            try FileManager.default.attributesOfItem(atPath: directory + "/" + RTMPToHLS.segmentName($0))[.size] as? Int
        }
        #expect(sizes.allSatisfy { ($0 ?? 0) > 0 && ($0 ?? 0) % 188 == 0 })
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(entries == ["00000.ts", "00001.ts", "00002.ts", "index.m3u8"], "no temporary file is left")
    }

    @Test func anExistingPlaylistIsNotReplaced() throws {
        let directory = try TestRun.makeTemporaryDirectory("rtmp-hls-exists").path
        try Data("#EXTM3U\n".utf8).write(to: URL(fileURLWithPath: directory + "/index.m3u8"))
        #expect(throws: SystemError.self) { try RTMPToHLS(directory: directory, segmentDuration: .seconds(4)) }
        _ = try RTMPToHLS(directory: directory, segmentDuration: .seconds(4), overwrite: true)
    }

    /// A package replaced with `overwrite` loses the segments the new one does not write over,
    /// and only once the new one has media; other files stay.
    @Test func aReplacedPackageLeavesNoSegmentOfTheEarlierOne() throws {
        let directory = try TestRun.makeTemporaryDirectory("rtmp-hls-replace").path
        func record(_ frames: Int, overwrite: Bool) throws -> RTMPToHLS {
            let hls = try RTMPToHLS(directory: directory, segmentDuration: .seconds(1), overwrite: overwrite)
            try hls.write(FLVTag(type: .video, timestamp: 0, data: Self.avcConfiguration))
            for frame in 0..<frames { try hls.write(Self.frame(at: UInt32(frame * 40), key: frame % 25 == 0)) }
            try hls.finish()
            return hls
        }
        #expect(try record(150, overwrite: false).segmentCount == 6)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
        let nothing = try RTMPToHLS(directory: directory, segmentDuration: .seconds(1), overwrite: true)
        try nothing.finish()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 8, "no media, no change")
        #expect(try record(50, overwrite: true).segmentCount == 2)
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(entries == ["00000.ts", "00001.ts", "index.m3u8", "notes.txt"])
        #expect(try Self.read(directory + "/index.m3u8").hasSuffix("00001.ts\n#EXT-X-ENDLIST\n"))
    }

    /// ffmpeg publishes to nginx-rtmp; the recorder writes the FLV file and the HLS package at
    /// once, and both hold the same frames.
    @Test(.requires(.nginxRTMP, .ffmpeg, .ffprobe))
    func recordsHLSBesideTheFile() async throws {
        let source = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: NginxRTMPTests.seconds)).entryFile
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "hls")
        let directory = try TestRun.makeTemporaryDirectory("rtmp-record-hls")
        let flv = directory.appendingPathComponent("ours.flv")
        let package = directory.appendingPathComponent("hls").path
        let options = RTMPRecorder.Options(hls: .init(directory: package, segmentDuration: .seconds(1)))
        let recording = Task { try await RTMPRecorder(url: try RTMPURL(url), options: options).record(to: flv.path) }
        try await nginx.waitForErrorLog("play: name='hls'")
        let publisher = try RealPeers.ffmpegPublisher(source, to: url)
        let summary = try await recording.value
        #expect(try await publisher.wait(timeout: .seconds(30)) == 0)
        #expect(summary.hlsDirectory == package)
        #expect(summary.progress.segments >= 2)

        let playlist = package + "/index.m3u8"
        #expect(try Self.read(playlist).hasSuffix("#EXT-X-ENDLIST\n"))
        let fromFile = try await HLSPlayers.ffmpeg(flv.path)
        let fromPackage = try await HLSPlayers.ffmpeg(playlist)
        #expect(fromPackage.videoFrames == fromFile.videoFrames && fromPackage.audioFrames == fromFile.audioFrames)
        #expect(fromPackage.videoFrames == summary.progress.videoFrames)
        let decoding = try await Tool.ffmpeg.run(["-v", "error", "-i", playlist, "-f", "null", "-"])
        #expect(decoding.standardError == "")
        await nginx.stop()
    }
}
