import StreamKitCore

/// A protocol control message (RTMP 1.0 §5.4) or user control message (§6.2), decoded.
public enum RTMPControlMessage: Hashable, Sendable {
    /// §5.4.1: the sender's chunks are now this size.
    case setChunkSize(UInt32)
    /// §5.4.2: drop the partial message on this chunk stream.
    case abort(chunkStreamID: UInt32)
    /// §5.4.3: the bytes received so far, modulo 2^32.
    case acknowledgement(sequenceNumber: UInt32)
    /// §6.2: a user control event.
    case userControl(UserControlEvent)
    /// §5.4.4: acknowledge after this many bytes.
    case windowAcknowledgementSize(UInt32)
    /// §5.4.5: limit the output bandwidth (limit type 0 hard, 1 soft, 2 dynamic).
    case setPeerBandwidth(UInt32, limitType: UInt8)

    /// Decodes a control message; `nil` for message types that are not control messages.
    ///
    /// - Throws: ``RTMPError`` (protocol violation) for a payload too short for its type.
    public init?(_ message: RTMPMessage) throws(RTMPError) {
        var payload = ByteBuffer(bytes: message.payload)
        func field(_ name: String) throws(RTMPError) -> UInt32 {
            guard let value: UInt32 = payload.readInteger() else {
                throw .protocolViolation(
                    "\(message.type) message too short for its \(name) (\(message.payload.count) bytes)")
            }
            return value
        }
        switch message.type {
        case .setChunkSize: self = .setChunkSize(try field("chunk size"))
        case .abort: self = .abort(chunkStreamID: try field("chunk stream id"))
        case .acknowledgement: self = .acknowledgement(sequenceNumber: try field("sequence number"))
        case .windowAcknowledgementSize: self = .windowAcknowledgementSize(try field("window size"))
        case .setPeerBandwidth:
            let size = try field("window size")
            guard let limit: UInt8 = payload.readInteger() else {
                throw .protocolViolation("Set Peer Bandwidth message without a limit type")
            }
            self = .setPeerBandwidth(size, limitType: limit)
        case .userControl:
            guard let eventType: UInt16 = payload.readInteger() else {
                throw .protocolViolation("User Control message without an event type")
            }
            let data = Array(payload.readableBytesView)
            guard [0, 1, 2, 3, 4, 6, 7].contains(eventType) else {
                self = .userControl(.other(eventType: eventType, data: data))
                return
            }
            let first = try field("event data")
            switch eventType {
            case 0: self = .userControl(.streamBegin(streamID: first))
            case 1: self = .userControl(.streamEOF(streamID: first))
            case 2: self = .userControl(.streamDry(streamID: first))
            case 3: self = .userControl(.setBufferLength(streamID: first, milliseconds: try field("buffer length")))
            case 4: self = .userControl(.streamIsRecorded(streamID: first))
            case 6: self = .userControl(.pingRequest(timestamp: first))
            case 7: self = .userControl(.pingResponse(timestamp: first))
            default: self = .userControl(.other(eventType: eventType, data: data))
            }
        default:
            return nil
        }
    }

    /// The message to send on chunk stream 2, message stream 0.
    public var message: RTMPMessage {
        var payload = ByteBuffer(capacity: 10)
        let type: RTMPMessageType
        switch self {
        case .setChunkSize(let size):
            type = .setChunkSize
            payload.writeInteger(size)
        case .abort(let chunkStreamID):
            type = .abort
            payload.writeInteger(chunkStreamID)
        case .acknowledgement(let sequenceNumber):
            type = .acknowledgement
            payload.writeInteger(sequenceNumber)
        case .windowAcknowledgementSize(let size):
            type = .windowAcknowledgementSize
            payload.writeInteger(size)
        case .setPeerBandwidth(let size, let limitType):
            type = .setPeerBandwidth
            payload.writeInteger(size)
            payload.writeInteger(limitType)
        case .userControl(let event):
            type = .userControl
            event.write(into: &payload)
        }
        return RTMPMessage(type: type, streamID: 0, payload: Array(payload.readableBytesView))
    }
}

/// A user control event (RTMP 1.0 §6.2, §7.1.7).
public enum UserControlEvent: Hashable, Sendable {
    /// 0: the stream became functional.
    case streamBegin(streamID: UInt32)
    /// 1: playback of the stream ended; no more data follows.
    case streamEOF(streamID: UInt32)
    /// 2: the stream has no more data for now.
    case streamDry(streamID: UInt32)
    /// 3: the client's buffer length for a stream.
    case setBufferLength(streamID: UInt32, milliseconds: UInt32)
    /// 4: the stream is a recorded one.
    case streamIsRecorded(streamID: UInt32)
    /// 6: the server checks the client is there; answer with a ping response of the same timestamp.
    case pingRequest(timestamp: UInt32)
    /// 7: the answer to a ping request.
    case pingResponse(timestamp: UInt32)
    /// Any other event, kept as it came.
    case other(eventType: UInt16, data: [UInt8])

    func write(into buffer: inout ByteBuffer) {
        switch self {
        case .streamBegin(let id): write(0, [id], into: &buffer)
        case .streamEOF(let id): write(1, [id], into: &buffer)
        case .streamDry(let id): write(2, [id], into: &buffer)
        case .setBufferLength(let id, let milliseconds): write(3, [id, milliseconds], into: &buffer)
        case .streamIsRecorded(let id): write(4, [id], into: &buffer)
        case .pingRequest(let timestamp): write(6, [timestamp], into: &buffer)
        case .pingResponse(let timestamp): write(7, [timestamp], into: &buffer)
        case .other(let eventType, let data):
            buffer.writeInteger(eventType)
            buffer.writeBytes(data)
        }
    }

    private func write(_ eventType: UInt16, _ fields: [UInt32], into buffer: inout ByteBuffer) {
        buffer.writeInteger(eventType)
        for field in fields { buffer.writeInteger(field) }
    }
}
