import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@Suite struct ByteRangeTests {
    @Test func basics() {
        let range = ByteRange(offset: 100, length: 50)
        #expect(range == ByteRange(100, 150))
        #expect(range.count == 50)
        #expect(range.contains(100) && range.contains(149) && !range.contains(150) && !range.contains(99))
        #expect(range.contains(ByteRange(110, 150)) && !range.contains(ByteRange(110, 151)))
        #expect(range.overlaps(ByteRange(149, 200)) && !range.overlaps(ByteRange(150, 200)))
        #expect(range.intersection(ByteRange(0, 120)) == ByteRange(100, 120))
        #expect(range.intersection(ByteRange(150, 160)) == nil)
        #expect(range.httpRangeHeaderValue == "bytes=100-149")
        #expect(ByteRange(validating: 5, 4) == nil && ByteRange(validating: -1, 4) == nil)
        #expect(ByteRange(7, 7).isEmpty)
    }

    @Test func codableRejectsInvertedRanges() throws {
        let encoded = try JSONEncoder().encode(ByteRange(3, 9))
        #expect(String(decoding: encoded, as: UTF8.self) == "[3,9]")
        #expect(try JSONDecoder().decode(ByteRange.self, from: encoded) == ByteRange(3, 9))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ByteRange.self, from: Data("[9,3]".utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ByteRange.self, from: Data("[-1,3]".utf8)) }
    }
}

@Suite(.background) struct ByteRangeSetTests {
    @Test func insertCoalescesOverlappingAndAdjacentRanges() {
        var set = ByteRangeSet()
        set.insert(ByteRange(10, 20))
        set.insert(ByteRange(30, 40))
        #expect(set.ranges == [ByteRange(10, 20), ByteRange(30, 40)])
        set.insert(ByteRange(20, 30))  // touches both: one range
        #expect(set.ranges == [ByteRange(10, 40)])
        set.insert(ByteRange(0, 5))
        set.insert(ByteRange(3, 12))
        #expect(set.ranges == [ByteRange(0, 40)])
        set.insert(ByteRange(50, 50))  // empty: ignored
        #expect(set.ranges == [ByteRange(0, 40)])
        #expect(set.byteCount == 40)
    }

    @Test func removeSplitsAndTrims() {
        var set = ByteRangeSet([ByteRange(0, 100)])
        set.remove(ByteRange(40, 60))
        #expect(set.ranges == [ByteRange(0, 40), ByteRange(60, 100)])
        set.remove(ByteRange(30, 70))
        #expect(set.ranges == [ByteRange(0, 30), ByteRange(70, 100)])
        set.remove(ByteRange(0, 1000))
        #expect(set.isEmpty)
    }

    @Test func gapsWithinASpan() {
        let set = ByteRangeSet([ByteRange(10, 20), ByteRange(30, 40)])
        #expect(set.gaps(in: ByteRange(0, 50)) == [ByteRange(0, 10), ByteRange(20, 30), ByteRange(40, 50)])
        #expect(set.gaps(in: ByteRange(12, 35)) == [ByteRange(20, 30)])
        #expect(set.gaps(in: ByteRange(10, 20)) == [])
        #expect(set.intersection(ByteRange(15, 35)) == [ByteRange(15, 20), ByteRange(30, 35)])
        #expect(set.contiguousCount(from: 12) == 8)
        #expect(set.contiguousCount(from: 25) == 0)
        #expect(set.span == ByteRange(10, 40))
    }

    @Test func setAlgebra() {
        let a = ByteRangeSet([ByteRange(0, 10), ByteRange(20, 30)])
        let b = ByteRangeSet([ByteRange(5, 25)])
        #expect(a.union(b).ranges == [ByteRange(0, 30)])
        #expect(a.subtracting(b).ranges == [ByteRange(0, 5), ByteRange(25, 30)])
    }

    @Test func codableRoundTripNormalizesInput() throws {
        let set = ByteRangeSet([ByteRange(0, 10), ByteRange(20, 30)])
        let data = try JSONEncoder().encode(set)
        #expect(String(decoding: data, as: UTF8.self) == "[[0,10],[20,30]]")
        #expect(try JSONDecoder().decode(ByteRangeSet.self, from: data) == set)
        // Unsorted, overlapping input from a damaged file is normalized; inverted pairs are rejected.
        let messy = try JSONDecoder().decode(ByteRangeSet.self, from: Data("[[20,30],[0,10],[5,21]]".utf8))
        #expect(messy.ranges == [ByteRange(0, 30)])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ByteRangeSet.self, from: Data("[[5,1]]".utf8)) }
    }

    /// Random inserts and removals agree with a byte-per-byte model, and the invariant holds.
    @Test(arguments: [1, 2, 3, 4, 5])
    func agreesWithABitmapModel(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var set = ByteRangeSet()
        var model = [Bool](repeating: false, count: 300)
        for _ in 0..<2_000 {
            let lower = Int64.random(in: 0..<300, using: &generator)
            let upper = Int64.random(in: lower...min(300, lower + 40), using: &generator)
            let range = ByteRange(lower, upper)
            if Bool.random(using: &generator) {
                set.insert(range)
                for offset in lower..<upper { model[Int(offset)] = true }
            } else {
                set.remove(range)
                for offset in lower..<upper { model[Int(offset)] = false }
            }
            for (offset, present) in model.enumerated() where set.contains(Int64(offset)) != present {
                Issue.record("offset \(offset) disagrees after \(range)")
                return
            }
            for (left, right) in zip(set.ranges, set.ranges.dropFirst()) where left.upperBound >= right.lowerBound {
                Issue.record("ranges \(left) and \(right) are not coalesced")
                return
            }
            let probe = ByteRange(Int64.random(in: 0..<300, using: &generator), 300)
            let gapBytes = set.gaps(in: probe).reduce(0) { $0 + $1.count }
            let modelGaps = (probe.lowerBound..<probe.upperBound).filter { !model[Int($0)] }.count
            #expect(gapBytes == Int64(modelGaps))
        }
        #expect(set.byteCount == Int64(model.filter { $0 }.count))
    }
}
