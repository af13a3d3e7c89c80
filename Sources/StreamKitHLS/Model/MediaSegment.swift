/// One media segment of a media playlist: its URI line and the tags written before it
/// (RFC 8216bis §4.4.4 Media Segment tags, §4.4.5 Media Metadata tags).
///
/// Tags that apply until changed (EXT-X-KEY, EXT-X-MAP, EXT-X-BITRATE) are stored on the segment where they
/// were written; ``MediaPlaylist/resolvedSegments(baseURL:)`` works out what is in effect for each segment.
/// The rarely used fields (title, keys, map, date ranges, bitrate, parts, unknown lines) share one heap box, and
/// the byte range is packed, so that a segment takes 72 bytes inline and 100,000 of them stay compact.
public struct MediaSegment: Sendable {
    /// The URI line, after variable substitution (resolve it against the playlist URL).
    public var uri: String
    /// EXTINF duration in seconds.
    public var duration: Double
    /// EXT-X-PROGRAM-DATE-TIME written before this segment.
    public var programDateTime: HLSDateTime?
    // EXT-X-BYTERANGE, packed: `Int64.min` stands for "absent" (lengths and offsets are never negative).
    private var rangeLength: Int64
    private var rangeOffset: Int64
    /// EXT-X-DISCONTINUITY: encoding parameters may change between the previous segment and this one.
    public var isDiscontinuity: Bool
    /// EXT-X-GAP: the segment is missing and must not be loaded.
    public var isGap: Bool
    private var annotationsBox: Box<SegmentAnnotations>?

    /// Creates a segment.
    public init(
        uri: String, duration: Double, title: String = "", byteRange: SegmentByteRange? = nil,
        programDateTime: HLSDateTime? = nil, isDiscontinuity: Bool = false, isGap: Bool = false,
        keys: [EncryptionKey] = [], map: MediaInitialization? = nil, dateRanges: [DateRange] = [], bitrate: Int? = nil,
        parts: [PartialSegment] = [], extraLines: [PlaylistLine] = []
    ) {
        self.init(
            uri: uri, duration: duration, byteRange: byteRange, programDateTime: programDateTime,
            isDiscontinuity: isDiscontinuity, isGap: isGap,
            annotations: SegmentAnnotations(
                title: title, keys: keys, map: map, dateRanges: dateRanges, bitrate: bitrate, parts: parts,
                extraLines: extraLines))
    }

    init(
        uri: String, duration: Double, byteRange: SegmentByteRange?, programDateTime: HLSDateTime?,
        isDiscontinuity: Bool, isGap: Bool, annotations: SegmentAnnotations
    ) {
        self.uri = uri
        self.duration = duration
        self.programDateTime = programDateTime
        rangeLength = byteRange?.length ?? .min
        rangeOffset = byteRange?.offset ?? .min
        self.isDiscontinuity = isDiscontinuity
        self.isGap = isGap
        annotationsBox = annotations.isEmpty ? nil : Box(annotations)
    }

    /// EXT-X-BYTERANGE: the segment is this sub-range of the resource.
    public var byteRange: SegmentByteRange? {
        get {
            rangeLength == .min
                ? nil : SegmentByteRange(length: rangeLength, offset: rangeOffset == .min ? nil : rangeOffset)
        }
        set {
            rangeLength = newValue?.length ?? .min
            rangeOffset = newValue?.offset ?? .min
        }
    }

    /// EXTINF title (the text after the comma), empty when none.
    public var title: String {
        get { annotations.title }
        set { annotations.title = newValue }
    }

    /// EXT-X-KEY tags written before this segment (they apply to it and to later segments until replaced).
    public var keys: [EncryptionKey] {
        get { annotations.keys }
        set { annotations.keys = newValue }
    }

    /// EXT-X-MAP written before this segment (it applies until the next one).
    public var map: MediaInitialization? {
        get { annotations.map }
        set { annotations.map = newValue }
    }

