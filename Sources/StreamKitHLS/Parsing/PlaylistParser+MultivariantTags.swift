extension PlaylistParser {
    // MARK: Tags of both kinds (RFC 8216bis §4.4.1, §4.4.2)

    mutating func readVersion(_ value: Range<Int>) throws(ParseFailure) {
        let range = trimmedWarning(value, "the EXT-X-VERSION value")
        guard let number = integerAllowingDecimals(range, "EXT-X-VERSION"), number >= 1, number <= UInt64(Int.max)
        else {
            throw failure("EXT-X-VERSION is not a positive decimal integer: '\(text.excerpt(range))'")
        }
        version = Int(number)
    }

    mutating func readStart(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, StartAttribute.self, tag: .start)
        guard let offsetSlot = list[.timeOffset] else { throw failure("EXT-X-START needs TIME-OFFSET") }
        var point = StartPoint(
            timeOffset: try float(offsetSlot, "TIME-OFFSET", signed: true), otherAttributes: list.others)
        if let slot = list[.precise] { point.isPrecise = try yesOrNo(slot, "PRECISE") }
        start = point
    }

    mutating func readDefine(_ value: Range<Int>) throws(ParseFailure) {
        require(.define)
        let list = try attributes(value, DefineAttribute.self, tag: .define)
        let definition: VariableDefinition
        switch (list[.name], list[.value], list[.importName], list[.queryParameter]) {
        case (let nameSlot?, let valueSlot?, nil, nil):
            definition = VariableDefinition(
                name: try quotedString(nameSlot, "NAME"), value: try quotedString(valueSlot, "VALUE"), source: .value)
        case (nil, nil, let importSlot?, nil):
            let name = try quotedString(importSlot, "IMPORT")
            if kind == .multivariant { throw failure("EXT-X-DEFINE IMPORT is only allowed in a media playlist") }
            guard let imported = options.importedVariables[name] else {
                throw failure("EXT-X-DEFINE IMPORT=\"\(name)\": the multivariant playlist defines no such variable")
            }
            if importLine == 0 { importLine = lineNumber }
            definition = VariableDefinition(name: name, value: imported, source: .imported)
        case (nil, nil, nil, let querySlot?):
            let name = try quotedString(querySlot, "QUERYPARAM")
            guard let parameter = queryParameter(name) else {
                throw failure(
                    "EXT-X-DEFINE QUERYPARAM=\"\(name)\": the playlist URL has no such query parameter"
                        + (options.playlistURL == nil ? " (no URL was given)" : ""))
            }
            definition = VariableDefinition(name: name, value: parameter, source: .queryParameter)
        default:
            throw failure("EXT-X-DEFINE needs NAME and VALUE, or IMPORT, or QUERYPARAM (and nothing else)")
        }
        guard !definition.name.isEmpty, definition.name.utf8.allSatisfy(isVariableNameByte) else {
            throw failure("variable name '\(definition.name)' may hold only A-Z, a-z, 0-9, - and _")
        }
        if let first = variableLines[definition.name] {
            throw failure("variable \(definition.name) is already defined at line \(first)")
        }
        variables[definition.name] = definition.value
        variableLines[definition.name] = lineNumber
        definitions.append(definition)
    }

    // MARK: Multivariant playlist tags (RFC 8216bis §4.4.6)

    mutating func readRendition(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, MediaAttribute.self, tag: .media)
        guard let typeSlot = list[.type] else { throw failure("EXT-X-MEDIA needs a TYPE") }
        guard let groupSlot = list[.groupID] else { throw failure("EXT-X-MEDIA needs a GROUP-ID") }
        guard let nameSlot = list[.name] else { throw failure("EXT-X-MEDIA needs a NAME") }
        guard let typeText = try enumerated(typeSlot, "TYPE", oneOf: RenditionType.allCases.map(\.rawValue)),
            let type = RenditionType(rawValue: typeText)
        else {
            throw failure(
                "EXT-X-MEDIA TYPE must be AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS, not '\(text.excerpt(typeSlot.value))'"
            )
        }
        var rendition = Rendition(
            type: type, groupID: try quotedString(groupSlot, "GROUP-ID"), name: try quotedString(nameSlot, "NAME"),
            otherAttributes: list.others)
        if let slot = list[.uri] { rendition.uri = try quotedString(slot, "URI") }
        if let slot = list[.language] { rendition.language = try quotedString(slot, "LANGUAGE") }
        if let slot = list[.associatedLanguage] {
            rendition.associatedLanguage = try quotedString(slot, "ASSOC-LANGUAGE")
        }
        if let slot = list[.stableRenditionID] {
            rendition.stableRenditionID = try quotedString(slot, "STABLE-RENDITION-ID")
        }
        if let slot = list[.isDefault] { rendition.isDefault = try yesOrNo(slot, "DEFAULT") }
        if let slot = list[.autoselect] { rendition.autoselect = try yesOrNo(slot, "AUTOSELECT") }
        if let slot = list[.forced] { rendition.forced = try yesOrNo(slot, "FORCED") }
        if let slot = list[.instreamID] { rendition.instreamID = try quotedString(slot, "INSTREAM-ID") }
        if let slot = list[.bitDepth] { rendition.bitDepth = try int(slot, "BIT-DEPTH") }
        if let slot = list[.sampleRate] { rendition.sampleRate = try int(slot, "SAMPLE-RATE") }
        if let slot = list[.characteristics] { rendition.characteristics = try quotedString(slot, "CHARACTERISTICS") }
        if let slot = list[.channels] { rendition.channels = try quotedString(slot, "CHANNELS") }
        if type == .closedCaptions {
            if rendition.uri != nil { warn("EXT-X-MEDIA TYPE=CLOSED-CAPTIONS must not have a URI") }
            if rendition.instreamID == nil { warn("EXT-X-MEDIA TYPE=CLOSED-CAPTIONS needs an INSTREAM-ID") }
        } else if rendition.instreamID != nil {
            warn("INSTREAM-ID is only for TYPE=CLOSED-CAPTIONS")
        }
        if rendition.forced && type != .subtitles { warn("FORCED is only for TYPE=SUBTITLES") }
        if rendition.isDefault, let slot = list[.autoselect], !rendition.autoselect {
            warn("EXT-X-MEDIA has DEFAULT=YES but \(text.excerpt(slot.name))=NO")
        }
        placePendingLines(.beforeRendition(multivariant.renditions.count))
        multivariant.renditions.append(rendition)
    }

    mutating func readStreamInf(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, VariantAttribute.self, tag: .streamInf)
        var variant = VariantStream(
            uri: "", bandwidth: try bandwidth(list[.bandwidth], tag: .streamInf), otherAttributes: list.others)
        let streamInfOnly = try readVariantAttributes(list, into: &variant)
        variant.streamInfOnly = streamInfOnly
        pendingVariant = variant
        pendingVariantLine = lineNumber
    }

    /// BANDWIDTH, which players do without: a variant without it is kept, read as 0.
    private mutating func bandwidth(_ slot: AttributeSlot?, tag: KnownTag) throws(ParseFailure) -> Int {
        guard let slot else {
            warn("\(tag.name) needs BANDWIDTH; read as 0")
            return 0
        }
        return try int(slot, "BANDWIDTH")
    }

    mutating func readIFrameStreamInf(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(
            value, VariantAttribute.self, tag: .iFrameStreamInf, table: VariantAttribute.iFrameTable)
        guard let uriSlot = list[.uri] else { throw failure("EXT-X-I-FRAME-STREAM-INF needs a URI") }
        var variant = IFrameVariantStream(
            uri: try quotedString(uriSlot, "URI"), bandwidth: try bandwidth(list[.bandwidth], tag: .iFrameStreamInf),
            otherAttributes: list.others)
        // Its table has none of the attributes only EXT-X-STREAM-INF defines.
        _ = try readVariantAttributes(list, into: &variant)
        placePendingLines(.beforeIFrameVariant(multivariant.iFrameVariants.count))
        multivariant.iFrameVariants.append(variant)
        iFrameVariantLines.append(lineNumber)
    }

    /// Reads the attributes of either variant tag after `BANDWIDTH`, in the RFC's order: those both tags define
    /// into `variant`, and those only EXT-X-STREAM-INF defines into the result; notes an obsolete PROGRAM-ID.
    private mutating func readVariantAttributes(
        _ list: Attributes<VariantAttribute>, into variant: inout some SharedVariantAttributes
    ) throws(ParseFailure) -> StreamInfOnlyAttributes {
        var only = StreamInfOnlyAttributes()
        if let slot = list[.averageBandwidth] { variant.averageBandwidth = try int(slot, "AVERAGE-BANDWIDTH") }
        if let slot = list[.score] { variant.score = try float(slot, "SCORE") }
        if let slot = list[.codecs] { variant.codecs = try quotedString(slot, "CODECS") }
        if let slot = list[.supplementalCodecs] {
            variant.supplementalCodecs = try quotedString(slot, "SUPPLEMENTAL-CODECS")
        }
        if let slot = list[.resolution] { variant.resolution = try resolution(slot, "RESOLUTION") }
        if let slot = list[.frameRate] { only.frameRate = try float(slot, "FRAME-RATE") }
        if let slot = list[.hdcpLevel] { variant.hdcpLevel = try enumeratedString(slot, "HDCP-LEVEL") }
        if let slot = list[.allowedCPC] { variant.allowedCPC = try quotedString(slot, "ALLOWED-CPC") }
        if let slot = list[.videoRange] { variant.videoRange = try enumeratedString(slot, "VIDEO-RANGE") }
        if let slot = list[.requiredVideoLayout] {
            variant.requiredVideoLayout = try quotedString(slot, "REQ-VIDEO-LAYOUT")
        }
        if let slot = list[.stableVariantID] { variant.stableVariantID = try quotedString(slot, "STABLE-VARIANT-ID") }
        if let slot = list[.audio] { only.audio = try quotedString(slot, "AUDIO") }
        if let slot = list[.video] { variant.video = try quotedString(slot, "VIDEO") }
        if let slot = list[.subtitles] { only.subtitles = try quotedString(slot, "SUBTITLES") }
        if let slot = list[.closedCaptions] {
            if slot.isQuoted {
                only.closedCaptions = .group(try substitutedString(slot.value, what: "CLOSED-CAPTIONS"))
            } else if try enumerated(slot, "CLOSED-CAPTIONS", oneOf: ["NONE"]) != nil {
                only.closedCaptions = .noneDeclared
            } else {
                throw failure("CLOSED-CAPTIONS must be a quoted GROUP-ID or NONE, not '\(text.excerpt(slot.value))'")
            }
        }
        if let slot = list[.pathwayID] { variant.pathwayID = try quotedString(slot, "PATHWAY-ID") }
        if programIDLine == 0, list.others.contains(where: { $0.name == "PROGRAM-ID" }) { programIDLine = lineNumber }
        return only
    }

    mutating func readSessionData(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, SessionDataAttribute.self, tag: .sessionData)
        guard let idSlot = list[.dataID] else { throw failure("EXT-X-SESSION-DATA needs a DATA-ID") }
        var data = SessionData(dataID: try quotedString(idSlot, "DATA-ID"), otherAttributes: list.others)
        if let slot = list[.value] { data.value = try quotedString(slot, "VALUE") }
        if let slot = list[.uri] { data.uri = try quotedString(slot, "URI") }
        if let slot = list[.format] { data.format = try enumeratedString(slot, "FORMAT") }
        if let slot = list[.language] { data.language = try quotedString(slot, "LANGUAGE") }
        if (data.value == nil) == (data.uri == nil) {
            warn("EXT-X-SESSION-DATA needs exactly one of VALUE and URI")
        }
        placePendingLines(.beforeSessionData(multivariant.sessionData.count))
        multivariant.sessionData.append(data)
    }

    mutating func readSessionKey(_ value: Range<Int>) throws(ParseFailure) {
        let key = try encryptionKey(value, tag: .sessionKey)
        if key.method == .noEncryption { warn("EXT-X-SESSION-KEY must not have METHOD=NONE") }
        placePendingLines(.beforeSessionKey(multivariant.sessionKeys.count))
        multivariant.sessionKeys.append(key)
    }

    mutating func readContentSteering(_ value: Range<Int>) throws(ParseFailure) {
        let list = try attributes(value, ContentSteeringAttribute.self, tag: .contentSteering)
        guard let serverSlot = list[.serverURI] else { throw failure("EXT-X-CONTENT-STEERING needs a SERVER-URI") }
        var steering = ContentSteering(
            serverURI: try quotedString(serverSlot, "SERVER-URI"), otherAttributes: list.others)
        if let slot = list[.pathwayID] { steering.pathwayID = try quotedString(slot, "PATHWAY-ID") }
        multivariant.contentSteering = steering
    }
}
