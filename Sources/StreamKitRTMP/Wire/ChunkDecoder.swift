import StreamKitCore

/// Reassembles RTMP messages from the chunk stream a peer sends (RTMP 1.0 §5.3).
///
/// Feed it bytes as they arrive; each call to ``decode(_:)`` returns the next complete message,
/// or `nil` once the buffer holds no more complete messages (it keeps the partial state and
/// consumes whatever bytes it could use). Set Chunk Size and Abort are applied here, the moment
/// they complete, so the very next chunk uses the new size (§5.4.1); they are also returned.
///
/// Hostile input is bounded by ``Limits``: the chunk size a peer may set, the length a message
/// may announce, the number of chunk streams, and the bytes held in partial messages.
public struct ChunkDecoder: Sendable {
    /// What a peer may make the decoder hold.
    public struct Limits: Hashable, Sendable {
        /// The largest chunk size a peer may set (nginx-rtmp itself refuses more than 10 MB).
        public var maximumChunkSize: Int
        /// The longest message a header may announce.
        public var maximumMessageLength: Int
        /// How many chunk streams may carry state at once.
        public var maximumChunkStreams: Int
        /// The payload bytes that partial messages may hold together.
        public var maximumBufferedBytes: Int

        public init(
            maximumChunkSize: Int = 16 << 20, maximumMessageLength: Int = 8 << 20, maximumChunkStreams: Int = 64,
            maximumBufferedBytes: Int = 32 << 20
        ) {
            self.maximumChunkSize = maximumChunkSize
            self.maximumMessageLength = maximumMessageLength
            self.maximumChunkStreams = maximumChunkStreams
            self.maximumBufferedBytes = maximumBufferedBytes
        }
    }

    /// The last header of one chunk stream and the message being reassembled on it (§5.3.1.2).
    private struct ChunkStream: Sendable {
        var timestamp: UInt32 = 0
        /// The delta a type-3 chunk starting a new message applies: the last type-1/2 delta, or
        /// the timestamp of a type-0 header (§5.3.1.2.4).
        var timestampDelta: UInt32 = 0
        var length = 0
        var type = RTMPMessageType(rawValue: 0)
        var streamID: UInt32 = 0
        /// Whether the last type-0/1/2 header carried an Extended Timestamp, which type-3 chunks then repeat (§5.3.1.3).
        var hasExtendedTimestamp = false
        var extendedTimestamp: UInt32 = 0
        var payload: [UInt8] = []
    }

    public let limits: Limits
    /// The size of the chunks the peer sends, 128 until it sets another (§5.4.1).
    public private(set) var chunkSize = 128
    /// Payload bytes held in partial messages.
    public private(set) var bufferedBytes = 0

    private var streamIndex: [UInt32: Int] = [:]
    private var streams: [ChunkStream] = []
    /// The chunk stream and byte count of the chunk whose data is being read, between calls.
    private var currentChunk: (index: Int, remaining: Int)?

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// The number of chunk streams the peer has used.
    public var chunkStreamCount: Int { streams.count }

    /// Decodes the next complete message.
    ///
    /// - Returns: The message, or `nil` when `buffer` is used up without completing one.
    /// - Throws: ``RTMPError`` (protocol violation) when the chunk stream is invalid or exceeds ``limits``;
    ///   the decoder must not be used afterwards.
    public mutating func decode(_ buffer: inout ByteBuffer) throws(RTMPError) -> RTMPMessage? {
        while true {
            if currentChunk == nil {
                guard try readChunkHeader(&buffer) else { return nil }
            }
            guard let (index, remaining) = currentChunk else { continue }
            let available = min(remaining, buffer.readableBytes)
            if available > 0 {
                guard bufferedBytes + available <= limits.maximumBufferedBytes else {
                    throw .protocolViolation(
                        "partial messages would hold more than \(limits.maximumBufferedBytes) bytes")
                }
                streams[index].payload.append(contentsOf: buffer.readSlice(length: available)!)
                bufferedBytes += available
            }
            if available < remaining {
                currentChunk = (index, remaining - available)
                return nil
            }
            currentChunk = nil
            if streams[index].payload.count == streams[index].length {
                return try complete(index)
            }
        }
    }

    // MARK: Headers

