import StreamKitCore
import StreamKitHLS

/// The URL of the playlist a segment was listed in, shared by every ``SourceURI`` resolved
/// against it.
final class PlaylistBase: Sendable {
    let url: String
    /// The URL up to the last `/` of its path (no query, no fragment), when it has an authority
    /// and a path: what a relative path with no dot segment is appended to.
    let directory: String?

    init(url: String) {
        self.url = url
        directory = Self.directory(of: url)
    }

    private static func directory(of url: String) -> String? {
        guard let separator = url.firstRange(of: "://") else { return nil }
        let afterAuthority = url[separator.upperBound...]
        let end = afterAuthority.firstIndex { $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let pathStart = afterAuthority[..<end].firstIndex(of: "/"),
            let lastSlash = url[pathStart..<end].lastIndex(of: "/")
        else { return nil }
        return String(url[...lastSlash])
    }

    /// `written` resolved against the URL (RFC 3986 §5.2), as ``StreamKitHLS/resolveURI(_:against:)``
    /// gives it: a relative path with no scheme, no dot segment and nothing for the query or the
    /// authority to change is appended to ``directory`` (a segment's URI is resolved at every
    /// transfer and checkpoint, and the general resolution took a good part of a long download's
    /// CPU time); anything else goes through the general resolution.
    func resolve(_ written: String) -> String {
        if let directory, let first = written.utf8.first, first != UInt8(ascii: "/"), first != UInt8(ascii: "."),
            first != UInt8(ascii: "?"), first != UInt8(ascii: "#"),
            !written.utf8.contains(UInt8(ascii: ":")), !written.contains("/.")
        {
            return directory + written
        }
        return resolveURI(written, against: url)
    }
}

/// A source's absolute URI, kept as the playlist wrote it with the playlist URL it resolves
/// against when resolving it gives the absolute URI back, else whole. A download held the
/// absolute URI of every segment as a string of its own (96 bytes of heap a segment for a short
/// relative name); the written one is most often short enough to be held inline, or shares the
/// parsed entry's storage.
struct SourceURI: Hashable, Sendable {
    private let text: String
    private let base: PlaylistBase?

    /// An absolute URI, kept whole.
    init(absolute: String) {
        text = absolute
        base = nil
    }

    /// `absolute`, which the source wrote as `written` in the playlist at `base`.
    init(absolute: String, written: String, base: PlaylistBase) {
        if written == absolute {
            // Written absolute (a recorded source read back, a playlist of full URLs): kept as
            // written, the entry's own storage, and never resolved again.
            text = written
            self.base = nil
        } else if Self.resolve(written, against: base) == absolute {
            text = written
            self.base = base
        } else {
            text = absolute
            self.base = nil
        }
    }

    /// The absolute URI.
    var absolute: String { base.map { Self.resolve(text, against: $0) } ?? text }

    /// `written` resolved against `base` as a playlist's segments are (``RenditionPlanner/normalized(_:)``).
    /// The planner keeps the written form only when this gives back what the playlist's
    /// resolution gave, so that a shortcut in it can never change a URI.
    private static func resolve(_ written: String, against base: PlaylistBase) -> String {
        RenditionPlanner.withSpacesEncoded(base.resolve(written))
    }

    static func == (lhs: SourceURI, rhs: SourceURI) -> Bool { lhs.absolute == rhs.absolute }

    func hash(into hasher: inout Hasher) { hasher.combine(absolute) }
}

/// A reference from a local playlist to a package file: its name inside the rendition folder, and
/// the byte range when it is a sub-range of the file.
struct LocalReference: Hashable, Sendable {
    var uri: String
    var range: ByteRange?
}

/// What runs of segments share: the keys and map in effect, as resolved and as the package's
/// playlist refers to them. Consecutive segments under the same tags hold one object, so that
/// a long recording keeps these once per change of key or map rather than once per segment.
final class SegmentContext: Hashable, Sendable {
    /// The keys in effect, with absolute URIs; an IV not written in the source is left empty (it
    /// differs from one segment to the next: ``RecordedSource/keys`` gives it).
    let keys: [ResolvedKey]
    /// The map in effect, with an absolute URI.
    let map: ResolvedMap?
    /// The package file holding the map, if any.
    let mapFile: String?
    /// How the local playlist refers to the map.
    let localMap: LocalReference?
    /// The keys as the local playlist writes them (relative URIs; AES-128 and SAMPLE-AES in
    /// MPEG-TS dropped with `--decrypt`).
    let localKeys: [EncryptionKey]
    /// The AES-128 key the local playlist must have in effect where it writes the map: the map's
    /// own key when the package keeps the map encrypted, else none (a clear map).
    let localMapKeys: [EncryptionKey]

