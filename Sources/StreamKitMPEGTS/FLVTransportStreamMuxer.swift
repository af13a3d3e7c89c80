import StreamKitFLV

/// Remuxes FLV tags (H.264, HEVC from Enhanced RTMP, AAC) into MPEG-TS packets of one program:
/// a video PID carrying the PCR and an audio PID (ISO/IEC 13818-1; the PCR moves to the audio
/// PID when there is no video).
///
/// Sequence headers configure a stream; each video frame becomes one Annex B access unit in one
/// PES packet, each AAC frame one ADTS frame in one PES packet. Time stamps are the tags'
/// milliseconds at 90 kHz plus ``timestampOffset``, so that the PCR, which runs that far behind
/// the decoding time, starts at zero.
public struct FLVTransportStreamMuxer: Sendable {
    /// The video PID.
    public static let videoPID: UInt16 = 0x100
    /// The audio PID.
    public static let audioPID: UInt16 = 0x101
    /// How far (90 kHz) decoding time stamps lead the PCR: the decoder's buffering allowance.
    public static let timestampOffset: UInt64 = 63_000

    /// What a tag turned out to be.
    public enum TagKind: Hashable, Sendable {
        /// A video frame; `isKeyFrame` when it starts a GOP.
        case videoFrame(isKeyFrame: Bool)
        case audioFrame
        /// A decoder configuration; `changed` when it replaced a different one.
        case configuration(changed: Bool)
        /// Script data, an end of sequence, an empty frame: nothing to write.
        case other
    }

    /// The video stream's configuration, once its sequence header arrived.
    public private(set) var video: VideoConfiguration?
    /// The audio stream's configuration, once its sequence header arrived.
    public private(set) var audio: AudioSpecificConfig?
    /// Frames left out because no configuration for them had arrived.
    public private(set) var skippedFrames = 0
    private var packets = TSPacketWriter()
    private var announced: [TSElementaryStream] = []
    private var mapVersion: UInt8 = 0
    private var pieces: [ArraySlice<UInt8>] = []
    private var adtsHeader: [UInt8] = []

    public init() {}

    /// The elementary streams configured so far, video first.
    public var streams: [TSElementaryStream] {
        var streams: [TSElementaryStream] = []
        if let video { streams.append(TSElementaryStream(type: video.codec.streamType, pid: Self.videoPID)) }
        if audio != nil { streams.append(TSElementaryStream(type: .aacADTS, pid: Self.audioPID)) }
        return streams
    }

    /// The PID carrying the PCR: video's if there is video.
    public var pcrPID: UInt16 { video == nil && audio != nil ? Self.audioPID : Self.videoPID }

    /// What `tag` holds, without changing anything: for a segmenter to decide where to cut.
    public static func kind(of tag: FLVTag) -> TagKind {
        switch tag.type {
        case .video:
            guard let header = FLVVideoTagHeader(data: tag.data) else { return .other }
            if header.isSequenceHeader { return .configuration(changed: false) }
            let isFrame = header.packetType == 1 || header.packetType == 3
            return isFrame ? .videoFrame(isKeyFrame: header.isKeyframe) : .other
        case .audio:
            guard let header = FLVAudioTagHeader(data: tag.data) else { return .other }
            if header.isSequenceHeader { return .configuration(changed: false) }
            return header.packetType == 1 ? .audioFrame : .other
        default:
            return .other
        }
    }

    /// Appends the PAT and the PMT of the streams configured so far, as each segment starts.
    public mutating func writeProgramTables(into output: inout [UInt8]) {
        if announced != streams {
            if !announced.isEmpty { mapVersion = (mapVersion + 1) & 0x1F }
            announced = streams
        }
        packets.writeSection(ProgramTables.associationSection(), pid: ProgramTables.patPID, into: &output)
        packets.writeSection(
            ProgramTables.mapSection(streams: announced, pcrPID: pcrPID, version: mapVersion),
            pid: ProgramTables.pmtPID, into: &output)
    }

    /// Replaces the PMT packet at `offset` in `output` with one listing the streams configured
    /// now, keeping its version and continuity counter: for a stream whose configuration arrives
    /// after a segment began but before any of its frames, so that the segment starts with the
    /// complete program instead of changing it midway (which some demuxers take as a new program).
    public mutating func rewriteProgramMap(in output: inout [UInt8], at offset: Int) {
        announced = streams
        var packet: [UInt8] = []
        var writer = TSPacketWriter(continuityCounter: output[offset + 3] & 0x0F, pid: ProgramTables.pmtPID)
        writer.writeSection(
            ProgramTables.mapSection(streams: announced, pcrPID: pcrPID, version: mapVersion),
            pid: ProgramTables.pmtPID, into: &packet)
        output.replaceSubrange(offset..<(offset + TSPacketWriter.packetSize), with: packet)
    }

    /// Remuxes one tag, appending its packets to `output`.
    ///
    /// - Parameter timestamp: The tag's decoding time in milliseconds, unwrapped past 32 bits.
    /// - Returns: What the tag was.
    /// - Throws: ``MPEGTSError`` for a codec MPEG-TS cannot carry here, or a malformed
    ///   configuration or frame. A frame before its stream's configuration is skipped
    ///   (``skippedFrames``).
    @discardableResult
    public mutating func write(
        _ tag: FLVTag, timestamp: Int64, into output: inout [UInt8]
    ) throws(MPEGTSError)
        -> TagKind
    {
        switch tag.type {
        case .video: try writeVideo(tag.data, timestamp: timestamp, into: &output)
        case .audio: try writeAudio(tag.data, timestamp: timestamp, into: &output)
        default: .other
        }
    }

