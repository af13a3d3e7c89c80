import StreamKitHLS

/// The media playlist of a recording in progress (RFC 8216bis §4.4, EXT-X-PLAYLIST-TYPE:EVENT):
/// every segment stays listed, segments are only added, and `EXT-X-ENDLIST` closes it.
public struct LiveMediaPlaylist: Sendable {
    /// The playlist so far.
    public private(set) var playlist: MediaPlaylist
    private let minimumTargetDuration: Int

    /// - Parameter targetDuration: The segment duration aimed at, in seconds; EXT-X-TARGETDURATION
    ///   is its ceiling, or that of the longest segment if one is longer.
    public init(targetDuration: Double) {
        minimumTargetDuration = max(1, Int(targetDuration.rounded(.up)))
        playlist = MediaPlaylist(
            version: 3, targetDuration: minimumTargetDuration, playlistType: .event, independentSegments: true)
    }

    /// The segments listed.
    public var segmentCount: Int { playlist.segments.count }

    /// The sum of the segment durations, in seconds.
    public var duration: Double { playlist.totalDuration }

    /// Adds a finished segment.
    public mutating func append(uri: String, duration: Double, discontinuity: Bool = false) {
        playlist.segments.append(MediaSegment(uri: uri, duration: duration, isDiscontinuity: discontinuity))
        let ceiling = Int(duration.rounded(.up))
        if ceiling > playlist.targetDuration ?? 0 { playlist.targetDuration = ceiling }
    }

    /// Marks the end of the stream: no segment follows.
    public mutating func end() { playlist.hasEndList = true }

    /// The playlist's text.
    public func serialized() -> String { playlist.serialized() }
}
