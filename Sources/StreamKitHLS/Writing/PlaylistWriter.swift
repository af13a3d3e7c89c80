import StreamKitCore

/// Writes playlists in a canonical form: tags in a fixed order, attributes in the order RFC 8216bis lists
/// them (then unknown ones as written), numbers in their shortest exact form, unknown tags and comments in
/// place. Parsing the output gives back an equal model.
///
/// Text the format cannot carry is dropped: line breaks anywhere, double quotes inside quoted strings, and
/// commas inside unquoted values (a model from the parser never holds them).
struct PlaylistWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 4_096) { bytes.reserveCapacity(capacity) }

    // MARK: Playlists

    mutating func write(_ playlist: MediaPlaylist) {
        writeHeader(playlist)
        for (index, segment) in playlist.segments.enumerated() { write(segment, isFirst: index == 0) }
        writeEnd(playlist)
    }

    /// The lines before the first segment.
    mutating func writeHeader(_ playlist: MediaPlaylist) {
        line("#EXTM3U")
        if let version = playlist.version { tag("#EXT-X-VERSION:", int: version) }
        if let target = playlist.targetDuration { tag("#EXT-X-TARGETDURATION:", int: target) }
        append("#EXT-X-MEDIA-SEQUENCE:")
        append(decimal: playlist.mediaSequence)
        newline()
        if playlist.discontinuitySequence != 0 {
            append("#EXT-X-DISCONTINUITY-SEQUENCE:")
            append(decimal: playlist.discontinuitySequence)
            newline()
        }
        if let type = playlist.playlistType { line("#EXT-X-PLAYLIST-TYPE:" + type.rawValue) }
        if playlist.iFramesOnly { line("#EXT-X-I-FRAMES-ONLY") }
        writeCommonHeader(playlist.independentSegments, playlist.start, playlist.definitions)
        if let control = playlist.serverControl {
            var list = AttributeListWriter()
            list.float("CAN-SKIP-UNTIL", control.canSkipUntil)
            list.yes("CAN-SKIP-DATERANGES", control.canSkipDateRanges)
            list.float("HOLD-BACK", control.holdBack)
            list.float("PART-HOLD-BACK", control.partHoldBack)
            list.yes("CAN-BLOCK-RELOAD", control.canBlockReload)
            list.others(control.otherAttributes)
            tag("#EXT-X-SERVER-CONTROL:", list)
        }
        if let information = playlist.partInformation {
            var list = AttributeListWriter()
            list.float("PART-TARGET", information.partTarget)
            list.others(information.otherAttributes)
            tag("#EXT-X-PART-INF:", list)
        }
        for extra in playlist.headerLines { write(extra) }
        if let skip = playlist.skip {
            var list = AttributeListWriter()
            list.integer("SKIPPED-SEGMENTS", skip.skippedSegments)
            list.quoted("RECENTLY-REMOVED-DATERANGES", skip.recentlyRemovedDateRanges?.joined(separator: "\t"))
            list.others(skip.otherAttributes)
            tag("#EXT-X-SKIP:", list)
        }
    }

    /// The lines after the last segment.
    mutating func writeEnd(_ playlist: MediaPlaylist) {
        // Unknown lines after the pending tags: before them (and before any segment) they would read as header lines.
        let pending = playlist.pendingSegment
        writeSegmentTags(
            discontinuity: pending.isDiscontinuity, keys: pending.keys, map: pending.map,
            keysBeforeMap: pending.keysBeforeMap, programDateTime: pending.programDateTime,
            dateRanges: pending.dateRanges, bitrate: pending.bitrate,
            gap: pending.isGap, parts: pending.parts)
        for extra in pending.extraLines { write(extra) }
        if playlist.hasEndList { line("#EXT-X-ENDLIST") }
        for hint in playlist.preloadHints {
            var list = AttributeListWriter()
            list.unquoted("TYPE", hint.type.rawValue)
            list.quoted("URI", hint.uri)
            list.integer("BYTERANGE-START", hint.byteRangeStart)
            list.integer("BYTERANGE-LENGTH", hint.byteRangeLength)
            list.others(hint.otherAttributes)
            tag("#EXT-X-PRELOAD-HINT:", list)
        }
        for report in playlist.renditionReports {
            var list = AttributeListWriter()
            list.quoted("URI", report.uri)
            list.integer("LAST-MSN", report.lastMediaSequence)
            list.integer("LAST-PART", report.lastPart)
            list.others(report.otherAttributes)
            tag("#EXT-X-RENDITION-REPORT:", list)
        }
    }

    mutating func write(_ playlist: MultivariantPlaylist) {
        line("#EXTM3U")
        if let version = playlist.version { tag("#EXT-X-VERSION:", int: version) }
        writeCommonHeader(playlist.independentSegments, playlist.start, playlist.definitions)
        var placed: [PlacedLine.Position: [PlaylistLine]] = [:]
        var atEnd: [PlaylistLine] = []
        for extra in playlist.extraLines {
            let valid =
                switch extra.position {
                case .beforeRendition(let index): playlist.renditions.indices.contains(index)
                case .beforeVariant(let index): playlist.variants.indices.contains(index)
                case .beforeIFrameVariant(let index): playlist.iFrameVariants.indices.contains(index)
                case .beforeSessionData(let index): playlist.sessionData.indices.contains(index)
                case .beforeSessionKey(let index): playlist.sessionKeys.indices.contains(index)
                case .end: false
                }
            if valid { placed[extra.position, default: []].append(extra.line) } else { atEnd.append(extra.line) }
        }
        func writePlaced(_ position: PlacedLine.Position, _ writer: inout PlaylistWriter) {
            for extra in placed[position] ?? [] { writer.write(extra) }
        }
        if let steering = playlist.contentSteering {
            var list = AttributeListWriter()
            list.quoted("SERVER-URI", steering.serverURI)
            list.quoted("PATHWAY-ID", steering.pathwayID)
            list.others(steering.otherAttributes)
            tag("#EXT-X-CONTENT-STEERING:", list)
        }
        for (index, data) in playlist.sessionData.enumerated() {
            writePlaced(.beforeSessionData(index), &self)
            var list = AttributeListWriter()
            list.quoted("DATA-ID", data.dataID)
            list.quoted("VALUE", data.value)
            list.quoted("URI", data.uri)
            list.unquoted("FORMAT", data.format)
            list.quoted("LANGUAGE", data.language)
            list.others(data.otherAttributes)
            tag("#EXT-X-SESSION-DATA:", list)
        }
        for (index, key) in playlist.sessionKeys.enumerated() {
            writePlaced(.beforeSessionKey(index), &self)
            write(key, tag: "#EXT-X-SESSION-KEY:")
        }
        for (index, rendition) in playlist.renditions.enumerated() {
            writePlaced(.beforeRendition(index), &self)
            var list = AttributeListWriter()
            list.unquoted("TYPE", rendition.type.rawValue)
            list.quoted("URI", rendition.uri)
            list.quoted("GROUP-ID", rendition.groupID)
            list.quoted("LANGUAGE", rendition.language)
            list.quoted("ASSOC-LANGUAGE", rendition.associatedLanguage)
            list.quoted("NAME", rendition.name)
            list.quoted("STABLE-RENDITION-ID", rendition.stableRenditionID)
            list.yes("DEFAULT", rendition.isDefault)
            list.yes("AUTOSELECT", rendition.autoselect)
            list.yes("FORCED", rendition.forced)
            list.quoted("INSTREAM-ID", rendition.instreamID)
            list.integer("BIT-DEPTH", rendition.bitDepth)
            list.integer("SAMPLE-RATE", rendition.sampleRate)
            list.quoted("CHARACTERISTICS", rendition.characteristics)
            list.quoted("CHANNELS", rendition.channels)
            list.others(rendition.otherAttributes)
            tag("#EXT-X-MEDIA:", list)
        }
        for (index, variant) in playlist.variants.enumerated() {
            writePlaced(.beforeVariant(index), &self)
            var list = AttributeListWriter()
            list.variantAttributes(variant, variant.streamInfOnly)
            tag("#EXT-X-STREAM-INF:", list)
            uriLine(variant.uri)
        }
        for (index, variant) in playlist.iFrameVariants.enumerated() {
            writePlaced(.beforeIFrameVariant(index), &self)
            var list = AttributeListWriter()
            list.quoted("URI", variant.uri)
            list.variantAttributes(variant, StreamInfOnlyAttributes())
            tag("#EXT-X-I-FRAME-STREAM-INF:", list)
        }
        for extra in atEnd { write(extra) }
    }

    // MARK: Parts

    private mutating func writeCommonHeader(
        _ independent: Bool, _ start: StartPoint?, _ definitions: [VariableDefinition]
    ) {
        if independent { line("#EXT-X-INDEPENDENT-SEGMENTS") }
        if let start {
            var list = AttributeListWriter()
            list.float("TIME-OFFSET", start.timeOffset)
            list.yes("PRECISE", start.isPrecise)
            list.others(start.otherAttributes)
            tag("#EXT-X-START:", list)
        }
        for definition in definitions {
            var list = AttributeListWriter()
            switch definition.source {
            case .value:
                list.quoted("NAME", definition.name)
                list.quoted("VALUE", definition.value)
            case .imported: list.quoted("IMPORT", definition.name)
            case .queryParameter: list.quoted("QUERYPARAM", definition.name)
            }
            tag("#EXT-X-DEFINE:", list)
        }
    }

    /// A segment: its unknown lines first (where cue tags usually are), then its tags, EXTINF and URI. The
    /// first segment's unknown lines go after its EXTINF: before any segment tag they would read as header lines.
    mutating func write(_ segment: MediaSegment, isFirst: Bool) {
        let annotations = segment.annotations
        if !isFirst {
            for extra in annotations.extraLines { write(extra) }
        }
        writeSegmentTags(
            discontinuity: segment.isDiscontinuity, keys: annotations.keys, map: annotations.map,
            keysBeforeMap: annotations.keysBeforeMap, programDateTime: segment.programDateTime,
            dateRanges: annotations.dateRanges, bitrate: annotations.bitrate,
            gap: segment.isGap, parts: annotations.parts)
        append("#EXTINF:")
        append(NumberParsing.format(segment.duration))
        append(",")
        append(sanitizedLine(segment.title))
        newline()
        if isFirst {
            for extra in annotations.extraLines { write(extra) }
        }
        if let range = segment.byteRange {
            append("#EXT-X-BYTERANGE:")
            append(range.description)
            newline()
        }
        uriLine(segment.uri)
    }

    private mutating func writeSegmentTags(
        discontinuity: Bool, keys: [EncryptionKey], map: MediaInitialization?, keysBeforeMap: Int?,
        programDateTime: HLSDateTime?, dateRanges: [DateRange], bitrate: Int?, gap: Bool, parts: [PartialSegment]
    ) {
        if discontinuity { line("#EXT-X-DISCONTINUITY") }
        // Keys written after the map do not apply to it: the order is the one read.
        let beforeMap = map == nil ? keys.count : min(keysBeforeMap ?? keys.count, keys.count)
        for key in keys.prefix(beforeMap) { write(key, tag: "#EXT-X-KEY:") }
        if let map {
            var list = AttributeListWriter()
            list.quoted("URI", map.uri)
            list.quoted("BYTERANGE", map.byteRange?.description)
            list.others(map.otherAttributes)
            tag("#EXT-X-MAP:", list)
        }
        for key in keys.dropFirst(beforeMap) { write(key, tag: "#EXT-X-KEY:") }
        if let programDateTime {
            append("#EXT-X-PROGRAM-DATE-TIME:")
            bytes.append(contentsOf: programDateTime.iso8601Bytes())
            newline()
        }
        for range in dateRanges {
            var list = AttributeListWriter()
            list.quoted("ID", range.id)
            list.quoted("CLASS", range.classValue)
            list.quoted("START-DATE", range.startDate?.description)
            list.quoted("CUE", range.cue)
            list.quoted("END-DATE", range.endDate?.description)
            list.float("DURATION", range.duration)
            list.float("PLANNED-DURATION", range.plannedDuration)
            list.yes("END-ON-NEXT", range.endOnNext)
            list.hexadecimal("SCTE35-CMD", range.scte35Command)
            list.hexadecimal("SCTE35-OUT", range.scte35Out)
            list.hexadecimal("SCTE35-IN", range.scte35In)
            list.others(range.otherAttributes)
            tag("#EXT-X-DATERANGE:", list)
        }
        if let bitrate { tag("#EXT-X-BITRATE:", int: bitrate) }
        if gap { line("#EXT-X-GAP") }
        for part in parts {
            var list = AttributeListWriter()
            list.float("DURATION", part.duration)
            list.quoted("URI", part.uri)
            list.yes("INDEPENDENT", part.isIndependent)
            list.quoted("BYTERANGE", part.byteRange?.description)
            list.yes("GAP", part.isGap)
            list.others(part.otherAttributes)
            tag("#EXT-X-PART:", list)
        }
    }

    private mutating func write(_ key: EncryptionKey, tag name: String) {
        var list = AttributeListWriter()
        list.unquoted("METHOD", key.method.rawValue)
        list.quoted("URI", key.uri)
        if let iv = key.iv {
            list.hexadecimal("IV", iv.count < 16 ? [UInt8](repeating: 0, count: 16 - iv.count) + iv : iv)
        }
        list.quoted("KEYFORMAT", key.keyFormat)
        list.quoted("KEYFORMATVERSIONS", key.keyFormatVersions)
        list.others(key.otherAttributes)
        tag(name, list)
    }

    private mutating func write(_ extra: PlaylistLine) {
        let text = sanitizedLine(extra.text)
        if !text.hasPrefix("#") { append("# ") }
        line(text)
    }

    // MARK: Bytes

    private mutating func uriLine(_ uri: String) {
        var text = sanitizedLine(uri)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        if text.isEmpty || text.hasPrefix("#") { text = "%23" + text.dropFirst(text.isEmpty ? 0 : 1) }
        line(text)
    }

    private mutating func tag(_ prefix: String, int value: Int) {
        append(prefix)
        append(String(value))
        newline()
    }

    private mutating func tag(_ prefix: String, _ list: AttributeListWriter) {
        append(prefix)
        bytes.append(contentsOf: list.bytes)
        newline()
    }

    private mutating func line(_ text: String) {
        append(text)
        newline()
    }

    private mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    private mutating func append(decimal value: UInt64) { append(String(value)) }

    private mutating func newline() { bytes.append(0x0A) }
}

