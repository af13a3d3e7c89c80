import Foundation
import StreamKitAMF
import StreamKitCLI
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// `rtmp record --hls` of an HEVC stream with AAC: the package decodes in ffmpeg and GStreamer
/// frame for frame and exports to MP4.
///
/// nginx-rtmp 1.2 drops Enhanced RTMP video (EnhancedRTMPTests), so the Enhanced (`hvc1`) stream
/// comes from the scripted responder, playing tags made from a libx265 encode; the same frames
/// as legacy CodecID 12 tags go through nginx, published with `streamkit rtmp publish`.
@Suite(.requires(.ffmpeg, .ffprobe))
struct LiveHLSHEVCTests {
    static let seconds = 10
    static let frameRate = 25

    /// Sequence headers, then video and AAC tags in timestamp order, from ffmpeg's encodes:
    /// Enhanced RTMP (`hvc1`) video tags, or legacy ones with CodecID 12.
    static func tags(in directory: URL, enhanced: Bool = true) async throws -> [FLVTag] {
        let video = directory.appendingPathComponent("video.hevc").path
        let audio = directory.appendingPathComponent("audio.aac").path
        try await Tool.ffmpeg.run([
            "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=duration=\(seconds):size=320x240:rate=\(frameRate)",
            "-c:v", "libx265", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-x265-params",
            "keyint=25:min-keyint=25:bframes=0:aud=1:log-level=error", "-f", "hevc", video,
        ])
        try await Tool.ffmpeg.run([
            "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-c:a", "aac",
            "-ar", "44100", "-f", "adts", audio,
        ])
        let (configuration, frames) = try hevcAccessUnits(Array(try Data(contentsOf: URL(fileURLWithPath: video))))
        let (audioConfig, audioFrames) = adtsFrames(Array(try Data(contentsOf: URL(fileURLWithPath: audio))))
        var media: [FLVTag] = []
        for (index, frame) in frames.enumerated() {
            // Enhanced CodedFramesX has no composition time; legacy NALU packets a zero one.
            let header =
                enhanced
                ? [0x80 | (frame.key ? 0x10 : 0x20) | 3] + Array("hvc1".utf8) : [frame.key ? 0x1C : 0x2C, 1, 0, 0, 0]
            media.append(
                FLVTag(type: .video, timestamp: UInt32(index * 1_000 / frameRate), data: header + frame.data))
        }
        for (index, frame) in audioFrames.enumerated() {
            media.append(
                FLVTag(type: .audio, timestamp: UInt32(index * 1_024_000 / 44_100), data: [0xAF, 1] + frame))
        }
        media.sort { $0.timestamp < $1.timestamp }
        let start: [UInt8] = enhanced ? [0x90] + Array("hvc1".utf8) : [0x1C, 0, 0, 0, 0]
        return [
            FLVTag(type: .video, timestamp: 0, data: start + configuration),
            FLVTag(type: .audio, timestamp: 0, data: [0xAF, 0] + audioConfig),
        ] + media
    }

