/// One ISO base media file format box (ISO/IEC 14496-12 §4.2) inside a byte array: its type and
/// where its header and payload are. Only reads; the bytes stay the caller's.
public struct MP4Box: Hashable, Sendable {
    /// The four-character type, big-endian (`moov` is 0x6D6F6F76).
    public let type: UInt32
    /// Where the box starts (its size field).
    public let start: Int
    /// Where its payload starts, after the size, type and any 64-bit size.
    public let payloadStart: Int
    /// Where the box ends.
    public let end: Int

    /// The payload's range.
    public var payload: Range<Int> { payloadStart..<end }

    /// The type as text.
    public var typeName: String { Self.name(type) }

    /// A type from its four characters.
    public static func type(_ name: StaticString) -> UInt32 {
        precondition(name.utf8CodeUnitCount == 4, "a box type has four characters")
        return name.withUTF8Buffer { bytes in bytes.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    /// Four characters from a type (unprintable bytes as `?`).
    public static func name(_ type: UInt32) -> String {
        String(
            decoding: (0..<4).map { shift -> UInt8 in
                let byte = UInt8(truncatingIfNeeded: type >> (24 - 8 * shift))
                return (0x20..<0x7F).contains(byte) ? byte : UInt8(ascii: "?")
            }, as: UTF8.self)
    }

    /// The boxes that fill `range` of `bytes`, in order.
    ///
    /// - Throws: ``SampleAESError`` `notFragmentedMP4` when a box's size runs past the range or is
    ///   too small for its own header.
    public static func boxes(in bytes: [UInt8], _ range: Range<Int>) throws(SampleAESError) -> [MP4Box] {
        var boxes: [MP4Box] = []
        var position = range.lowerBound
        while position < range.upperBound {
            guard range.upperBound - position >= 8 else {
                throw SampleAESError(.notFragmentedMP4, "\(range.upperBound - position) stray bytes at \(position)")
            }
            let size32 = readUInt32(bytes, position)
            let type = readUInt32(bytes, position + 4)
            var header = 8
            var size: Int
            switch size32 {
            case 0:
                size = range.upperBound - position
            case 1:
                guard range.upperBound - position >= 16 else {
                    throw SampleAESError(.notFragmentedMP4, "a truncated 64-bit box size at \(position)")
                }
                let size64 = UInt64(readUInt32(bytes, position + 8)) << 32 | UInt64(readUInt32(bytes, position + 12))
                guard size64 <= UInt64(range.upperBound - position) else {
                    throw SampleAESError(.notFragmentedMP4, "box '\(name(type))' at \(position) runs past its parent")
                }
                size = Int(size64)
                header = 16
            default:
                size = Int(size32)
            }
            guard size >= header, size <= range.upperBound - position else {
                throw SampleAESError(
                    .notFragmentedMP4, "box '\(name(type))' at \(position) of \(size) bytes does not fit in its parent")
            }
            boxes.append(MP4Box(type: type, start: position, payloadStart: position + header, end: position + size))
            position += size
        }
        return boxes
    }

    /// The first child of `type` among the boxes of `range`.
    public static func first(
        _ type: UInt32, in bytes: [UInt8], _ range: Range<Int>
    ) throws(SampleAESError) -> MP4Box? {
        try boxes(in: bytes, range).first { $0.type == type }
    }

    /// Big-endian 32 bits at `offset` (the caller checked the bounds).
    static func readUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// Big-endian 16 bits at `offset`.
    static func readUInt16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// Writes `type` over the type field of the box at `start`.
    static func retype(_ bytes: inout [UInt8], boxAt start: Int, to type: UInt32) {
        for index in 0..<4 { bytes[start + 4 + index] = UInt8(truncatingIfNeeded: type >> (24 - 8 * index)) }
    }
}

/// A cursor over a box's payload that checks every read against the payload's end.
struct MP4Reader {
    let bytes: [UInt8]
    var position: Int
    let end: Int
    let what: String

    init(_ bytes: [UInt8], _ range: Range<Int>, what: String) {
        self.bytes = bytes
        position = range.lowerBound
        end = range.upperBound
        self.what = what
    }

    private mutating func need(_ count: Int) throws(SampleAESError) {
        guard count >= 0, end - position >= count else {
            throw SampleAESError(.notFragmentedMP4, "\(what) is truncated at \(position)")
        }
    }

    mutating func skip(_ count: Int) throws(SampleAESError) {
        try need(count)
        position += count
    }

    mutating func uint8() throws(SampleAESError) -> UInt8 {
        try need(1)
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint16() throws(SampleAESError) -> UInt16 {
        try need(2)
        defer { position += 2 }
        return MP4Box.readUInt16(bytes, position)
    }

    mutating func uint32() throws(SampleAESError) -> UInt32 {
        try need(4)
        defer { position += 4 }
        return MP4Box.readUInt32(bytes, position)
    }

    mutating func uint64() throws(SampleAESError) -> UInt64 {
        UInt64(try uint32()) << 32 | UInt64(try uint32())
    }

    mutating func bytes(_ count: Int) throws(SampleAESError) -> [UInt8] {
        try need(count)
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// A full box's version and flags.
    mutating func versionAndFlags() throws(SampleAESError) -> (version: UInt8, flags: UInt32) {
        let word = try uint32()
        return (UInt8(word >> 24), word & 0x00FF_FFFF)
    }
}
