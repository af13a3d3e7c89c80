/// A Segment Index box (`sidx`, ISO/IEC 14496-12 §8.16.3): the byte ranges and durations of the
/// subsegments of a file that a SegmentBase with an `indexRange` describes. Pure: it reads bytes
/// already fetched.
public struct SegmentIndex: Hashable, Sendable {
    /// One subsegment: bytes of the file (both ends included) and its time.
    public struct Reference: Hashable, Sendable {
        public var range: ByteRangeText
        /// In the timescale, from ``SegmentIndex/earliestPresentationTime``.
        public var time: UInt64
        public var duration: UInt64
    }

    public var timescale: UInt64
    public var earliestPresentationTime: UInt64
    public var references: [Reference]

    /// The index read from `bytes`, the file's bytes from offset `fileOffset` (the first byte of
    /// the `indexRange`): the first `sidx` box among the top-level boxes there (others, such as a
    /// `styp`, are stepped over).
    ///
    /// - Throws: ``SegmentResolutionError`` for a missing or truncated box, a reference to another
    ///   index (hierarchical indexes are not followed), a zero timescale, or more than
    ///   `maximumReferences` references.
    public static func parse(
        _ bytes: [UInt8], fileOffset: Int64, maximumReferences: Int = 2_000_000
    ) throws(SegmentResolutionError) -> SegmentIndex {
        var reader = BoxReader(bytes: bytes)
        while reader.remaining >= 8 {
            let boxStart = reader.position
            let size32 = try reader.uint32()
            let type = try reader.uint32()
            var size = UInt64(size32)
            if size32 == 1 { size = try reader.uint64() }
            if size32 == 0 { size = UInt64(bytes.count - boxStart) }
            guard size >= UInt64(reader.position - boxStart), size <= UInt64(bytes.count - boxStart) else {
                throw SegmentResolutionError(
                    "the box at byte \(fileOffset &+ Int64(boxStart)) of the index range is cut short "
                        + "(\(size) bytes, \(bytes.count - boxStart) fetched)")
            }
            let boxEnd = boxStart + Int(size)
            guard type == 0x7369_6478 else {  // "sidx"
                reader.position = boxEnd
                continue
            }
            let version = try reader.uint8()
            reader.position += 3  // flags
            _ = try reader.uint32()  // reference_ID
            let timescale = UInt64(try reader.uint32())
            guard timescale > 0 else { throw SegmentResolutionError("the sidx box has a timescale of 0") }
            let earliest = version == 0 ? UInt64(try reader.uint32()) : try reader.uint64()
            let firstOffset = version == 0 ? UInt64(try reader.uint32()) : try reader.uint64()
            reader.position += 2  // reserved
            let count = Int(try reader.uint16())
            guard count <= maximumReferences else {
                throw SegmentResolutionError(
                    "the sidx box lists \(count) subsegments, more than \(maximumReferences)", kind: .tooManySegments)
            }
            guard reader.position + count * 12 <= boxEnd else {
                throw SegmentResolutionError("the sidx box lists \(count) subsegments but is too short for them")
            }
            // Offsets count from the first byte after the box (the anchor point).
            let (anchor, overflow) = UInt64(fileOffset).addingReportingOverflow(UInt64(boxEnd))
            guard !overflow, case (let start, false) = anchor.addingReportingOverflow(firstOffset) else {
                throw SegmentResolutionError("the sidx box's offsets overflow")
            }
            var offset = start
            var time = earliest
            var references: [Reference] = []
            references.reserveCapacity(count)
            for _ in 0..<count {
                let typeAndSize = try reader.uint32()
                let duration = UInt64(try reader.uint32())
                _ = try reader.uint32()  // SAP fields
                guard typeAndSize & 0x8000_0000 == 0 else {
                    throw SegmentResolutionError("the sidx box refers to another index (hierarchical sidx)")
                }
                let size = UInt64(typeAndSize & 0x7FFF_FFFF)
                guard size > 0 else { throw SegmentResolutionError("the sidx box lists an empty subsegment") }
                let (end, overflow) = offset.addingReportingOverflow(size)
                guard !overflow, end <= UInt64(Int64.max) else {
                    throw SegmentResolutionError("the sidx box's offsets overflow")
                }
                let last = end - 1
                references.append(
                    Reference(
                        range: ByteRangeText(first: Int64(offset), last: Int64(last)), time: time, duration: duration))
                offset = last + 1
                guard case (let next, false) = time.addingReportingOverflow(duration) else {
                    throw SegmentResolutionError("the sidx box's times overflow")
                }
                time = next
            }
            return SegmentIndex(timescale: timescale, earliestPresentationTime: earliest, references: references)
        }
        throw SegmentResolutionError("the index range holds no sidx box")
    }
}

/// Big-endian reads from fetched bytes, each checked against the end.
private struct BoxReader {
    let bytes: [UInt8]
    var position = 0

    var remaining: Int { bytes.count - position }

    mutating func uint8() throws(SegmentResolutionError) -> UInt8 {
        try UInt8(take(1))
    }

    mutating func uint16() throws(SegmentResolutionError) -> UInt16 {
        try UInt16(take(2))
    }

    mutating func uint32() throws(SegmentResolutionError) -> UInt32 {
        try UInt32(take(4))
    }

    mutating func uint64() throws(SegmentResolutionError) -> UInt64 {
        try take(8)
    }

    private mutating func take(_ count: Int) throws(SegmentResolutionError) -> UInt64 {
        guard position >= 0, count <= bytes.count - position else {
            throw SegmentResolutionError("the sidx box is cut short")
        }
        var value: UInt64 = 0
        for byte in bytes[position..<position + count] { value = value << 8 | UInt64(byte) }
        position += count
        return value
    }
}
