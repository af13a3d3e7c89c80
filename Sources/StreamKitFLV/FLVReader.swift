import StreamKitCore

/// Reads an FLV stream incrementally: the header, then tags with the PreviousTagSize fields
/// between them (§E.3). Feed it bytes as they arrive; it returns `nil` when it needs more.
public struct FLVReader: Sendable {
    /// What the reader found next.
    public enum Item: Hashable, Sendable {
        case header(FLVHeader)
        case tag(FLVTag)
    }

    private enum State: Sendable {
        case header
        case skippingToBody(remaining: Int)
        case previousTagSize
        case tag
    }

    private var state = State.header
    /// The stream offset of the next unread byte.
    public private(set) var offset: Int64 = 0
    /// The size of the last tag read, which the PreviousTagSize after it should repeat.
    private var lastTagSize: UInt32 = 0
    /// PreviousTagSize fields that did not match their tag; counted, not fatal, as some writers get them wrong.
    public private(set) var mismatchedPreviousTagSizes = 0

    public init() {}

    /// Reads the next header or tag from `buffer`.
    ///
    /// - Returns: The item, or `nil` when `buffer` holds too few bytes for it (unread bytes stay in `buffer`).
    /// - Throws: ``FLVError`` when the bytes are not FLV.
    public mutating func read(from buffer: inout ByteBuffer) throws(FLVError) -> Item? {
        while true {
            switch state {
            case .header:
                guard let header = try FLVHeader.read(from: &buffer) else { return nil }
                offset += Int64(FLVHeader.size)
                state = .skippingToBody(remaining: Int(header.dataOffset) - FLVHeader.size)
                return .header(header)
            case .skippingToBody(let remaining):
                let skipped = min(remaining, buffer.readableBytes)
                buffer.moveReaderIndex(forwardBy: skipped)
                offset += Int64(skipped)
                if skipped < remaining {
                    state = .skippingToBody(remaining: remaining - skipped)
                    return nil
                }
                state = .previousTagSize
            case .previousTagSize:
                guard let previous: UInt32 = buffer.readInteger() else { return nil }
                if previous != lastTagSize { mismatchedPreviousTagSizes += 1 }
                offset += 4
                state = .tag
            case .tag:
                guard let typeByte = buffer.getByte(at: 0) else { return nil }
                guard typeByte & 0xC0 == 0 else {
                    throw .badTag("reserved bits set in tag type byte 0x\(String(typeByte, radix: 16))", offset: offset)
                }
                guard typeByte & 0x20 == 0 else { throw .encrypted(offset: offset) }
                let type = FLVTagType(rawValue: typeByte & 0x1F)
                guard type == .audio || type == .video || type == .scriptData else {
                    throw .badTag("unknown tag type \(type.rawValue)", offset: offset)
                }
                guard let dataSize = buffer.getUInt24(at: 1) else { return nil }
                guard buffer.readableBytes >= FLVTag.headerSize + Int(dataSize) else { return nil }
                buffer.moveReaderIndex(forwardBy: 4)
                let low = buffer.readUInt24()!
                let high: UInt8 = buffer.readInteger()!
                buffer.moveReaderIndex(forwardBy: 3)  // StreamID, always 0
                let data = buffer.readBytes(length: Int(dataSize))!
                let tag = FLVTag(type: type, timestamp: UInt32(high) << 24 | low, data: data)
                offset += Int64(tag.size)
                lastTagSize = UInt32(tag.size)
                state = .previousTagSize
                return .tag(tag)
            }
        }
    }

    /// Whether the stream may end here: after a tag and its PreviousTagSize, or after the last
    /// tag where a writer left the final PreviousTagSize out.
    public var isAtTagBoundary: Bool {
        switch state {
        case .tag, .previousTagSize: true
        default: false
        }
    }
}
