import StreamKitAMF
import StreamKitFLV
import StreamKitRTMP
import Testing

@Suite struct RecordingStateMachineTests {
    static let metadata = RTMPMessage(
        type: .amf0Data, streamID: 1, payload: FLVScriptData.metadata(["width": 320]).data)
    static let avcHeader: [UInt8] = [0x17, 0x00, 0, 0, 0, 1, 0x64]
    static let aacHeader: [UInt8] = [0xAF, 0x00, 0x12, 0x10]

    static func video(_ timestamp: UInt32, key: Bool = false, data: [UInt8]? = nil) -> RTMPMessage {
        RTMPMessage(
            type: .video, streamID: 1, timestamp: RTMPTimestamp(timestamp),
            payload: data ?? [key ? 0x17 : 0x27, 0x01, 0, 0, 0])
    }

    static func audio(_ timestamp: UInt32, data: [UInt8] = [0xAF, 0x01, 0x21]) -> RTMPMessage {
        RTMPMessage(type: .audio, streamID: 1, timestamp: RTMPTimestamp(timestamp), payload: data)
    }

    private func run(
        _ machine: inout RecordingStateMachine, _ messages: [RTMPMessage]
    ) -> [RecordingStateMachine.Action] {
        messages.flatMap { machine.receive($0) }
    }

    /// Joined mid-GOP: frames before the keyframe are dropped; metadata and sequence headers come
    /// first; timestamps start at zero at the keyframe; older audio is dropped.
    @Test func startsAtTheFirstKeyframeWithHeadersFirst() {
        var machine = RecordingStateMachine()
        let actions = run(
            &machine,
            [
                Self.metadata, Self.video(5_000, data: Self.avcHeader), Self.audio(5_000, data: Self.aacHeader),
                Self.video(5_000), Self.audio(5_010), Self.video(5_040, key: true), Self.audio(5_030),
                Self.audio(5_050),
                Self.video(5_080),
            ])
        #expect(
            actions == [
                .writeMetadata(["width": 320]),
                .writeTag(FLVTag(type: .video, timestamp: 0, data: Self.avcHeader)),
                .writeTag(FLVTag(type: .audio, timestamp: 0, data: Self.aacHeader)),
                .writeTag(FLVTag(type: .video, timestamp: 0, data: Self.video(0, key: true).payload)),
                .writeTag(FLVTag(type: .audio, timestamp: 10, data: Self.audio(0).payload)),
                .writeTag(FLVTag(type: .video, timestamp: 40, data: Self.video(0).payload)),
            ])
        #expect(machine.videoFrames == 2 && machine.audioFrames == 1 && machine.lastTimestamp == 40)
    }

    @Test func stopsAtTheDuration() {
        var machine = RecordingStateMachine(durationLimit: 100)
        let actions = run(
            &machine, [Self.video(0, key: true), Self.video(40), Self.video(80), Self.video(120), Self.video(160)])
        #expect(actions.count == 5 && actions.last == .durationReached)
        #expect(machine.receive(Self.video(200)).isEmpty)
        #expect(machine.duration == 0.08)
    }

    @Test func audioOnlyStreamsStartAtOnce() {
        var machine = RecordingStateMachine()
        let actions = run(&machine, [Self.audio(900, data: Self.aacHeader), Self.audio(1_000), Self.audio(1_023)])
        #expect(
            actions == [
                .writeMetadata([:]), .writeTag(FLVTag(type: .audio, timestamp: 0, data: Self.aacHeader)),
                .writeTag(FLVTag(type: .audio, timestamp: 0, data: Self.audio(0).payload)),
                .writeTag(FLVTag(type: .audio, timestamp: 23, data: Self.audio(0).payload)),
            ])
    }

    /// Metadata announcing video holds audio back until a keyframe (so sequence headers come
    /// first), but not for ever.
    @Test func announcedVideoHoldsAudioBack() {
        var machine = RecordingStateMachine()
        let announced = RTMPMessage(
            type: .amf0Data, streamID: 1, payload: FLVScriptData.metadata(["videocodecid": 7]).data)
        var actions = run(
            &machine, [announced, Self.audio(0, data: Self.aacHeader), Self.audio(23), Self.audio(4_000)])
        #expect(actions.isEmpty)
        actions = run(&machine, [Self.video(4_010, data: Self.avcHeader), Self.video(4_020, key: true)])
        #expect(actions.count == 4 && actions[1] == .writeTag(FLVTag(type: .video, timestamp: 0, data: Self.avcHeader)))

        var silent = RecordingStateMachine()
        #expect(run(&silent, [announced, Self.audio(0), Self.audio(4_999)]).isEmpty)
        #expect(run(&silent, [Self.audio(5_000)]).count == 2, "starts without the video after 5 s")
    }

    /// Timestamps that wrap past 2^32 keep counting forward in the file.
    @Test func followsTheWrap() {
        var machine = RecordingStateMachine()
        let actions = run(&machine, [Self.video(0xFFFF_FFD8, key: true), Self.video(0x10)])
        #expect(actions.last == .writeTag(FLVTag(type: .video, timestamp: 56, data: Self.video(0).payload)))
    }

    /// After a reconnect the file continues after its last tag, from the next keyframe; unchanged
    /// sequence headers are not written again, changed ones are.
    @Test func continuesAfterAReconnect() {
        var machine = RecordingStateMachine()
        _ = run(&machine, [Self.video(100, data: Self.avcHeader), Self.video(100, key: true), Self.video(140)])
        machine.reconnected()
        let changed: [UInt8] = [0x17, 0x00, 0, 0, 0, 1, 0x4D]
        let actions = run(
            &machine,
            [
                Self.metadata, Self.video(0, data: Self.avcHeader), Self.video(0), Self.video(40, key: true),
                Self.video(80),
                Self.video(120, data: changed),
            ])
        // The last frame (40 ms) lasts until 80 ms: the new connection's keyframe goes there.
        #expect(
            actions == [
                .writeTag(FLVTag(type: .video, timestamp: 80, data: Self.video(0, key: true).payload)),
                .writeTag(FLVTag(type: .video, timestamp: 120, data: Self.video(0).payload)),
                .writeTag(FLVTag(type: .video, timestamp: 120, data: changed)),
            ])
    }

    /// With audio and video, the later end of the two: 23 ms AAC frames ending at 1,035 ms
    /// after 40 ms video frames ending at 1,040 ms.
    @Test func aReconnectContinuesAfterTheLongerLastFrame() {
        var machine = RecordingStateMachine()
        var first = [Self.video(0, data: Self.avcHeader)]
        for frame in 0..<26 { first.append(Self.video(UInt32(frame * 40), key: frame == 0)) }
        for frame in 0..<45 { first.append(Self.audio(UInt32(frame * 23))) }
        first.sort { $0.timestamp.rawValue < $1.timestamp.rawValue }
        _ = run(&machine, first)
        #expect(machine.lastTimestamp == 1_012)
        machine.reconnected()
        let actions = run(&machine, [Self.video(500, key: true), Self.audio(510)])
        #expect(
            actions == [
                .writeTag(FLVTag(type: .video, timestamp: 1_040, data: Self.video(0, key: true).payload)),
                .writeTag(FLVTag(type: .audio, timestamp: 1_050, data: Self.audio(0).payload)),
            ])
    }
}

