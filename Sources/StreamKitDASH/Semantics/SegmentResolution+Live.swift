import StreamKitHLS

extension TemplateContext {
    /// A dynamic MPD's `@duration` segments available on `clock`, from the first of the time
    /// shift window to the last whole one, and the index of the first in the Period (its
    /// `$Number$` is `startNumber` plus it). The segment ending at the live edge is left for the
    /// next reload: the clock says it is whole, the server may still be writing it. A Period with
    /// a duration ends its segments there.
    func liveSlots(
        _ timing: SegmentTiming, timescale: UInt64, clock: LiveClock
    ) throws(SegmentResolutionError) -> (first: UInt64, slots: [(time: UInt64, duration: UInt64)]) {
        guard let duration = timing.duration, duration > 0 else {
            throw SegmentResolutionError("a SegmentTemplate has neither a SegmentTimeline nor a duration")
        }
        let seconds = Double(duration) / Double(timescale)
        guard clock.elapsed.isFinite, seconds.isFinite, seconds > 0 else {
            throw SegmentResolutionError("a live SegmentTemplate of \(seconds) s segments")
        }
        // Whole segments since the Period's start, less the one at the edge.
        var end = (clock.elapsed / seconds).rounded(.down) - 1
        if let periodDuration { end = min(end, (periodDuration / seconds).rounded(.up)) }
        guard end >= 1 else { return (0, []) }
        guard end < 1e15 else {
            throw SegmentResolutionError("the live edge is \(end) segments after the Period's start")
        }
        let depth = clock.timeShiftBufferDepth ?? LiveClock.defaultDepth
        let window = min(max(1, (depth / seconds).rounded(.down)), Double(maximumSegments))
        let first = UInt64(max(0, end - window))
        let offset = timing.presentationTimeOffset ?? 0
        var slots: [(time: UInt64, duration: UInt64)] = []
        for index in first..<UInt64(end) {
            let (ticks, overflow) = index.multipliedReportingOverflow(by: duration)
            let (time, sumOverflow) = offset.addingReportingOverflow(ticks)
            guard !overflow, !sumOverflow else { throw SegmentResolutionError("segment times overflow") }
            slots.append((time, duration))
        }
        return (first, slots)
    }
}

/// Keeps a live MPD's segments numbered the same from one reload to the next, by their time.
/// The media sequence of the MPD read as HLS is each segment's `$Number$`, which a server that
/// addresses its segments by `$Time$` may leave at `startNumber` while its window slides: the
/// recorder would take every reload for the one before. Pure.
public enum DASHLiveNumbering {
    /// The last segment a reload gave: its `$Time$` and the media sequence it was given.
    public struct Mark: Hashable, Sendable {
        public var time: UInt64
        public var duration: UInt64
        public var sequence: UInt64

        public init(time: UInt64, duration: UInt64, sequence: UInt64) {
            self.time = time
            self.duration = duration
            self.sequence = sequence
        }
    }

    /// `playlist` renumbered after `mark`: the segment at the mark's time keeps its sequence;
    /// a window that starts right after it continues it; one that starts later leaves a gap of
    /// one (the recorder marks the discontinuity). Unchanged without a mark, or when its segments
    /// carry no time (``DASHSegmentTag``) or lie before the mark.
    ///
    /// - Returns: The playlist, and the mark of its last segment for the next reload.
    public static func continuing(_ playlist: MediaPlaylist, after mark: Mark?) -> (MediaPlaylist, Mark?) {
        let times = playlist.segments.map { DASHSegmentTag(lines: $0.extraLines) }
        guard let lastTag = times.last ?? nil, let lastTime = lastTag.time, let lastDuration = lastTag.duration else {
            return (playlist, nil)
        }
        var result = playlist
        if let mark, let firstTime = times.first??.time {
            if let position = times.firstIndex(where: { $0?.time == mark.time }), mark.sequence >= UInt64(position) {
                result.mediaSequence = mark.sequence - UInt64(position)
            } else if firstTime == mark.time &+ mark.duration {
                result.mediaSequence = mark.sequence &+ 1
            } else if firstTime > mark.time {
                result.mediaSequence = mark.sequence &+ 2
            }
        }
        let next = Mark(
            time: lastTime, duration: lastDuration,
            sequence: result.mediaSequence &+ UInt64(result.segments.count - 1))
        return (result, next)
    }
}
