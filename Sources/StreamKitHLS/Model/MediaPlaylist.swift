/// A media playlist (RFC 8216bis §4.4.3, §4.4.4): the segments of one rendition or variant.
///
/// Values are stored as written (after variable substitution). What is in effect for each segment — its
/// key, map, absolute byte range, media sequence number, discontinuity sequence number, program date-time
/// and IV — is worked out by ``resolvedSegments(baseURL:)``.
public struct MediaPlaylist: Hashable, Sendable, Codable {
    /// EXT-X-VERSION, when written (absent means 1).
    public var version: Int?
    /// EXT-X-TARGETDURATION in seconds (required; `nil` only when a lenient parse tolerated its absence).
    public var targetDuration: Int?
    /// EXT-X-MEDIA-SEQUENCE: the media sequence number of the first segment listed (or skipped); 0 when absent.
    public var mediaSequence: UInt64
    /// EXT-X-DISCONTINUITY-SEQUENCE: the discontinuity sequence number of the first segment; 0 when absent.
    public var discontinuitySequence: UInt64
    /// EXT-X-PLAYLIST-TYPE.
    public var playlistType: PlaylistType?
    /// EXT-X-I-FRAMES-ONLY: every segment is one I-frame.
    public var iFramesOnly: Bool
    /// EXT-X-INDEPENDENT-SEGMENTS.
    public var independentSegments: Bool
    /// EXT-X-START.
    public var start: StartPoint?
    /// EXT-X-DEFINE tags, in order.
    public var definitions: [VariableDefinition]
    /// EXT-X-PART-INF (Low-Latency HLS).
    public var partInformation: PartInformation?
    /// EXT-X-SERVER-CONTROL (Low-Latency HLS and delta updates).
    public var serverControl: ServerControl?
    /// EXT-X-SKIP: segments left out of a delta update.
    public var skip: SkipInformation?
    /// Unknown tags and comments before the first segment's tags.
    public var headerLines: [PlaylistLine]
    /// The segments, in order.
    public var segments: [MediaSegment]
    /// Tags after the last segment: the segment being produced, and trailing lines.
    public var pendingSegment: PendingSegment
    /// EXT-X-ENDLIST: no more segments will be added.
    public var hasEndList: Bool
    /// EXT-X-PRELOAD-HINT tags.
    public var preloadHints: [PreloadHint]
    /// EXT-X-RENDITION-REPORT tags.
    public var renditionReports: [RenditionReport]

    /// Creates a media playlist.
    public init(
        version: Int? = nil, targetDuration: Int? = nil, mediaSequence: UInt64 = 0, discontinuitySequence: UInt64 = 0,
        playlistType: PlaylistType? = nil, iFramesOnly: Bool = false, independentSegments: Bool = false,
        start: StartPoint? = nil, definitions: [VariableDefinition] = [], partInformation: PartInformation? = nil,
        serverControl: ServerControl? = nil, skip: SkipInformation? = nil, headerLines: [PlaylistLine] = [],
        segments: [MediaSegment] = [], pendingSegment: PendingSegment = PendingSegment(), hasEndList: Bool = false,
        preloadHints: [PreloadHint] = [], renditionReports: [RenditionReport] = []
    ) {
        self.version = version
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.playlistType = playlistType
        self.iFramesOnly = iFramesOnly
        self.independentSegments = independentSegments
        self.start = start
        self.definitions = definitions
        self.partInformation = partInformation
        self.serverControl = serverControl
        self.skip = skip
        self.headerLines = headerLines
        self.segments = segments
        self.pendingSegment = pendingSegment
        self.hasEndList = hasEndList
        self.preloadHints = preloadHints
        self.renditionReports = renditionReports
    }

    /// The sum of the segment durations, in seconds.
    public var totalDuration: Double { segments.reduce(0) { $0 + $1.duration } }

    /// The media sequence number of the first segment listed: EXT-X-MEDIA-SEQUENCE plus skipped segments.
    public var firstListedMediaSequence: UInt64 { mediaSequence &+ (skip?.skippedSegments ?? 0) }

    /// Whether the server may still add segments (no EXT-X-ENDLIST and not a VOD playlist).
    public var isLive: Bool { !hasEndList && playlistType != .vod }
}

/// EXT-X-PLAYLIST-TYPE (RFC 8216bis §4.4.3.5).
public enum PlaylistType: String, Hashable, Sendable, Codable, CaseIterable {
    /// `EVENT`: segments are only added at the end.
    case event = "EVENT"
    /// `VOD`: the playlist never changes.
    case vod = "VOD"
}

