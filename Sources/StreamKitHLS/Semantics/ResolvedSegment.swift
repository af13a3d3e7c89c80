import StreamKitCore

/// A key in effect for a segment, with its URI resolved and its IV worked out (RFC 8216bis §4.4.4.4, §5.2).
public struct ResolvedKey: Hashable, Sendable, Codable {
    /// `METHOD`.
    public var method: EncryptionMethod
    /// The key URI, resolved against the playlist URL.
    public var uri: String?
    /// The 16-byte IV: the `IV` attribute, or the segment's media sequence number as a 128-bit big-endian integer.
    public var iv: [UInt8]
    /// Whether ``iv`` was written in the playlist (rather than derived from the media sequence number).
    public var isIVExplicit: Bool
    /// `KEYFORMAT` (`identity` when absent).
    public var keyFormat: String
    /// `KEYFORMATVERSIONS`, when written.
    public var keyFormatVersions: String?
}

/// An EXT-X-MAP in effect for a segment, with its URI resolved and its byte range made absolute.
public struct ResolvedMap: Hashable, Sendable, Codable {
    /// The URI, resolved against the playlist URL.
    public var uri: String
    /// The bytes of the resource holding the initialization section, when not the whole resource.
    public var byteRange: ByteRange?
    /// The keys in effect where the EXT-X-MAP was written (RFC 8216bis §4.4.4.4: a key applies to
    /// the maps after it), with their written IVs only (a map has no sequence number to derive
    /// one from; §4.4.4.5 requires an explicit IV for an encrypted map). Empty: a clear map.
    public var keys: [ResolvedKey] = []

    /// The key with format `identity` that applies to the map, if any.
    public var identityKey: ResolvedKey? { keys.first { $0.keyFormat == "identity" } }

    /// Creates a resolved map.
    public init(uri: String, byteRange: ByteRange?, keys: [ResolvedKey] = []) {
        self.uri = uri
        self.byteRange = byteRange
        self.keys = keys
    }
}

/// What applies to one segment once the tags before it are taken into account (RFC 8216bis §4.4.4, §6.3).
public struct ResolvedSegment: Hashable, Sendable {
    /// The index in ``MediaPlaylist/segments``.
    public var index: Int
    /// The media sequence number (RFC 8216bis §6.3.2).
    public var mediaSequence: UInt64
    /// The discontinuity sequence number.
    public var discontinuitySequence: UInt64
    /// The segment URI, resolved against the playlist URL (as written when no URL was given).
    public var uri: String
    /// EXTINF duration in seconds.
    public var duration: Double
    /// Seconds from the start of the first listed segment.
    public var startTime: Double
    /// The absolute byte range, for a segment that is a sub-range of its resource (offset carried from the
    /// previous segment when omitted).
    public var byteRange: ByteRange?
    /// The keys in effect, one per key format; empty when the segment is not encrypted.
    public var keys: [ResolvedKey]
    /// The media initialization section in effect.
    public var map: ResolvedMap?
    /// The program date-time: written on the segment, or extrapolated from the nearest one by durations.
    public var programDateTime: HLSDateTime?
    /// Whether EXT-X-DISCONTINUITY was written before this segment.
    public var isDiscontinuity: Bool
    /// EXT-X-GAP.
    public var isGap: Bool
    /// The EXT-X-BITRATE in effect, in kilobits per second.
    public var bitrate: Int?

    /// The key with format `identity` (the one AES-128 and SAMPLE-AES use), if any.
    public var identityKey: ResolvedKey? { keys.first { $0.keyFormat == "identity" } }
}

extension MediaPlaylist {
    /// Works out what applies to each segment: media and discontinuity sequence numbers, keys and IVs, map,
    /// absolute byte range (RFC 8216bis §4.4.4.2: an omitted offset continues the previous segment's range of the
    /// same resource), program date-time (extrapolated forwards and backwards from the nearest
    /// EXT-X-PROGRAM-DATE-TIME by segment durations) and the bitrate.
    ///
    /// - Parameter baseURL: The playlist's absolute URL, to resolve relative URIs; URIs stay as written when `nil`.
    /// - Returns: One value per segment, in order.
    public func resolvedSegments(baseURL: String? = nil) -> [ResolvedSegment] {
        var result: [ResolvedSegment] = []
        result.reserveCapacity(segments.count)
        forEachResolvedSegment(baseURL: baseURL) { result.append($0) }
        return result
    }

