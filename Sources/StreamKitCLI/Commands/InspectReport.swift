import StreamKitCore
import StreamKitHLS

/// The `--json` output of `inspect`: one object with the file, the kind, the warnings, the facts of
/// the summary, the playlist as written (`playlist`, the model's `Codable` form) and what it means
/// once resolved (`resolved`), streamed to the output in chunks.
enum InspectReport {
    struct Facts: Encodable {
        var segmentCount: Int?
        var totalDuration: Double?
        var encryptedSegments: Int?
        var encryptionMethods: [String]?
        var maps: [String]?
        var byteRangeSegments: Int?
        var variantCount: Int?
        var renditionCount: Int?
        var iFrameVariantCount: Int?
    }

    /// Writes the report and a newline to `sink`.
    ///
    /// - Parameters:
    ///   - file: The playlist as the command line named it.
    ///   - parsed: The parse result.
    ///   - baseURL: The playlist's absolute URL, which relative URIs resolve against.
    static func write(file: String, parsed: ParsedPlaylist, baseURL: String, to sink: OutputSink) throws {
        var writer = JSONWriter { sink.write(bytes: $0) }
        writer.beginObject()
        writer.field("file", file)
        switch parsed.playlist {
        case .media: writer.field("kind", "media")
        case .multivariant: writer.field("kind", "multivariant")
        }
        writer.key("warnings")
        try writer.encode(parsed.warnings)
        switch parsed.playlist {
        case .media(let media):
            let facts = MediaFacts(media, baseURL: baseURL)
            writer.key("summary")
            try writer.encode(
                Facts(
                    segmentCount: media.segments.count, totalDuration: media.totalDuration,
                    encryptedSegments: facts.encryptedSegments, encryptionMethods: facts.methods,
                    maps: facts.mapURIs, byteRangeSegments: facts.byteRangeSegments))
            writer.key("playlist")
            try writeWritten(media, to: &writer)
            writer.key("resolved")
            writeResolved(media, baseURL: baseURL, to: &writer)
        case .multivariant(let multivariant):
            writer.key("summary")
            try writer.encode(
                Facts(
                    variantCount: multivariant.variants.count, renditionCount: multivariant.renditions.count,
                    iFrameVariantCount: multivariant.iFrameVariants.count))
            writer.key("playlist")
            try writer.encode(multivariant)
            writer.key("resolved")
            writeResolved(multivariant, baseURL: baseURL, to: &writer)
        }
        writer.endObject()
        writer.flush()
        sink.write("\n")
    }

    /// A media playlist as its `Codable` conformance encodes it, with the segments written directly
    /// (there may be a million of them).
    static func writeWritten(_ playlist: MediaPlaylist, to writer: inout JSONWriter) throws {
        writer.beginObject()
        if let version = playlist.version { writer.field("version", version) }
        if let target = playlist.targetDuration { writer.field("targetDuration", target) }
        writer.field("mediaSequence", playlist.mediaSequence)
        writer.field("discontinuitySequence", playlist.discontinuitySequence)
        if let type = playlist.playlistType { writer.field("playlistType", type.rawValue) }
        writer.field("iFramesOnly", playlist.iFramesOnly)
        writer.field("independentSegments", playlist.independentSegments)
        if let start = playlist.start {
            writer.key("start")
            try writer.encode(start)
        }
        writer.key("definitions")
        try writer.encode(playlist.definitions)
        if let information = playlist.partInformation {
            writer.key("partInformation")
            try writer.encode(information)
        }
        if let control = playlist.serverControl {
            writer.key("serverControl")
            try writer.encode(control)
        }
        if let skip = playlist.skip {
            writer.key("skip")
            try writer.encode(skip)
        }
        writer.key("headerLines")
        try writer.encode(playlist.headerLines)
        writer.key("segments")
        writer.beginArray()
        for index in playlist.segments.indices { try writeWritten(playlist.segments[index], to: &writer) }
        writer.endArray()
        writer.key("pendingSegment")
        try writer.encode(playlist.pendingSegment)
        writer.field("hasEndList", playlist.hasEndList)
        writer.key("preloadHints")
        try writer.encode(playlist.preloadHints)
        writer.key("renditionReports")
        try writer.encode(playlist.renditionReports)
        writer.endObject()
    }

    /// A segment as `MediaSegment.encode(to:)` writes it: empty and default fields left out.
    static func writeWritten(_ segment: MediaSegment, to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.field("uri", segment.uri)
        writer.field("duration", segment.duration)
        let title = segment.title
        if !title.isEmpty { writer.field("title", title) }
        if let range = segment.byteRange {
            writer.key("byteRange")
            writer.beginObject()
            writer.field("length", range.length)
            if let offset = range.offset { writer.field("offset", offset) }
            writer.endObject()
        }
        if let date = segment.programDateTime {
            writer.key("programDateTime")
            writer.dateTime(date)
        }
        if segment.isDiscontinuity { writer.field("discontinuity", true) }
        if segment.isGap { writer.field("gap", true) }
        let keys = segment.keys
        if !keys.isEmpty {
            writer.key("keys")
            try writer.encode(keys)
        }
        if let map = segment.map {
            writer.key("map")
            try writer.encode(map)
        }
        let dateRanges = segment.dateRanges
        if !dateRanges.isEmpty {
            writer.key("dateRanges")
            try writer.encode(dateRanges)
        }
        if let bitrate = segment.bitrate { writer.field("bitrate", bitrate) }
        let parts = segment.parts
        if !parts.isEmpty {
            writer.key("parts")
            try writer.encode(parts)
        }
        let extraLines = segment.extraLines
        if !extraLines.isEmpty {
            writer.key("extraLines")
            try writer.encode(extraLines)
        }
        writer.endObject()
    }
}