/// EXT-X-PART-INF (RFC 8216bis §4.4.3.7).
public struct PartInformation: Hashable, Sendable, Codable {
    /// `PART-TARGET`: the target duration of partial segments, in seconds.
    public var partTarget: Double
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates part information.
    public init(partTarget: Double, otherAttributes: [Attribute] = []) {
        self.partTarget = partTarget
        self.otherAttributes = otherAttributes
    }
}

/// EXT-X-SERVER-CONTROL (RFC 8216bis §4.4.3.8): what the server supports for playlist reloads.
public struct ServerControl: Hashable, Sendable, Codable {
    /// `CAN-SKIP-UNTIL`: the skip boundary in seconds for delta updates.
    public var canSkipUntil: Double?
    /// `CAN-SKIP-DATERANGES=YES`.
    public var canSkipDateRanges: Bool
    /// `HOLD-BACK` in seconds.
    public var holdBack: Double?
    /// `PART-HOLD-BACK` in seconds.
    public var partHoldBack: Double?
    /// `CAN-BLOCK-RELOAD=YES`.
    public var canBlockReload: Bool
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates server control information.
    public init(
        canSkipUntil: Double? = nil, canSkipDateRanges: Bool = false, holdBack: Double? = nil,
        partHoldBack: Double? = nil, canBlockReload: Bool = false, otherAttributes: [Attribute] = []
    ) {
        self.canSkipUntil = canSkipUntil
        self.canSkipDateRanges = canSkipDateRanges
        self.holdBack = holdBack
        self.partHoldBack = partHoldBack
        self.canBlockReload = canBlockReload
        self.otherAttributes = otherAttributes
    }
}

/// EXT-X-SKIP (RFC 8216bis §4.4.5.2): segments a delta update leaves out.
public struct SkipInformation: Hashable, Sendable, Codable {
    /// `SKIPPED-SEGMENTS`.
    public var skippedSegments: UInt64
    /// `RECENTLY-REMOVED-DATERANGES`: IDs of removed date ranges (tab-separated in the playlist).
    public var recentlyRemovedDateRanges: [String]?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates skip information.
    public init(skippedSegments: UInt64, recentlyRemovedDateRanges: [String]? = nil, otherAttributes: [Attribute] = [])
    {
        self.skippedSegments = skippedSegments
        self.recentlyRemovedDateRanges = recentlyRemovedDateRanges
        self.otherAttributes = otherAttributes
    }
}

/// The `TYPE` of EXT-X-PRELOAD-HINT; an open set, unknown types are kept as written.
public struct PreloadHintType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The value as written.
    public let rawValue: String
    /// Creates a type from its playlist spelling.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `PART`: a partial segment.
    public static let part = PreloadHintType(rawValue: "PART")
    /// `MAP`: a media initialization section.
    public static let map = PreloadHintType(rawValue: "MAP")
    public var description: String { rawValue }
}

/// EXT-X-PRELOAD-HINT (RFC 8216bis §4.4.5.3): a resource the client may request before it is listed.
public struct PreloadHint: Hashable, Sendable, Codable {
    /// `TYPE`.
    public var type: PreloadHintType
    /// `URI`, as written.
    public var uri: String
    /// `BYTERANGE-START`.
    public var byteRangeStart: Int64?
    /// `BYTERANGE-LENGTH`.
    public var byteRangeLength: Int64?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates a preload hint.
    public init(
        type: PreloadHintType, uri: String, byteRangeStart: Int64? = nil, byteRangeLength: Int64? = nil,
        otherAttributes: [Attribute] = []
    ) {
        self.type = type
        self.uri = uri
        self.byteRangeStart = byteRangeStart
        self.byteRangeLength = byteRangeLength
        self.otherAttributes = otherAttributes
    }
}

/// EXT-X-RENDITION-REPORT (RFC 8216bis §4.4.5.4): the latest segment and part of another rendition.
public struct RenditionReport: Hashable, Sendable, Codable {
    /// `URI` of the other rendition's media playlist, as written.
    public var uri: String
    /// `LAST-MSN`.
    public var lastMediaSequence: UInt64?
    /// `LAST-PART`.
    public var lastPart: UInt64?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates a rendition report.
    public init(
        uri: String, lastMediaSequence: UInt64? = nil, lastPart: UInt64? = nil, otherAttributes: [Attribute] = []
    ) {
        self.uri = uri
        self.lastMediaSequence = lastMediaSequence
        self.lastPart = lastPart
        self.otherAttributes = otherAttributes
    }
}
