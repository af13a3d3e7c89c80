import Foundation
import StreamKitAMF
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// Enhanced RTMP video (FourCC `hvc1`, `av01`, `vp09`) passes through unchanged.
///
/// nginx-rtmp 1.2 cannot relay it: it takes the high nibble of the first byte as the frame type
/// and, for the IsExHeader values 9 and 10, drops every such frame in its send queue. So the
/// server side is staged with the scripted responder, playing messages to our recorder.
@Suite struct EnhancedRTMPTests {
    /// SequenceStart, then 50 CodedFrames at 25 fps with a keyframe every second, for `fourCC`.
    static func tags(_ fourCC: String) -> [FLVTag] {
        var tags = [FLVTag(type: .video, timestamp: 0, data: [0x90] + Array(fourCC.utf8) + [1, 2, 3, 4, 5])]
        for frame in 0..<50 {
            let frameType: UInt8 = frame % 25 == 0 ? 1 : 2
            let payload = (0..<(1_000 + frame * 37)).map { UInt8(truncatingIfNeeded: $0 &* (frame + 3)) }
            tags.append(
                FLVTag(
                    type: .video, timestamp: UInt32(frame * 40),
                    data: [0x80 | frameType << 4 | 1] + Array(fourCC.utf8) + [0, 0, 0] + payload))
        }
        return tags
    }

    @Test(arguments: ["hvc1", "av01", "vp09"])
    func recordedByteForByte(fourCC: String) async throws {
        let tags = Self.tags(fourCC)
        var server = ScriptedServer()
        var script = server.command("_result", 1, [.object(["code": "NetConnection.Connect.Success"])])
        script += server.command("_result", 2, [1])
        script += server.status("NetStream.Play.Start")
        script += server.bytes(
            RTMPMessage(
                type: .amf0Data, streamID: 1, payload: FLVScriptData.metadata(["videocodecid": .string(fourCC)]).data),
            chunkStream: 5)
        for tag in tags {
            script += server.bytes(
                RTMPMessage(
                    type: .video, streamID: 1, timestamp: RTMPTimestamp(tag.timestamp + 1_000), payload: tag.data),
                chunkStream: 6)
        }
        script += server.control(.userControl(.streamEOF(streamID: 1)))
        let responder = try ScriptedTCPResponder(steps: HostileServerTests.script([.send(script), .stall]))
        let recorded = try TestRun.makeTemporaryDirectory("rtmp-enhanced").appendingPathComponent("\(fourCC).flv")
        let summary = try await RTMPRecorder(url: try RTMPURL("rtmp://127.0.0.1:\(responder.port)/live/\(fourCC)"))
            .record(to: recorded.path)
        #expect(summary.progress.videoFrames == 50)

        let reader = try FLVFileReader(path: recorded.path)
        var written: [FLVTag] = []
        while let tag = try reader.next() { written.append(tag) }
        #expect(try FLVScriptData(data: written[0].data).properties?["videocodecid"] == .string(fourCC))
        // Rebased to zero, otherwise the same bytes in the same order.
        #expect(Array(written.dropFirst()) == tags)
        await responder.stop()
    }
}
