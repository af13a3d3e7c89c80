extension PlaylistParser {
    /// Checks what can only be checked at the end and assembles the playlist.
    mutating func finish() throws(ParseFailure) -> Playlist {
        guard sawHeader else {
            throw failure(
                bytes.isEmpty ? "the playlist is empty (no #EXTM3U)" : "the playlist has no #EXTM3U line", line: 1,
                fatal: true)
        }
        if pendingVariantLine != 0 {
            let line = pendingVariantLine
            pendingVariantLine = 0
            warn("EXT-X-STREAM-INF is not followed by a URI line; the variant is ignored", line: line)
        }
        if kind == .multivariant && importLine != 0 {
            try report(failure("EXT-X-DEFINE IMPORT is only allowed in a media playlist", line: importLine))
        }
        switch kind ?? .media {
        case .media: return .media(try finishMedia())
        case .multivariant:
            // Every tag that made it multivariant was ignored: nothing to play, and nothing that would say,
            // written back, what kind of playlist it was.
            if multivariant.variants.isEmpty && multivariant.iFrameVariants.isEmpty && multivariant.renditions.isEmpty
                && multivariant.sessionData.isEmpty && multivariant.sessionKeys.isEmpty
                && multivariant.contentSteering == nil
            {
                try report(failure("no tag of this multivariant playlist could be read", line: kindLine))
            }
            return .multivariant(finishMultivariant())
        }
    }

    private mutating func finishMedia() throws(ParseFailure) -> MediaPlaylist {
        if kind == nil {
            media.headerLines = earlyLines
            earlyLines = []
        }
        // A live playlist read while its server was writing the next segment: no segment yet, its lines kept
        // as written where they were (so that a playlist written back reads the same).
        if segment.extinfLine != 0 {
            warn(
                "EXTINF is not followed by a URI line; kept as written, as a segment still being written",
                line: segment.extinfLine)
        }
        if segment.byteRangeLine != 0 {
            warn(
                "EXT-X-BYTERANGE is not followed by a URI line; kept as written, as a segment still being written",
                line: segment.byteRangeLine)
        }
        for (offset, written) in segment.writtenLines.enumerated() {
            segment.annotations.extraLines.insert(written.line, at: written.index + offset)
        }
        let fallbackDuration = Double(media.targetDuration ?? 0)
        for index in segmentsWithoutDuration { media.segments[index].duration = fallbackDuration }
        var pending = PendingSegment()
        pending.isDiscontinuity = segment.isDiscontinuity
        pending.keys = segment.annotations.keys
        pending.map = segment.annotations.map
        pending.keysBeforeMap = segment.annotations.keysBeforeMap
        pending.programDateTime = segment.programDateTime
        pending.dateRanges = segment.annotations.dateRanges
        pending.isGap = segment.isGap
        pending.bitrate = segment.annotations.bitrate
        pending.parts = segment.annotations.parts
        pending.extraLines = segment.annotations.extraLines
        media.pendingSegment = pending
        segment = SegmentBuilder()

        if media.targetDuration == nil {
            warn("EXT-X-TARGETDURATION is missing (RFC 8216bis §4.4.3.1 requires it)", line: 1)
        }
        let skipped = media.skip?.skippedSegments ?? 0
        let (firstListed, overflow) = media.mediaSequence.addingReportingOverflow(skipped)
        let (_, overflow2) = firstListed.addingReportingOverflow(UInt64(media.segments.count))
        if overflow || overflow2 {
            try report(
                failure(
                    "media sequence numbers run past 2^64 - 1", line: max(tagLines[KnownTag.mediaSequence.rawValue], 1))
            )
        }
        if firstDateRangeLine != 0 && !sawProgramDateTime {
            warn("EXT-X-DATERANGE needs an EXT-X-PROGRAM-DATE-TIME in the playlist", line: firstDateRangeLine)
        }
        if firstPartLine != 0 && media.partInformation == nil {
            warn("EXT-X-PART needs EXT-X-PART-INF", line: firstPartLine)
        }
        if media.skip != nil && media.serverControl?.canSkipUntil == nil {
            warn(
                "EXT-X-SKIP needs EXT-X-SERVER-CONTROL with CAN-SKIP-UNTIL", line: tagLines[KnownTag.skip.rawValue])
        }
        checkVersion(iFramesOnly: media.iFramesOnly)
        media.version = version
        media.independentSegments = independentSegments
        media.start = start
        media.definitions = definitions
        return media
    }

    private mutating func finishMultivariant() -> MultivariantPlaylist {
        placePendingLines(.end)
        // In the order the writer puts elements, so that the model of written text is the same.
        multivariant.extraLines = multivariant.extraLines.enumerated().sorted { lhs, rhs in
            let left = lhs.element.position.writingOrder
            let right = rhs.element.position.writingOrder
            return (left.0, left.1, lhs.offset) < (right.0, right.1, rhs.offset)
        }.map(\.element)
        var groups: Set<String> = []
        var namesInGroup: Set<String> = []
        var defaultsInGroup: Set<String> = []
        for rendition in multivariant.renditions {
            let group = rendition.type.rawValue + "\u{0}" + rendition.groupID
            groups.insert(group)
            if !namesInGroup.insert(group + "\u{0}" + rendition.name).inserted {
                warn("two EXT-X-MEDIA renditions in group \(rendition.groupID) are both named \(rendition.name)")
            }
            if rendition.isDefault && !defaultsInGroup.insert(group).inserted {
                warn("group \(rendition.groupID) has more than one DEFAULT=YES rendition")
            }
        }
        func check(_ groupID: String?, _ type: RenditionType, _ attribute: String, line: Int) {
            guard let groupID, !groups.contains(type.rawValue + "\u{0}" + groupID) else { return }
            warn("\(attribute)=\"\(groupID)\" names no EXT-X-MEDIA group of TYPE=\(type.rawValue)", line: line)
        }
        for (index, variant) in multivariant.variants.enumerated() {
            let line = variantLines[index]
            check(variant.audio, .audio, "AUDIO", line: line)
            check(variant.video, .video, "VIDEO", line: line)
            check(variant.subtitles, .subtitles, "SUBTITLES", line: line)
            if case .group(let id) = variant.closedCaptions {
                check(id, .closedCaptions, "CLOSED-CAPTIONS", line: line)
            }
        }
        for (index, variant) in multivariant.iFrameVariants.enumerated() {
            check(variant.video, .video, "VIDEO", line: iFrameVariantLines[index])
        }
        if programIDLine != 0 && (version ?? 1) >= 6 {
            warn("PROGRAM-ID was removed in protocol version 6", line: programIDLine)
        }
        checkVersion(iFramesOnly: false)
        multivariant.version = version
        multivariant.independentSegments = independentSegments
        multivariant.start = start
        multivariant.definitions = definitions
        return multivariant
    }

    /// RFC 8216bis §7: features that need a higher EXT-X-VERSION than the playlist declares.
    private mutating func checkVersion(iFramesOnly: Bool) {
        let declared = version ?? 1
        for feature in VersionFeature.allCases where featureLines[feature.rawValue] != 0 {
            let minimum = feature == .map && iFramesOnly ? 5 : feature.minimumVersion
            guard minimum > declared else { continue }
            let stated = version == nil ? "has no EXT-X-VERSION (version 1)" : "declares version \(declared)"
            warn(
                "\(feature.description) needs EXT-X-VERSION \(minimum) or higher; the playlist \(stated)",
                line: featureLines[feature.rawValue])
        }
    }
}
