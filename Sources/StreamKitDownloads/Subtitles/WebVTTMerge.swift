/// The WebVTT segments of an HLS subtitle rendition merged into one file whose times run from
/// the start of the package's media.
///
/// RFC 8216bis §3.5: a segment's `X-TIMESTAMP-MAP` says that its cue time `LOCAL` is the media
/// time `MPEGTS` (90 kHz), so a cue at `t` plays at `t - LOCAL + MPEGTS / 90000` on the media's
/// clock. That clock does not start at zero (ffmpeg's MPEG-TS muxer starts at 1.4 s, GStreamer's at
/// an hour); the first mapped segment's `MPEGTS` is taken as where the media starts (packagers
/// map the start of the segment, and the first segment starts with the media) and taken off every
/// cue, so the merged times count from the start of the package, as a player shows them and as
/// ffmpeg gives them for the rendition. Timestamps that wrap at 2^33 are unwrapped. A segment
/// without a map is taken as already on that timeline (its cue times are kept). Cues repeated in
/// consecutive segments (a cue that spans a boundary is written in both) appear once.
public enum WebVTTMerge {
    /// The 33-bit range of MPEG-2 timestamps.
    static let mpegtsWrap: Int64 = 1 << 33

    /// One file holding the cues of `segments`, in playlist order, without a timestamp map.
    public static func merge(_ segments: [WebVTTFile]) -> WebVTTFile {
        var base: Int64?
        var previousMPEGTS: Int64?
        var seen: Set<CueKey> = []
        var identifiers: Set<String> = []
        var merged: [WebVTTCue] = []
        for segment in segments {
            var shift: Int64 = 0
            if let map = segment.timestampMap {
                let mpegts = unwrapped(map.mpegts, near: previousMPEGTS)
                previousMPEGTS = mpegts
                if base == nil { base = mpegts }
                shift = mpegts - (base ?? mpegts) - map.local * 90
            }
            for var cue in segment.cues {
                cue.start = milliseconds(ticks: cue.start * 90 + shift)
                cue.end = milliseconds(ticks: cue.end * 90 + shift)
                guard cue.end > 0 else { continue }
                cue.start = max(cue.start, 0)
                guard seen.insert(CueKey(start: cue.start, end: cue.end, text: cue.text)).inserted else { continue }
                if let identifier = cue.identifier, !identifiers.insert(identifier).inserted { cue.identifier = nil }
                merged.append(cue)
            }
        }
        // Stable by start time: a player shows cues in that order, and so does SubRip's numbering.
        let ordered = merged.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
        return WebVTTFile(cues: ordered.map(\.element))
    }

    /// `value` plus the multiple of 2^33 that puts it nearest `previous`.
    static func unwrapped(_ value: Int64, near previous: Int64?) -> Int64 {
        guard let previous else { return value }
        var result = value + (previous - value) / mpegtsWrap * mpegtsWrap
        while result - previous > mpegtsWrap / 2 { result -= mpegtsWrap }
        while previous - result > mpegtsWrap / 2 { result += mpegtsWrap }
        return result
    }

    /// 90 kHz ticks in milliseconds, rounded to the nearest.
    static func milliseconds(ticks: Int64) -> Int64 {
        let shifted = ticks + 45
        return shifted >= 0 ? shifted / 90 : -((-shifted + 89) / 90)
    }

    private struct CueKey: Hashable {
        let start: Int64
        let end: Int64
        let text: String
    }
}