    /// How many of ``keys`` were written before ``map``; `nil` when all were (or there is no map).
    /// A key applies only to the maps written after it (RFC 8216bis §4.4.4.4): with `0`, a map
    /// written before this segment's EXT-X-KEY stays under the keys of the segments before.
    public var keysBeforeMap: Int? {
        get { annotations.keysBeforeMap }
        set { annotations.keysBeforeMap = newValue }
    }

    /// EXT-X-DATERANGE tags written before this segment.
    public var dateRanges: [DateRange] {
        get { annotations.dateRanges }
        set { annotations.dateRanges = newValue }
    }

    /// EXT-X-BITRATE written before this segment, in kilobits per second (applies until the next one).
    public var bitrate: Int? {
        get { annotations.bitrate }
        set { annotations.bitrate = newValue }
    }

    /// EXT-X-PART tags: the partial segments that make up this segment (Low-Latency HLS).
    public var parts: [PartialSegment] {
        get { annotations.parts }
        set { annotations.parts = newValue }
    }

    /// Unknown tags and comments written before this segment's URI, in order.
    public var extraLines: [PlaylistLine] {
        get { annotations.extraLines }
        set { annotations.extraLines = newValue }
    }

    var annotations: SegmentAnnotations {
        get { annotationsBox?.value ?? SegmentAnnotations() }
        set { annotationsBox = newValue.isEmpty ? nil : Box(newValue) }
    }
}

extension MediaSegment: Hashable {
    public static func == (lhs: MediaSegment, rhs: MediaSegment) -> Bool {
        lhs.uri == rhs.uri && lhs.duration == rhs.duration && lhs.rangeLength == rhs.rangeLength
            && lhs.rangeOffset == rhs.rangeOffset && lhs.programDateTime == rhs.programDateTime
            && lhs.isDiscontinuity == rhs.isDiscontinuity && lhs.isGap == rhs.isGap
            && lhs.annotations == rhs.annotations
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(uri)
        hasher.combine(duration)
        hasher.combine(byteRange)
        hasher.combine(programDateTime)
        hasher.combine(isDiscontinuity)
        hasher.combine(isGap)
        hasher.combine(annotations)
    }
}

extension MediaSegment: Codable {
    private enum CodingKeys: String, CodingKey {
        case uri, duration, title, byteRange, programDateTime, discontinuity, gap, keys, map, dateRanges, bitrate
        case parts, extraLines
    }

    /// Decodes a segment written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            uri: try container.decode(String.self, forKey: .uri),
            duration: try container.decode(Double.self, forKey: .duration),
            title: try container.decodeIfPresent(String.self, forKey: .title) ?? "",
            byteRange: try container.decodeIfPresent(SegmentByteRange.self, forKey: .byteRange),
            programDateTime: try container.decodeIfPresent(HLSDateTime.self, forKey: .programDateTime),
            isDiscontinuity: try container.decodeIfPresent(Bool.self, forKey: .discontinuity) ?? false,
            isGap: try container.decodeIfPresent(Bool.self, forKey: .gap) ?? false,
            keys: try container.decodeIfPresent([EncryptionKey].self, forKey: .keys) ?? [],
            map: try container.decodeIfPresent(MediaInitialization.self, forKey: .map),
            dateRanges: try container.decodeIfPresent([DateRange].self, forKey: .dateRanges) ?? [],
            bitrate: try container.decodeIfPresent(Int.self, forKey: .bitrate),
            parts: try container.decodeIfPresent([PartialSegment].self, forKey: .parts) ?? [],
            extraLines: try container.decodeIfPresent([PlaylistLine].self, forKey: .extraLines) ?? [])
    }

    /// Encodes the segment, leaving out empty and default fields.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uri, forKey: .uri)
        try container.encode(duration, forKey: .duration)
        if !title.isEmpty { try container.encode(title, forKey: .title) }
        try container.encodeIfPresent(byteRange, forKey: .byteRange)
        try container.encodeIfPresent(programDateTime, forKey: .programDateTime)
        if isDiscontinuity { try container.encode(true, forKey: .discontinuity) }
        if isGap { try container.encode(true, forKey: .gap) }
        let annotations = annotations
        if !annotations.keys.isEmpty { try container.encode(annotations.keys, forKey: .keys) }
        try container.encodeIfPresent(annotations.map, forKey: .map)
        if !annotations.dateRanges.isEmpty { try container.encode(annotations.dateRanges, forKey: .dateRanges) }
        try container.encodeIfPresent(annotations.bitrate, forKey: .bitrate)
        if !annotations.parts.isEmpty { try container.encode(annotations.parts, forKey: .parts) }
        if !annotations.extraLines.isEmpty { try container.encode(annotations.extraLines, forKey: .extraLines) }
    }
}

