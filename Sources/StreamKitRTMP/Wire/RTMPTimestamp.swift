/// An RTMP timestamp: milliseconds in 32 bits that wrap around about every 49.7 days
/// (RTMP 1.0 §5.1.1, "Timestamps are ... compared with serial number arithmetic").
///
/// Comparison follows serial number arithmetic (RFC 1982 with SERIAL_BITS = 32): `a < b` when `b`
/// is less than 2^31 ahead of `a`, so a stream that wraps past 2^32 - 1 still counts forward.
public struct RTMPTimestamp: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The milliseconds as carried on the wire.
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ milliseconds: UInt32) { rawValue = milliseconds }

    /// The signed distance from `self` to `other` in milliseconds, in `-2^31 ..< 2^31`.
    public func distance(to other: RTMPTimestamp) -> Int64 {
        Int64(Int32(bitPattern: other.rawValue &- rawValue))
    }

    /// `self` moved by `milliseconds`, wrapping modulo 2^32.
    public func advanced(by milliseconds: Int64) -> RTMPTimestamp {
        RTMPTimestamp(rawValue: rawValue &+ UInt32(truncatingIfNeeded: milliseconds))
    }

    /// Serial-number order: `lhs` is before `rhs` when `rhs` lies less than 2^31 ahead.
    public static func < (lhs: RTMPTimestamp, rhs: RTMPTimestamp) -> Bool {
        lhs.distance(to: rhs) > 0
    }

    public var description: String { "\(rawValue) ms" }
}

/// Turns wrapping 32-bit timestamps into a 64-bit timeline by following each step with serial
/// arithmetic, so recordings longer than 2^32 ms (or starting near the wrap) stay in order.
public struct RTMPTimelineUnwrapper: Hashable, Sendable {
    private var last: RTMPTimestamp?
    private var lastExtended: Int64 = 0

    public init() {}

    /// The 64-bit position of `timestamp` relative to the first one seen (which maps to its own value).
    public mutating func extend(_ timestamp: RTMPTimestamp) -> Int64 {
        guard let last else {
            self.last = timestamp
            lastExtended = Int64(timestamp.rawValue)
            return lastExtended
        }
        lastExtended += last.distance(to: timestamp)
        self.last = timestamp
        return lastExtended
    }
}
