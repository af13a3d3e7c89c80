import StreamKitAMF
import StreamKitCore
import StreamKitFLV

/// Turns the messages of a played live stream into the tags of an FLV file: metadata and
/// sequence headers first, then media from the first video keyframe on, timestamps rebased so
/// the file starts at zero, until the requested duration.
///
/// A player joins a live stream mid-GOP; frames before the first keyframe cannot be decoded and
/// are dropped, as is audio from before it. After a reconnect the timeline continues where the
/// file left off, and sequence headers are written again only if they changed.
public struct RecordingStateMachine: Sendable {
    /// What to write, or that the recording is complete.
    public enum Action: Hashable, Sendable {
        /// Write `onMetaData` (duration and size to be patched at the end).
        case writeMetadata(AMF0Object)
        /// Write a tag.
        case writeTag(FLVTag)
        /// The requested duration is reached; stop recording.
        case durationReached
    }

    /// The longest recording, in milliseconds of media time; no limit when `nil`.
    public let durationLimit: Int64?
    /// The media time written so far: the last tag's timestamp, in milliseconds.
    public private(set) var lastTimestamp: Int64 = 0
    /// Where the media written ends: the latest frame's time plus its length (the interval
    /// before it on the same connection), so that a reconnect continues after it, not inside it.
    private var mediaEnd: Int64 = 0
    private var lastFrameTime: [FLVTagType: Int64] = [:]
    private var frameLength: [FLVTagType: Int64] = [:]
    /// Audio and video tags written (sequence headers not counted).
    public private(set) var audioFrames = 0
    public private(set) var videoFrames = 0
    /// Whether any media has been written.
    public private(set) var hasStarted = false

    private var metadata: AMF0Object?
    private var videoSequenceHeader: FLVTag?
    private var audioSequenceHeader: FLVTag?
    private var writtenVideoSequenceHeader: [UInt8]?
    private var writtenAudioSequenceHeader: [UInt8]?
    private var sawVideo = false
    /// The first audio timestamp seen while waiting for video, for the audio-only fallback.
    private var firstWaitingAudio: Int64?
    private var isRunning = false
    private var finished = false
    private var unwrapper = RTMPTimelineUnwrapper()
    /// The extended timestamp that maps to `offset` in the file.
    private var base: Int64 = 0
    private var offset: Int64 = 0

    /// - Parameter durationLimit: Stop once media reaches this many milliseconds; `nil` for no limit.
    public init(durationLimit: Int64? = nil) { self.durationLimit = durationLimit }

    /// Continues a file that holds media up to `lastTimestamp` milliseconds and whose frames end
    /// at `mediaEnd`: the recording goes on from the next keyframe after them, as after a
    /// reconnect, without metadata, and with the sequence headers written again.
    ///
    /// - Parameters:
    ///   - durationLimit: Stop once media reaches this many milliseconds of the whole file; `nil` for no limit.
    ///   - lastTimestamp: The file's last media timestamp.
    ///   - mediaEnd: Where its media ends (at least `lastTimestamp`).
    public init(durationLimit: Int64?, continuingAfter lastTimestamp: Int64, mediaEnd: Int64) {
        self.durationLimit = durationLimit
        self.lastTimestamp = lastTimestamp
        self.mediaEnd = max(mediaEnd, lastTimestamp)
        hasStarted = true
    }

