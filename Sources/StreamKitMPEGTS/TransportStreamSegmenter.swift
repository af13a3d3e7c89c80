import StreamKitFLV

/// Cuts a stream of FLV tags into MPEG-TS segments for HLS: a new segment starts at a video key
/// frame once the current one holds at least the target duration (at an audio frame, by time
/// alone, when there is no video), and at the first key frame after the codec configuration
/// changed, which also marks a discontinuity. Each segment starts with the PAT and the PMT.
///
/// It only computes bytes and boundaries; its owner writes them.
public struct TransportStreamSegmenter: Sendable {
    /// Where one segment ended and the next began in the bytes of one ``append(_:into:)``.
    public struct Cut: Hashable, Sendable {
        /// Bytes of the output before this offset belong to the segment that ended.
        public var offset: Int
        /// The length of the segment that ended, in seconds.
        public var duration: Double
        /// Whether the next segment starts a discontinuity (the codec configuration changed).
        public var discontinuity: Bool
    }

    /// The duration a segment reaches before it is cut, in milliseconds.
    public let targetDuration: Int64
    /// The longest a segment may grow, in milliseconds: at this length it is cut at the next frame
    /// even without a key frame (the playlist's target duration cannot grow). `nil`: no bound.
    public var maximumDuration: Int64?
    /// The longest interval between two key frames seen, in milliseconds (0 before the second).
    public private(set) var keyFrameInterval: Int64 = 0
    private var lastKeyFrameTime: Int64?
    public private(set) var muxer = FLVTransportStreamMuxer()
    /// Whether a segment is open (media has been written since the last cut).
    public private(set) var isSegmentOpen = false
    /// Video and audio frames written.
    public private(set) var videoFrames = 0
    public private(set) var audioFrames = 0
    private var segmentStart: Int64 = 0
    /// The end of the media written so far: the last frame's time plus its estimated length.
    private var mediaEnd: Int64 = 0
    private var lastVideoTime: Int64?
    private var videoFrameLength: Int64 = 0
    /// Where the open segment's PMT packet is in the caller's output, while it is still there.
    private var mapOffset: Int?
    /// Milliseconds added to every time since a restart (``streamRestarted()``).
    private var shift: Int64 = 0
    private var restarted = false
    private var pendingDiscontinuity = false
    private var forceCut = false

    /// - Parameter targetDuration: The segment duration to aim for, in milliseconds.
    public init(targetDuration: Int64) {
        precondition(targetDuration > 0, "a segment duration must be positive")
        self.targetDuration = targetDuration
    }

    /// Remuxes `tag`, whose timestamp is `time` milliseconds, appending its bytes to `output`.
    /// A caller that removes bytes from the front of `output` says so with ``outputConsumed(_:)``.
    ///
    /// - Returns: The cut, when the tag started a new segment: the bytes of `output` before
    ///   ``Cut/offset`` (appended by this call or earlier ones) end the previous segment.
    /// - Throws: ``MPEGTSError`` as ``FLVTransportStreamMuxer/write(_:timestamp:into:)`` does.
    public mutating func append(_ tag: FLVTag, time: Int64, into output: inout [UInt8]) throws(MPEGTSError) -> Cut? {
        var cut: Cut?
        let kind = FLVTransportStreamMuxer.kind(of: tag)
        var time = time + shift
        if restarted, kind == .videoFrame(isKeyFrame: true) || (kind == .audioFrame && muxer.video == nil) {
            // The new stream starts where the media written so far ends, not inside its last frame.
            if time < mediaEnd {
                shift += mediaEnd - time
                time = mediaEnd
            }
            restarted = false
        }
        switch kind {
        case .videoFrame(let isKeyFrame):
            if isKeyFrame {
                if let lastKeyFrameTime, time > lastKeyFrameTime {
                    keyFrameInterval = max(keyFrameInterval, time - lastKeyFrameTime)
                }
                lastKeyFrameTime = time
            }
            let tooLong = maximumDuration.map { time - segmentStart >= $0 } ?? false
            if isSegmentOpen && (tooLong || isKeyFrame && (forceCut || time - segmentStart >= targetDuration)) {
                cut = makeCut(at: time, offset: output.count)
            }
        case .audioFrame:
            if isSegmentOpen && muxer.video == nil && (forceCut || time - segmentStart >= targetDuration) {
                cut = makeCut(at: time, offset: output.count)
            }
        case .configuration, .other:
            break
        }
        if case .videoFrame = kind, !isSegmentOpen { openSegment(at: time, into: &output) }
        if case .audioFrame = kind, !isSegmentOpen { openSegment(at: time, into: &output) }
        let before = muxer.streams
        let written = try muxer.write(tag, timestamp: time, into: &output)
        switch written {
        case .configuration(let changed):
            if changed {
                pendingDiscontinuity = true
                forceCut = true
            } else if isSegmentOpen && muxer.streams != before {
                // A stream joined mid-segment: into the segment's own PMT while that is still in the
                // output, else in a new PMT version from here.
                if let mapOffset, mapOffset + TSPacketWriter.packetSize <= output.count,
                    output[mapOffset] == 0x47, output[mapOffset + 1] & 0x5F == 0x50, output[mapOffset + 2] == 0x00
                {
                    muxer.rewriteProgramMap(in: &output, at: mapOffset)
                } else {
                    muxer.writeProgramTables(into: &output)
                }
            }
        case .videoFrame:
            videoFrames += 1
            if let lastVideoTime, time > lastVideoTime { videoFrameLength = time - lastVideoTime }
            lastVideoTime = time
            mediaEnd = max(mediaEnd, time + videoFrameLength)
        case .audioFrame:
            audioFrames += 1
            let rate = muxer.audio?.sampleRate ?? 0
            mediaEnd = max(mediaEnd, time + (rate > 0 ? Int64(1_024_000 / rate) : 0))
        case .other:
            break
        }
        return cut
    }

    /// The stream starts again (a reconnect): its first key frame (or, without video, audio
    /// frame) is moved, with everything after it, to the end of the media written so far if it
    /// would fall inside it, so that decoding times keep increasing by at least a frame.
    public mutating func streamRestarted() { restarted = true }

    /// Tells the segmenter that the caller removed the first `count` bytes of its output (wrote
    /// them out), so that offsets into it move.
    public mutating func outputConsumed(_ count: Int) {
        guard let offset = mapOffset else { return }
        mapOffset = offset >= count ? offset - count : nil
    }

    /// Ends the stream: the length of the open segment in seconds, or `nil` when none is open.
    public mutating func finish() -> Double? {
        guard isSegmentOpen else { return nil }
        isSegmentOpen = false
        return Double(max(mediaEnd - segmentStart, 0)) / 1_000
    }

    private mutating func makeCut(at time: Int64, offset: Int) -> Cut {
        let cut = Cut(
            offset: offset, duration: Double(max(time - segmentStart, 0)) / 1_000, discontinuity: pendingDiscontinuity)
        pendingDiscontinuity = false
        forceCut = false
        isSegmentOpen = false
        return cut
    }

    private mutating func openSegment(at time: Int64, into output: inout [UInt8]) {
        isSegmentOpen = true
        segmentStart = time
        mediaEnd = max(mediaEnd, time)
        mapOffset = output.count + TSPacketWriter.packetSize
        muxer.writeProgramTables(into: &output)
    }
}
