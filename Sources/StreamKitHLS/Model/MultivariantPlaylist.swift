/// A multivariant (master) playlist (RFC 8216bis §4.4.6): the variant streams of a presentation, their
/// alternative renditions, and I-frame playlists listed apart.
public struct MultivariantPlaylist: Hashable, Sendable, Codable {
    /// EXT-X-VERSION, when written.
    public var version: Int?
    /// EXT-X-INDEPENDENT-SEGMENTS.
    public var independentSegments: Bool
    /// EXT-X-START.
    public var start: StartPoint?
    /// EXT-X-DEFINE tags, in order.
    public var definitions: [VariableDefinition]
    /// EXT-X-MEDIA tags: alternative renditions, grouped by `GROUP-ID`.
    public var renditions: [Rendition]
    /// EXT-X-STREAM-INF tags with their URI lines.
    public var variants: [VariantStream]
    /// EXT-X-I-FRAME-STREAM-INF tags: I-frame playlists for trick play, never chosen as a variant.
    public var iFrameVariants: [IFrameVariantStream]
    /// EXT-X-SESSION-DATA tags.
    public var sessionData: [SessionData]
    /// EXT-X-SESSION-KEY tags.
    public var sessionKeys: [EncryptionKey]
    /// EXT-X-CONTENT-STEERING.
    public var contentSteering: ContentSteering?
    /// Unknown tags and comments, each with the element it was written before.
    public var extraLines: [PlacedLine]

    /// Creates a multivariant playlist.
    public init(
        version: Int? = nil, independentSegments: Bool = false, start: StartPoint? = nil,
        definitions: [VariableDefinition] = [], renditions: [Rendition] = [], variants: [VariantStream] = [],
        iFrameVariants: [IFrameVariantStream] = [], sessionData: [SessionData] = [], sessionKeys: [EncryptionKey] = [],
        contentSteering: ContentSteering? = nil, extraLines: [PlacedLine] = []
    ) {
        self.version = version
        self.independentSegments = independentSegments
        self.start = start
        self.definitions = definitions
        self.renditions = renditions
        self.variants = variants
        self.iFrameVariants = iFrameVariants
        self.sessionData = sessionData
        self.sessionKeys = sessionKeys
        self.contentSteering = contentSteering
        self.extraLines = extraLines
    }
}

/// An unknown tag or comment of a multivariant playlist and where it was: before which element.
public struct PlacedLine: Hashable, Sendable, Codable {
    /// The element a line was written before.
    public enum Position: Hashable, Sendable, Codable {
        /// Before ``MultivariantPlaylist/renditions`` at this index.
        case beforeRendition(Int)
        /// Before ``MultivariantPlaylist/variants`` at this index.
        case beforeVariant(Int)
        /// Before ``MultivariantPlaylist/iFrameVariants`` at this index.
        case beforeIFrameVariant(Int)
        /// Before ``MultivariantPlaylist/sessionData`` at this index.
        case beforeSessionData(Int)
        /// Before ``MultivariantPlaylist/sessionKeys`` at this index.
        case beforeSessionKey(Int)
        /// After every element.
        case end

        /// Where the writer puts the element: session data, session keys, renditions, variants, I-frame variants.
        var writingOrder: (Int, Int) {
            switch self {
            case .beforeSessionData(let index): (0, index)
            case .beforeSessionKey(let index): (1, index)
            case .beforeRendition(let index): (2, index)
            case .beforeVariant(let index): (3, index)
            case .beforeIFrameVariant(let index): (4, index)
            case .end: (5, 0)
            }
        }
    }

    /// The line.
    public var line: PlaylistLine
    /// Where it goes.
    public var position: Position

    /// Creates a placed line.
    public init(_ line: PlaylistLine, position: Position) {
        self.line = line
        self.position = position
    }
}

