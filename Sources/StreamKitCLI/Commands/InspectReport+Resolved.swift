import StreamKitCore
import StreamKitHLS

/// The `resolved` object of `inspect --json`: what the playlist means once every tag is applied
/// (``MediaPlaylist/resolvedSegments(baseURL:)``) and every URI resolved against the playlist URL.
extension InspectReport {
    /// `{"playlistURL", "segments": [...]}`, one element per segment of `playlist.segments`.
    /// The segments are resolved one at a time as they are written.
    static func writeResolved(_ playlist: MediaPlaylist, baseURL: String, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("playlistURL", baseURL)
        writer.key("segments")
        writer.beginArray()
        var repeated = RepeatedValues()
        playlist.forEachResolvedSegment(baseURL: baseURL) { writeResolved($0, to: &writer, repeated: &repeated) }
        writer.endArray()
        writer.endObject()
    }

    /// The URI, keys and map of the segment before, and their JSON: they often stay the same for
    /// many segments, and are then copied rather than written again.
    struct RepeatedValues {
        var uri = ""
        var uriJSON: [UInt8] = []
        var keys: [ResolvedKey] = []
        var keysJSON: [UInt8] = Array("[]".utf8)
        var map: ResolvedMap?
        var mapJSON: [UInt8] = []
    }

    /// One segment: `uri`, `mediaSequence`, `discontinuitySequence`, `startTime`, `keys` (empty when
    /// clear), and when they apply `byteRange`, `programDateTime`, `map`, `bitrate` (the duration is
    /// the written one).
    static func writeResolved(
        _ segment: ResolvedSegment, to writer: inout JSONWriter, repeated: inout RepeatedValues
    ) {
        writer.beginObject()
        writer.key("uri")
        if segment.uri != repeated.uri {
            repeated.uri = segment.uri
            repeated.uriJSON = []
            writer.string(segment.uri)
        } else {
            // Sub-ranges of one resource: the same URI segment after segment.
            if repeated.uriJSON.isEmpty { repeated.uriJSON = JSONWriter.bytes { $0.string(segment.uri) } }
            writer.json(repeated.uriJSON)
        }
        writer.field("mediaSequence", segment.mediaSequence)
        writer.field("discontinuitySequence", segment.discontinuitySequence)
        writer.field("startTime", segment.startTime)
        if let range = segment.byteRange {
            writer.key("byteRange")
            writeResolved(range, to: &writer)
        }
        if let date = segment.programDateTime {
            writer.key("programDateTime")
            writer.dateTime(date)
        }
        writer.key("keys")
        if segment.keys != repeated.keys {
            repeated.keys = segment.keys
            repeated.keysJSON = JSONWriter.bytes { writeResolved(segment.keys, to: &$0) }
        }
        writer.json(repeated.keysJSON)
        if let map = segment.map {
            writer.key("map")
            if map != repeated.map {
                repeated.map = map
                repeated.mapJSON = JSONWriter.bytes { writer in
                    writer.beginObject()
                    writer.field("uri", map.uri)
                    if let range = map.byteRange {
                        writer.key("byteRange")
                        writeResolved(range, to: &writer)
                    }
                    writer.key("keys")
                    writeResolved(map.keys, to: &writer)
                    writer.endObject()
                }
            }
            writer.json(repeated.mapJSON)
        }
        if let bitrate = segment.bitrate { writer.field("bitrate", bitrate) }
        writer.endObject()
    }

    /// `{"offset", "length"}`.
    static func writeResolved(_ range: ByteRange, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("offset", range.lowerBound)
        writer.field("length", range.count)
        writer.endObject()
    }

    /// Keys in effect: `method`, `uri` (absolute; absent when not written), `keyFormat`,
    /// `keyFormatVersions` when written, and `iv` (hexadecimal) with `ivSource`: `explicit` when
    /// written, `mediaSequence` when taken from the segment's media sequence number (RFC 8216bis
    /// §5.2, for the `identity` key format); no `iv` when neither applies.
    static func writeResolved(_ keys: [ResolvedKey], to writer: inout JSONWriter) {
        writer.beginArray()
        for key in keys {
            writer.beginObject()
            writer.field("method", key.method.rawValue)
            if let uri = key.uri { writer.field("uri", uri) }
            writer.field("keyFormat", key.keyFormat)
            if let versions = key.keyFormatVersions { writer.field("keyFormatVersions", versions) }
            if key.isIVExplicit || (key.keyFormat == "identity" && !key.iv.isEmpty) {
                writer.key("iv")
                writer.hexString(key.iv)
                writer.field("ivSource", key.isIVExplicit ? "explicit" : "mediaSequence")
            }
            writer.endObject()
        }
        writer.endArray()
    }

    /// `{"playlistURL", "variants", "iFrameVariants", "renditions", "sessionKeys"}`, each array
    /// parallel to the playlist's, with the URIs resolved.
    static func writeResolved(_ playlist: MultivariantPlaylist, baseURL: String, to writer: inout JSONWriter) {
        func writeURI(_ uri: String?) {
            writer.beginObject()
            if let uri { writer.field("uri", resolveURI(uri, against: baseURL)) }
            writer.endObject()
        }
        writer.beginObject()
        writer.field("playlistURL", baseURL)
        writer.key("variants")
        writer.beginArray()
        for variant in playlist.variants { writeURI(variant.uri) }
        writer.endArray()
        writer.key("iFrameVariants")
        writer.beginArray()
        for variant in playlist.iFrameVariants { writeURI(variant.uri) }
        writer.endArray()
        writer.key("renditions")
        writer.beginArray()
        for rendition in playlist.renditions { writeURI(rendition.uri) }
        writer.endArray()
        writer.key("sessionKeys")
        writer.beginArray()
        for key in playlist.sessionKeys {
            writer.beginObject()
            writer.field("method", key.method.rawValue)
            if let uri = key.uri { writer.field("uri", resolveURI(uri, against: baseURL)) }
            writer.field("keyFormat", key.effectiveKeyFormat)
            if let versions = key.keyFormatVersions { writer.field("keyFormatVersions", versions) }
            if let iv = key.iv {
                writer.key("iv")
                writer.hexString(iv)
                writer.field("ivSource", "explicit")
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }
}
