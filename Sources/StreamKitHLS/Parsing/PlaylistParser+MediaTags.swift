extension PlaylistParser {
    // MARK: Media playlist tags (RFC 8216bis §4.4.3)

    mutating func readTargetDuration(_ value: Range<Int>) throws(ParseFailure) {
        let range = trimmedWarning(value, "the EXT-X-TARGETDURATION value")
        guard let target = integerAllowingDecimals(range, "EXT-X-TARGETDURATION"), target <= UInt64(Int.max) else {
            throw failure("EXT-X-TARGETDURATION is not a decimal integer: '\(text.excerpt(range))'")
        }
        media.targetDuration = Int(target)
        for check in uncheckedDurations { checkDuration(check.duration, line: check.line) }
        uncheckedDurations = []
    }

    mutating func readMediaSequence(_ value: Range<Int>) throws(ParseFailure) {
        media.mediaSequence = try sequenceNumber(value, tag: .mediaSequence)
    }

    mutating func readDiscontinuitySequence(_ value: Range<Int>) throws(ParseFailure) {
        media.discontinuitySequence = try sequenceNumber(value, tag: .discontinuitySequence)
    }

    /// The value of EXT-X-MEDIA-SEQUENCE or EXT-X-DISCONTINUITY-SEQUENCE, which belong before the first segment.
    private mutating func sequenceNumber(_ value: Range<Int>, tag: KnownTag) throws(ParseFailure) -> UInt64 {
        let range = trimmedWarning(value, "the \(tag.name) value")
        let sequence: UInt64
        if let number = integerAllowingDecimals(range, tag.name) {
            sequence = number
        } else if range.count > 1, bytes[range.lowerBound] == UInt8(ascii: "-"),
            NumberParsing.decimalFloat(bytes, (range.lowerBound + 1)..<range.upperBound) != nil
        {
            warn("\(tag.name) is negative: '\(text.excerpt(range))'; read as 0")
            sequence = 0
        } else {
            throw failure("\(tag.name) is not a decimal integer: '\(text.excerpt(range))'")
        }
        if !media.segments.isEmpty { warn("\(tag.name) must come before the first segment") }
        return sequence
    }

    mutating func readPlaylistType(_ value: Range<Int>) throws(ParseFailure) {
        let range = trimmedWarning(value, "the EXT-X-PLAYLIST-TYPE value")
        let word = text.string(range)
        if let type = PlaylistType(rawValue: word) {
            media.playlistType = type
        } else if let type = PlaylistType(rawValue: word.uppercased()) {
            warn("EXT-X-PLAYLIST-TYPE \(word) is not upper-case")
            media.playlistType = type
        } else {
            throw failure("EXT-X-PLAYLIST-TYPE must be EVENT or VOD, not '\(text.excerpt(range))'")
        }
    }

    mutating func readPartInformation(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, PartInformationAttribute.self, tag: .partInformation)
        guard let target = list[.partTarget] else { throw failure("EXT-X-PART-INF needs PART-TARGET") }
        media.partInformation = PartInformation(
            partTarget: try float(target, "PART-TARGET"), otherAttributes: list.others)
    }

    mutating func readServerControl(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, ServerControlAttribute.self, tag: .serverControl)
        var control = ServerControl(otherAttributes: list.others)
        if let slot = list[.canSkipUntil] { control.canSkipUntil = try float(slot, "CAN-SKIP-UNTIL") }
        if let slot = list[.canSkipDateRanges] { control.canSkipDateRanges = try yesOrNo(slot, "CAN-SKIP-DATERANGES") }
        if let slot = list[.holdBack] { control.holdBack = try float(slot, "HOLD-BACK") }
        if let slot = list[.partHoldBack] { control.partHoldBack = try float(slot, "PART-HOLD-BACK") }
        if let slot = list[.canBlockReload] { control.canBlockReload = try yesOrNo(slot, "CAN-BLOCK-RELOAD") }
        media.serverControl = control
    }

    // MARK: Media segment tags (RFC 8216bis §4.4.4)

    mutating func readEXTINF(_ value: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        if segment.extinfLine != 0 {
            throw failure("a second EXTINF before the segment's URI line (the first is at line \(segment.extinfLine))")
        }
        var comma = value.lowerBound
        while comma < value.upperBound && bytes[comma] != UInt8(ascii: ",") { comma += 1 }
        let durationRange = trimmedWarning(value.lowerBound..<comma, "the EXTINF duration")
        guard let duration = NumberParsing.decimalFloat(bytes, durationRange) else {
            throw failure("EXTINF duration is not a decimal number: '\(text.excerpt(durationRange))'")
        }
        if bytes[durationRange].contains(UInt8(ascii: ".")) { require(.decimalDuration) }
        if comma < value.upperBound {
            segment.annotations.title = comma + 1 < value.upperBound ? text.string((comma + 1)..<value.upperBound) : ""
        } else {
            warn("EXTINF has no comma after the duration")
        }
        segment.extinfLine = lineNumber
        segment.duration = duration
    }

    mutating func readByteRange(_ value: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        if segment.byteRangeLine != 0 {
            throw failure(
                "a second EXT-X-BYTERANGE before the segment's URI line (the first is at line \(segment.byteRangeLine))"
            )
        }
        let range = trimmedWarning(value, "the EXT-X-BYTERANGE value")
        segment.byteRange = try byteRange(range, "EXT-X-BYTERANGE")
        segment.byteRangeLine = lineNumber
        require(.byteRange)
    }

    mutating func readKey(_ value: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        let key = try encryptionKey(value, tag: .key)
        // A key after the map does not apply to it (RFC 8216bis §4.4.4.4): the order is kept.
        if segment.annotations.map != nil && segment.annotations.keysBeforeMap == nil {
            segment.annotations.keysBeforeMap = segment.annotations.keys.count
        }
        segment.annotations.keys.append(key)
    }

    /// EXT-X-KEY and EXT-X-SESSION-KEY share their attributes (RFC 8216bis §4.4.4.4, §4.4.6.5).
    mutating func encryptionKey(_ value: Range<Int>, tag: KnownTag) throws(ParseFailure) -> EncryptionKey {
        let list = try attributes(value, KeyAttribute.self, tag: tag)
        guard let methodSlot = list[.method] else { throw failure("\(tag.name) needs METHOD") }
        let knownMethods = EncryptionMethod.known.map(\.rawValue)
        let methodText = try enumerated(methodSlot, "METHOD", preferring: knownMethods)
        guard !methodText.isEmpty else { throw failure("\(tag.name) has an empty METHOD") }
        let method = EncryptionMethod(rawValue: methodText)
        if !knownMethods.contains(methodText) { warn("unknown encryption METHOD \(methodText)") }
        var key = EncryptionKey(method: method, otherAttributes: list.others)
        if let slot = list[.uri] { key.uri = try quotedString(slot, "URI") }
        if let slot = list[.iv] {
            do {
                key.iv = try initializationVector(slot)
                require(.iv)
            } catch {
                // Nothing is decrypted with it.
                guard method == .noEncryption else { throw error }
                warn(error.diagnostic.reason + "; ignored, as METHOD=NONE")
            }
        }
        if let slot = list[.keyFormat] { key.keyFormat = try quotedString(slot, "KEYFORMAT") }
        if let slot = list[.keyFormatVersions] { key.keyFormatVersions = try quotedString(slot, "KEYFORMATVERSIONS") }
        if key.keyFormat != nil || key.keyFormatVersions != nil { require(.keyFormat) }
        if method == .noEncryption {
            if key.uri != nil || key.iv != nil || key.keyFormat != nil || key.keyFormatVersions != nil {
                warn("\(tag.name) METHOD=NONE must have no other attributes")
            }
        } else if key.uri == nil {
            throw failure("\(tag.name) METHOD=\(methodText) needs a URI")
        }
        return key
    }

    /// The IV attribute: a 128-bit number.
    private mutating func initializationVector(_ slot: AttributeSlot) throws(ParseFailure) -> [UInt8] {
        let (ivBytes, digits) = try hexadecimal(slot, "IV")
        var significant = ivBytes[...]
        while significant.count > 16 && significant.first == 0 { significant = significant.dropFirst() }
        guard significant.count <= 16 else {
            throw failure("IV must be a 128-bit number; it has \(digits) hexadecimal digits")
        }
        if digits != 32 { warn("IV has \(digits) hexadecimal digits, not 32; read as a 128-bit number") }
        return [UInt8](repeating: 0, count: 16 - significant.count) + significant
    }

    mutating func readMap(_ value: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        let list = try attributes(value, MapAttribute.self, tag: .map)
        guard let uriSlot = list[.uri] else { throw failure("EXT-X-MAP needs a URI") }
        var map = MediaInitialization(uri: try quotedString(uriSlot, "URI"), otherAttributes: list.others)
        if let slot = list[.byteRange] {
            if !slot.isQuoted { warn("BYTERANGE should be a quoted string") }
            map.byteRange = try byteRange(text.trimmed(slot.value), "EXT-X-MAP BYTERANGE")
        }
        if segment.annotations.map != nil { warn("a second EXT-X-MAP before one segment; the later one is used") }
        segment.annotations.map = map
        segment.annotations.keysBeforeMap = nil
        require(.map)
    }

    mutating func readProgramDateTime(_ value: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        let range = trimmedWarning(value, "the EXT-X-PROGRAM-DATE-TIME value")
        guard let date = HLSDateTime.parse(UnsafeBufferPointer(rebasing: bytes[range])) else {
            throw failure("EXT-X-PROGRAM-DATE-TIME is not an ISO 8601 date-time: '\(text.excerpt(range))'")
        }
        if date.utcOffsetMinutes == nil { warn("EXT-X-PROGRAM-DATE-TIME has no time zone; read as UTC") }
        if segment.programDateTime != nil {
            warn("a second EXT-X-PROGRAM-DATE-TIME before one segment; the later one is used")
        }
        segment.programDateTime = date
        sawProgramDateTime = true
    }

    mutating func readBitrate(_ value: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        let range = trimmedWarning(value, "the EXT-X-BITRATE value")
        guard let bitrate = integerAllowingDecimals(range, "EXT-X-BITRATE"), bitrate <= UInt64(Int.max) else {
            throw failure("EXT-X-BITRATE is not a decimal integer: '\(text.excerpt(range))'")
        }
        segment.annotations.bitrate = Int(bitrate)
    }

    mutating func readPart(_ value: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        let list = try attributes(value, PartAttribute.self, tag: .part)
        guard let uriSlot = list[.uri] else { throw failure("EXT-X-PART needs a URI") }
        guard let durationSlot = list[.duration] else { throw failure("EXT-X-PART needs a DURATION") }
        var part = PartialSegment(
            uri: try quotedString(uriSlot, "URI"), duration: try float(durationSlot, "DURATION"),
            otherAttributes: list.others)
        if let slot = list[.independent] { part.isIndependent = try yesOrNo(slot, "INDEPENDENT") }
        if let slot = list[.gap] { part.isGap = try yesOrNo(slot, "GAP") }
        if let slot = list[.byteRange] {
            if !slot.isQuoted { warn("BYTERANGE should be a quoted string") }
            let range = try byteRange(text.trimmed(slot.value), "EXT-X-PART BYTERANGE")
            let offset: Int64
            if let written = range.offset {
                offset = written
            } else if let previous = previousPartRange, previous.uri == part.uri {
                offset = previous.end
            } else {
                throw failure(
                    "EXT-X-PART BYTERANGE has no offset, and the previous part is not a range of \(part.uri)")
            }
            let (end, overflow) = offset.addingReportingOverflow(range.length)
            guard !overflow else { throw failure("EXT-X-PART BYTERANGE ends past 2^63") }
            part.byteRange = range
            previousPartRange = (part.uri, end)
        } else {
            previousPartRange = nil
        }
        if firstPartLine == 0 { firstPartLine = lineNumber }
        segment.annotations.parts.append(part)
    }

    // MARK: Media metadata tags (RFC 8216bis §4.4.5)

    mutating func readDateRange(_ value: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        let list = try attributes(value, DateRangeAttribute.self, tag: .dateRange)
        guard let idSlot = list[.id] else { throw failure("EXT-X-DATERANGE needs an ID") }
        var range = DateRange(id: try quotedString(idSlot, "ID"), otherAttributes: list.others)
        if let slot = list[.classValue] { range.classValue = try quotedString(slot, "CLASS") }
        // Values that cannot be read are kept as written: the range still marks its place in the timeline.
        range.startDate = optionalAttribute(list[.startDate], keepingFailuresIn: &range.otherAttributes) {
            (parser, slot) throws(ParseFailure) in try parser.dateTime(slot, "START-DATE")
        }
        if let slot = list[.cue] { range.cue = try quotedString(slot, "CUE") }
        range.endDate = optionalAttribute(list[.endDate], keepingFailuresIn: &range.otherAttributes) {
            (parser, slot) throws(ParseFailure) in try parser.dateTime(slot, "END-DATE")
        }
        range.duration = optionalAttribute(list[.duration], keepingFailuresIn: &range.otherAttributes) {
            (parser, slot) throws(ParseFailure) in try parser.float(slot, "DURATION")
        }
        range.plannedDuration = optionalAttribute(list[.plannedDuration], keepingFailuresIn: &range.otherAttributes) {
            (parser, slot) throws(ParseFailure) in try parser.float(slot, "PLANNED-DURATION")
        }
        if let slot = list[.endOnNext] {
            guard let word = try enumerated(slot, "END-ON-NEXT", oneOf: ["YES"]) else {
                throw failure("END-ON-NEXT must be YES, not '\(text.excerpt(slot.value))'")
            }
            range.endOnNext = word == "YES"
        }
        range.scte35Command = optionalAttribute(list[.scte35Command], keepingFailuresIn: &range.otherAttributes) {
            (parser, slot) throws(ParseFailure) in try parser.hexadecimal(slot, "SCTE35-CMD").bytes
        }
        range.scte35Out = optionalAttribute(list[.scte35Out], keepingFailuresIn: &range.otherAttributes) {
            (parser, slot) throws(ParseFailure) in try parser.hexadecimal(slot, "SCTE35-OUT").bytes
        }
        range.scte35In = optionalAttribute(list[.scte35In], keepingFailuresIn: &range.otherAttributes) {
            (parser, slot) throws(ParseFailure) in try parser.hexadecimal(slot, "SCTE35-IN").bytes
        }
        if range.startDate == nil && !dateRangeIDs.contains(range.id) {
            warn("EXT-X-DATERANGE \(range.id) has no START-DATE and no earlier range with its ID")
        }
        if let start = range.startDate, let end = range.endDate, end.isBefore(start) {
            warn("EXT-X-DATERANGE \(range.id) ends before it starts")
        }
        if range.endOnNext && range.classValue == nil {
            warn("EXT-X-DATERANGE \(range.id) has END-ON-NEXT but no CLASS")
        }
        if range.endOnNext && (range.duration != nil || range.endDate != nil) {
            warn("EXT-X-DATERANGE \(range.id) has END-ON-NEXT with DURATION or END-DATE")
        }
        dateRangeIDs.insert(range.id)
        if firstDateRangeLine == 0 { firstDateRangeLine = lineNumber }
        segment.annotations.dateRanges.append(range)
    }

    mutating func readSkip(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, SkipAttribute.self, tag: .skip)
        guard let countSlot = list[.skippedSegments] else { throw failure("EXT-X-SKIP needs SKIPPED-SEGMENTS") }
        var skip = SkipInformation(
            skippedSegments: try integer(countSlot, "SKIPPED-SEGMENTS"), otherAttributes: list.others)
        if let slot = list[.recentlyRemovedDateRanges] {
            let identifiers = try quotedString(slot, "RECENTLY-REMOVED-DATERANGES")
            skip.recentlyRemovedDateRanges = identifiers.split(separator: "\t", omittingEmptySubsequences: false).map(
                String.init)
        }
        if !media.segments.isEmpty || sawSegmentTag { warn("EXT-X-SKIP must come before the first segment") }
        media.skip = skip
        require(.skip)
    }

    mutating func readPreloadHint(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, PreloadHintAttribute.self, tag: .preloadHint)
        guard let typeSlot = list[.type] else { throw failure("EXT-X-PRELOAD-HINT needs a TYPE") }
        guard let uriSlot = list[.uri] else { throw failure("EXT-X-PRELOAD-HINT needs a URI") }
        let typeText = try enumerated(typeSlot, "TYPE", preferring: ["PART", "MAP"])
        if typeText != "PART" && typeText != "MAP" {
            warn("EXT-X-PRELOAD-HINT TYPE \(typeText) is neither PART nor MAP")
        }
        var hint = PreloadHint(
            type: PreloadHintType(rawValue: typeText), uri: try quotedString(uriSlot, "URI"),
            otherAttributes: list.others)
        if let slot = list[.byteRangeStart] { hint.byteRangeStart = try int64(slot, "BYTERANGE-START") }
        if let slot = list[.byteRangeLength] { hint.byteRangeLength = try int64(slot, "BYTERANGE-LENGTH") }
        media.preloadHints.append(hint)
    }

    mutating func readRenditionReport(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, RenditionReportAttribute.self, tag: .renditionReport)
        guard let uriSlot = list[.uri] else { throw failure("EXT-X-RENDITION-REPORT needs a URI") }
        var report = RenditionReport(uri: try quotedString(uriSlot, "URI"), otherAttributes: list.others)
        if let slot = list[.lastMediaSequence] { report.lastMediaSequence = try integer(slot, "LAST-MSN") }
        if let slot = list[.lastPart] { report.lastPart = try integer(slot, "LAST-PART") }
        media.renditionReports.append(report)
    }

    // MARK: Segments

    /// A URI line of a media playlist: the segment's tags are complete.
    mutating func finishSegment(uriRange: Range<Int>) throws(ParseFailure) {
        sawSegmentTag = true
        if segment.extinfLine == 0 {
            warn("URI line without an EXTINF tag before it; its duration is taken as the target duration")
        }
        let uri: String
        if let previous = previousURI, text.bytesEqual(previous.range, uriRange) {
            uri = previous.string
        } else {
            uri = try substitutedString(uriRange, what: "URI line")
            previousURI = (uriRange, uri)
        }
        if let range = segment.byteRange {
            let offset: Int64
            if let written = range.offset {
                offset = written
            } else if let previous = previousRange, previous.uri == uri {
                offset = previous.end
            } else {
                let line = segment.byteRangeLine
                segment = SegmentBuilder()
                throw failure(
                    "EXT-X-BYTERANGE has no offset, and the previous segment is not a sub-range of \(uri) "
                        + "(RFC 8216bis §4.4.4.2)", line: line)
            }
            let (end, overflow) = offset.addingReportingOverflow(range.length)
            guard !overflow else {
                let line = segment.byteRangeLine
                segment = SegmentBuilder()
                throw failure("EXT-X-BYTERANGE ends past 2^63", line: line)
            }
            previousRange = (uri, end)
        } else {
            previousRange = nil
        }
        // A segment without EXTINF has its duration set at the end, when the target duration is known. It is
        // recorded only here, once nothing above can throw the segment away.
        if segment.extinfLine == 0 {
            segmentsWithoutDuration.append(media.segments.count)
        } else {
            if media.targetDuration != nil {
                checkDuration(segment.duration, line: segment.extinfLine)
            } else {
                uncheckedDurations.append((segment.extinfLine, segment.duration))
            }
        }
        media.segments.append(
            MediaSegment(
                uri: uri, duration: segment.duration, byteRange: segment.byteRange,
                programDateTime: segment.programDateTime, isDiscontinuity: segment.isDiscontinuity,
                isGap: segment.isGap, annotations: segment.annotations))
        segment = SegmentBuilder()
    }

    /// RFC 8216bis §4.4.3.1: each EXTINF, rounded, must not exceed the target duration.
    mutating func checkDuration(_ duration: Double, line: Int) {
        guard let target = media.targetDuration, duration.rounded() > Double(target) else { return }
        warn(
            "EXTINF duration \(NumberParsing.format(duration)) exceeds EXT-X-TARGETDURATION \(target) "
                + "(RFC 8216bis §4.4.3.1)", line: line)
    }
}