    /// Processes one message of the played stream.
    public mutating func receive(_ message: RTMPMessage) -> [Action] {
        guard !finished else { return [] }
        let position = unwrapper.extend(message.timestamp)
        switch message.type {
        case .amf0Data, .amf3Data:
            if !hasStarted, let script = try? RTMPDataMessage.scriptData(from: message),
                script.name == FLVScriptData.onMetaData, let properties = script.properties
            {
                metadata = properties
            }
            return []
        case .video:
            sawVideo = true
            guard let header = FLVVideoTagHeader(data: message.payload) else { return [] }
            if header.isSequenceHeader {
                let tag = FLVTag(type: .video, timestamp: 0, data: message.payload)
                videoSequenceHeader = tag
                return isRunning ? writeSequenceHeader(tag, at: position) : []
            }
            // The end-of-sequence marker (AVC packet type 2, Enhanced SequenceEnd) is written, not counted.
            let isFrame = header.packetType != 2
            if !isRunning {
                guard header.isKeyframe else { return [] }
                return begin(at: position) + write(message, at: position, isFrame: isFrame)
            }
            return write(message, at: position, isFrame: isFrame)
        case .audio:
            guard let header = FLVAudioTagHeader(data: message.payload) else { return [] }
            if header.isSequenceHeader {
                let tag = FLVTag(type: .audio, timestamp: 0, data: message.payload)
                audioSequenceHeader = tag
                return isRunning ? writeSequenceHeader(tag, at: position) : []
            }
            if !isRunning {
                // With video around (or announced by the metadata), wait for its keyframe; an
                // audio-only stream starts at once, and so does one whose video never shows up.
                let waited = position - (firstWaitingAudio ?? position)
                firstWaitingAudio = firstWaitingAudio ?? position
                guard !expectsVideo || waited >= Self.videoWait else { return [] }
                return begin(at: position) + write(message, at: position)
            }
            return write(message, at: position)
        default:
            return []
        }
    }

    /// A new connection replaces a dropped one: its timestamps start afresh and the file
    /// continues, from the next keyframe, where the media written ends (at least a millisecond
    /// after the last tag), so that decoding times keep increasing by at least a frame.
    public mutating func reconnected() {
        lastFrameTime = [:]
        isRunning = false
        sawVideo = false
        firstWaitingAudio = nil
        unwrapper = RTMPTimelineUnwrapper()
        videoSequenceHeader = nil
        audioSequenceHeader = nil
    }

    /// How long audio is held back waiting for announced video before recording starts without it.
    static let videoWait: Int64 = 5_000

    /// Whether video has been seen, or the metadata announces it.
    private var expectsVideo: Bool {
        if sawVideo || videoSequenceHeader != nil { return true }
        guard let metadata else { return false }
        return ["videocodecid", "width", "height", "videodatarate"].contains { metadata[$0] != nil }
    }

    /// The media time recorded, in seconds.
    public var duration: Double { Double(lastTimestamp) / 1_000 }

    // MARK: Private

    private mutating func begin(at position: Int64) -> [Action] {
        var actions: [Action] = []
        if !hasStarted {
            actions.append(.writeMetadata(metadata ?? AMF0Object()))
            offset = 0
        } else {
            offset = max(lastTimestamp + 1, mediaEnd)
        }
        base = position
        isRunning = true
        hasStarted = true
        for header in [videoSequenceHeader, audioSequenceHeader].compactMap({ $0 }) {
            actions += writeSequenceHeader(header, at: position)
        }
        return actions
    }

    private mutating func writeSequenceHeader(_ tag: FLVTag, at position: Int64) -> [Action] {
        let isVideo = tag.type == .video
        if (isVideo ? writtenVideoSequenceHeader : writtenAudioSequenceHeader) == tag.data { return [] }
        if isVideo { writtenVideoSequenceHeader = tag.data } else { writtenAudioSequenceHeader = tag.data }
        let time = max(0, min(position - base + offset, lastTimestamp))
        return [.writeTag(FLVTag(type: tag.type, timestamp: UInt32(truncatingIfNeeded: time), data: tag.data))]
    }

    private mutating func write(_ message: RTMPMessage, at position: Int64, isFrame: Bool = true) -> [Action] {
        let time = position - base + offset
        // Audio a few milliseconds older than the keyframe the file starts with has nothing to play against.
        guard time >= offset else { return [] }
        if let durationLimit, time >= durationLimit {
            finished = true
            return [.durationReached]
        }
        lastTimestamp = max(lastTimestamp, time)
        if message.type == .video {
            if isFrame { videoFrames += 1 }
        } else {
            audioFrames += 1
        }
        let type: FLVTagType = message.type == .video ? .video : .audio
        if isFrame {
            if let previous = lastFrameTime[type], time > previous { frameLength[type] = time - previous }
            lastFrameTime[type] = time
            mediaEnd = max(mediaEnd, time + (frameLength[type] ?? 0))
        }
        return [.writeTag(FLVTag(type: type, timestamp: UInt32(truncatingIfNeeded: time), data: message.payload))]
    }
}
