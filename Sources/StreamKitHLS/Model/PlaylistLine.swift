/// A line the model does not interpret, kept in place so that it survives a round trip: a comment, or a tag
/// this parser does not know (vendor tags such as SCTE-35 cues and ad markers; RFC 8216bis §4.1 says clients
/// ignore unknown tags, and a writer must keep them).
public struct PlaylistLine: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The line without its line terminator, starting with `#`.
    public var text: String

    /// Creates a line; `text` should start with `#` (the writer adds `# ` to lines that do not).
    public init(_ text: String) { self.text = text }

    /// Whether the line is a tag (`#EXT…`) rather than a comment.
    public var isTag: Bool { text.utf8.starts(with: "#EXT".utf8) }

    /// The tag name (`EXT-X-CUE-OUT` for `#EXT-X-CUE-OUT:15`), or `nil` for a comment.
    public var tagName: String? {
        guard isTag else { return nil }
        let body = text.utf8.dropFirst()
        if let colon = body.firstIndex(of: UInt8(ascii: ":")) { return String(text[body.startIndex..<colon]) }
        return String(text[body.startIndex...])
    }

    /// The text after the tag name's colon, or `nil` when there is none.
    public var tagValue: String? {
        guard isTag, let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return String(text[text.utf8.index(after: colon)...])
    }

    public var description: String { text }
}

/// A variable defined by EXT-X-DEFINE (RFC 8216bis §4.4.2.3) and the value it had while parsing.
public struct VariableDefinition: Hashable, Sendable, Codable {
    /// Where the value came from.
    public enum Source: String, Hashable, Sendable, Codable {
        /// `NAME` and `VALUE` written in the playlist.
        case value
        /// `IMPORT`: taken from the multivariant playlist that referred to this media playlist.
        case imported
        /// `QUERYPARAM`: taken from a query parameter of the playlist's URL.
        case queryParameter
    }

    /// The variable name (`[a-zA-Z0-9_-]+`).
    public var name: String
    /// The value used for substitution.
    public var value: String
    /// How the tag defined it.
    public var source: Source

    /// Creates a definition.
    public init(name: String, value: String, source: Source = .value) {
        self.name = name
        self.value = value
        self.source = source
    }
}

/// EXT-X-START (RFC 8216bis §4.4.2.2): where playback should start.
public struct StartPoint: Hashable, Sendable, Codable {
    /// Seconds from the start of the playlist (from its end when negative): `TIME-OFFSET`.
    public var timeOffset: Double
    /// `PRECISE=YES`: start exactly there rather than at the segment holding it.
    public var isPrecise: Bool
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates a start point.
    public init(timeOffset: Double, isPrecise: Bool = false, otherAttributes: [Attribute] = []) {
        self.timeOffset = timeOffset
        self.isPrecise = isPrecise
        self.otherAttributes = otherAttributes
    }
}
