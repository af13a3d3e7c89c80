import StreamKitHLS

/// The media playlist of a recording in progress (RFC 8216bis §4.4, EXT-X-PLAYLIST-TYPE:EVENT):
/// every segment stays listed, segments are only added, and `EXT-X-ENDLIST` closes it.
///
/// EXT-X-TARGETDURATION must not change once a client has read the playlist (§6.2.1), and no
/// segment may be longer (§4.4.3.1), so it is settled with the first segment, from the segment
/// duration aimed at and the stream's key frame interval (``targetDuration(aim:keyFrameInterval:firstSegment:)``),
/// and the segmenter is told to cut by time at that length (``TransportStreamSegmenter/maximumDuration``).
/// `EXT-X-INDEPENDENT-SEGMENTS` is not claimed: such a cut starts a segment without a key frame.
public struct LiveMediaPlaylist: Sendable {
    /// The playlist so far.
    public private(set) var playlist: MediaPlaylist
    /// The segment duration aimed at, in milliseconds.
    private let aim: Int64

    /// - Parameter targetDuration: The segment duration aimed at, in seconds.
    public init(targetDuration: Double) {
        aim = max(1, Int64((targetDuration * 1_000).rounded()))
        playlist = MediaPlaylist(
            version: 3, targetDuration: Int((Double(aim) / 1_000).rounded(.up)), playlistType: .event)
    }

    /// Continues the playlist `earlier` (its file's bytes), written by a recording that stopped
    /// without ending it (a process that was killed, a task resumed): its segments and target
    /// duration stay, and `EXT-X-ENDLIST` goes.
    ///
    /// - Parameters:
    ///   - earlier: The media playlist written before.
    ///   - targetDuration: The segment duration aimed at, in seconds (used only if `earlier` has no target duration).
    /// - Returns: `nil` when `earlier` is not a media playlist with segments.
    public init?(continuing earlier: [UInt8], targetDuration: Double) {
        guard case .media(let parsed) = try? Playlist.parse(earlier).playlist, !parsed.segments.isEmpty else {
            return nil
        }
        self.init(targetDuration: targetDuration)
        playlist.targetDuration = parsed.targetDuration ?? playlist.targetDuration
        playlist.segments = parsed.segments
    }

    /// The target duration in whole seconds for segments cut at the first key frame after `aim`
    /// milliseconds in a stream whose key frames come every `keyFrameInterval` milliseconds (0 when
    /// unknown: audio only, or one key frame so far): the multiple of the interval that reaches the
    /// aim, and never less than the first segment's rounded length.
    public static func targetDuration(aim: Int64, keyFrameInterval: Int64, firstSegment: Double) -> Int {
        let longest =
            keyFrameInterval > 0 ? (aim + keyFrameInterval - 1) / keyFrameInterval * keyFrameInterval : aim
        return max(1, Int((Double(longest) / 1_000).rounded(.up)), Int(firstSegment.rounded()))
    }

    /// The target duration, in seconds.
    public var targetDuration: Int { playlist.targetDuration ?? 1 }

    /// The segments listed.
    public var segmentCount: Int { playlist.segments.count }

    /// The sum of the segment durations, in seconds.
    public var duration: Double { playlist.totalDuration }

    /// Adds a finished segment; the first settles the target duration, given the stream's key
    /// frame interval in milliseconds (0 when unknown).
    public mutating func append(uri: String, duration: Double, discontinuity: Bool = false, keyFrameInterval: Int64 = 0)
    {
        if playlist.segments.isEmpty {
            playlist.targetDuration = Self.targetDuration(
                aim: aim, keyFrameInterval: keyFrameInterval, firstSegment: duration)
        }
        playlist.segments.append(MediaSegment(uri: uri, duration: duration, isDiscontinuity: discontinuity))
    }

    /// Marks the end of the stream: no segment follows.
    public mutating func end() { playlist.hasEndList = true }

    /// The playlist's text.
    public func serialized() -> String { playlist.serialized() }
}
