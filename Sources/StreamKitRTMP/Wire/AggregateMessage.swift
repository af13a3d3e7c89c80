import StreamKitCore

/// Aggregate messages (RTMP 1.0 §7.1.6): sub-messages framed like FLV tags (type, 24-bit size,
/// timestamp, stream id, data, back pointer).
public enum AggregateMessage {
    /// The sub-messages of `message`, each with the aggregate's stream id and a timestamp offset by
    /// the aggregate's: the first sub-message takes the aggregate's timestamp, the others keep their
    /// distance from the first (serial arithmetic, so offsets across a wrap stay right).
    ///
    /// - Throws: ``RTMPError`` (protocol violation) when a sub-message runs past the end, or is itself an aggregate.
    public static func unpack(_ message: RTMPMessage) throws(RTMPError) -> [RTMPMessage] {
        var body = ByteBuffer(bytes: message.payload)
        var messages: [RTMPMessage] = []
        var first: RTMPTimestamp?
        while body.readableBytes > 0 {
            guard body.readableBytes >= 11, let typeByte: UInt8 = body.readInteger(),
                let size = body.readUInt24(), let low = body.readUInt24(), let high: UInt8 = body.readInteger()
            else {
                throw .protocolViolation("aggregate message ends inside a sub-message header")
            }
            body.moveReaderIndex(forwardBy: 3)
            let type = RTMPMessageType(rawValue: typeByte)
            guard type != .aggregate, RTMPMessageType.known.contains(type) else {
                throw .protocolViolation("aggregate message holds a sub-message of type \(typeByte)")
            }
            guard let data = body.readBytes(length: Int(size)) else {
                throw .protocolViolation(
                    "aggregate sub-message of \(size) bytes runs past the end (\(body.readableBytes) left)")
            }
            // The back pointer is optional at the very end of some aggregates.
            if body.readableBytes > 0, body.readInteger(as: UInt32.self) == nil {
                throw .protocolViolation("aggregate message ends inside a back pointer")
            }
            let timestamp = RTMPTimestamp(UInt32(high) << 24 | low)
            let base = first ?? timestamp
            first = base
            messages.append(
                RTMPMessage(
                    type: type, streamID: message.streamID,
                    timestamp: message.timestamp.advanced(by: base.distance(to: timestamp)), payload: data))
        }
        return messages
    }

    /// Packs `messages` (all on one stream) into one aggregate message whose timestamp is the first's.
    public static func pack(_ messages: [RTMPMessage]) -> RTMPMessage {
        var body = ByteBuffer()
        for message in messages {
            body.writeInteger(message.type.rawValue)
            body.writeUInt24(UInt32(message.payload.count))
            body.writeUInt24(message.timestamp.rawValue & 0xFF_FFFF)
            body.writeInteger(UInt8(truncatingIfNeeded: message.timestamp.rawValue >> 24))
            body.writeUInt24(0)
            body.writeBytes(message.payload)
            body.writeInteger(UInt32(11 + message.payload.count))
        }
        return RTMPMessage(
            type: .aggregate, streamID: messages.first?.streamID ?? 0,
            timestamp: messages.first?.timestamp ?? RTMPTimestamp(0), payload: Array(body.readableBytesView))
    }
}