/// The `TYPE` of an EXT-X-MEDIA rendition.
public enum RenditionType: String, Hashable, Sendable, Codable, CaseIterable {
    /// `AUDIO`.
    case audio = "AUDIO"
    /// `VIDEO`.
    case video = "VIDEO"
    /// `SUBTITLES` (WebVTT or IMSC).
    case subtitles = "SUBTITLES"
    /// `CLOSED-CAPTIONS` carried inside the video (CEA-608/708).
    case closedCaptions = "CLOSED-CAPTIONS"
}

/// EXT-X-MEDIA (RFC 8216bis §4.4.6.1): an alternative rendition (audio language, subtitles, camera angle).
public struct Rendition: Hashable, Sendable, Codable {
    /// `TYPE`.
    public var type: RenditionType
    /// `URI` of its media playlist; absent for closed captions and for audio carried in the variant itself.
    public var uri: String?
    /// `GROUP-ID`.
    public var groupID: String
    /// `LANGUAGE` (RFC 5646 tag).
    public var language: String?
    /// `ASSOC-LANGUAGE`.
    public var associatedLanguage: String?
    /// `NAME`: a human-readable description.
    public var name: String
    /// `STABLE-RENDITION-ID`.
    public var stableRenditionID: String?
    /// `DEFAULT=YES`.
    public var isDefault: Bool
    /// `AUTOSELECT=YES`.
    public var autoselect: Bool
    /// `FORCED=YES` (subtitles).
    public var forced: Bool
    /// `INSTREAM-ID` (closed captions: `CC1`…`CC4`, `SERVICE1`…`SERVICE63`).
    public var instreamID: String?
    /// `BIT-DEPTH`.
    public var bitDepth: Int?
    /// `SAMPLE-RATE`.
    public var sampleRate: Int?
    /// `CHARACTERISTICS`: comma-separated Uniform Type Identifiers.
    public var characteristics: String?
    /// `CHANNELS`, such as `2` or `16/JOC`.
    public var channels: String?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates a rendition.
    public init(
        type: RenditionType, uri: String? = nil, groupID: String, language: String? = nil,
        associatedLanguage: String? = nil, name: String, stableRenditionID: String? = nil, isDefault: Bool = false,
        autoselect: Bool = false, forced: Bool = false, instreamID: String? = nil, bitDepth: Int? = nil,
        sampleRate: Int? = nil, characteristics: String? = nil, channels: String? = nil,
        otherAttributes: [Attribute] = []
    ) {
        self.type = type
        self.uri = uri
        self.groupID = groupID
        self.language = language
        self.associatedLanguage = associatedLanguage
        self.name = name
        self.stableRenditionID = stableRenditionID
        self.isDefault = isDefault
        self.autoselect = autoselect
        self.forced = forced
        self.instreamID = instreamID
        self.bitDepth = bitDepth
        self.sampleRate = sampleRate
        self.characteristics = characteristics
        self.channels = channels
        self.otherAttributes = otherAttributes
    }
}

/// The `CLOSED-CAPTIONS` attribute of EXT-X-STREAM-INF: a group, or `NONE`.
public enum ClosedCaptionsReference: Hashable, Sendable {
    /// A quoted `GROUP-ID` of CLOSED-CAPTIONS renditions.
    case group(String)
    /// The unquoted `NONE`: no variant carries closed captions.
    case noneDeclared
}

extension ClosedCaptionsReference: Codable {
    /// Decodes `"NONE"` (no quotes in the playlist) or `{"group": ID}`.
    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self), text == "NONE" {
            self = .noneDeclared
            return
        }
        let container = try decoder.container(keyedBy: GroupKey.self)
        self = .group(try container.decode(String.self, forKey: .group))
    }

    /// Encodes `.noneDeclared` as `"NONE"` and a group as `{"group": ID}`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .noneDeclared:
            var container = encoder.singleValueContainer()
            try container.encode("NONE")
        case .group(let id):
            var container = encoder.container(keyedBy: GroupKey.self)
            try container.encode(id, forKey: .group)
        }
    }

    private enum GroupKey: String, CodingKey { case group }
}

