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
        _ tags: [FLVTag], target: Int64, maximum: Int64? = nil
    ) throws -> (segments: [[UInt8]], cuts: [TransportStreamSegmenter.Cut], last: Double?) {
        var segmenter = TransportStreamSegmenter(targetDuration: target)
        segmenter.maximumDuration = maximum
        var output: [UInt8] = []
        var segments: [[UInt8]] = []
        var cuts: [TransportStreamSegmenter.Cut] = []
        for tag in tags {
            if let cut = try segmenter.append(tag, time: Int64(tag.timestamp), into: &output) {
                segments.append(Array(output[..<cut.offset]))
                output.removeFirst(cut.offset)
                segmenter.outputConsumed(cut.offset)
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

    /// A live stream's frames before its sequence header cannot be decoded: they are left out.
    /// A codec MPEG-TS cannot carry is an error.
    @Test func framesBeforeTheirConfigurationAreSkipped() throws {
        var segmenter = TransportStreamSegmenter(targetDuration: 1_000)
        var output: [UInt8] = []
        _ = try segmenter.append(Self.audioFrame(at: 0), time: 0, into: &output)
        _ = try segmenter.append(Self.videoFrame(at: 0, key: true), time: 0, into: &output)
        #expect(segmenter.muxer.skippedFrames == 2)
        #expect(segmenter.videoFrames == 0 && segmenter.audioFrames == 0)
        let mp3 = FLVTag(type: .audio, timestamp: 0, data: [0x2F, 0xFF, 0xFB])
        #expect(throws: MPEGTSError.self) { try segmenter.append(mp3, time: 0, into: &output) }
    }

    /// Audio configured after the segment began (but before its first frame) goes into the
    /// segment's own PMT rather than a second PMT version midway.
    @Test func aStreamJoiningEarlyCompletesTheSegmentsProgramMap() throws {
        var tags = [Self.avcConfiguration(), Self.videoFrame(at: 0, key: true), Self.aacConfiguration]
        tags += [Self.audioFrame(at: 10), Self.videoFrame(at: 40, key: false)]
        let result = try Self.segment(tags, target: 1_000)
        let segment = result.segments[0]
        let maps = stride(from: 0, to: segment.count, by: 188).filter {
            segment[$0 + 1] & 0x1F == 0x10 && segment[$0 + 2] == 0x00
        }
        #expect(maps == [188])
        let streams = [TSElementaryStream(type: .h264, pid: 0x100), TSElementaryStream(type: .aacADTS, pid: 0x101)]
        let expected = ProgramTables.mapSection(streams: streams, pcrPID: 0x100)
        #expect(Array(segment[193..<(193 + expected.count)]) == expected)
        #expect(segment[191] & 0x0F == 0, "the PMT keeps its continuity counter")
    }

    /// After a restart the stream's first key frame begins where the last frame ends, though
    /// its own timestamp (the last tag's plus one millisecond) falls inside that frame.
    @Test func aRestartedStreamContinuesAfterTheLastFrame() throws {
        var segmenter = TransportStreamSegmenter(targetDuration: 100)
        var output: [UInt8] = []
        _ = try segmenter.append(Self.avcConfiguration(), time: 0, into: &output)
        for time in [0, 40, 80] {
            _ = try segmenter.append(Self.videoFrame(at: 0, key: time == 0), time: Int64(time), into: &output)
        }
        segmenter.streamRestarted()
        let cut = try segmenter.append(Self.videoFrame(at: 0, key: true), time: 81, into: &output)
        #expect(cut?.duration == 0.12)
        _ = try segmenter.append(Self.videoFrame(at: 0, key: false), time: 121, into: &output)
        #expect(segmenter.finish() == 0.08, "160 ms, the second frame's end, after the cut at 120 ms")
    }

    /// The target duration is settled by the first segment: the multiple of the key frame
    /// interval that reaches the aim, at least the first segment's rounded length.
    @Test(arguments: [
        (Int64(4_000), Int64(2_000), 4.0, 4), (4_000, 3_000, 6.0, 6), (4_000, 8_333, 8.333, 9),
        (4_000, 0, 4.023, 4), (2_500, 0, 2.52, 3), (4_000, 1_000, 6.6, 7), (1, 0, 0.04, 1),
    ])
    func targetDurationFromTheKeyFrameInterval(aim: Int64, interval: Int64, first: Double, expected: Int) {
        #expect(LiveMediaPlaylist.targetDuration(aim: aim, keyFrameInterval: interval, firstSegment: first) == expected)
    }

    /// Once the target is settled it never changes, and a segment reaching it is cut by time even
    /// without a key frame: key frames every 10 s, a 4 s aim, at most 6 s.
    @Test func aLongGroupOfPicturesIsCutAtTheMaximum() throws {
        var tags = [Self.avcConfiguration()]
        for frame in 0..<500 { tags.append(Self.videoFrame(at: UInt32(frame * 40), key: frame % 250 == 0)) }
        let result = try Self.segment(tags, target: 4_000, maximum: 6_000)
        #expect(result.cuts.map(\.duration) == [6, 4, 6])
        var playlist = LiveMediaPlaylist(targetDuration: 4)
        playlist.append(uri: "segment-0.ts", duration: 6, keyFrameInterval: 10_000)
        #expect(playlist.targetDuration == 10)
        playlist.append(uri: "segment-1.ts", duration: 11)
        #expect(playlist.targetDuration == 10, "the target never changes")
    }

    @Test func livePlaylistGrowsAndEnds() {
        var playlist = LiveMediaPlaylist(targetDuration: 4)
        playlist.append(uri: "segment-0.ts", duration: 4.2)
        playlist.append(uri: "segment-1.ts", duration: 3.96, discontinuity: true)
        #expect(
            playlist.serialized() == """
                #EXTM3U
                #EXT-X-VERSION:3
                #EXT-X-TARGETDURATION:4
                #EXT-X-MEDIA-SEQUENCE:0
                #EXT-X-PLAYLIST-TYPE:EVENT
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
