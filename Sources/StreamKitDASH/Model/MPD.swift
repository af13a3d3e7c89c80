/// A Media Presentation Description (ISO/IEC 23009-1 §5.3), as values. Times are seconds
/// (`Double`) where the MPD writes ISO 8601 durations; dates stay as written (`xs:dateTime`
/// text). What the model does not name is kept in `other` (attributes) and `extra` (elements),
/// so that a written MPD (``serialized()``) loses nothing.
public struct MPD: Hashable, Sendable {
    public enum PresentationType: String, Hashable, Sendable {
        case `static`, dynamic
    }

    public var type: PresentationType
    public var profiles: String?
    public var mediaPresentationDuration: Double?
    public var minBufferTime: Double?
    public var minimumUpdatePeriod: Double?
    public var timeShiftBufferDepth: Double?
    public var suggestedPresentationDelay: Double?
    public var maxSegmentDuration: Double?
    public var availabilityStartTime: String?
    public var publishTime: String?
    public var baseURLs: [String]
    public var periods: [Period]
    public var other: [Attribute]
    public var extra: [DASHXML.Element]

    public init(type: PresentationType = .static, periods: [Period] = []) {
        self.type = type
        self.periods = periods
        self.baseURLs = []
        self.other = []
        self.extra = []
    }
}

/// An attribute the model does not name, kept for writing.
public struct Attribute: Hashable, Sendable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A Period: a span of the presentation with its own adaptation sets.
public struct Period: Hashable, Sendable {
    public var id: String?
    public var start: Double?
    public var duration: Double?
    public var other: [Attribute]
    public var baseURLs: [String]
    public var segments: SegmentInformation
    public var adaptationSets: [AdaptationSet]
    public var extra: [DASHXML.Element]

    public init(id: String? = nil, start: Double? = nil, duration: Double? = nil, adaptationSets: [AdaptationSet] = [])
    {
        self.id = id
        self.start = start
        self.duration = duration
        self.other = []
        self.baseURLs = []
        self.segments = SegmentInformation()
        self.adaptationSets = adaptationSets
        self.extra = []
    }
}

/// A scheme and value: ContentProtection, Role, Accessibility, EssentialProperty,
/// SupplementalProperty. The whole element is kept (a `cenc:pssh` child, say) for writing.
public struct Descriptor: Hashable, Sendable {
    public var schemeIdUri: String
    public var value: String?
    public var element: DASHXML.Element

    public init(_ element: DASHXML.Element) {
        self.schemeIdUri = element["schemeIdUri"] ?? ""
        self.value = element["value"]
        self.element = element
    }
}

/// What Representations of one AdaptationSet share.
public struct CommonAttributes: Hashable, Sendable {
    public var mimeType: String?
    public var codecs: String?
    public var width: Int?
    public var height: Int?
    public var frameRate: String?
    public var audioSamplingRate: String?

    public init() {}
}

/// An AdaptationSet: interchangeable Representations of one component.
public struct AdaptationSet: Hashable, Sendable {
    public var id: String?
    public var contentType: String?
    public var lang: String?
    public var common: CommonAttributes
    public var other: [Attribute]
    public var roles: [Descriptor]
    public var accessibility: [Descriptor]
    public var labels: [String]
    public var contentProtection: [Descriptor]
    public var essentialProperties: [Descriptor]
    public var supplementalProperties: [Descriptor]
    public var baseURLs: [String]
    public var segments: SegmentInformation
    public var representations: [Representation]
    public var extra: [DASHXML.Element]

    public init(representations: [Representation] = []) {
        self.common = CommonAttributes()
        self.other = []
        self.roles = []
        self.accessibility = []
        self.labels = []
        self.contentProtection = []
        self.essentialProperties = []
        self.supplementalProperties = []
        self.baseURLs = []
        self.segments = SegmentInformation()
        self.representations = representations
        self.extra = []
    }

    /// `video`, `audio`, `text` or another type: `contentType`, else the first part of the
    /// set's or its first Representation's MIME type (`application/ttml+xml` and `text/vtt`
    /// count as text).
    public var kind: String {
        if let contentType { return contentType }
        let mime = common.mimeType ?? representations.first?.common.mimeType ?? ""
        if mime.hasPrefix("application/ttml") || mime == "application/mp4" && common.codecs?.hasPrefix("stpp") == true {
            return "text"
        }
        return mime.split(separator: "/").first.map(String.init) ?? ""
    }
}

