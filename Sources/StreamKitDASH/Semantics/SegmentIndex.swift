import StreamKitCore

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
        var position = 0
        while bytes.count - position >= 8 {
            let box = try MP4Box.box(at: position, in: bytes, limit: bytes.count) {
                SegmentResolutionError("the index range at byte \(fileOffset) is cut short: \($0)")
            }
            position = box.end
            guard box.type == MP4Box.type("sidx") else { continue }
            var reader = MP4Reader(bytes, box.payload, what: "the sidx box") { SegmentResolutionError($0) }
            let version = try reader.versionAndFlags().version
            _ = try reader.uint32()  // reference_ID
            let timescale = UInt64(try reader.uint32())
            guard timescale > 0 else { throw SegmentResolutionError("the sidx box has a timescale of 0") }
            let earliest = version == 0 ? UInt64(try reader.uint32()) : try reader.uint64()
            let firstOffset = version == 0 ? UInt64(try reader.uint32()) : try reader.uint64()
            try reader.skip(2)  // reserved
            let count = Int(try reader.uint16())
            guard count <= maximumReferences else {
                throw SegmentResolutionError(
                    "the sidx box lists \(count) subsegments, more than \(maximumReferences)", kind: .tooManySegments)
            }
            guard reader.position + count * 12 <= box.end else {
                throw SegmentResolutionError("the sidx box lists \(count) subsegments but is too short for them")
            }
            // Offsets count from the first byte after the box (the anchor point).
            let (anchor, overflow) = UInt64(fileOffset).addingReportingOverflow(UInt64(box.end))
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
                try reader.skip(4)  // SAP fields
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
