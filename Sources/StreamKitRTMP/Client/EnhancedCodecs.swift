import StreamKitAMF
import StreamKitFLV

/// The Enhanced RTMP codecs a `connect` announces (veovera enhanced-rtmp v1 `fourCcList`, v2
/// `videoFourCcInfoMap` and `audioFourCcInfoMap`).
///
/// Servers that predate Enhanced RTMP may fail on these fields (a strict array in the command
/// object), so a connection announces them only when its media needs them: a published file
/// whose tags carry an Enhanced FourCC, or codecs the user names. Empty announces nothing, and the
/// `connect` is the one every RTMP server has read since Flash.
public struct EnhancedCodecs: Hashable, Sendable {
    /// Video FourCCs (`hvc1`, `av01`, `vp09`, `avc1`).
    public var video: [FourCC]
    /// Audio FourCCs (`Opus`, `fLaC`, `ac-3`, `ec-3`, `.mp3`, `mp4a`).
    public var audio: [FourCC]

    /// The video FourCCs Enhanced RTMP defines.
    public static let knownVideo: [FourCC] = [.hevc, .av1, .vp9, .avc]
    /// The audio FourCCs Enhanced RTMP defines.
    public static let knownAudio: [FourCC] = [
        FourCC("Opus"), FourCC("fLaC"), FourCC("ac-3"), FourCC("ec-3"), FourCC(".mp3"), FourCC("mp4a"),
    ]

    /// The names ``init(list:)`` accepts.
    public static var knownNames: [String] { (knownVideo + knownAudio).map(\.description) }

    /// FourCcInfoMask (enhanced-rtmp v2): the client can decode, encode or forward the codec.
    enum InfoMask {
        static let canDecode = 0x01
        static let canEncode = 0x02
        static let canForward = 0x04
    }

    /// No Enhanced RTMP fields.
    public static let none = EnhancedCodecs(video: [], audio: [])

    public init(video: [FourCC], audio: [FourCC]) {
        self.video = video
        self.audio = audio
    }

    /// The codecs a comma-separated list of names such as `hvc1,Opus` asks for (FourCCs are
    /// case-sensitive); `nil` when an entry is not a FourCC of ``knownVideo`` or ``knownAudio``.
    public init?(list: String) {
        self = .none
        for name in list.split(separator: ",").map({ $0.filter { $0 != " " } }) where !name.isEmpty {
            if let code = Self.knownVideo.first(where: { $0.description == name }) {
                if !video.contains(code) { video.append(code) }
            } else if let code = Self.knownAudio.first(where: { $0.description == name }) {
                if !audio.contains(code) { audio.append(code) }
            } else {
                return nil
            }
        }
    }

    /// The Enhanced FourCCs that `tags` (a published file's start) carry.
    public init(tags: some Sequence<FLVTag>) {
        self = .none
        for tag in tags {
            switch tag.type {
            case .video:
                if case .enhanced(let code) = FLVVideoTagHeader(data: tag.data)?.codec, !video.contains(code) {
                    video.append(code)
                }
            case .audio:
                if let code = FLVAudioTagHeader(data: tag.data)?.fourCC, !audio.contains(code) { audio.append(code) }
            default:
                break
            }
        }
    }

    /// Whether there is nothing to announce.
    public var isEmpty: Bool { video.isEmpty && audio.isEmpty }

    /// Both sets together, without repeats.
    public func union(_ other: EnhancedCodecs) -> EnhancedCodecs {
        EnhancedCodecs(
            video: video + other.video.filter { !video.contains($0) },
            audio: audio + other.audio.filter { !audio.contains($0) })
    }

    /// Adds the `connect` command object's Enhanced RTMP properties to `object`: `fourCcList` (v1,
    /// video only) and the v2 info maps, saying that a publisher encodes and a player forwards.
    func addConnectProperties(to object: inout AMF0Object, forPublishing: Bool) {
        let mask = forPublishing ? InfoMask.canEncode : InfoMask.canForward
        func infoMap(_ codes: [FourCC]) -> AMF0Value {
            var map = AMF0Object()
            for code in codes { map[code.description] = .number(Double(mask)) }
            return .object(map)
        }
        if !video.isEmpty {
            object["fourCcList"] = .strictArray(video.map { .string($0.description) })
            object["videoFourCcInfoMap"] = infoMap(video)
        }
        if !audio.isEmpty { object["audioFourCcInfoMap"] = infoMap(audio) }
    }
}
