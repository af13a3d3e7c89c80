import StreamKitCore

/// The type of an FLV tag (§E.4.1 TagType), which is also the RTMP message type that carries it.
public struct FLVTagType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 8: audio.
    public static let audio = FLVTagType(rawValue: 8)
    /// 9: video.
    public static let video = FLVTagType(rawValue: 9)
    /// 18: script data (AMF0), such as `onMetaData`.
    public static let scriptData = FLVTagType(rawValue: 18)

    public var description: String {
        switch self {
        case .audio: "audio"
        case .video: "video"
        case .scriptData: "script data"
        default: "type \(rawValue)"
        }
    }
}

/// One FLV tag (§E.4.1): a type, a timestamp in milliseconds and its data, as stored in a file
/// and as carried in RTMP audio, video and data messages.
public struct FLVTag: Hashable, Sendable {
    /// The size of the tag header before the data.
    public static let headerSize = 11
    /// The largest data size the 24-bit DataSize field can announce.
    public static let maximumDataSize = 0xFF_FFFF

    public var type: FLVTagType
    /// Milliseconds: the 24-bit Timestamp field plus TimestampExtended as the upper 8 bits.
    public var timestamp: UInt32
    /// The tag data: audio or video tag header and payload, or AMF0 script data.
    public var data: [UInt8]

    public init(type: FLVTagType, timestamp: UInt32, data: [UInt8]) {
        precondition(data.count <= Self.maximumDataSize, "FLV tag data of \(data.count) bytes exceeds 24 bits")
        self.type = type
        self.timestamp = timestamp
        self.data = data
    }

    /// The tag header plus data: the value of the PreviousTagSize field that follows the tag.
    public var size: Int { Self.headerSize + data.count }

    /// Appends the tag and the PreviousTagSize field after it.
    public func write(into buffer: inout ByteBuffer) {
        Self.writeHeader(type: type, dataSize: data.count, timestamp: timestamp, into: &buffer)
        buffer.writeBytes(data)
        buffer.writeInteger(UInt32(size))
    }

    /// Appends an 11-byte tag header, for writers that append the data themselves.
    public static func writeHeader(type: FLVTagType, dataSize: Int, timestamp: UInt32, into buffer: inout ByteBuffer) {
        buffer.writeInteger(type.rawValue)
        buffer.writeUInt24(UInt32(dataSize))
        buffer.writeUInt24(timestamp & 0xFF_FFFF)
        buffer.writeInteger(UInt8(truncatingIfNeeded: timestamp >> 24))
        buffer.writeUInt24(0)
    }
}