    /// The access units of an Annex B HEVC stream (split at its AUDs), each as 4-byte
    /// length-prefixed NAL units, and an hvcC holding its VPS, SPS and PPS.
    static func hevcAccessUnits(_ stream: [UInt8]) throws -> ([UInt8], [(key: Bool, data: [UInt8])]) {
        var units: [ArraySlice<UInt8>] = []
        var start: Int?
        var index = 0
        while index + 3 <= stream.count {
            if stream[index] == 0, stream[index + 1] == 0, stream[index + 2] == 1 {
                if let start { units.append(trimmed(stream[start..<index])) }
                index += 3
                start = index
            } else {
                index += 1
            }
        }
        if let start { units.append(stream[start...]) }
        var parameterSets: [UInt8: [UInt8]] = [:]
        var frames: [(key: Bool, data: [UInt8])] = []
        for unit in units where !unit.isEmpty {
            let type = (unit[unit.startIndex] >> 1) & 0x3F
            switch type {
            case 35:
                frames.append((false, []))
            case 32, 33, 34:
                if parameterSets[type] == nil { parameterSets[type] = Array(unit) }
            default:
                guard !frames.isEmpty else { continue }
                if (16...21).contains(type) { frames[frames.count - 1].key = true }
                let length = UInt32(unit.count)
                frames[frames.count - 1].data += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) } + unit
            }
        }
        // configurationVersion 1, Main profile, level 3.1, 4:2:0, 8 bits, lengthSizeMinusOne 3.
        var record: [UInt8] = [
            1, 0x01, 0x60, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 0x5D, 0xF0, 0, 0xFC, 0xFD, 0xF8, 0xF8, 0, 0,
        ]
        record += [0x0F, 3]
        for type: UInt8 in [32, 33, 34] {
            let set = try #require(parameterSets[type], "no NAL unit of type \(type)")
            record += [0x80 | type, 0, 1, UInt8(set.count >> 8), UInt8(truncatingIfNeeded: set.count)] + set
        }
        return (record, frames.filter { !$0.data.isEmpty })
    }

    /// A NAL unit without the zero byte of a following 4-byte start code.
    static func trimmed(_ unit: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var unit = unit
        while unit.last == 0 { unit = unit.dropLast() }
        return unit
    }

    /// The AudioSpecificConfig and raw frames of an ADTS stream.
    static func adtsFrames(_ stream: [UInt8]) -> ([UInt8], [[UInt8]]) {
        var frames: [[UInt8]] = []
        var config: [UInt8] = []
        var offset = 0
        while offset + 7 <= stream.count {
            let header = stream[offset..<(offset + 7)].map { Int($0) }
            let length = (header[3] & 0x03) << 11 | header[4] << 3 | header[5] >> 5
            let headerSize = header[1] & 0x01 == 1 ? 7 : 9
            let objectType = (header[2] >> 6) + 1
            let frequency = (header[2] >> 2) & 0x0F
            let channels = (header[2] & 0x01) << 2 | header[3] >> 6
            let value = objectType << 11 | frequency << 7 | channels << 3
            config = [UInt8(value >> 8), UInt8(value & 0xFF)]
            frames.append(Array(stream[(offset + headerSize)..<min(offset + length, stream.count)]))
            offset += length
        }
        return (config, frames)
    }

    @Test(.requires(.gstLaunch))
    func enhancedHEVCRecordsIntoHLSThatPlaysAndExports() async throws {
        let directory = try TestRun.makeTemporaryDirectory("live-hls-hevc")
        let tags = try await Self.tags(in: directory)
        var server = ScriptedServer()
        var script = server.command("_result", 1, [.object(["code": "NetConnection.Connect.Success"])])
        script += server.command("_result", 2, [1])
        script += server.status("NetStream.Play.Start")
        for tag in tags {
            script += server.bytes(
                RTMPMessage(
                    type: tag.type == .video ? .video : .audio, streamID: 1,
                    timestamp: RTMPTimestamp(tag.timestamp + 5_000), payload: tag.data),
                chunkStream: tag.type == .video ? 6 : 4)
        }
        script += server.control(.userControl(.streamEOF(streamID: 1)))
        let responder = try ScriptedTCPResponder(steps: HostileServerTests.script([.send(script), .stall]))
        let package = directory.appendingPathComponent("package").path
        let (code, _, error) = await CommandRunner.runCapturing(arguments: [
            "rtmp", "record", "rtmp://127.0.0.1:\(responder.port)/live/hevc", "--hls", package,
            "--segment-duration", "2",
        ])
        #expect(code == .success, "\(error)")
        await responder.stop()

        let index = package + "/index.m3u8"
        let frames = Self.seconds * Self.frameRate
        let codecs = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", index,
        ])
        #expect(Set(codecs.standardOutput.split(separator: "\n").map(String.init)) == ["hevc", "aac"])
        let ffmpeg = try await HLSPlayers.ffmpeg(index)
        #expect(ffmpeg.videoFrames == frames, "\(ffmpeg)")
        let decoding = try await Tool.ffmpeg.run(["-v", "error", "-i", index, "-f", "null", "-"])
        #expect(decoding.standardError == "")
        let gstreamer = try await HLSPlayers.gstreamer("file://" + index, demuxer: .hlsdemux)
        #expect(gstreamer.playedToTheEnd && gstreamer.videoFrames == frames, "\(gstreamer)")

        let mp4 = directory.appendingPathComponent("hevc.mp4").path
        let (exportCode, _, exportError) = await CommandRunner.runCapturing(arguments: ["export", package, mp4])
        #expect(exportCode == .success, "\(exportError)")
        let duration = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", mp4,
        ])
        let seconds = Double(duration.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(abs(seconds - Double(Self.seconds)) < 0.2, "exported \(seconds) s")
    }

    /// Legacy CodecID 12 HEVC published with `streamkit rtmp publish --realtime` to nginx-rtmp and
    /// recorded with `rtmp record --hls`: `streamkit serve` hands out the live playlist while it
    /// records, and the finished package decodes frame for frame.
    @Test(.requires(.nginxRTMP, .gstLaunch))
    func legacyHEVCPublishedThroughNginxRecordsLive() async throws {
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        try await Self.publishAndRecordLive(
            enhanced: false, url: nginx.rtmpURL(application: "live", stream: "hevc"), name: "nginx"
        ) {
            try await nginx.waitForErrorLog("play: name='hevc'")
        }
        await nginx.stop()
    }

    /// The same with Enhanced RTMP (`hvc1`) published with `streamkit rtmp publish`, through the
    /// strict-AMF relay, which nginx-rtmp 1.2 cannot be: the publisher's first connect (announcing
    /// `hvc1`) is dropped and its second, plain one publishes; the recorder's plain connect is
    /// taken at once.
    @Test(.requires(.gstLaunch))
    func enhancedHEVCPublishedThroughARelayRecordsLive() async throws {
        let relay = try StrictRTMPServer()
        try await Self.publishAndRecordLive(enhanced: true, url: relay.url(stream: "hevc"), name: "relay") {
            let playing = await eventually(timeout: .seconds(30)) { relay.sessions.contains { $0.played == "hevc" } }
            try #require(playing, "the recorder never played: \(relay.sessions)")
        }
        let sessions = relay.sessions
        #expect(sessions.filter { $0.refusal?.contains("unknown AMF0 type marker 10") == true }.count == 1)
        let publisher = try #require(sessions.first { $0.published == "hevc" })
        #expect(
            publisher.videoMessages == Self.seconds * Self.frameRate + 1
                && !publisher.connectKeys.contains("fourCcList"))
        await relay.stop()
    }

    /// Publishes the HEVC frames (`enhanced` or CodecID 12) to `url` in real time while
    /// `rtmp record --hls` records them (from when `recorderPlays` returns) and `streamkit serve`
    /// serves the package: the live playlist probes as HEVC + AAC while it records, and the
    /// finished package decodes frame for frame in ffmpeg and GStreamer.
    static func publishAndRecordLive(
        enhanced: Bool, url: String, name: String, recorderPlays: () async throws -> Void
    ) async throws {
        let directory = try TestRun.makeTemporaryDirectory("live-hls-hevc-\(name)")
        let flv = directory.appendingPathComponent("hevc.flv")
        let writer = try FLVFileWriter(path: flv.path)
        for tag in try await Self.tags(in: directory, enhanced: enhanced) { try writer.write(tag) }
        try writer.finish(duration: Double(Self.seconds))

        let library = directory.appendingPathComponent("library")
        let package = library.appendingPathComponent("hevc")
        let recording = Task {
            await CommandRunner.runCapturing(arguments: [
                "rtmp", "record", url, "--hls", package.path, "--segment-duration", "2",
            ])
        }
        try await recorderPlays()
        let server = try ChildProcess(
            executable: try BuiltProducts.executable("streamkit"),
            arguments: ["serve", "--root", try Self.made(library).path, "--port", "0"],
            environment: ["STREAMKIT_HOME": directory.appendingPathComponent("home").path], logName: "serve-hevc")
        let publishing = Task {
            await CommandRunner.runCapturing(arguments: ["rtmp", "publish", flv.path, url, "--realtime"])
        }

        let listed = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            FileManager.default.fileExists(atPath: package.path + "/index.m3u8")
                && server.standardOutput.contains("URL: ")
        }
        try #require(listed, "no package or no server: \(server.standardError)")
        let line = try #require(server.standardOutput.split(separator: "\n").first { $0.hasPrefix("URL: ") })
        let live = String(line.dropFirst("URL: ".count)) + "library/hevc/index.m3u8"
        let probe = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", live,
        ])
        #expect(Set(probe.standardOutput.split(separator: "\n").map(String.init)) == ["hevc", "aac"])
        #expect(!(try String(contentsOfFile: package.path + "/video/index.m3u8", encoding: .utf8)).contains("ENDLIST"))

        let (publishCode, _, publishError) = await publishing.value
        #expect(publishCode == .success, "\(publishError)")
        let (code, _, error) = await recording.value
        #expect(code == .success, "\(error)")
        let index = package.path + "/index.m3u8"
        // libx265's Main profile, and AAC LC.
        let master = try String(contentsOfFile: index, encoding: .utf8)
        #expect(master.contains("CODECS=\"hvc1.1.6.L") && master.contains(",mp4a.40.2\""), "\(master)")
        let ffmpeg = try await HLSPlayers.ffmpeg(index)
        #expect(ffmpeg.videoFrames == Self.seconds * Self.frameRate, "\(ffmpeg)")
        let decoding = try await Tool.ffmpeg.run(["-v", "error", "-i", index, "-f", "null", "-"])
        #expect(decoding.standardError == "")
        let gstreamer = try await HLSPlayers.gstreamer(live, demuxer: .hlsdemux)
        #expect(gstreamer.playedToTheEnd && gstreamer.videoFrames == ffmpeg.videoFrames, "\(gstreamer)")
        await server.stop()

        // It exports like a download: an MP4 as long as the stream.
        let mp4 = directory.appendingPathComponent("hevc.mp4").path
        let (exportCode, _, exportError) = await CommandRunner.runCapturing(arguments: ["export", package.path, mp4])
        #expect(exportCode == .success, "\(exportError)")
        let duration = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", mp4,
        ])
        let seconds = Double(duration.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(abs(seconds - Double(Self.seconds)) < 0.2, "exported \(seconds) s")
    }

    private static func made(_ directory: URL) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
