import StreamKitCore

/// Splits RTMP messages into chunks (RTMP 1.0 §5.3) with the smallest header each chunk allows.
///
/// The first chunk of a message gets a type-0 header on a new chunk stream, when the message
/// stream changes, or when the timestamp goes backwards (serial arithmetic); type 1 when the
/// length or type changes; type 2 otherwise. Continuation chunks are type 3 and repeat the
/// Extended Timestamp when the first chunk had one (§5.3.1.3).
///
/// A type-3 header for a *new* message ("same delta as before", §5.3.1.2.4) is only used when
/// ``usesType3ForRepeatedDeltas`` is set: nginx-rtmp reads such a chunk as "same timestamp as
/// before", so a stream with steady frame spacing would reach it with every timestamp wrong.
public struct ChunkEncoder: Sendable {
    private struct ChunkStream: Sendable {
        var timestamp: UInt32
        var delta: UInt32
        var length: Int
        var type: RTMPMessageType
        var streamID: UInt32
    }

    /// The size of the chunks written; change it with ``setChunkSize(_:)`` right after sending
    /// the Set Chunk Size message that announces it.
    public private(set) var chunkSize = 128
    /// Whether a new message may start with a type-3 header when its length, type and timestamp
    /// delta repeat the previous message's.
    public var usesType3ForRepeatedDeltas = false
    private var streams: [UInt32: ChunkStream] = [:]

    public init() {}

    /// Uses `size` for every chunk written from now on.
    public mutating func setChunkSize(_ size: Int) {
        precondition(size >= 1 && size <= 0x7FFF_FFFF, "chunk size \(size) out of range")
        chunkSize = size
    }

    /// Appends the chunks of `message` on chunk stream `chunkStreamID` (2...65599).
    public mutating func encode(_ message: RTMPMessage, chunkStreamID: UInt32, into buffer: inout ByteBuffer) {
        precondition((2...65599).contains(chunkStreamID), "chunk stream id \(chunkStreamID) out of range")
        let timestamp = message.timestamp.rawValue
        let length = message.payload.count
        precondition(length <= 0xFF_FFFF, "an RTMP message holds at most 2^24 - 1 bytes")

        var format: UInt8 = 0
        var field = timestamp
        var delta = timestamp
        if let previous = streams[chunkStreamID], previous.streamID == message.streamID,
            !(message.timestamp < RTMPTimestamp(previous.timestamp))
        {
            delta = timestamp &- previous.timestamp
            field = delta
            if previous.length != length || previous.type != message.type {
                format = 1
            } else if usesType3ForRepeatedDeltas && delta == previous.delta {
                format = 3
            } else {
                format = 2
            }
        }
        streams[chunkStreamID] = ChunkStream(
            timestamp: timestamp, delta: delta, length: length, type: message.type, streamID: message.streamID)

        let extended = field >= 0xFF_FFFF
        writeBasicHeader(format: format, chunkStreamID: chunkStreamID, into: &buffer)
        if format <= 2 { buffer.writeUInt24(extended ? 0xFF_FFFF : field) }
        if format <= 1 {
            buffer.writeUInt24(UInt32(length))
            buffer.writeInteger(message.type.rawValue)
        }
        if format == 0 { buffer.writeInteger(message.streamID, endianness: .little) }
        if extended { buffer.writeInteger(field) }

        var offset = 0
        while true {
            let end = min(offset + chunkSize, length)
            buffer.writeBytes(message.payload[offset..<end])
            offset = end
            guard offset < length else { break }
            writeBasicHeader(format: 3, chunkStreamID: chunkStreamID, into: &buffer)
            if extended { buffer.writeInteger(field) }
        }
    }

    /// §5.3.1.1: one byte for ids 2-63, two for 64-319, three for 320-65599.
    private func writeBasicHeader(format: UInt8, chunkStreamID: UInt32, into buffer: inout ByteBuffer) {
        switch chunkStreamID {
        case 2...63:
            buffer.writeInteger(format << 6 | UInt8(chunkStreamID))
        case 64...319:
            buffer.writeInteger(format << 6)
            buffer.writeInteger(UInt8(chunkStreamID - 64))
        default:
            buffer.writeInteger(format << 6 | 1)
            buffer.writeInteger(UInt16(chunkStreamID - 64), endianness: .little)
        }
    }
}
