/// One ISO base media file format box (ISO/IEC 14496-12 §4.2) inside a byte array: its type and
/// where its header and payload are. Only reads; the bytes stay the caller's. Each reader says
/// what a box that does not fit becomes, in its own error type (`failure`).
public struct MP4Box: Hashable, Sendable {
    /// The four-character type, big-endian (`moov` is 0x6D6F6F76).
    public let type: UInt32
    /// Where the box starts (its size field).
    public let start: Int
    /// Where its payload starts, after the size, type and any 64-bit size.
    public let payloadStart: Int
    /// Where the box ends.
    public let end: Int

    public init(type: UInt32, start: Int, payloadStart: Int, end: Int) {
        self.type = type
        self.start = start
        self.payloadStart = payloadStart
        self.end = end
    }

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

    /// The box that starts at `position`, which must end by `limit`.
    ///
    /// - Throws: `failure`'s error, told why, when fewer than 8 bytes remain, a 64-bit size is
    ///   cut short, or the box's size runs past `limit` or is too small for its own header.
    public static func box<Failure: Error>(
        at position: Int, in bytes: [UInt8], limit: Int, failure: (String) -> Failure
    ) throws(Failure) -> MP4Box {
        guard position >= 0, limit <= bytes.count, limit - position >= 8 else {
            throw failure("\(max(0, limit - position)) stray bytes at \(position)")
        }
        let size32 = readUInt32(bytes, position)
        let type = readUInt32(bytes, position + 4)
        var header = 8
        var size: Int
        switch size32 {
        case 0:
            size = limit - position
        case 1:
            guard limit - position >= 16 else { throw failure("a truncated 64-bit box size at \(position)") }
            let size64 = UInt64(readUInt32(bytes, position + 8)) << 32 | UInt64(readUInt32(bytes, position + 12))
            guard size64 <= UInt64(limit - position) else {
                throw failure("box '\(name(type))' at \(position) runs past its parent")
            }
            size = Int(size64)
            header = 16
        default:
            size = Int(size32)
        }
        guard size >= header, size <= limit - position else {
            throw failure("box '\(name(type))' at \(position) of \(size) bytes does not fit in its parent")
        }
        return MP4Box(type: type, start: position, payloadStart: position + header, end: position + size)
    }

    /// The boxes that fill `range` of `bytes`, in order.
    public static func boxes<Failure: Error>(
        in bytes: [UInt8], _ range: Range<Int>, failure: (String) -> Failure
    ) throws(Failure) -> [MP4Box] {
        var boxes: [MP4Box] = []
        var position = range.lowerBound
        while position < range.upperBound {
            let box = try box(at: position, in: bytes, limit: range.upperBound, failure: failure)
            boxes.append(box)
            position = box.end
        }
        return boxes
    }

    /// Big-endian 32 bits at `offset` (the caller checked the bounds).
    public static func readUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// Big-endian 16 bits at `offset`.
    public static func readUInt16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// Writes `type` over the type field of the box at `start`.
    public static func retype(_ bytes: inout [UInt8], boxAt start: Int, to type: UInt32) {
        for index in 0..<4 { bytes[start + 4 + index] = UInt8(truncatingIfNeeded: type >> (24 - 8 * index)) }
    }
}

/// A cursor over a box's payload that checks every read against the payload's end; a read past
/// it throws `failure`'s error, told what was cut short and where.
public struct MP4Reader<Failure: Error> {
    public let bytes: [UInt8]
    public var position: Int
    public let end: Int
    public let what: String
    private let failure: (String) -> Failure

    public init(_ bytes: [UInt8], _ range: Range<Int>, what: String, failure: @escaping (String) -> Failure) {
        self.bytes = bytes
        position = range.lowerBound
        end = range.upperBound
        self.what = what
        self.failure = failure
    }

    private mutating func need(_ count: Int) throws(Failure) {
        guard count >= 0, end - position >= count else { throw failure("\(what) is truncated at \(position)") }
    }

    public mutating func skip(_ count: Int) throws(Failure) {
        try need(count)
        position += count
    }

    public mutating func uint8() throws(Failure) -> UInt8 {
        try need(1)
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func uint16() throws(Failure) -> UInt16 {
        try need(2)
        defer { position += 2 }
        return MP4Box.readUInt16(bytes, position)
    }

    public mutating func uint32() throws(Failure) -> UInt32 {
        try need(4)
        defer { position += 4 }
        return MP4Box.readUInt32(bytes, position)
    }

    public mutating func uint64() throws(Failure) -> UInt64 {
        UInt64(try uint32()) << 32 | UInt64(try uint32())
    }

    public mutating func bytes(_ count: Int) throws(Failure) -> [UInt8] {
        try need(count)
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// A full box's version and flags.
    public mutating func versionAndFlags() throws(Failure) -> (version: UInt8, flags: UInt32) {
        let word = try uint32()
        return (UInt8(word >> 24), word & 0x00FF_FFFF)
    }
}