    init(
        keys: [ResolvedKey], map: ResolvedMap?, mapFile: String?, localMap: LocalReference?,
        localKeys: [EncryptionKey], localMapKeys: [EncryptionKey]
    ) {
        self.keys = keys
        self.map = map
        self.mapFile = mapFile
        self.localMap = localMap
        self.localKeys = localKeys
        self.localMapKeys = localMapKeys
    }

    /// No keys, no map.
    static let none = SegmentContext(keys: [], map: nil, mapFile: nil, localMap: nil, localKeys: [], localMapKeys: [])

    static func == (lhs: SegmentContext, rhs: SegmentContext) -> Bool {
        lhs === rhs
            || (lhs.keys == rhs.keys && lhs.map == rhs.map && lhs.mapFile == rhs.mapFile
                && lhs.localMap == rhs.localMap && lhs.localKeys == rhs.localKeys
                && lhs.localMapKeys == rhs.localMapKeys)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(keys)
        hasher.combine(map)
        hasher.combine(mapFile)
        hasher.combine(localKeys)
    }
}

/// What the source's resolution gave a segment that the package keeps: a
/// ``StreamKitHLS/ResolvedSegment`` without what the playlist entry already holds (duration,
/// flags), with its keys and map in a shared ``SegmentContext``.
struct RecordedSource: Hashable, Sendable {
    /// The absolute URI.
    var uri: String { source.absolute }
    var source: SourceURI
    var mediaSequence: UInt64
    var discontinuitySequence: UInt64
    /// The absolute byte range, if the segment is one.
    var byteRange: ByteRange?
    /// The program date-time, written or extrapolated.
    var programDateTime: HLSDateTime?
    /// The keys and map in effect, and how the package refers to them.
    var context: SegmentContext

    /// The keys in effect, each IV not written in the source taken from the media sequence number
    /// (RFC 8216bis §5.2), as ``StreamKitHLS/ResolvedSegment`` gives them.
    var keys: [ResolvedKey] {
        guard context.keys.contains(where: { !$0.isIVExplicit }) else { return context.keys }
        return context.keys.map { key in
            var key = key
            if !key.isIVExplicit { key.iv = AES128CBC.iv(mediaSequence: mediaSequence) }
            return key
        }
    }

    var map: ResolvedMap? { context.map }
}

/// One segment as recorded: the playlist entry, what applies to it, and where it is in the
/// package. A download holds one per segment for as long as it runs: what several segments
/// share is held by reference.
struct RecordedSegment: Hashable, Sendable {
    /// The entry as written in the source (duration, title, date-time, date ranges, discontinuity,
    /// gap, unknown tags).
    var segment: MediaSegment
    /// Keys, map, absolute byte range and media sequence number, with absolute URIs.
    var resolved: RecordedSource
    /// The media sequence number in the package's playlists (equal to the source's unless a live
    /// recording missed segments).
    var localSequence: UInt64
    /// The package file holding its bytes; `nil` for a gap in the source.
    var file: String?
    /// How the local playlist refers to it.
    var local: LocalReference
    /// Whether the download skipped it (`--skip-broken`): a gap in the package's playlist.
    var skipped = false
    /// Why the selection leaves it out of the package (`--section`, `--exclude-segments`): it has no
    /// file and the package's playlist omits it, whatever the gap form (``SegmentFilter``).
    var excluded: SegmentFilter.Exclusion?

    init(
        segment: MediaSegment, resolved: ResolvedSegment, source: SourceURI, localSequence: UInt64, file: String?,
        local: LocalReference, context: SegmentContext, excluded: SegmentFilter.Exclusion? = nil
    ) {
        self.segment = segment
        self.resolved = RecordedSource(
            source: source, mediaSequence: resolved.mediaSequence,
            discontinuitySequence: resolved.discontinuitySequence, byteRange: resolved.byteRange,
            programDateTime: resolved.programDateTime, context: context)
        self.localSequence = localSequence
        self.file = file
        self.local = local
        self.excluded = excluded
    }

    /// The package file holding its map, if any.
    var mapFile: String? { resolved.context.mapFile }
    /// How the local playlist refers to its map.
    var localMap: LocalReference? { resolved.context.localMap }
    /// The keys as the local playlist writes them.
    var localKeys: [EncryptionKey] { resolved.context.localKeys }
    /// The AES-128 key the local playlist must have in effect where it writes the map.
    var localMapKeys: [EncryptionKey] { resolved.context.localMapKeys }
}
