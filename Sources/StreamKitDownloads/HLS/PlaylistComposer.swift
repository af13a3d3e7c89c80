import StreamKitCore
import StreamKitHLS

/// The header tags of a source media playlist that the package keeps.
struct MediaPlaylistHeader: Hashable, Sendable {
    var version: Int?
    var targetDuration: Int?
    var independentSegments: Bool
    var start: StartPoint?
    var iFramesOnly: Bool
    var headerLines: [PlaylistLine]

    init(_ playlist: MediaPlaylist) {
        version = playlist.version
        targetDuration = playlist.targetDuration
        independentSegments = playlist.independentSegments
        start = playlist.start
        iFramesOnly = playlist.iFramesOnly
        headerLines = playlist.headerLines
    }

    /// Takes the larger target duration and version of a reloaded live playlist.
    mutating func merge(_ playlist: MediaPlaylist) {
        if let target = playlist.targetDuration { targetDuration = max(targetDuration ?? 0, target) }
        if let newer = playlist.version { version = max(version ?? 0, newer) }
    }
}

/// Writes recorded segments as a VOD media playlist (RFC 8216bis §4.4.3.5 PLAYLIST-TYPE=VOD, with
/// EXT-X-ENDLIST): either the package's own playlist (relative URIs, keys stored locally, missing
/// segments in the chosen ``GapForm``) or the recorded source (absolute URIs) kept for resuming.
/// While a package downloads, its completed head is written as a growing EVENT playlist
/// (``Ending/growing(targetDuration:)``).
///
/// Keys and maps are written where they change, from what is in effect for each segment, so that a
/// playlist recorded from several reloads of a live playlist stays right. Discontinuities, program
/// date-times (where the source wrote them, at the start and after a discontinuity), date ranges,
/// bitrates, titles and unknown tags are kept.
enum PlaylistComposer {
    /// Which references to write.
    enum Target {
        /// The package's playlist.
        case local
        /// The source, with absolute URIs and explicit byte ranges.
        case source
    }

    /// How the package's playlist writes a segment it does not have (skipped with `--skip-broken`,
    /// or EXT-X-GAP in the source).
    enum GapForm: Sendable {
        /// Left out, with EXT-X-DISCONTINUITY on the next segment written (one for a run of
        /// missing segments, none at the start): every player plays on.
        case omitted
        /// Kept as EXT-X-GAP (RFC 8216bis §4.4.4.7), which some players stop at (`--gap-tags`).
        case tagged
    }

    /// What a left-out segment wrote that the next segment written must carry.
    private struct LeftOut {
        var discontinuity = false
        var dateRanges: [DateRange] = []
        var extraLines: [PlaylistLine] = []
        var bitrate: Int?
    }

    /// How the playlist ends.
    enum Ending: Sendable {
        /// Complete: PLAYLIST-TYPE=VOD and EXT-X-ENDLIST.
        case vod
        /// The completed head of a package still downloading: PLAYLIST-TYPE=EVENT without
        /// EXT-X-ENDLIST, with the target duration of every segment planned (it must not change
        /// while the playlist grows) and, unless the source has its own, EXT-X-START at the
        /// beginning so that players that honour it start there rather than at the live edge.
        case growing(targetDuration: Int)
    }

    /// Composes `segments` (a rendition's, or a slice of them read in place). The positions in
    /// `alsoSkipped` (indices of `segments`) are written as skipped, as if their `skipped` were set:
    /// a growing playlist marks the segments given up so far without copying the rest.
    ///
    /// - Parameter firstSequence: The media sequence number of the first segment written, when
    ///   `segments` continue a playlist that left segments out (an appended tail); by default the
    ///   first segment's local number.
    static func compose<Segments: RandomAccessCollection<RecordedSegment>>(
        _ segments: Segments, alsoSkipped: Set<Int> = [], header: MediaPlaylistHeader, target: Target,
        gaps: GapForm = .omitted, ending: Ending = .vod, firstSequence: UInt64? = nil
    ) -> MediaPlaylist where Segments.Index == Int {
        var output: [MediaSegment] = []
        output.reserveCapacity(segments.count)
        var playlist = frame(
            segments, alsoSkipped: alsoSkipped, header: header, target: target, gaps: gaps, ending: ending,
            firstSequence: firstSequence
        ) { output.append($0) }
        playlist.segments = output
        return playlist
    }

