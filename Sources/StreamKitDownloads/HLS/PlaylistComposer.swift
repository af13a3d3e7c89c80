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
/// EXT-X-ENDLIST): either the package's own playlist (relative URIs, keys stored locally, skipped
/// segments as EXT-X-GAP) or the recorded source (absolute URIs) kept for resuming.
///
/// Keys and maps are written where they change, from what is in effect for each segment, so that a
/// playlist recorded from several reloads of a live playlist stays right. Discontinuities, program
/// date-times (where the source wrote them, and at the start), date ranges, bitrates, titles and
/// unknown tags are kept.
enum PlaylistComposer {
    /// Which references to write.
    enum Target {
        /// The package's playlist.
        case local
        /// The source, with absolute URIs and explicit byte ranges.
        case source
    }

    static func compose(_ segments: [RecordedSegment], header: MediaPlaylistHeader, target: Target) -> MediaPlaylist {
        var output: [MediaSegment] = []
        output.reserveCapacity(segments.count)
        var previousKeys: [EncryptionKey] = []
        var previousMap: LocalReference?
        var requiredVersion = 3
        var longest = 0.0
        for (index, recorded) in segments.enumerated() {
            let resolved = recorded.resolved
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
            if recorded.localSequence != resolved.mediaSequence {
                for keyIndex in keys.indices where keys[keyIndex].iv == nil {
                    keys[keyIndex].iv = AES128CBC.iv(mediaSequence: resolved.mediaSequence)
                }
            }
            let source = recorded.segment
            let isDiscontinuity = source.isDiscontinuity
            var entry = MediaSegment(
                uri: reference.uri, duration: source.duration, title: source.title,
                byteRange: reference.range.map { SegmentByteRange(length: $0.count, offset: $0.lowerBound) },
                programDateTime: source.programDateTime
                    ?? ((index == 0 || isDiscontinuity) ? resolved.programDateTime : nil),
                isDiscontinuity: isDiscontinuity,
                isGap: source.isGap || (target == .local && recorded.skipped),
                dateRanges: source.dateRanges, bitrate: source.bitrate, extraLines: source.extraLines)
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
            output.append(entry)
        }
        let first = segments.first
        let discontinuitySequence =
            first.map { $0.resolved.discontinuitySequence &- ($0.segment.isDiscontinuity ? 1 : 0) } ?? 0
        let longestRounded = longest.isFinite ? Int(saturating: longest.rounded()) : 0
        return MediaPlaylist(
            version: max(header.version ?? 3, requiredVersion),
            targetDuration: max(header.targetDuration ?? 1, longestRounded, 1),
            mediaSequence: first?.localSequence ?? 0, discontinuitySequence: discontinuitySequence,
            playlistType: .vod, iFramesOnly: header.iFramesOnly, independentSegments: header.independentSegments,
            start: header.start, headerLines: header.headerLines, segments: output, hasEndList: true)
    }

    /// The AES-128 keys of `keys` as written in the source (URI, and the IV when written): equal
    /// for a map and a segment under the same tags.
    private static func aesIdentity(_ keys: [ResolvedKey]) -> [String] {
        keys.filter { $0.method == .aes128 }.map { ($0.uri ?? "") + "#" + ($0.isIVExplicit ? Hex.encode($0.iv) : "") }
    }
}
