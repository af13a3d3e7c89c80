import StreamKitCore

/// The `Range` request header for bytes (RFC 9110 §14.1.2, §14.2): one or more ranges, each
/// closed (`0-99`), open-ended (`100-`) or a suffix (`-500`, the last 500 bytes).
public struct RangeRequest: Hashable, Sendable, CustomStringConvertible {
    /// One requested range, before the representation's length is known.
    public enum Specifier: Hashable, Sendable {
        /// `first-last`, both inclusive.
        case closed(first: Int64, last: Int64)
        /// `first-`: from `first` to the end.
        case from(first: Int64)
        /// `-length`: the last `length` bytes.
        case suffix(length: Int64)
    }

    /// What the ranges select in a representation of known length.
    public enum Resolution: Hashable, Sendable {
        /// The satisfiable ranges, clipped to the length, in request order (RFC 9110 §14.1.2).
        case satisfiable([ByteRange])
        /// No range overlaps the representation: answer 416 with `Content-Range: bytes */length`.
        case unsatisfiable
    }

    /// At most this many ranges are read from a header; more make it invalid (a server may
    /// ignore such a header, RFC 9110 §14.2, and so avoid the cost of many small ranges).
    public static let maximumSpecifierCount = 64

    /// The requested ranges, in order.
    public let specifiers: [Specifier]

    /// Creates a request for the given ranges.
    public init(_ specifiers: [Specifier]) {
        precondition(!specifiers.isEmpty, "a Range header needs at least one range")
        self.specifiers = specifiers
    }

    /// A request for exactly `range` (which must not be empty).
    public init(_ range: ByteRange) {
        self.init([.closed(first: range.lowerBound, last: range.upperBound - 1)])
    }

    /// Parses a `Range` header value, returning `nil` when it is malformed or not in bytes,
    /// in which case a server ignores it and a client never sent it.
    public init?(headerValue: String) {
        let value = headerValue.trimmingHTTPWhitespace()
        guard value.count > 6, value.prefix(6).lowercased() == "bytes=" else { return nil }
        var specifiers: [Specifier] = []
        for member in value.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false) {
            let text = member.trimmingHTTPWhitespace()
            if text.isEmpty { continue }  // empty list members are allowed (RFC 9110 §5.6.1)
            guard specifiers.count < Self.maximumSpecifierCount, let dash = text.firstIndex(of: "-") else { return nil }
            let firstText = text[..<dash]
            let lastText = text[text.index(after: dash)...]
            if firstText.isEmpty {
                guard let length = Self.digits(lastText) else { return nil }
                specifiers.append(.suffix(length: length))
            } else {
                guard let first = Self.digits(firstText) else { return nil }
                if lastText.isEmpty {
                    specifiers.append(.from(first: first))
                } else {
                    guard let last = Self.digits(lastText), last >= first else { return nil }
                    specifiers.append(.closed(first: first, last: last))
                }
            }
        }
        guard !specifiers.isEmpty else { return nil }
        self.specifiers = specifiers
    }

    /// The header value, such as `bytes=0-99,200-`.
    public var headerValue: String {
        "bytes="
            + specifiers.map { specifier in
                switch specifier {
                case .closed(let first, let last): "\(first)-\(last)"
                case .from(let first): "\(first)-"
                case .suffix(let length): "-\(length)"
                }
            }.joined(separator: ",")
    }

    public var description: String { headerValue }

    /// Resolves the ranges against a representation of `length` bytes.
    public func resolve(length: Int64) -> Resolution {
        var ranges: [ByteRange] = []
        for specifier in specifiers {
            switch specifier {
            case .closed(let first, let last):
                if first < length { ranges.append(ByteRange(first, min(last, length - 1) + 1)) }
            case .from(let first):
                if first < length { ranges.append(ByteRange(first, length)) }
            case .suffix(let suffixLength):
                if suffixLength > 0 && length > 0 { ranges.append(ByteRange(max(0, length - suffixLength), length)) }
            }
        }
        return ranges.isEmpty ? .unsatisfiable : .satisfiable(ranges)
    }

    /// Non-negative decimal digits only, without overflow.
    private static func digits(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}

/// The `Content-Range` response header for bytes (RFC 9110 §14.4): `bytes 0-99/1000`,
/// `bytes 0-99/*` when the length is unknown, or `bytes */1000` in a 416 response.
public struct ContentRange: Hashable, Sendable, CustomStringConvertible {
    /// The bytes the body holds, or `nil` for an unsatisfied range (`bytes */length`).
    public let range: ByteRange?
    /// The length of the whole representation, or `nil` when unknown (`*`).
    public let completeLength: Int64?

    /// A partial body holding `range` of a representation of `completeLength` bytes.
    public init(range: ByteRange, completeLength: Int64?) {
        precondition(!range.isEmpty, "Content-Range cannot describe an empty range")
        self.range = range
        self.completeLength = completeLength
    }

    /// The header of a 416 response for a representation of `completeLength` bytes.
    public static func unsatisfied(completeLength: Int64) -> ContentRange {
        ContentRange(range: nil, length: completeLength)
    }

    private init(range: ByteRange?, length: Int64?) {
        self.range = range
        self.completeLength = length
    }

    /// Parses a `Content-Range` value, returning `nil` when it is malformed or inconsistent
    /// (last before first, or a range reaching past the complete length).
    public init?(headerValue: String) {
        let value = headerValue.trimmingHTTPWhitespace()
        guard value.count > 6, value.prefix(6).lowercased() == "bytes " else { return nil }
        let rest = value.dropFirst(6).trimmingHTTPWhitespace()
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let rangeText = rest[..<slash]
        let lengthText = rest[rest.index(after: slash)...]
        var length: Int64?
        if lengthText != "*" {
            guard let parsed = Self.digits(lengthText) else { return nil }
            length = parsed
        }
        if rangeText == "*" {
            guard let length else { return nil }
            self.init(range: nil, length: length)
            return
        }
        guard let dash = rangeText.firstIndex(of: "-"),
            let first = Self.digits(rangeText[..<dash]),
            let last = Self.digits(rangeText[rangeText.index(after: dash)...]),
            last >= first
        else { return nil }
        if let length, last >= length { return nil }
        self.init(range: ByteRange(first, last + 1), length: length)
    }

    /// The header value.
    public var headerValue: String {
        let lengthText = completeLength.map(String.init) ?? "*"
        guard let range else { return "bytes */\(lengthText)" }
        return "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(lengthText)"
    }

    public var description: String { headerValue }

    private static func digits(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}
