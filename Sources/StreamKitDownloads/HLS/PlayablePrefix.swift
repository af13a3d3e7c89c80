/// How much of a package still downloading a player can already play: for each rendition, how
/// many segments from the first on its growing playlist lists. Pure.
///
/// A rendition's ready head is the run of segments from the first whose files are in place (or
/// given up as gaps). The renditions are cut at the same media time, the earliest end among their
/// ready heads, so that a player never finds video without its audio or subtitles: a rendition
/// lists the segments of its ready head that end by then (give or take `tolerance`, since
/// renditions cut their segments at slightly different times); one complete on disk lists up
/// to the segment that covers the cut.
struct PlayablePrefix: Hashable, Sendable {
    /// Segments listed, per rendition.
    var counts: [Int]

    /// One rendition's segments as the prefix sees them.
    struct Rendition: Sendable {
        /// Each segment's duration in seconds, in playlist order.
        var durations: [Double]
        /// How many segments from the first are ready.
        var ready: Int
        /// No segment will be added (a VOD rendition, or a live one whose recording ended).
        var complete: Bool
    }

    /// Seconds by which a rendition's listed segments may end after the common cut.
    static let defaultTolerance = 0.5

    /// The aligned prefix of `renditions`.
    static func aligned(_ renditions: [Rendition], tolerance: Double = defaultTolerance) -> PlayablePrefix {
        var ends: [Double] = []
        for rendition in renditions {
            let ready = min(max(rendition.ready, 0), rendition.durations.count)
            if rendition.complete && ready == rendition.durations.count {
                ends.append(.infinity)
            } else {
                ends.append(rendition.durations[..<ready].reduce(0) { $0 + max($1, 0) })
            }
        }
        let cut = ends.min() ?? .infinity
        let counts = zip(renditions, ends).map { rendition, end in
            let ready = min(max(rendition.ready, 0), rendition.durations.count)
            guard cut.isFinite else { return ready }
            var elapsed = 0.0
            var count = 0
            while count < ready {
                let duration = max(rendition.durations[count], 0)
                if end.isFinite {
                    if elapsed + duration > cut + tolerance { break }
                } else if elapsed >= cut {
                    // Complete on disk: up to the segment that covers the cut (a subtitle track
                    // of one long file is listed).
                    break
                }
                elapsed += duration
                count += 1
            }
            return count
        }
        return PlayablePrefix(counts: counts)
    }

    /// Whether every rendition that has segments lists at least one: a playlist set a player can
    /// start.
    func isPlayable(segmentCounts: [Int]) -> Bool {
        guard counts.count == segmentCounts.count, segmentCounts.contains(where: { $0 > 0 }) else { return false }
        return zip(counts, segmentCounts).allSatisfy { listed, planned in planned == 0 || listed > 0 }
    }
}

/// When the growing playlists of a package are written again: at once the first time a prefix is
/// playable (playback starts within seconds), then when it grew, at most once per `interval` and
/// never more often than ten times what the last write took (a long playlist on a slow disk does
/// not keep the disk busy), yet at least every ``longestPause`` while it grows: the time a write
/// takes counts waits for the CPU on a busy machine too, and one write slowed to a second held
/// the next back for ten, longer than a player following the playlist waits. Pure.
struct GrowingPlaylistGate: Sendable {
    /// The longest time between two writes while the prefix grows.
    static let longestPause = Duration.seconds(5)
    /// The least time between two writes.
    let interval: Duration
    /// The prefix last written.
    private(set) var published: PlayablePrefix?
    private var lastWrite: ContinuousClock.Instant?
    private var lastCost = Duration.zero

    init(interval: Duration) {
        self.interval = interval
    }

    /// Whether `prefix`, playable or not, is to be written at `now`.
    func isDue(_ prefix: PlayablePrefix, playable: Bool, at now: ContinuousClock.Instant) -> Bool {
        guard playable, prefix != published else { return false }
        guard let lastWrite else { return true }
        return lastWrite.duration(to: now) >= min(max(interval, lastCost * 10), Self.longestPause)
    }

    /// `prefix` was written, starting at `start` and done by `end`.
    mutating func written(
        _ prefix: PlayablePrefix, startedAt start: ContinuousClock.Instant, endedAt end: ContinuousClock.Instant
    ) {
        published = prefix
        lastWrite = end
        lastCost = start.duration(to: end)
    }
}
