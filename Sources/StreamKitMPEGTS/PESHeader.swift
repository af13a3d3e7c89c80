/// The header of a PES packet (ISO/IEC 13818-1 §2.4.3.6) with a PTS, and a DTS when it differs.
public struct PESHeader: Hashable, Sendable {
    /// stream_id 0xE0: the first video stream.
    public static let videoStreamID: UInt8 = 0xE0
    /// stream_id 0xC0: the first audio stream.
    public static let audioStreamID: UInt8 = 0xC0

    public var streamID: UInt8
    /// Presentation time stamp, 90 kHz, 33 bits.
    public var presentationTime: UInt64
    /// Decoding time stamp, 90 kHz; written only when it differs from the PTS.
    public var decodingTime: UInt64?
    /// The bytes after the header; 0 writes PES_packet_length 0 (unbounded, video only), as
    /// does a payload too long for the 16-bit field.
    public var payloadLength: Int
    /// data_alignment_indicator: the payload starts with an access unit's first byte.
    public var isAligned: Bool

    public init(
        streamID: UInt8, presentationTime: UInt64, decodingTime: UInt64? = nil, payloadLength: Int,
        isAligned: Bool = true
    ) {
        self.streamID = streamID
        self.presentationTime = presentationTime
        self.decodingTime = decodingTime
        self.payloadLength = payloadLength
        self.isAligned = isAligned
    }

    /// The header's size in bytes: 14, or 19 with a DTS.
    public var size: Int { hasDecodingTime ? 19 : 14 }

    private var hasDecodingTime: Bool { decodingTime.map { $0 != presentationTime } ?? false }

    /// Appends the header to `bytes`.
    public func write(into bytes: inout [UInt8]) {
        bytes += [0x00, 0x00, 0x01, streamID]
        // PES_packet_length counts from after itself: 3 flag bytes, the timestamps and the payload.
        let length = size - 6 + payloadLength
        let field = payloadLength == 0 || length > 0xFFFF ? 0 : length
        bytes.append(UInt8(field >> 8))
        bytes.append(UInt8(truncatingIfNeeded: field))
        bytes.append(isAligned ? 0x84 : 0x80)  // '10', not scrambled, data_alignment_indicator
        if let decodingTime, hasDecodingTime {
            bytes += [0xC0, 10]
            Self.writeTimestamp(presentationTime, prefix: 0x3, into: &bytes)
            Self.writeTimestamp(decodingTime, prefix: 0x1, into: &bytes)
        } else {
            bytes += [0x80, 5]
            Self.writeTimestamp(presentationTime, prefix: 0x2, into: &bytes)
        }
    }

    /// A 33-bit time stamp in five bytes: `prefix`, then 3, 15 and 15 bits each followed by a marker bit.
    static func writeTimestamp(_ value: UInt64, prefix: UInt8, into bytes: inout [UInt8]) {
        let time = value & 0x1_FFFF_FFFF
        bytes.append(prefix << 4 | UInt8(truncatingIfNeeded: time >> 29) & 0x0E | 1)
        bytes.append(UInt8(truncatingIfNeeded: time >> 22))
        bytes.append(UInt8(truncatingIfNeeded: time >> 14) & 0xFE | 1)
        bytes.append(UInt8(truncatingIfNeeded: time >> 7))
        bytes.append(UInt8(truncatingIfNeeded: time << 1) | 1)
    }
}