/// The segment tags most segments do not have, kept together out of line.
struct SegmentAnnotations: Hashable, Sendable {
    var title = ""
    var keys: [EncryptionKey] = []
    var map: MediaInitialization?
    var keysBeforeMap: Int?
    var dateRanges: [DateRange] = []
    var bitrate: Int?
    var parts: [PartialSegment] = []
    var extraLines: [PlaylistLine] = []

    var isEmpty: Bool {
        title.isEmpty && keys.isEmpty && map == nil && dateRanges.isEmpty && bitrate == nil && parts.isEmpty
            && extraLines.isEmpty
    }
}

/// An immutable heap box: a value type stays a value type when it stores one (a new box replaces the old).
final class Box<Value: Hashable & Sendable>: Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// EXT-X-PART (RFC 8216bis §4.4.4.9): a partial segment (Low-Latency HLS).
public struct PartialSegment: Hashable, Sendable, Codable {
    /// `URI`, as written.
    public var uri: String
    /// `DURATION` in seconds.
    public var duration: Double
    /// `INDEPENDENT=YES`: the part starts with an independent frame.
    public var isIndependent: Bool
    /// `BYTERANGE`: the part is this sub-range of the resource.
    public var byteRange: SegmentByteRange?
    /// `GAP=YES`: the part is not available.
    public var isGap: Bool
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates a partial segment.
    public init(
        uri: String, duration: Double, isIndependent: Bool = false, byteRange: SegmentByteRange? = nil,
        isGap: Bool = false, otherAttributes: [Attribute] = []
    ) {
        self.uri = uri
        self.duration = duration
        self.isIndependent = isIndependent
        self.byteRange = byteRange
        self.isGap = isGap
        self.otherAttributes = otherAttributes
    }
}

/// The tags written after the last complete segment: they belong to the segment the server is still producing
/// (Low-Latency HLS partial segments, date ranges and cues announced ahead of it), and trailing comments.
public struct PendingSegment: Hashable, Sendable, Codable {
    /// EXT-X-DISCONTINUITY.
    public var isDiscontinuity = false
    /// EXT-X-KEY tags.
    public var keys: [EncryptionKey] = []
    /// EXT-X-MAP.
    public var map: MediaInitialization?
    /// How many of ``keys`` were written before ``map``; `nil` when all were.
    public var keysBeforeMap: Int?
    /// EXT-X-PROGRAM-DATE-TIME.
    public var programDateTime: HLSDateTime?
    /// EXT-X-DATERANGE tags.
    public var dateRanges: [DateRange] = []
    /// EXT-X-GAP.
    public var isGap = false
    /// EXT-X-BITRATE.
    public var bitrate: Int?
    /// EXT-X-PART tags published so far for the next segment.
    public var parts: [PartialSegment] = []
    /// Unknown tags and comments after the last segment.
    public var extraLines: [PlaylistLine] = []

    /// Creates an empty pending segment.
    public init() {}

    /// Whether nothing was written after the last segment.
    public var isEmpty: Bool { self == PendingSegment() }
}

extension Box: CustomStringConvertible {
    var description: String { "\(value)" }
}
