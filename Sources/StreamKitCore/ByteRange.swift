/// A half-open span of byte offsets, `lowerBound ..< upperBound`, in a file or an HTTP body.
///
/// Offsets are `Int64` because they are persisted and exchanged on the wire (Content-Range,
/// EXT-X-BYTERANGE) where 32-bit sizes are not enough. A range is never negative; it may be empty.
public struct ByteRange: Hashable, Sendable, CustomStringConvertible {
    /// The first offset in the range.
    public let lowerBound: Int64
    /// The offset just past the last byte of the range.
    public let upperBound: Int64

    /// Creates the range `lowerBound ..< upperBound`.
    ///
    /// - Parameters:
    ///   - lowerBound: The first offset, at least zero.
    ///   - upperBound: The offset past the end, at least `lowerBound`.
    public init(_ lowerBound: Int64, _ upperBound: Int64) {
        precondition(lowerBound >= 0 && lowerBound <= upperBound, "invalid byte range \(lowerBound)..<\(upperBound)")
        self.lowerBound = lowerBound
        self.upperBound = upperBound
    }

    /// Creates the range that starts at `offset` and holds `length` bytes.
    public init(offset: Int64, length: Int64) {
        self.init(offset, offset + length)
    }

    /// Creates a range when the bounds describe one, `nil` otherwise (negative or inverted input).
    public init?(validating lowerBound: Int64, _ upperBound: Int64) {
        guard lowerBound >= 0, lowerBound <= upperBound else { return nil }
        self.init(lowerBound, upperBound)
    }

    /// The number of bytes in the range.
    public var count: Int64 { upperBound - lowerBound }

    /// Whether the range holds no bytes.
    public var isEmpty: Bool { lowerBound == upperBound }

    /// Whether `offset` lies inside the range.
    public func contains(_ offset: Int64) -> Bool { offset >= lowerBound && offset < upperBound }

    /// Whether every byte of `other` lies inside this range (an empty range is contained anywhere).
    public func contains(_ other: ByteRange) -> Bool {
        other.isEmpty || (other.lowerBound >= lowerBound && other.upperBound <= upperBound)
    }

    /// Whether the two ranges share at least one byte.
    public func overlaps(_ other: ByteRange) -> Bool {
        lowerBound < other.upperBound && other.lowerBound < upperBound
    }

    /// The bytes both ranges hold, or `nil` when they share none.
    public func intersection(_ other: ByteRange) -> ByteRange? {
        let lower = max(lowerBound, other.lowerBound)
        let upper = min(upperBound, other.upperBound)
        return lower < upper ? ByteRange(lower, upper) : nil
    }

    /// The value of an HTTP `Range` header asking for exactly these bytes (RFC 9110 §14.1.2).
    ///
    /// The range must not be empty: HTTP cannot ask for zero bytes.
    public var httpRangeHeaderValue: String {
        precondition(!isEmpty, "an HTTP Range cannot be empty")
        return "bytes=\(lowerBound)-\(upperBound - 1)"
    }

    public var description: String { "\(lowerBound)..<\(upperBound)" }
}

extension ByteRange: Codable {
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let lower = try container.decode(Int64.self)
        let upper = try container.decode(Int64.self)
        guard let range = ByteRange(validating: lower, upper) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "invalid byte range \(lower)..<\(upper)"))
        }
        self = range
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(lowerBound)
        try container.encode(upperBound)
    }
}