/// EXT-X-STREAM-INF (RFC 8216bis §4.4.6.2) and its URI line: one variant stream.
public struct VariantStream: Hashable, Sendable, Codable {
    /// The URI line: the variant's media playlist, as written.
    public var uri: String
    /// `BANDWIDTH`: peak bits per second.
    public var bandwidth: Int
    /// `AVERAGE-BANDWIDTH`: average bits per second.
    public var averageBandwidth: Int?
    /// `SCORE`: the server's preference (higher is better).
    public var score: Double?
    /// `CODECS` as written: comma-separated RFC 6381 codec strings.
    public var codecs: String?
    /// `SUPPLEMENTAL-CODECS`.
    public var supplementalCodecs: String?
    /// `RESOLUTION`.
    public var resolution: Resolution?
    /// `FRAME-RATE`.
    public var frameRate: Double?
    /// `HDCP-LEVEL` (`TYPE-0`, `TYPE-1`, `NONE`).
    public var hdcpLevel: String?
    /// `ALLOWED-CPC`.
    public var allowedCPC: String?
    /// `VIDEO-RANGE` (`SDR`, `HLG`, `PQ`).
    public var videoRange: String?
    /// `REQ-VIDEO-LAYOUT`.
    public var requiredVideoLayout: String?
    /// `STABLE-VARIANT-ID`.
    public var stableVariantID: String?
    /// `AUDIO`: the GROUP-ID of its audio renditions.
    public var audio: String?
    /// `VIDEO`: the GROUP-ID of its video renditions.
    public var video: String?
    /// `SUBTITLES`: the GROUP-ID of its subtitle renditions.
    public var subtitles: String?
    /// `CLOSED-CAPTIONS`.
    public var closedCaptions: ClosedCaptionsReference?
    /// `PATHWAY-ID` (content steering).
    public var pathwayID: String?
    /// Attributes not listed above, as written (such as the obsolete `PROGRAM-ID`).
    public var otherAttributes: [Attribute]

    /// Creates a variant stream.
    public init(
        uri: String, bandwidth: Int, averageBandwidth: Int? = nil, score: Double? = nil, codecs: String? = nil,
        supplementalCodecs: String? = nil, resolution: Resolution? = nil, frameRate: Double? = nil,
        hdcpLevel: String? = nil, allowedCPC: String? = nil, videoRange: String? = nil,
        requiredVideoLayout: String? = nil, stableVariantID: String? = nil, audio: String? = nil, video: String? = nil,
        subtitles: String? = nil, closedCaptions: ClosedCaptionsReference? = nil, pathwayID: String? = nil,
        otherAttributes: [Attribute] = []
    ) {
        self.uri = uri
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.score = score
        self.codecs = codecs
        self.supplementalCodecs = supplementalCodecs
        self.resolution = resolution
        self.frameRate = frameRate
        self.hdcpLevel = hdcpLevel
        self.allowedCPC = allowedCPC
        self.videoRange = videoRange
        self.requiredVideoLayout = requiredVideoLayout
        self.stableVariantID = stableVariantID
        self.audio = audio
        self.video = video
        self.subtitles = subtitles
        self.closedCaptions = closedCaptions
        self.pathwayID = pathwayID
        self.otherAttributes = otherAttributes
    }

    /// The codec strings of `CODECS`, trimmed (`["avc1.640029", "mp4a.40.2"]`).
    public var codecList: [String] { splitCodecs(codecs) }

    /// The bandwidth used to compare variants: `AVERAGE-BANDWIDTH` when present, else `BANDWIDTH`.
    public var effectiveBandwidth: Int { averageBandwidth ?? bandwidth }
}

