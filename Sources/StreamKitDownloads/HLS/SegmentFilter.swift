import Foundation
import StreamKitHLS

/// Which segments of a rendition go into a package, by the selection's time sections
/// (`--section`) and URI patterns (`--exclude-segments`). Pure: the engine asks it about each
/// segment it plans, and a left-out segment stays in the plan without a file, so that the
/// package's playlist closes the gap with EXT-X-DISCONTINUITY (``PlaylistComposer/GapForm/omitted``).
struct SegmentFilter: Sendable {
    /// Why a segment is left out of the package.
    enum Exclusion: Hashable, Sendable {
        /// It covers no part of any section.
        case outsideSections
        /// Its absolute URI matches a pattern.
        case matchedPattern
    }

    /// The sections, merged and in time order; empty for the whole stream.
    let sections: [TimeSection]
    /// The compiled patterns.
    let patterns: [NSRegularExpression]

    /// Slack for segment times summed from rounded durations.
    static let tolerance = 0.001

    /// A filter that keeps everything.
    init() {
        sections = []
        patterns = []
    }

    /// The filter of `selection`.
    ///
    /// - Throws: ``HLSDownloadError`` `invalidSegmentFilter` for a pattern that is not a regular expression.
    init(_ selection: HLSSelection) throws(HLSDownloadError) {
        sections = TimeSection.merged(selection.sections)
        var compiled: [NSRegularExpression] = []
        for pattern in selection.excludedSegments {
            do {
                compiled.append(try NSRegularExpression(pattern: pattern))
            } catch {
                throw HLSDownloadError(
                    .invalidSegmentFilter, detail: "--exclude-segments '\(pattern)' is not a regular expression")
            }
        }
        patterns = compiled
    }

    /// Why a segment is left out, or `nil` when it is kept. Sections apply to VOD only (a live
    /// recording's section picks where it begins: ``liveStart(durations:)``); a segment that
    /// covers any part of a section is kept whole.
    ///
    /// - Parameters:
    ///   - uri: The segment's resolved absolute URI.
    ///   - start: Seconds from the playlist's first segment to this one.
    ///   - duration: Its EXTINF duration.
    ///   - live: Whether the rendition is recorded live.
    func exclusion(uri: String, start: Double, duration: Double, live: Bool) -> Exclusion? {
        if !live, !sections.isEmpty,
            !sections.contains(where: { Self.covers($0, start: start, duration: duration) })
        {
            return .outsideSections
        }
        let range = NSRange(uri.startIndex..., in: uri)
        if patterns.contains(where: { $0.firstMatch(in: uri, range: range) != nil }) { return .matchedPattern }
        return nil
    }

    /// Whether the segment from `start` lasting `duration` covers part of `section`.
    static func covers(_ section: TimeSection, start: Double, duration: Double) -> Bool {
        let afterStart =
            duration > 0 ? start + duration > section.start + tolerance : start >= section.start - tolerance
        let beforeEnd = section.end.map { start < $0 - tolerance } ?? true
        return afterStart && beforeEnd
    }

    /// For VOD: refuses a section that starts at or after the end of a stream of `duration` seconds.
    ///
    /// - Throws: ``HLSDownloadError`` `invalidSegmentFilter`, naming the section and the duration.
    func check(duration: Double, url: String) throws(HLSDownloadError) {
        for section in sections where section.start >= duration - Self.tolerance {
            throw HLSDownloadError(
                .invalidSegmentFilter, url: url,
                detail: "--section \(section) starts after the end of the stream, which lasts "
                    + "\(TimeSection.clock(Int64((duration * 1000).rounded()))) (\(Self.seconds(duration)) s)")
        }
    }

    /// For a live recording: the position of the segment of the window where the recording begins
    /// (the one holding the section's start, times counted from the window's first segment).
    ///
    /// - Parameter durations: The window's segment durations, in order.
    /// - Throws: ``HLSDownloadError`` `invalidSegmentFilter` for more than one section, or a start
    ///   past the window.
    func liveStart(durations: [Double], url: String) throws(HLSDownloadError) -> Int {
        guard let section = sections.first else { return 0 }
        guard sections.count == 1 else {
            throw HLSDownloadError(
                .invalidSegmentFilter, url: url,
                detail: "a live recording takes one --section (its start in the DVR window, its end a length), "
                    + "got \(sections.map(\.description).joined(separator: ", "))")
        }
        var start = 0.0
        for (position, duration) in durations.enumerated() {
            if Self.covers(
                TimeSection(startMilliseconds: section.startMilliseconds, endMilliseconds: nil),
                start: start, duration: duration)
            {
                return position
            }
            start += duration
        }
        throw HLSDownloadError(
            .invalidSegmentFilter, url: url,
            detail: "--section \(section) starts after the end of the live stream's window, which lasts "
                + "\(TimeSection.clock(Int64((start * 1000).rounded()))) (\(Self.seconds(start)) s)")
    }

    /// How many seconds a live recording takes at most: the section's length (from its start, or
    /// the window's first segment, to its end) or `liveDuration`, whichever is shorter.
    func recordingLimit(liveDuration: Double?) -> Double? {
        let sectionLength = sections.count == 1 ? sections[0].end.map { $0 - sections[0].start } : nil
        return [liveDuration, sectionLength].compactMap { $0 }.min()
    }

    private static func seconds(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? "\(Int64(rounded))" : "\(rounded)"
    }
}
