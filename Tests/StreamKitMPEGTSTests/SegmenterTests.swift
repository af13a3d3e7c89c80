import StreamKitFLV
import StreamKitMPEGTS
import Testing

/// Where segments are cut, and the live playlist that lists them.
@Suite struct SegmenterTests {
    static func avcConfiguration(_ sps: UInt8 = 1) -> FLVTag {
        FLVTag(type: .video, timestamp: 0, data: [0x17, 0, 0, 0, 0] + AnnexBTests.avcRecord.dropLast() + [sps])
    }

    static func videoFrame(at time: UInt32, key: Bool) -> FLVTag {
        FLVTag(type: .video, timestamp: time, data: [key ? 0x17 : 0x27, 1, 0, 0, 0, 0, 0, 0, 2, 0x65, 0x88])
    }

    static let aacConfiguration = FLVTag(type: .audio, timestamp: 0, data: [0xAF, 0, 0x12, 0x10])

    static func audioFrame(at time: UInt32) -> FLVTag {
        FLVTag(type: .audio, timestamp: time, data: [0xAF, 1, 0x21, 0x10, 0x04])
    }

    /// Feeds `tags`, returning each segment's bytes and the cuts.
    static func segment(
        _ tags: [FLVTag], target: Int64
    ) throws -> (segments: [[UInt8]], cuts: [TransportStreamSegmenter.Cut], last: Double?) {
        var segmenter = TransportStreamSegmenter(targetDuration: target)
        var output: [UInt8] = []
        var segments: [[UInt8]] = []
        var cuts: [TransportStreamSegmenter.Cut] = []
        for tag in tags {
            if let cut = try segmenter.append(tag, time: Int64(tag.timestamp), into: &output) {
                segments.append(Array(output[..<cut.offset]))
                output.removeFirst(cut.offset)
                cuts.append(cut)
            }
        }
        let last = segmenter.finish()
        segments.append(output)
        return (segments, cuts, last)
    }

    /// 25 fps with a key frame each second: cut at the first key frame 2 s into each segment.
    @Test func cutsAtKeyFramesAfterTheTarget() throws {
        var tags = [Self.avcConfiguration(), Self.aacConfiguration]
        for frame in 0..<125 {
            tags.append(Self.videoFrame(at: UInt32(frame * 40), key: frame % 25 == 0))
            tags.append(Self.audioFrame(at: UInt32(frame * 40 + 5)))
        }
        let result = try Self.segment(tags, target: 1_500)
        #expect(result.cuts.map(\.duration) == [2.0, 2.0])
        #expect(result.cuts.allSatisfy { !$0.discontinuity })
        #expect(result.last == 1.0)
        for segment in result.segments {
            #expect(segment.count % 188 == 0)
            // PAT, then the PMT, then video with random_access_indicator.
            #expect(Array(segment[0..<4]) == [0x47, 0x40, 0x00, segment[3] & 0x0F | 0x10])
            #expect(segment[189] & 0x1F == 0x10 && segment[190] == 0x00)
            #expect(segment[377] & 0x1F == 0x01 && segment[378] == 0x00)
            #expect(segment[381] & 0x40 == 0x40)
        }
    }

    @Test func audioOnlyIsCutByTime() throws {
        var tags = [Self.aacConfiguration]
        // 1024 samples at 44.1 kHz: a frame every 23.2 ms.
        for frame in 0..<300 { tags.append(Self.audioFrame(at: UInt32(frame * 1_024_000 / 44_100))) }
        let result = try Self.segment(tags, target: 2_000)
        #expect(result.cuts.count == 3)
        #expect(result.cuts.allSatisfy { $0.duration >= 2.0 && $0.duration < 2.03 })
        // The PCR is on the audio PID.
        #expect(result.segments[0][188 + 13] & 0x1F == 0x01 && result.segments[0][188 + 14] == 0x01)
    }

    @Test func aNewConfigurationCutsAtTheNextKeyFrameWithADiscontinuity() throws {
        var tags = [Self.avcConfiguration(1)]
        for frame in 0..<10 { tags.append(Self.videoFrame(at: UInt32(frame * 40), key: frame == 0)) }
        tags.append(Self.avcConfiguration(2))
        tags.append(Self.videoFrame(at: 400, key: false))
        tags.append(Self.videoFrame(at: 440, key: true))
        let result = try Self.segment(tags, target: 10_000)
        #expect(result.cuts.map(\.duration) == [0.44])
        #expect(result.cuts.map(\.discontinuity) == [true])
    }

    @Test func framesBeforeTheirConfigurationAreRefused() {
        var segmenter = TransportStreamSegmenter(targetDuration: 1_000)
        var output: [UInt8] = []
        #expect(throws: MPEGTSError.self) {
            try segmenter.append(Self.videoFrame(at: 0, key: true), time: 0, into: &output)
        }
        let mp3 = FLVTag(type: .audio, timestamp: 0, data: [0x2F, 0xFF, 0xFB])
        #expect(throws: MPEGTSError.self) { try segmenter.append(mp3, time: 0, into: &output) }
    }

    @Test func livePlaylistGrowsAndEnds() {
        var playlist = LiveMediaPlaylist(targetDuration: 4)
        playlist.append(uri: "segment-0.ts", duration: 4.2)
        playlist.append(uri: "segment-1.ts", duration: 3.96, discontinuity: true)
        #expect(
            playlist.serialized() == """
                #EXTM3U
                #EXT-X-VERSION:3
                #EXT-X-TARGETDURATION:5
                #EXT-X-MEDIA-SEQUENCE:0
                #EXT-X-PLAYLIST-TYPE:EVENT
                #EXT-X-INDEPENDENT-SEGMENTS
                #EXTINF:4.2,
                segment-0.ts
                #EXT-X-DISCONTINUITY
                #EXTINF:3.96,
                segment-1.ts

                """)
        playlist.end()
        #expect(playlist.serialized().hasSuffix("segment-1.ts\n#EXT-X-ENDLIST\n"))
    }
}
