// The attributes each tag defines (RFC 8216bis §4.4), in the order the writer puts them.
// Raw values index the table, so the cases and names must stay in the same order.

enum KeyAttribute: Int, AttributeKey {
    case method, uri, iv, keyFormat, keyFormatVersions
    static let table = AttributeTable(["METHOD", "URI", "IV", "KEYFORMAT", "KEYFORMATVERSIONS"])
}

enum MapAttribute: Int, AttributeKey {
    case uri, byteRange
    static let table = AttributeTable(["URI", "BYTERANGE"])
}

enum PartAttribute: Int, AttributeKey {
    case uri, duration, independent, byteRange, gap
    static let table = AttributeTable(["URI", "DURATION", "INDEPENDENT", "BYTERANGE", "GAP"])
}

enum PartInformationAttribute: Int, AttributeKey {
    case partTarget
    static let table = AttributeTable(["PART-TARGET"])
}

enum ServerControlAttribute: Int, AttributeKey {
    case canSkipUntil, canSkipDateRanges, holdBack, partHoldBack, canBlockReload
    static let table = AttributeTable([
        "CAN-SKIP-UNTIL", "CAN-SKIP-DATERANGES", "HOLD-BACK", "PART-HOLD-BACK", "CAN-BLOCK-RELOAD",
    ])
}

enum DateRangeAttribute: Int, AttributeKey {
    case id, classValue, startDate, cue, endDate, duration, plannedDuration, endOnNext, scte35Command, scte35Out
    case scte35In
    static let table = AttributeTable([
        "ID", "CLASS", "START-DATE", "CUE", "END-DATE", "DURATION", "PLANNED-DURATION", "END-ON-NEXT", "SCTE35-CMD",
        "SCTE35-OUT", "SCTE35-IN",
    ])
}

enum SkipAttribute: Int, AttributeKey {
    case skippedSegments, recentlyRemovedDateRanges
    static let table = AttributeTable(["SKIPPED-SEGMENTS", "RECENTLY-REMOVED-DATERANGES"])
}

enum PreloadHintAttribute: Int, AttributeKey {
    case type, uri, byteRangeStart, byteRangeLength
    static let table = AttributeTable(["TYPE", "URI", "BYTERANGE-START", "BYTERANGE-LENGTH"])
}

enum RenditionReportAttribute: Int, AttributeKey {
    case uri, lastMediaSequence, lastPart
    static let table = AttributeTable(["URI", "LAST-MSN", "LAST-PART"])
}

enum StartAttribute: Int, AttributeKey {
    case timeOffset, precise
    static let table = AttributeTable(["TIME-OFFSET", "PRECISE"])
}

enum DefineAttribute: Int, AttributeKey {
    case name, value, importName, queryParameter
    static let table = AttributeTable(["NAME", "VALUE", "IMPORT", "QUERYPARAM"])
}

enum MediaAttribute: Int, AttributeKey {
    case type, uri, groupID, language, associatedLanguage, name, stableRenditionID, isDefault, autoselect, forced
    case instreamID, bitDepth, sampleRate, characteristics, channels
    static let table = AttributeTable([
        "TYPE", "URI", "GROUP-ID", "LANGUAGE", "ASSOC-LANGUAGE", "NAME", "STABLE-RENDITION-ID", "DEFAULT", "AUTOSELECT",
        "FORCED", "INSTREAM-ID", "BIT-DEPTH", "SAMPLE-RATE", "CHARACTERISTICS", "CHANNELS",
    ])
}

/// The attributes of EXT-X-STREAM-INF and EXT-X-I-FRAME-STREAM-INF. The I-frame tag has a URI attribute where the
/// variant tag has a URI line, and no FRAME-RATE, AUDIO, SUBTITLES or CLOSED-CAPTIONS (RFC 8216bis §4.4.6.3).
enum VariantAttribute: Int, AttributeKey {
    case uri, bandwidth, averageBandwidth, score, codecs, supplementalCodecs, resolution, frameRate, hdcpLevel
    case allowedCPC, videoRange, requiredVideoLayout, stableVariantID, audio, video, subtitles, closedCaptions
    case pathwayID
    private static let names = [
        "URI", "BANDWIDTH", "AVERAGE-BANDWIDTH", "SCORE", "CODECS", "SUPPLEMENTAL-CODECS", "RESOLUTION", "FRAME-RATE",
        "HDCP-LEVEL", "ALLOWED-CPC", "VIDEO-RANGE", "REQ-VIDEO-LAYOUT", "STABLE-VARIANT-ID", "AUDIO", "VIDEO",
        "SUBTITLES", "CLOSED-CAPTIONS", "PATHWAY-ID",
    ]
    /// EXT-X-STREAM-INF.
    static let table = AttributeTable(names, leavingOut: ["URI"])
    /// EXT-X-I-FRAME-STREAM-INF.
    static let iFrameTable = AttributeTable(names, leavingOut: ["FRAME-RATE", "AUDIO", "SUBTITLES", "CLOSED-CAPTIONS"])
}

enum SessionDataAttribute: Int, AttributeKey {
    case dataID, value, uri, format, language
    static let table = AttributeTable(["DATA-ID", "VALUE", "URI", "FORMAT", "LANGUAGE"])
}

enum ContentSteeringAttribute: Int, AttributeKey {
    case serverURI, pathwayID
    static let table = AttributeTable(["SERVER-URI", "PATHWAY-ID"])
}