    /// Hands each segment's ``ResolvedSegment`` to `body`, in order, as ``resolvedSegments(baseURL:)``
    /// works them out, without keeping them: a pass over a playlist of a million segments then holds
    /// one at a time.
    ///
    /// - Parameter baseURL: The playlist's absolute URL, to resolve relative URIs; URIs stay as written when `nil`.
    public func forEachResolvedSegment<Failure: Error>(
        baseURL: String? = nil, _ body: (ResolvedSegment) throws(Failure) -> Void
    ) throws(Failure) {
        func resolve(_ uri: String) -> String { baseURL.map { resolveURI(uri, against: $0) } ?? uri }
        let leadingDates = datesBeforeFirstProgramDateTime()
        var keys: [EncryptionKey] = []
        var resolvedKeyURIs: [String?] = []
        var map: ResolvedMap?
        var previousRange: (uri: String, end: Int64)?
        var lastResolvedURI: (written: String, resolved: String)?
        var discontinuitySequence = discontinuitySequence
        var startTime = 0.0
        var bitrate: Int?
        var programDateTime: HLSDateTime?
        let firstSequence = firstListedMediaSequence
        // The keys in effect, resolved once per change; only IVs taken from the media sequence vary per segment.
        var keysInEffect: [ResolvedKey] = []
        var derivesIV = false
        func apply(_ written: ArraySlice<EncryptionKey>) {
            for key in written {
                if key.method == .noEncryption {
                    keys = []
                    resolvedKeyURIs = []
                } else if let existing = keys.firstIndex(where: { $0.effectiveKeyFormat == key.effectiveKeyFormat }) {
                    keys[existing] = key
                    resolvedKeyURIs[existing] = key.uri.map(resolve)
                } else {
                    keys.append(key)
                    resolvedKeyURIs.append(key.uri.map(resolve))
                }
            }
            guard !written.isEmpty else { return }
            keysInEffect = zip(keys, resolvedKeyURIs).map { key, uri in
                ResolvedKey(
                    method: key.method, uri: uri, iv: key.iv ?? [], isIVExplicit: key.iv != nil,
                    keyFormat: key.effectiveKeyFormat, keyFormatVersions: key.keyFormatVersions)
            }
            derivesIV = keys.contains { $0.iv == nil }
        }
        for (index, segment) in segments.enumerated() {
            let annotations = segment.annotations
            // The keys written before the map apply to it; those after it only to the segments.
            let beforeMap =
                annotations.map == nil
                ? annotations.keys.count
                : min(
                    annotations.keysBeforeMap ?? annotations.keys.count, annotations.keys.count)
            apply(annotations.keys.prefix(beforeMap))
            if let written = annotations.map {
                var range: ByteRange?
                if let byteRange = written.byteRange {
                    let offset = byteRange.offset ?? 0
                    range = ByteRange(validating: offset, offset &+ byteRange.length)
                }
                map = ResolvedMap(uri: resolve(written.uri), byteRange: range, keys: keysInEffect)
            }
            apply(annotations.keys.dropFirst(beforeMap))
            if let value = annotations.bitrate { bitrate = value }
            if segment.isDiscontinuity { discontinuitySequence &+= 1 }
            let uri: String
            if let last = lastResolvedURI, last.written == segment.uri {
                uri = last.resolved
            } else {
                uri = resolve(segment.uri)
                lastResolvedURI = (segment.uri, uri)
            }
            var byteRange: ByteRange?
            if let written = segment.byteRange {
                let offset: Int64
                if let explicit = written.offset {
                    offset = explicit
                } else if let previous = previousRange, previous.uri == segment.uri {
                    offset = previous.end
                } else {
                    offset = 0
                }
                byteRange = ByteRange(validating: offset, offset &+ written.length)
                previousRange = (segment.uri, offset &+ written.length)
            } else {
                previousRange = nil
            }
            if let written = segment.programDateTime {
                programDateTime = written
            } else if index > 0, let previous = programDateTime {
                programDateTime = previous.adding(seconds: segments[index - 1].duration)
            }
            let mediaSequence = firstSequence &+ UInt64(index)
            var resolvedKeys = keysInEffect
            if derivesIV {
                let iv = AES128CBC.iv(mediaSequence: mediaSequence)
                for keyIndex in resolvedKeys.indices where !resolvedKeys[keyIndex].isIVExplicit {
                    resolvedKeys[keyIndex].iv = iv
                }
            }
            try body(
                ResolvedSegment(
                    index: index, mediaSequence: mediaSequence, discontinuitySequence: discontinuitySequence, uri: uri,
                    duration: segment.duration, startTime: startTime, byteRange: byteRange, keys: resolvedKeys,
                    map: map,
                    programDateTime: index < leadingDates.count ? leadingDates[index] : programDateTime,
                    isDiscontinuity: segment.isDiscontinuity, isGap: segment.isGap,
                    bitrate: bitrate))
            startTime += segment.duration
        }
    }

    /// The program date-times of the segments before the first EXT-X-PROGRAM-DATE-TIME, counted back
    /// from it by their durations (`nil` from where a date would leave the representable range).
    private func datesBeforeFirstProgramDateTime() -> [HLSDateTime?] {
        guard let first = segments.firstIndex(where: { $0.programDateTime != nil }), first > 0,
            var date = segments[first].programDateTime
        else { return [] }
        var dates = [HLSDateTime?](repeating: nil, count: first)
        for index in stride(from: first - 1, through: 0, by: -1) {
            guard let earlier = date.adding(seconds: -segments[index].duration) else { break }
            dates[index] = earlier
            date = earlier
        }
        return dates
    }
}
