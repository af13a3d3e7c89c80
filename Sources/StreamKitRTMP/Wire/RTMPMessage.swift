/// The type of an RTMP message (RTMP 1.0 §5.4 protocol control, §6.2 user control, §7.1 messages).
public struct RTMPMessageType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 1: Set Chunk Size (§5.4.1).
    public static let setChunkSize = RTMPMessageType(rawValue: 1)
    /// 2: Abort Message (§5.4.2).
    public static let abort = RTMPMessageType(rawValue: 2)
    /// 3: Acknowledgement (§5.4.3).
    public static let acknowledgement = RTMPMessageType(rawValue: 3)
    /// 4: User Control Message (§6.2).
    public static let userControl = RTMPMessageType(rawValue: 4)
    /// 5: Window Acknowledgement Size (§5.4.4).
    public static let windowAcknowledgementSize = RTMPMessageType(rawValue: 5)
    /// 6: Set Peer Bandwidth (§5.4.5).
    public static let setPeerBandwidth = RTMPMessageType(rawValue: 6)
    /// 7: used between edge and origin servers; carried, never interpreted.
    public static let edge = RTMPMessageType(rawValue: 7)
    /// 8: Audio (§7.1.4).
    public static let audio = RTMPMessageType(rawValue: 8)
    /// 9: Video (§7.1.5).
    public static let video = RTMPMessageType(rawValue: 9)
    /// 15: Data message in AMF3 (§7.1.2).
    public static let amf3Data = RTMPMessageType(rawValue: 15)
    /// 16: Shared object message in AMF3 (§7.1.3).
    public static let amf3SharedObject = RTMPMessageType(rawValue: 16)
    /// 17: Command message in AMF3 (§7.1.1).
    public static let amf3Command = RTMPMessageType(rawValue: 17)
    /// 18: Data message in AMF0 (§7.1.2), such as `onMetaData`.
    public static let amf0Data = RTMPMessageType(rawValue: 18)
    /// 19: Shared object message in AMF0 (§7.1.3).
    public static let amf0SharedObject = RTMPMessageType(rawValue: 19)
    /// 20: Command message in AMF0 (§7.1.1).
    public static let amf0Command = RTMPMessageType(rawValue: 20)
    /// 22: Aggregate message (§7.1.6): FLV-tag-framed sub-messages.
    public static let aggregate = RTMPMessageType(rawValue: 22)

    /// Every type the specification defines. A chunk header naming any other type means the
    /// stream is corrupt or out of step, so the decoder stops there.
    public static let known: Set<RTMPMessageType> = [
        .setChunkSize, .abort, .acknowledgement, .userControl, .windowAcknowledgementSize, .setPeerBandwidth, .edge,
        .audio, .video, .amf3Data, .amf3SharedObject, .amf3Command, .amf0Data, .amf0SharedObject, .amf0Command,
        .aggregate,
    ]

    /// Whether the type is a protocol control message (1-6), which travels on message stream 0.
    public var isProtocolControl: Bool { (1...6).contains(rawValue) }

    public var description: String {
        switch self {
        case .setChunkSize: "Set Chunk Size"
        case .abort: "Abort"
        case .acknowledgement: "Acknowledgement"
        case .userControl: "User Control"
        case .windowAcknowledgementSize: "Window Acknowledgement Size"
        case .setPeerBandwidth: "Set Peer Bandwidth"
        case .audio: "audio"
        case .video: "video"
        case .amf0Data, .amf3Data: "data"
        case .amf0Command, .amf3Command: "command"
        case .aggregate: "aggregate"
        default: "type \(rawValue)"
        }
    }
}

/// One RTMP message (§6.1): a type, the message stream it belongs to, a timestamp and a payload.
public struct RTMPMessage: Hashable, Sendable {
    public var type: RTMPMessageType
    /// The message stream id (0 for the connection's control stream).
    public var streamID: UInt32
    /// The absolute timestamp, once chunk header deltas are applied.
    public var timestamp: RTMPTimestamp
    public var payload: [UInt8]

    public init(
        type: RTMPMessageType, streamID: UInt32 = 0, timestamp: RTMPTimestamp = RTMPTimestamp(0), payload: [UInt8]
    ) {
        self.type = type
        self.streamID = streamID
        self.timestamp = timestamp
        self.payload = payload
    }
}