    private mutating func writeVideo(
        _ data: [UInt8], timestamp: Int64, into output: inout [UInt8]
    ) throws(MPEGTSError)
        -> TagKind
    {
        guard let header = FLVVideoTagHeader(data: data) else { return .other }
        let codec: VideoCodec
        let bodyStart: Int
        var compositionTime: Int64 = 0
        switch header.codec {
        case .legacy(let id) where id == FLVVideoTagHeader.avcCodecID || id == FLVVideoTagHeader.legacyHEVCCodecID:
            codec = id == FLVVideoTagHeader.avcCodecID ? .h264 : .hevc
            bodyStart = 5
            if data.count >= 5 { compositionTime = Self.signed24(data[2], data[3], data[4]) }
        case .enhanced(let fourCC) where fourCC == .avc || fourCC == .hevc:
            codec = fourCC == .avc ? .h264 : .hevc
            bodyStart = header.packetType == 1 ? 8 : 5
            if header.packetType == 1 && data.count >= 8 { compositionTime = Self.signed24(data[5], data[6], data[7]) }
        default:
            throw MPEGTSError(.unsupportedCodec, "video \(header.codec)")
        }
        guard data.count >= bodyStart else { throw MPEGTSError(.invalidFrame, "a video tag of \(data.count) bytes") }
        let body = data[bodyStart..<data.endIndex]
        if header.isSequenceHeader {
            guard header.packetType == 0 else { throw MPEGTSError(.unsupportedCodec, "an MPEG-TS sequence start") }
            let configuration =
                codec == .h264
                ? try VideoConfiguration(avcRecord: body) : try VideoConfiguration(hevcRecord: body)
            let changed = video != nil && video != configuration
            video = configuration
            return .configuration(changed: changed)
        }
        guard header.packetType == 1 || header.packetType == 3, !body.isEmpty else { return .other }
        // A frame before its sequence header (or after one of another codec) cannot be decoded.
        guard let video, video.codec == codec else {
            skippedFrames += 1
            return .other
        }
        pieces.removeAll(keepingCapacity: true)
        try AnnexB.accessUnit(body, configuration: video, isKeyFrame: header.isKeyframe, into: &pieces)
        let decoding = Self.clock(timestamp)
        let pes = PESHeader(
            streamID: PESHeader.videoStreamID, presentationTime: Self.clock(timestamp + compositionTime),
            decodingTime: decoding, payloadLength: 0)
        packets.writePES(
            pes, payload: pieces, pid: Self.videoPID, pcr: decoding &- Self.timestampOffset,
            randomAccess: header.isKeyframe, into: &output)
        return .videoFrame(isKeyFrame: header.isKeyframe)
    }

    private mutating func writeAudio(
        _ data: [UInt8], timestamp: Int64, into output: inout [UInt8]
    ) throws(MPEGTSError)
        -> TagKind
    {
        guard let header = FLVAudioTagHeader(data: data) else { return .other }
        let bodyStart: Int
        switch header.soundFormat {
        case FLVAudioTagHeader.aacSoundFormat: bodyStart = 2
        case FLVAudioTagHeader.enhancedSoundFormat where header.fourCC == FourCC("mp4a"): bodyStart = 5
        default:
            let name = header.fourCC.map { "\($0)" } ?? "SoundFormat \(header.soundFormat)"
            throw MPEGTSError(.unsupportedCodec, "audio \(name)")
        }
        guard data.count >= bodyStart else { throw MPEGTSError(.invalidFrame, "an audio tag of \(data.count) bytes") }
        let body = data[bodyStart..<data.endIndex]
        if header.isSequenceHeader {
            let configuration = try AudioSpecificConfig(bytes: body)
            let changed = audio != nil && audio != configuration
            audio = configuration
            return .configuration(changed: changed)
        }
        guard header.packetType == 1, !body.isEmpty else { return .other }
        guard let audio else {
            skippedFrames += 1
            return .other
        }
        adtsHeader = audio.adtsHeader(payloadLength: body.count)
        pieces.removeAll(keepingCapacity: true)
        pieces.append(adtsHeader[...])
        pieces.append(body)
        let time = Self.clock(timestamp)
        let pes = PESHeader(
            streamID: PESHeader.audioStreamID, presentationTime: time, payloadLength: adtsHeader.count + body.count)
        let carriesPCR = video == nil
        packets.writePES(
            pes, payload: pieces, pid: Self.audioPID, pcr: carriesPCR ? time &- Self.timestampOffset : nil,
            randomAccess: carriesPCR, into: &output)
        return .audioFrame
    }

    /// Milliseconds as a 90 kHz time stamp after ``timestampOffset``.
    static func clock(_ milliseconds: Int64) -> UInt64 {
        UInt64(bitPattern: milliseconds &* 90) &+ timestampOffset
    }

    private static func signed24(_ high: UInt8, _ middle: UInt8, _ low: UInt8) -> Int64 {
        let value = Int64(high) << 16 | Int64(middle) << 8 | Int64(low)
        return value & 0x80_0000 != 0 ? value - 0x100_0000 : value
    }
}