    /// Reads one chunk's basic header, message header and extended timestamp, if all are readable.
    private mutating func readChunkHeader(_ buffer: inout ByteBuffer) throws(RTMPError) -> Bool {
        guard let first = buffer.getByte(at: 0) else { return false }
        let format = first >> 6
        var cursor = 1
        let chunkStreamID: UInt32
        switch first & 0x3F {
        case 0:
            guard let byte = buffer.getByte(at: 1) else { return false }
            chunkStreamID = 64 + UInt32(byte)
            cursor = 2
        case 1:
            guard let low = buffer.getByte(at: 1), let high = buffer.getByte(at: 2) else { return false }
            chunkStreamID = 64 + UInt32(low) + UInt32(high) * 256
            cursor = 3
        default:
            chunkStreamID = UInt32(first & 0x3F)
        }

        let messageHeaderSize = [11, 7, 3, 0][Int(format)]
        guard buffer.readableBytes >= cursor + messageHeaderSize else { return false }
        var timestampField: UInt32 = 0
        var length = 0
        var typeByte: UInt8 = 0
        var streamID: UInt32 = 0
        if format <= 2 { timestampField = buffer.getUInt24(at: cursor)! }
        if format <= 1 {
            length = Int(buffer.getUInt24(at: cursor + 3)!)
            typeByte = buffer.getByte(at: cursor + 6)!
        }
        if format == 0 { streamID = buffer.getInteger(at: cursor + 7, endianness: .little)! }
        cursor += messageHeaderSize

        let existing = streamIndex[chunkStreamID]
        if format != 0 && existing == nil {
            throw .protocolViolation(
                "chunk stream \(chunkStreamID) starts with a type-\(format) header instead of type 0")
        }
        let index: Int
        if let existing {
            index = existing
        } else {
            guard streams.count < limits.maximumChunkStreams else {
                throw .protocolViolation("the peer uses more than \(limits.maximumChunkStreams) chunk streams")
            }
            index = streams.count
        }
        var stream = existing.map { streams[$0] } ?? ChunkStream()
        let continuing = !stream.payload.isEmpty

        // Extended Timestamp (§5.3.1.3): after a 0xFFFFFF field, and on type-3 chunks of a chunk
        // stream whose last full header had one.
        var extended: UInt32?
        if format <= 2 {
            if timestampField == 0xFF_FFFF {
                guard let value: UInt32 = buffer.getInteger(at: cursor) else { return false }
                extended = value
                cursor += 4
            }
        } else if stream.hasExtendedTimestamp {
            if continuing {
                // Some senders leave the field out of continuation chunks; it is there only when
                // it repeats the value of the message's first chunk.
                guard let value: UInt32 = buffer.getInteger(at: cursor) else { return false }
                if value == stream.extendedTimestamp { cursor += 4 }
            } else {
                guard let value: UInt32 = buffer.getInteger(at: cursor) else { return false }
                extended = value
                cursor += 4
            }
        }

        if format <= 2 && continuing {
            throw .protocolViolation(
                "a type-\(format) header on chunk stream \(chunkStreamID) interrupts a message with "
                    + "\(stream.length - stream.payload.count) bytes still to come")
        }

        switch format {
        case 0:
            let timestamp = extended ?? timestampField
            stream.timestamp = timestamp
            stream.timestampDelta = timestamp
            stream.length = length
            stream.type = RTMPMessageType(rawValue: typeByte)
            stream.streamID = streamID
            stream.hasExtendedTimestamp = extended != nil
            stream.extendedTimestamp = extended ?? 0
        case 1, 2:
            let delta = extended ?? timestampField
            stream.timestampDelta = delta
            stream.timestamp &+= delta
            if format == 1 {
                stream.length = length
                stream.type = RTMPMessageType(rawValue: typeByte)
            }
            stream.hasExtendedTimestamp = extended != nil
            stream.extendedTimestamp = extended ?? 0
        default:
            if !continuing {
                if let extended { stream.timestampDelta = extended }
                stream.timestamp &+= stream.timestampDelta
            }
        }

        if format <= 1 {
            guard RTMPMessageType.known.contains(stream.type) else {
                throw .protocolViolation(
                    "unknown message type \(stream.type.rawValue) on chunk stream \(chunkStreamID)")
            }
            guard stream.length <= limits.maximumMessageLength else {
                throw .protocolViolation(
                    "a \(stream.type) message of \(stream.length) bytes on chunk stream \(chunkStreamID) exceeds "
                        + "the \(limits.maximumMessageLength)-byte limit")
            }
        }

        buffer.moveReaderIndex(forwardBy: cursor)
        if !continuing { stream.payload.reserveCapacity(min(stream.length, 1 << 20)) }
        if existing == nil {
            streamIndex[chunkStreamID] = index
            streams.append(stream)
        } else {
            streams[index] = stream
        }
        currentChunk = (index, min(chunkSize, stream.length - stream.payload.count))
        return true
    }

    // MARK: Messages

    private mutating func complete(_ index: Int) throws(RTMPError) -> RTMPMessage {
        let stream = streams[index]
        streams[index].payload = []
        bufferedBytes -= stream.payload.count
        let message = RTMPMessage(
            type: stream.type, streamID: stream.streamID, timestamp: RTMPTimestamp(stream.timestamp),
            payload: stream.payload)
        switch message.type {
        case .setChunkSize:
            guard let size = Self.uint32(message.payload) else {
                throw .protocolViolation("Set Chunk Size with a \(message.payload.count)-byte payload")
            }
            guard size & 0x8000_0000 == 0, size >= 1 else {
                throw .protocolViolation("the peer set the chunk size to \(size), outside 1...2^31-1")
            }
            guard Int(size) <= limits.maximumChunkSize else {
                throw .protocolViolation(
                    "the peer set the chunk size to \(size), above the \(limits.maximumChunkSize)-byte limit")
            }
            chunkSize = Int(size)
        case .abort:
            guard let abortedID = Self.uint32(message.payload) else {
                throw .protocolViolation("Abort with a \(message.payload.count)-byte payload")
            }
            if let aborted = streamIndex[abortedID] {
                bufferedBytes -= streams[aborted].payload.count
                streams[aborted].payload = []
            }
        default:
            break
        }
        return message
    }

    private static func uint32(_ payload: [UInt8]) -> UInt32? {
        guard payload.count >= 4 else { return nil }
        return payload[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
