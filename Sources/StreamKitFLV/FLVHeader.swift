import StreamKitCore

/// The FLV file header (Adobe Flash Video File Format Specification 10.1, §E.2).
public struct FLVHeader: Hashable, Sendable {
    /// The size of the version 1 header, and the data offset it announces.
    public static let size = 9

    /// The file format version; always 1.
    public var version: UInt8
    /// Whether audio tags are present (TypeFlagsAudio).
    public var hasAudio: Bool
    /// Whether video tags are present (TypeFlagsVideo).
    public var hasVideo: Bool
    /// The offset of the first tag's PreviousTagSize0 field; 9 for version 1.
    public var dataOffset: UInt32

    public init(hasAudio: Bool = true, hasVideo: Bool = true, version: UInt8 = 1, dataOffset: UInt32 = 9) {
        self.version = version
        self.hasAudio = hasAudio
        self.hasVideo = hasVideo
        self.dataOffset = dataOffset
    }

    /// Reads a header.
    ///
    /// - Returns: The header, or `nil` when fewer than 9 bytes are readable (the cursor is then unchanged).
    /// - Throws: ``FLVError`` when the signature or data offset is wrong.
    public static func read(from buffer: inout ByteBuffer) throws(FLVError) -> FLVHeader? {
        guard buffer.readableBytes >= size else {
            // A short prefix that is already not "FLV" fails now rather than waiting for more.
            for (index, expected) in [UInt8(ascii: "F"), UInt8(ascii: "L"), UInt8(ascii: "V")].enumerated() {
                if let byte = buffer.getByte(at: index), byte != expected { throw .notFLV() }
            }
            return nil
        }
        guard buffer.getByte(at: 0) == UInt8(ascii: "F"), buffer.getByte(at: 1) == UInt8(ascii: "L"),
            buffer.getByte(at: 2) == UInt8(ascii: "V")
        else { throw .notFLV() }
        let version = buffer.getByte(at: 3)!
        let flags = buffer.getByte(at: 4)!
        let dataOffset: UInt32 = buffer.getInteger(at: 5)!
        guard dataOffset >= UInt32(size), dataOffset <= 1 << 20 else {
            throw .badHeader("data offset \(dataOffset) is not at least 9")
        }
        buffer.moveReaderIndex(forwardBy: size)
        return FLVHeader(
            hasAudio: flags & 0x04 != 0, hasVideo: flags & 0x01 != 0, version: version, dataOffset: dataOffset)
    }

    /// Appends the header (9 bytes).
    public func write(into buffer: inout ByteBuffer) {
        buffer.writeString("FLV")
        buffer.writeInteger(version)
        buffer.writeInteger(UInt8((hasAudio ? 0x04 : 0) | (hasVideo ? 0x01 : 0)))
        buffer.writeInteger(UInt32(Self.size))
    }
}
