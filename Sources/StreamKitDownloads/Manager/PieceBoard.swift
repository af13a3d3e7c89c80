import StreamKitCore

/// Which bytes of a progressive file each range connection is fetching, as a pure value.
///
/// A connection with nothing to do takes the largest range nobody fetches; when there is none it
/// takes the upper half of the largest range another connection still has ahead of it (the other
/// connection stops where the half begins). Starting N connections on one empty file therefore
/// splits it into N nearly equal pieces, and a connection that finishes early keeps helping the
/// slowest. Bytes are *claimed* before they are written and *done* once written, so a half taken
/// never overlaps bytes another connection is writing.
///
/// A connection asks the server for its range a window at a time (``request(_:window:)``), and a
/// half is only ever taken from what its owner has not asked for yet: no byte is on its way to
/// two connections, so none is fetched twice.
public struct PieceBoard: Hashable, Sendable {
    /// The file's length.
    public let length: Int64
    /// Bytes written.
    public private(set) var done: ByteRangeSet
    /// What each connection has ahead of it: from its claimed cursor to its end.
    public private(set) var assigned: [Int: ByteRange] = [:]
    /// A connection takes half of another's range only when that half is at least this long.
    public let minimumSteal: Int64
    /// Where each connection's current request ends: bytes up to there are on their way to it.
    public private(set) var requestedEnd: [Int: Int64] = [:]
    /// Bytes each connection has claimed and is writing, not yet done: nobody else's to take.
    private var writing: [Int: ByteRange] = [:]

    /// Creates a board for a file of `length` bytes of which `done` are in place.
    public init(length: Int64, done: ByteRangeSet, minimumSteal: Int64 = 256 << 10) {
        self.length = length
        self.done = done
        self.minimumSteal = max(1, minimumSteal)
    }

    /// Whether every byte is done.
    public var isComplete: Bool { done.contains(ByteRange(0, length)) }

    /// The bytes nobody has: not done, not being written, not ahead of any connection.
    public var free: ByteRangeSet {
        var result = ByteRangeSet(done.gaps(in: ByteRange(0, length)))
        for range in assigned.values { result.remove(range) }
        for range in writing.values { result.remove(range) }
        return result
    }

    /// Gives `worker` its next range, or `nil` when there is nothing left worth taking.
    public mutating func nextPiece(for worker: Int) -> ByteRange? {
        assigned[worker] = nil
        requestedEnd[worker] = nil
        if let largest = free.ranges.max(by: { $0.count < $1.count }) {
            assigned[worker] = largest
            return largest
        }
        // Where each other range may be split: its middle, or past what its owner has asked for.
        let splits = assigned.compactMap { (owner, range) -> (owner: Int, range: ByteRange, at: Int64)? in
            let at = max(range.lowerBound + range.count / 2, requestedEnd[owner] ?? range.lowerBound)
            return at < range.upperBound ? (owner, range, at) : nil
        }
        // The largest half to take; on a tie, the lowest connection's (a deterministic choice).
        guard
            let victim = splits.max(by: {
                let (a, b) = ($0.range.upperBound - $0.at, $1.range.upperBound - $1.at)
                return a != b ? a < b : $0.owner > $1.owner
            }),
            victim.range.upperBound - victim.at >= minimumSteal
        else { return nil }
        assigned[victim.owner] = ByteRange(victim.range.lowerBound, victim.at)
        let piece = ByteRange(victim.at, victim.range.upperBound)
        assigned[worker] = piece
        return piece
    }

    /// The next request of `worker`: the first `window` bytes of what it has ahead, taking a new
    /// piece when it has none; `nil` when there is nothing left worth taking. Until the request
    /// ends, no other connection takes any of its bytes.
    public mutating func request(_ worker: Int, window: Int64) -> ByteRange? {
        let ahead = assigned[worker].flatMap { $0.isEmpty ? nil : $0 } ?? nextPiece(for: worker)
        guard let ahead else { return nil }
        let range = ByteRange(ahead.lowerBound, min(ahead.upperBound, ahead.lowerBound + max(1, window)))
        requestedEnd[worker] = range.upperBound
        return range
    }

    /// Gives `worker` the range from `offset` to the end of the free range holding it (the first
    /// connection, whose open-ended request started there before the length was known).
    public mutating func assign(_ worker: Int, from offset: Int64, requestedTo end: Int64? = nil) -> ByteRange? {
        guard let range = free.ranges.first(where: { $0.contains(offset) }) else { return nil }
        let piece = ByteRange(offset, range.upperBound)
        assigned[worker] = piece
        requestedEnd[worker] = end.map { min($0, range.upperBound) } ?? range.upperBound
        return piece
    }

    /// Claims the part of `range` that `worker` may write: from its cursor, up to its end (which
    /// may have moved down since it asked). Returns the bytes to write, or `nil` when the worker
    /// has reached its end and must stop.
    public mutating func claim(_ worker: Int, _ range: ByteRange) -> ByteRange? {
        guard let ahead = assigned[worker], range.lowerBound == ahead.lowerBound,
            let part = range.intersection(ahead)
        else { return nil }
        assigned[worker] = ByteRange(part.upperBound, ahead.upperBound)
        writing[worker] = part
        return part
    }

    /// Records bytes as written (a claim's bytes, or bytes found on disk).
    public mutating func markDone(_ range: ByteRange) {
        done.insert(range)
        for (worker, claimed) in writing where claimed == range { writing[worker] = nil }
    }

    /// Whether `worker` has reached its end.
    public func isFinished(_ worker: Int) -> Bool { assigned[worker].map(\.isEmpty) ?? true }

    /// Drops `worker`'s range (it failed or stopped): what it had not written becomes free.
    public mutating func release(_ worker: Int) {
        assigned[worker] = nil
        requestedEnd[worker] = nil
        writing[worker] = nil
    }
}