    /// Composes `segments` as ``compose(_:alsoSkipped:header:target:gaps:ending:firstSequence:)``
    /// does, handing each entry to `body` in order instead of gathering them: returns the
    /// playlist without its segments (its header and end), to write with the entries made again
    /// (``MediaPlaylist/serialized(chunkSize:segments:into:)``). The entries of a million
    /// segments took 70 MB, and their absolute URIs as much again.
    static func frame<Segments: RandomAccessCollection<RecordedSegment>>(
        _ segments: Segments, alsoSkipped: Set<Int> = [], header: MediaPlaylistHeader, target: Target,
        gaps: GapForm = .omitted, ending: Ending = .vod, firstSequence: UInt64? = nil,
        each body: (MediaSegment) -> Void
    ) -> MediaPlaylist where Segments.Index == Int {
        // The last entry is handed on when the next comes: date ranges of segments left out at
        // the end still go to it.
        var pending: MediaSegment?
        var written = 0
        var previousKeys: [EncryptionKey] = []
        var previousMap: LocalReference?
        var requiredVersion = 3
        var longest = 0.0
        let firstSequence = firstSequence ?? segments.first?.localSequence ?? 0
        var discontinuitySequence: UInt64?
        var leftOut = LeftOut()
        for position in segments.indices {
            let recorded = segments[position]
            let skipped = recorded.skipped || alsoSkipped.contains(position)
            let resolved = recorded.resolved
            let source = recorded.segment
            if target == .local, Self.leavesOut(recorded, skipped: skipped, gaps: gaps) {
                // Keys and maps are compared with the last segment written, so the next one
                // writes again any that only this segment carried.
                if written > 0 { leftOut.discontinuity = true }
                leftOut.dateRanges += source.dateRanges
                leftOut.extraLines += source.extraLines
                if let bitrate = source.bitrate { leftOut.bitrate = bitrate }
                continue
            }
            // Segments left out before this one move its media sequence number down.
            let sequence = firstSequence &+ UInt64(written)
            var keys: [EncryptionKey]
            let reference: LocalReference
            let map: LocalReference?
            switch target {
            case .local:
                keys = recorded.localKeys
                reference = recorded.local
                map = recorded.localMap
            case .source:
                keys = resolved.keys.compactMap { key in
                    guard key.method != .noEncryption, let uri = key.uri else { return nil }
                    return EncryptionKey(
                        method: key.method, uri: uri, iv: key.isIVExplicit ? key.iv : nil,
                        keyFormat: key.keyFormat == "identity" ? nil : key.keyFormat,
                        keyFormatVersions: key.keyFormatVersions)
                }
                reference = LocalReference(uri: resolved.uri, range: resolved.byteRange)
                map = resolved.map.map { LocalReference(uri: $0.uri, range: $0.byteRange) }
            }
            // An IV taken from the media sequence number must be written out when the package
            // numbers the segment differently.
            if sequence != resolved.mediaSequence {
                for keyIndex in keys.indices where keys[keyIndex].iv == nil {
                    keys[keyIndex].iv = AES128CBC.iv(mediaSequence: resolved.mediaSequence)
                }
            }
            let isDiscontinuity = source.isDiscontinuity || leftOut.discontinuity
            var entry = MediaSegment(
                uri: reference.uri, duration: source.duration, title: source.title,
                byteRange: reference.range.map { SegmentByteRange(length: $0.count, offset: $0.lowerBound) },
                programDateTime: source.programDateTime
                    ?? ((written == 0 || isDiscontinuity) ? resolved.programDateTime : nil),
                isDiscontinuity: isDiscontinuity,
                isGap: source.isGap || (target == .local && skipped),
                dateRanges: leftOut.dateRanges + source.dateRanges, bitrate: source.bitrate ?? leftOut.bitrate,
                extraLines: leftOut.extraLines + source.extraLines)
            if discontinuitySequence == nil {
                discontinuitySequence = resolved.discontinuitySequence &- (isDiscontinuity ? 1 : 0)
            }
            leftOut = LeftOut()
            let previousKeysBeforeEntry = previousKeys
            if keys != previousKeys {
                entry.keys = keys.isEmpty ? [EncryptionKey(method: .noEncryption)] : keys
                previousKeys = keys
                for key in keys {
                    if key.iv != nil { requiredVersion = max(requiredVersion, 2) }
                    if key.keyFormat != nil || key.keyFormatVersions != nil {
                        requiredVersion = max(requiredVersion, 5)
                    }
                }
            }
            if let map, map != previousMap {
                entry.map = MediaInitialization(
                    uri: map.uri, byteRange: map.range.map { SegmentByteRange(length: $0.count, offset: $0.lowerBound) }
                )
                previousMap = map
                requiredVersion = max(requiredVersion, header.iFramesOnly ? 5 : 6)
                // The map goes under the AES-128 key that applied to it in the source (RFC 8216bis
                // §4.4.4.4): when that is not the segment's (a map written before a new key, or
                // after METHOD=NONE), the map's own key (or none) is written before it and the
                // segment's after it.
                if Self.aesIdentity(resolved.map?.keys ?? []) != Self.aesIdentity(resolved.keys) {
                    let mapKeys: [EncryptionKey]
                    switch target {
                    case .local:
                        mapKeys = recorded.localMapKeys
                    case .source:
                        mapKeys = (resolved.map?.keys ?? []).compactMap { key in
                            guard key.method == .aes128, key.isIVExplicit, let uri = key.uri else { return nil }
                            return EncryptionKey(method: .aes128, uri: uri, iv: key.iv)
                        }
                    }
                    let segmentAES = keys.filter { $0.method == .aes128 }
                    if mapKeys != segmentAES {
                        if !entry.keys.isEmpty, mapKeys == previousKeysBeforeEntry.filter({ $0.method == .aes128 }) {
                            entry.keysBeforeMap = 0
                        } else {
                            let none = [EncryptionKey(method: .noEncryption)]
                            entry.keys = (mapKeys.isEmpty ? none : mapKeys) + (keys.isEmpty ? none : keys)
                            entry.keysBeforeMap = max(mapKeys.count, 1)
                        }
                    }
                }
            }
            if reference.range != nil { requiredVersion = max(requiredVersion, 4) }
            longest = max(longest, source.duration)
            if let pending { body(pending) }
            pending = entry
            written += 1
        }
        // Date ranges left out at the end go with the last segment (they are placed by their dates);
        // tags that apply to the segments after them have none to apply to.
        if var pending {
            pending.dateRanges += leftOut.dateRanges
            body(pending)
        }
        var longestRounded = longest.isFinite ? Int(saturating: longest.rounded()) : 0
        var start = header.start
        if case .growing(let targetDuration) = ending {
            longestRounded = max(longestRounded, targetDuration)
            start = start ?? StartPoint(timeOffset: 0)
        }
        let complete = if case .vod = ending { true } else { false }
        return MediaPlaylist(
            version: max(header.version ?? 3, requiredVersion),
            targetDuration: max(header.targetDuration ?? 1, longestRounded, 1),
            mediaSequence: firstSequence, discontinuitySequence: discontinuitySequence ?? 0,
            playlistType: complete ? .vod : .event, iFramesOnly: header.iFramesOnly,
            independentSegments: header.independentSegments, start: start, headerLines: header.headerLines,
            segments: [], hasEndList: complete)
    }

    /// Whether the package's playlist leaves `recorded` out: excluded by the selection, or missing
    /// (given up when `skipped`, or a gap in the source) while gaps are omitted.
    static func leavesOut(_ recorded: RecordedSegment, skipped: Bool, gaps: GapForm) -> Bool {
        recorded.excluded != nil || (gaps == .omitted && (skipped || recorded.segment.isGap))
    }

    /// The AES-128 keys of `keys` as written in the source (URI, and the IV when written): equal
    /// for a map and a segment under the same tags.
    private static func aesIdentity(_ keys: [ResolvedKey]) -> [String] {
        keys.filter { $0.method == .aes128 }.map { ($0.uri ?? "") + "#" + ($0.isIVExplicit ? Hex.encode($0.iv) : "") }
    }
}
