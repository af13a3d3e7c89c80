/// An attribute the model has no field for, kept as written so that it survives a round trip:
/// vendor attributes, attributes of later protocol versions, and EXT-X-DATERANGE client attributes (`X-…`).
///
/// RFC 8216bis §4.2: an attribute list is a comma-separated list of `AttributeName=AttributeValue` pairs.
public struct Attribute: Hashable, Sendable, Codable {
    /// The attribute name as written (normally `[A-Z0-9-]`).
    public var name: String
    /// The value as written, after variable substitution.
    public var value: AttributeValue

    /// Creates an attribute.
    public init(name: String, value: AttributeValue) {
        self.name = name
        self.value = value
    }
}

/// An attribute value as written: a quoted string (quotes removed) or an unquoted token (RFC 8216bis §4.2).
public enum AttributeValue: Hashable, Sendable, Codable, CustomStringConvertible {
    /// A `quoted-string`, without its quotes.
    case quoted(String)
    /// Any unquoted value: enumerated string, number, hexadecimal sequence, resolution.
    case unquoted(String)

    /// The text without quotes.
    public var text: String {
        switch self {
        case .quoted(let text), .unquoted(let text): text
        }
    }

    /// The value as it appears in an attribute list.
    public var description: String {
        switch self {
        case .quoted(let text): "\"\(text)\""
        case .unquoted(let text): text
        }
    }
}

/// A `decimal-resolution`: width and height in pixels (RFC 8216bis §4.2), such as `1280x720`.
public struct Resolution: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a resolution.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `WIDTHxHEIGHT` (a lower- or upper-case `x`); `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        let pieces =
            parts.count == 2 ? parts : text.split(separator: "X", maxSplits: 1, omittingEmptySubsequences: false)
        guard pieces.count == 2, pieces.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(isASCIIDigit) }),
            let width = Int(pieces[0]), let height = Int(pieces[1])
        else { return nil }
        self.init(width: width, height: height)
    }

    /// The number of pixels, for ordering.
    public var pixelCount: Int { width.multipliedReportingOverflow(by: height).overflow ? .max : width * height }

    /// Orders by pixel count, then width, then height.
    public static func < (lhs: Resolution, rhs: Resolution) -> Bool {
        (lhs.pixelCount, lhs.width, lhs.height) < (rhs.pixelCount, rhs.width, rhs.height)
    }

    /// `WIDTHxHEIGHT`.
    public var description: String { "\(width)x\(height)" }
}

/// A byte range as written in EXT-X-BYTERANGE, EXT-X-MAP or EXT-X-PART (RFC 8216bis §4.4.4.2):
/// `length[@offset]`. Without an offset the range starts where the previous one of the same resource ended.
public struct SegmentByteRange: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The number of bytes.
    public var length: Int64
    /// The offset of the first byte, when written.
    public var offset: Int64?

    /// Creates a byte range.
    public init(length: Int64, offset: Int64? = nil) {
        self.length = length
        self.offset = offset
    }

    /// `length@offset` or `length`.
    public var description: String { offset.map { "\(length)@\($0)" } ?? "\(length)" }
}

func isASCIIDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