/// A Representation: one encoding of the component.
public struct Representation: Hashable, Sendable {
    public var id: String
    public var bandwidth: Int
    public var common: CommonAttributes
    public var other: [Attribute]
    public var contentProtection: [Descriptor]
    public var baseURLs: [String]
    public var segments: SegmentInformation
    public var extra: [DASHXML.Element]

    public init(id: String, bandwidth: Int) {
        self.id = id
        self.bandwidth = bandwidth
        self.common = CommonAttributes()
        self.other = []
        self.contentProtection = []
        self.baseURLs = []
        self.segments = SegmentInformation()
        self.extra = []
    }
}

/// The segment description at one level (Period, AdaptationSet or Representation); the levels
/// below inherit what they leave out (§5.3.9.1).
public struct SegmentInformation: Hashable, Sendable {
    public var base: SegmentBase?
    public var list: SegmentList?
    public var template: SegmentTemplate?

    public init(base: SegmentBase? = nil, list: SegmentList? = nil, template: SegmentTemplate? = nil) {
        self.base = base
        self.list = list
        self.template = template
    }
}

/// A byte range as the MPD writes it, `first-last` (both included).
public struct ByteRangeText: Hashable, Sendable {
    public var first: Int64
    public var last: Int64

    public init(first: Int64, last: Int64) {
        self.first = first
        self.last = last
    }

    /// Parses `100-199`; `nil` for anything else, and for a last byte of `Int64.max`, whose
    /// range has no length an `Int64` holds.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first >= 0, last >= first,
            last < Int64.max
        else { return nil }
        self.init(first: first, last: last)
    }

    public var text: String { "\(first)-\(last)" }
}

/// An `Initialization` or `RepresentationIndex`: a URL (absent: the Representation's own) and a range.
public struct URLWithRange: Hashable, Sendable {
    public var sourceURL: String?
    public var range: ByteRangeText?

    public init(sourceURL: String? = nil, range: ByteRangeText? = nil) {
        self.sourceURL = sourceURL
        self.range = range
    }
}

/// One `S` of a SegmentTimeline: `t` (start, when given), `d` (duration), `r` (repeats after the
/// first; -1 repeats to the next `S`'s start or the end of the Period).
public struct TimelineEntry: Hashable, Sendable {
    public var t: UInt64?
    public var d: UInt64
    public var r: Int64

    public init(t: UInt64? = nil, d: UInt64, r: Int64 = 0) {
        self.t = t
        self.d = d
        self.r = r
    }
}

/// What SegmentBase, SegmentList and SegmentTemplate share (multiple-segment attributes
/// included); `nil` fields inherit.
public struct SegmentTiming: Hashable, Sendable {
    public var timescale: UInt64?
    public var presentationTimeOffset: UInt64?
    public var duration: UInt64?
    public var startNumber: UInt64?
    public var timeline: [TimelineEntry]?
    public var initialization: URLWithRange?
    /// The element's attributes the model does not name (`availabilityTimeOffset`, say).
    public var other: [Attribute]

    public init() { other = [] }
}

public struct SegmentBase: Hashable, Sendable {
    public var timing: SegmentTiming
    public var indexRange: ByteRangeText?

    public init(timing: SegmentTiming = SegmentTiming(), indexRange: ByteRangeText? = nil) {
        self.timing = timing
        self.indexRange = indexRange
    }
}

public struct SegmentList: Hashable, Sendable {
    public struct SegmentURL: Hashable, Sendable {
        public var media: String?
        public var mediaRange: ByteRangeText?

        public init(media: String? = nil, mediaRange: ByteRangeText? = nil) {
            self.media = media
            self.mediaRange = mediaRange
        }
    }

    public var timing: SegmentTiming
    public var segments: [SegmentURL]

    public init(timing: SegmentTiming = SegmentTiming(), segments: [SegmentURL] = []) {
        self.timing = timing
        self.segments = segments
    }
}

public struct SegmentTemplate: Hashable, Sendable {
    public var timing: SegmentTiming
    public var media: String?
    /// The `initialization` attribute (a template too).
    public var initializationTemplate: String?
    public var index: String?

    public init(timing: SegmentTiming = SegmentTiming(), media: String? = nil, initializationTemplate: String? = nil) {
        self.timing = timing
        self.media = media
        self.initializationTemplate = initializationTemplate
    }
}