/// EXT-X-I-FRAME-STREAM-INF (RFC 8216bis §4.4.6.3): an I-frame playlist for trick play.
public struct IFrameVariantStream: Hashable, Sendable, Codable {
    /// `URI` of the I-frame media playlist, as written.
    public var uri: String
    /// `BANDWIDTH`.
    public var bandwidth: Int
    /// `AVERAGE-BANDWIDTH`.
    public var averageBandwidth: Int?
    /// `SCORE`.
    public var score: Double?
    /// `CODECS` as written.
    public var codecs: String?
    /// `SUPPLEMENTAL-CODECS`.
    public var supplementalCodecs: String?
    /// `RESOLUTION`.
    public var resolution: Resolution?
    /// `HDCP-LEVEL`.
    public var hdcpLevel: String?
    /// `ALLOWED-CPC`.
    public var allowedCPC: String?
    /// `VIDEO-RANGE`.
    public var videoRange: String?
    /// `REQ-VIDEO-LAYOUT`.
    public var requiredVideoLayout: String?
    /// `STABLE-VARIANT-ID`.
    public var stableVariantID: String?
    /// `VIDEO`: the GROUP-ID of its video renditions.
    public var video: String?
    /// `PATHWAY-ID`.
    public var pathwayID: String?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates an I-frame variant stream.
    public init(
        uri: String, bandwidth: Int, averageBandwidth: Int? = nil, score: Double? = nil, codecs: String? = nil,
        supplementalCodecs: String? = nil, resolution: Resolution? = nil, hdcpLevel: String? = nil,
        allowedCPC: String? = nil, videoRange: String? = nil, requiredVideoLayout: String? = nil,
        stableVariantID: String? = nil, video: String? = nil, pathwayID: String? = nil,
        otherAttributes: [Attribute] = []
    ) {
        self.uri = uri
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.score = score
        self.codecs = codecs
        self.supplementalCodecs = supplementalCodecs
        self.resolution = resolution
        self.hdcpLevel = hdcpLevel
        self.allowedCPC = allowedCPC
        self.videoRange = videoRange
        self.requiredVideoLayout = requiredVideoLayout
        self.stableVariantID = stableVariantID
        self.video = video
        self.pathwayID = pathwayID
        self.otherAttributes = otherAttributes
    }

    /// The codec strings of `CODECS`, trimmed.
    public var codecList: [String] { splitCodecs(codecs) }
}

/// EXT-X-SESSION-DATA (RFC 8216bis §4.4.6.4): arbitrary session data.
public struct SessionData: Hashable, Sendable, Codable {
    /// `DATA-ID`, reverse-DNS.
    public var dataID: String
    /// `VALUE`.
    public var value: String?
    /// `URI` of a JSON (or raw) resource, as written.
    public var uri: String?
    /// `FORMAT` (`JSON` or `RAW`).
    public var format: String?
    /// `LANGUAGE`.
    public var language: String?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates session data.
    public init(
        dataID: String, value: String? = nil, uri: String? = nil, format: String? = nil, language: String? = nil,
        otherAttributes: [Attribute] = []
    ) {
        self.dataID = dataID
        self.value = value
        self.uri = uri
        self.format = format
        self.language = language
        self.otherAttributes = otherAttributes
    }
}

/// EXT-X-CONTENT-STEERING (RFC 8216bis §4.4.6.6).
public struct ContentSteering: Hashable, Sendable, Codable {
    /// `SERVER-URI` of the steering manifest, as written.
    public var serverURI: String
    /// `PATHWAY-ID`: the pathway to start with.
    public var pathwayID: String?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates content steering information.
    public init(serverURI: String, pathwayID: String? = nil, otherAttributes: [Attribute] = []) {
        self.serverURI = serverURI
        self.pathwayID = pathwayID
        self.otherAttributes = otherAttributes
    }
}

func splitCodecs(_ codecs: String?) -> [String] {
    guard let codecs else { return [] }
    return codecs.split(separator: ",").map { codec in
        String(codec.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }.filter { !$0.isEmpty }
}