/// Builds `NAME=VALUE,…`.
struct AttributeListWriter {
    private(set) var bytes: [UInt8] = []

    private mutating func name(_ name: String) {
        if !bytes.isEmpty { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: name.utf8)
        bytes.append(UInt8(ascii: "="))
    }

    mutating func quoted(_ name: String, _ value: String?) {
        guard let value else { return }
        self.name(name)
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 where byte != UInt8(ascii: "\"") && byte != 0x0A && byte != 0x0D { bytes.append(byte) }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func unquoted(_ name: String, _ value: String?) {
        guard let value else { return }
        self.name(name)
        for byte in value.utf8
        where byte != UInt8(ascii: ",") && byte != UInt8(ascii: "\"") && byte != 0x0A && byte != 0x0D {
            bytes.append(byte)
        }
    }

    mutating func integer(_ name: String, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        unquoted(name, String(value))
    }

    mutating func float(_ name: String, _ value: Double?) {
        guard let value else { return }
        unquoted(name, NumberParsing.format(value))
    }

    mutating func yes(_ name: String, _ value: Bool) {
        if value { unquoted(name, "YES") }
    }

    mutating func hexadecimal(_ name: String, _ value: [UInt8]?) {
        guard let value else { return }
        unquoted(name, "0x" + Hex.encode(value).uppercased())
    }

    mutating func others(_ attributes: [Attribute]) {
        for attribute in attributes {
            switch attribute.value {
            case .quoted(let text): quoted(attribute.name, text)
            case .unquoted(let text): unquoted(attribute.name, text)
            }
        }
    }
}

extension AttributeListWriter {
    /// The attributes of either variant tag after any `URI`, in the RFC's order: those both tags define from
    /// `variant`, and those only EXT-X-STREAM-INF defines from `streamInfOnly`.
    mutating func variantAttributes(_ variant: some SharedVariantAttributes, _ streamInfOnly: StreamInfOnlyAttributes) {
        integer("BANDWIDTH", variant.bandwidth)
        integer("AVERAGE-BANDWIDTH", variant.averageBandwidth)
        float("SCORE", variant.score)
        quoted("CODECS", variant.codecs)
        quoted("SUPPLEMENTAL-CODECS", variant.supplementalCodecs)
        unquoted("RESOLUTION", variant.resolution?.description)
        float("FRAME-RATE", streamInfOnly.frameRate)
        unquoted("HDCP-LEVEL", variant.hdcpLevel)
        quoted("ALLOWED-CPC", variant.allowedCPC)
        unquoted("VIDEO-RANGE", variant.videoRange)
        quoted("REQ-VIDEO-LAYOUT", variant.requiredVideoLayout)
        quoted("STABLE-VARIANT-ID", variant.stableVariantID)
        quoted("AUDIO", streamInfOnly.audio)
        quoted("VIDEO", variant.video)
        quoted("SUBTITLES", streamInfOnly.subtitles)
        switch streamInfOnly.closedCaptions {
        case .group(let id): quoted("CLOSED-CAPTIONS", id)
        case .noneDeclared: unquoted("CLOSED-CAPTIONS", "NONE")
        case nil: break
        }
        quoted("PATHWAY-ID", variant.pathwayID)
        others(variant.otherAttributes)
    }
}

func sanitizedLine(_ text: String) -> String {
    guard text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { return text }
    return String(decoding: text.utf8.filter { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
}
