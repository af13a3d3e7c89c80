/// A set of byte offsets kept as sorted, disjoint, coalesced ranges: which bytes of a resource
/// are on disk, which were fetched, which are still missing.
///
/// Named apart from the standard library's `RangeSet`, which is generic over indices and has no
/// notion of gaps within a span. Every operation keeps the invariant that no two stored ranges
/// overlap or touch, so two sets holding the same bytes compare equal.
public struct ByteRangeSet: Hashable, Sendable, CustomStringConvertible {
    /// The ranges, sorted by offset, none empty, none overlapping or adjacent.
    public private(set) var ranges: [ByteRange]

    /// Creates an empty set.
    public init() { ranges = [] }

    /// Creates a set holding the union of `ranges`, in any order, overlapping or not.
    public init(_ ranges: some Sequence<ByteRange>) {
        self.ranges = []
        for range in ranges { insert(range) }
    }

    /// Whether the set holds no bytes.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The total number of bytes in the set.
    public var byteCount: Int64 { ranges.reduce(0) { $0 + $1.count } }

    /// The smallest range that covers the whole set, or `nil` when empty.
    public var span: ByteRange? {
        guard let first = ranges.first, let last = ranges.last else { return nil }
        return ByteRange(first.lowerBound, last.upperBound)
    }

    /// Adds the bytes of `range`, merging it with every stored range it overlaps or touches.
    public mutating func insert(_ range: ByteRange) {
        guard !range.isEmpty else { return }
        // First stored range that ends at or after the new one starts: it may touch it.
        let start = firstIndex { $0.upperBound >= range.lowerBound }
        var end = start
        var lower = range.lowerBound
        var upper = range.upperBound
        while end < ranges.count, ranges[end].lowerBound <= range.upperBound {
            lower = min(lower, ranges[end].lowerBound)
            upper = max(upper, ranges[end].upperBound)
            end += 1
        }
        ranges.replaceSubrange(start..<end, with: CollectionOfOne(ByteRange(lower, upper)))
    }

    /// Removes the bytes of `range`, splitting a stored range that holds it in the middle.
    public mutating func remove(_ range: ByteRange) {
        guard !range.isEmpty else { return }
        let start = firstIndex { $0.upperBound > range.lowerBound }
        var end = start
        var remainder: [ByteRange] = []
        while end < ranges.count, ranges[end].lowerBound < range.upperBound {
            let stored = ranges[end]
            if stored.lowerBound < range.lowerBound { remainder.append(ByteRange(stored.lowerBound, range.lowerBound)) }
            if stored.upperBound > range.upperBound { remainder.append(ByteRange(range.upperBound, stored.upperBound)) }
            end += 1
        }
        ranges.replaceSubrange(start..<end, with: remainder)
    }

    /// Adds every byte of `other`.
    public mutating func formUnion(_ other: ByteRangeSet) {
        for range in other.ranges { insert(range) }
    }

    /// Removes every byte of `other`.
    public mutating func subtract(_ other: ByteRangeSet) {
        for range in other.ranges { remove(range) }
    }

    /// The set with the bytes of `other` added.
    public func union(_ other: ByteRangeSet) -> ByteRangeSet {
        var result = self
        result.formUnion(other)
        return result
    }

    /// The set with the bytes of `other` removed.
    public func subtracting(_ other: ByteRangeSet) -> ByteRangeSet {
        var result = self
        result.subtract(other)
        return result
    }

    /// Whether the byte at `offset` is in the set.
    public func contains(_ offset: Int64) -> Bool {
        let index = firstIndex { $0.upperBound > offset }
        return index < ranges.count && ranges[index].lowerBound <= offset
    }

    /// Whether every byte of `range` is in the set.
    public func contains(_ range: ByteRange) -> Bool {
        guard !range.isEmpty else { return true }
        let index = firstIndex { $0.upperBound > range.lowerBound }
        return index < ranges.count && ranges[index].contains(range)
    }

    /// The parts of `span` that are in the set, in order.
    public func intersection(_ span: ByteRange) -> [ByteRange] {
        guard !span.isEmpty else { return [] }
        var result: [ByteRange] = []
        var index = firstIndex { $0.upperBound > span.lowerBound }
        while index < ranges.count, ranges[index].lowerBound < span.upperBound {
            if let part = ranges[index].intersection(span) { result.append(part) }
            index += 1
        }
        return result
    }

    /// The parts of `span` that are not in the set, in order: what is still missing.
    public func gaps(in span: ByteRange) -> [ByteRange] {
        guard !span.isEmpty else { return [] }
        var result: [ByteRange] = []
        var cursor = span.lowerBound
        for present in intersection(span) {
            if present.lowerBound > cursor { result.append(ByteRange(cursor, present.lowerBound)) }
            cursor = present.upperBound
        }
        if cursor < span.upperBound { result.append(ByteRange(cursor, span.upperBound)) }
        return result
    }

    /// The number of bytes present without a break from `offset` onwards (zero when it is missing).
    public func contiguousCount(from offset: Int64) -> Int64 {
        let index = firstIndex { $0.upperBound > offset }
        guard index < ranges.count, ranges[index].lowerBound <= offset else { return 0 }
        return ranges[index].upperBound - offset
    }

    public var description: String { "[" + ranges.map(\.description).joined(separator: ", ") + "]" }

    /// Binary search: the first index whose range satisfies `predicate`, which must be false for
    /// a prefix of `ranges` and true for the rest (it is, for bounds compared against one offset).
    private func firstIndex(where predicate: (ByteRange) -> Bool) -> Int {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if predicate(ranges[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

extension ByteRangeSet: Codable {
    /// Decodes a list of `[lower, upper]` pairs; overlapping or unsorted input is normalized and
    /// invalid pairs are rejected, since a saved set may come from a damaged file.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(try container.decode([ByteRange].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(ranges)
    }
}
