/// A four-character code naming a codec in Enhanced RTMP/FLV tags (`hvc1`, `av01`, `vp09`, `Opus`, ...).
public struct FourCC: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The four bytes as one big-endian integer.
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A code from its four ASCII characters.
    public init(_ text: StaticString) {
        precondition(text.utf8CodeUnitCount == 4, "a FourCC has four characters")
        var value: UInt32 = 0
        text.withUTF8Buffer { for byte in $0 { value = value << 8 | UInt32(byte) } }
        rawValue = value
    }

    /// H.265/HEVC.
    public static let hevc = FourCC("hvc1")
    /// AV1.
    public static let av1 = FourCC("av01")
    /// VP9.
    public static let vp9 = FourCC("vp09")
    /// H.264/AVC signalled the enhanced way.
    public static let avc = FourCC("avc1")

    public var description: String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) }, as: UTF8.self)
    }
}

/// The header at the start of a video tag's data: legacy (§E.4.3.1 VIDEODATA) or Enhanced RTMP
/// (veovera enhanced-rtmp v1/v2, ExVideoTagHeader, signalled by the high bit of the first byte).
///
/// Recording and publishing pass video data through unchanged; this header is read only to find
/// sequence headers (which must come first in a file) and keyframes (where a recording may start).
public struct FLVVideoTagHeader: Hashable, Sendable {
    /// Legacy CodecID 7: AVC.
    public static let avcCodecID: UInt8 = 7
    /// Legacy CodecID 12: HEVC as some servers extended it before Enhanced RTMP.
    public static let legacyHEVCCodecID: UInt8 = 12

    /// How the codec is named.
    public enum Codec: Hashable, Sendable {
        /// A legacy CodecID (2 Sorenson H.263 ... 7 AVC).
        case legacy(codecID: UInt8)
        /// An Enhanced RTMP FourCC.
        case enhanced(FourCC)
        /// Enhanced RTMP multitrack or ModEx packets, whose layout this reader does not unpack.
        case enhancedOther(packetType: UInt8)
    }

    /// FrameType: 1 keyframe, 2 inter frame, 3 disposable, 4 generated keyframe, 5 info/command.
    public var frameType: UInt8
    public var codec: Codec
    /// AVCPacketType (0 sequence header, 1 NALU, 2 end of sequence) for legacy AVC/HEVC, or the
    /// Enhanced PacketType (0 SequenceStart, 1 CodedFrames, 2 SequenceEnd, 3 CodedFramesX,
    /// 4 Metadata, 5 MPEG2TSSequenceStart); `nil` for other legacy codecs.
    public var packetType: UInt8?

    /// Whether the tag holds a keyframe.
    public var isKeyframe: Bool { frameType == 1 || frameType == 4 }

    /// Whether the tag holds decoder configuration (AVC/HEVC sequence header, Enhanced SequenceStart).
    public var isSequenceHeader: Bool {
        switch codec {
        case .legacy(let id): (id == Self.avcCodecID || id == Self.legacyHEVCCodecID) && packetType == 0
        case .enhanced: packetType == 0 || packetType == 5
        case .enhancedOther: false
        }
    }

    /// Reads the header from the start of a video tag's data; `nil` when the data is empty or too short.
    public init?(data: some Collection<UInt8>) {
        guard let first = data.first else { return nil }
        if first & 0x80 != 0 {
            frameType = (first >> 4) & 0x07
            let type = first & 0x0F
            packetType = type
            if type == 6 || type == 7 {
                codec = .enhancedOther(packetType: type)
                return
            }
            let bytes = Array(data.dropFirst().prefix(4))
            guard bytes.count == 4 else { return nil }
            codec = .enhanced(FourCC(rawValue: bytes.reduce(0) { $0 << 8 | UInt32($1) }))
        } else {
            frameType = first >> 4
            let id = first & 0x0F
            codec = .legacy(codecID: id)
            if id == Self.avcCodecID || id == Self.legacyHEVCCodecID {
                guard data.count >= 2 else { return nil }
                packetType = data[data.index(after: data.startIndex)]
            } else {
                packetType = nil
            }
        }
    }
}

/// The header at the start of an audio tag's data (§E.4.2.1 AUDIODATA, and Enhanced RTMP's
/// ExAudioTagHeader for SoundFormat 9).
public struct FLVAudioTagHeader: Hashable, Sendable {
    /// SoundFormat 10: AAC.
    public static let aacSoundFormat: UInt8 = 10
    /// SoundFormat 9: an Enhanced RTMP ExAudioTagHeader follows.
    public static let enhancedSoundFormat: UInt8 = 9

    /// SoundFormat, the high four bits of the first byte.
    public var soundFormat: UInt8
    /// AACPacketType (0 sequence header, 1 raw) or the Enhanced AudioPacketType (0 SequenceStart).
    public var packetType: UInt8?
    /// The Enhanced audio FourCC (`Opus`, `fLaC`, `ac-3`, `ec-3`, `.mp3`, `mp4a`).
    public var fourCC: FourCC?

    /// Whether the tag holds decoder configuration (AAC AudioSpecificConfig, Enhanced SequenceStart).
    public var isSequenceHeader: Bool {
        (soundFormat == Self.aacSoundFormat || soundFormat == Self.enhancedSoundFormat) && packetType == 0
    }

    /// Reads the header from the start of an audio tag's data; `nil` when it is too short.
    public init?(data: some Collection<UInt8>) {
        guard let first = data.first else { return nil }
        soundFormat = first >> 4
        fourCC = nil
        switch soundFormat {
        case Self.aacSoundFormat:
            guard data.count >= 2 else { return nil }
            packetType = data[data.index(after: data.startIndex)]
        case Self.enhancedSoundFormat:
            packetType = first & 0x0F
            let bytes = Array(data.dropFirst().prefix(4))
            if bytes.count == 4 { fourCC = FourCC(rawValue: bytes.reduce(0) { $0 << 8 | UInt32($1) }) }
        default:
            packetType = nil
        }
    }
}