@Suite struct PublishingTests {
    @Test func pacerFollowsTimestamps() {
        var pacer = PublishPacer()
        #expect(pacer.delay(before: 1_000, elapsed: .zero) == .zero)
        #expect(pacer.delay(before: 1_040, elapsed: .milliseconds(10)) == .milliseconds(30))
        #expect(pacer.delay(before: 1_080, elapsed: .milliseconds(100)) == .zero)
        #expect(pacer.delay(before: 2_000, elapsed: .milliseconds(100)) == .milliseconds(900))
    }

    /// Tags due within the tick leave with what is due now, in the same write.
    @Test func pacerSendsWhatIsDueWithinTheTickTogether() {
        var pacer = PublishPacer(tick: .milliseconds(10))
        #expect(pacer.delay(before: 0, elapsed: .zero) == .zero)
        #expect(pacer.delay(before: 9, elapsed: .zero) == .zero)
        #expect(pacer.delay(before: 10, elapsed: .zero) == .zero)
        #expect(pacer.delay(before: 11, elapsed: .zero) == .milliseconds(11))
        #expect(pacer.delay(before: 23, elapsed: .milliseconds(12)) == .milliseconds(11))
        #expect(pacer.delay(before: 40, elapsed: .milliseconds(35)) == .zero)
    }

    @Test func preambleOrdersMetadataAndSequenceHeadersFirst() {
        let audioHeader = FLVTag(type: .audio, timestamp: 0, data: [0xAF, 0x00, 0x12, 0x10])
        let frame = FLVTag(type: .audio, timestamp: 0, data: [0xAF, 0x01, 1])
        let videoHeader = FLVTag(type: .video, timestamp: 0, data: [0x17, 0x00, 0, 0, 0])
        let metadata = FLVTag(type: .scriptData, timestamp: 0, data: FLVScriptData.metadata([:]).data)
        var preamble = PublishPreamble()
        for tag in [audioHeader, videoHeader, metadata] {
            #expect(!PublishPreamble.isMediaFrame(tag))
            preamble.append(tag)
        }
        #expect(PublishPreamble.isMediaFrame(frame))
        preamble.append(frame)
        #expect(preamble.ordered() == [metadata, videoHeader, audioHeader, frame])
    }
}
