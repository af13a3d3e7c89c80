import StreamKitDASH
import Testing

/// The `sidx` reader: offsets from the box's end plus `first_offset`, both versions, boxes before
/// it stepped over, and what it refuses.
struct SegmentIndexTests {
    /// A `sidx` box: version 0 (32-bit times and offset) or 1 (64-bit); each reference a size and
    /// a duration; `hierarchical` marks the first as a reference to another index.
    static func sidx(
        version: UInt8 = 0, timescale: UInt32 = 1000, earliest: UInt64 = 0, firstOffset: UInt64 = 0,
        references: [(size: UInt32, duration: UInt32)], hierarchical: Bool = false
    ) -> [UInt8] {
        func be(_ value: UInt64, _ bytes: Int) -> [UInt8] {
            (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
        var body: [UInt8] = [version, 0, 0, 0] + be(1, 4) + be(UInt64(timescale), 4)
        body += version == 0 ? be(earliest, 4) + be(firstOffset, 4) : be(earliest, 8) + be(firstOffset, 8)
        body += be(0, 2) + be(UInt64(references.count), 2)
        for (index, reference) in references.enumerated() {
            let flag: UInt64 = hierarchical && index == 0 ? 0x8000_0000 : 0
            body += be(flag | UInt64(reference.size), 4) + be(UInt64(reference.duration), 4) + be(0x9000_0000, 4)
        }
        return be(UInt64(body.count + 8), 4) + Array("sidx".utf8) + body
    }

    @Test func offsetsCountFromTheEndOfTheBoxInTheFile() throws {
        let box = Self.sidx(timescale: 12800, earliest: 100, firstOffset: 10, references: [(500, 25600), (700, 25600)])
        // A styp before the sidx, as in some packagers' index ranges.
        let styp: [UInt8] = [0, 0, 0, 12] + Array("styp".utf8) + [1, 2, 3, 4]
        let index = try SegmentIndex.parse(styp + box, fileOffset: 1000)
        let anchor = Int64(1000 + styp.count + box.count)
        #expect(index.timescale == 12800 && index.earliestPresentationTime == 100)
        #expect(
            index.references.map(\.range) == [
                ByteRangeText(first: anchor + 10, last: anchor + 509),
                ByteRangeText(first: anchor + 510, last: anchor + 1209),
            ])
        #expect(index.references.map(\.time) == [100, 25700])
        #expect(index.references.map(\.duration) == [25600, 25600])

        let wide = try SegmentIndex.parse(
            Self.sidx(version: 1, earliest: 1 << 40, references: [(8, 1)]), fileOffset: 0)
        #expect(wide.earliestPresentationTime == 1 << 40 && wide.references[0].range.first == 52)
    }

    @Test func refusesWhatItCannotFollow() {
        func reason(_ bytes: [UInt8], fileOffset: Int64 = 0, maximum: Int = 2_000_000) -> String? {
            do {
                _ = try SegmentIndex.parse(bytes, fileOffset: fileOffset, maximumReferences: maximum)
                return nil
            } catch { return error.reason }
        }
        let good = Self.sidx(references: [(100, 1), (100, 1)])
        #expect(reason(good) == nil)
        #expect(reason(Self.sidx(references: [(100, 1)], hierarchical: true))?.contains("hierarchical") == true)
        #expect(reason(Array(good.prefix(30)))?.contains("cut short") == true)
        #expect(reason([0, 0, 0, 8] + Array("free".utf8))?.contains("no sidx") == true)
        #expect(reason(Self.sidx(timescale: 0, references: [(1, 1)])) != nil)
        #expect(reason(good, maximum: 1) != nil)
        #expect(reason(Self.sidx(references: [(0, 1)]))?.contains("empty") == true)
        // Offsets past what a file can have: refused, not a trap.
        #expect(reason(Self.sidx(version: 1, firstOffset: UInt64.max - 10, references: [(100, 1)])) != nil)
        #expect(reason(Self.sidx(version: 1, firstOffset: UInt64(Int64.max) - 60, references: [(100, 1)])) != nil)
        #expect(reason(Self.sidx(references: [(1, 1)]), fileOffset: Int64.max - 5) != nil)
        #expect(reason(Array(good.prefix(30)), fileOffset: Int64.max) != nil)
    }
}
