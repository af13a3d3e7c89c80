import StreamKitCore
import StreamKitDASH
import StreamKitHLS

/// Writes a DASH package's `manifest.mpd`: a static MPD over the package's files, with the
/// source's Periods, AdaptationSets and Representations (their attributes, Roles, Labels,
/// properties and unknown elements kept) but only the Representations downloaded, and each
/// one's segments described again:
///
/// - segments in files of their own, every one present: a SegmentTemplate
///   (`video/$Number%05d$.m4s`) with a SegmentTimeline of the source's times;
/// - segments with gaps (`--skip-broken`, `--exclude-segments`): a SegmentList naming each file,
///   with a SegmentTimeline whose times step over the missing ones;
/// - byte ranges of one file (SegmentBase or SegmentList with `mediaRange` at the source): a
///   SegmentList of `mediaRange`s over the package's copy of the file.
///
/// Times keep the source's timescale; each Period's presentation time offset is its earliest
/// segment, so that a live recording plays from 0. Pure.
enum DASHPackageComposer {
    /// One Representation's segments in one Period.
    private struct Run {
        var rendition: Int
        var tag: DASHSegmentTag
        var segments: [(segment: RecordedSegment, time: UInt64, duration: UInt64)] = []
    }

    static func compose<Segments: Sequence<RecordedSegment>>(
        source: MPD, renditions: [(folder: String, segments: Segments)]
    ) -> MPD {
        // The runs of each source Period, in rendition order.
        var runs: [Int: [Run]] = [:]
        for (index, rendition) in renditions.enumerated() {
            var current: Run?
            var nextTime: UInt64 = 0
            for recorded in rendition.segments {
                // A tag that does not name a Representation of `source` (a live MPD that dropped
                // it) has nothing to describe the segment with.
                guard let tag = DASHSegmentTag(lines: recorded.segment.extraLines),
                    tag.period < source.periods.count,
                    tag.adaptationSet < source.periods[tag.period].adaptationSets.count,
                    tag.representation
                        < source.periods[tag.period].adaptationSets[tag.adaptationSet].representations.count
                else { continue }
                if current?.tag.period != tag.period {
                    if let run = current { runs[run.tag.period, default: []].append(run) }
                    current = Run(rendition: index, tag: tag)
                    nextTime = tag.time ?? 0
                }
                let duration = tag.duration ?? ticks(recorded.segment.duration * Double(tag.timescale))
                let time = tag.time ?? nextTime
                nextTime = time &+ duration
                // Left out of the package: no file, a gap in the timeline.
                guard recorded.file != nil, recorded.excluded == nil, !recorded.skipped else { continue }
                current?.segments.append((recorded, time, duration))
            }
            if let run = current { runs[run.tag.period, default: []].append(run) }
        }

        var output = MPD(type: .static)
        output.minBufferTime = source.minBufferTime ?? 2
        output.other = source.other.filter { $0.name.hasPrefix("xmlns") }
        var presentationStart = 0.0
        for periodIndex in source.periods.indices {
            let periodRuns = (runs[periodIndex] ?? []).filter { !$0.segments.isEmpty }
            guard !periodRuns.isEmpty else { continue }
            let sourcePeriod = source.periods[periodIndex]
            // The Period starts at its earliest segment and ends at its latest one's end.
            let starts = periodRuns.map { Double($0.segments[0].time) / Double($0.tag.timescale) }
            let ends = periodRuns.map { run in
                Double(run.segments.last!.time &+ run.segments.last!.duration) / Double(run.tag.timescale)
            }
            let origin = starts.min()!
            let duration = Self.milliseconds(ends.max()! - origin)
            var period = Period(id: sourcePeriod.id, start: Self.milliseconds(presentationStart), duration: duration)
            for run in periodRuns {
                let sourceSet = sourcePeriod.adaptationSets[run.tag.adaptationSet]
                var set = sourceSet
                set.baseURLs = []
                set.segments = SegmentInformation()
                var representation = sourceSet.representations[run.tag.representation]
                representation.baseURLs = []
                representation.segments = segments(
                    of: run, folder: renditions[run.rendition].folder,
                    presentationTimeOffset: ticks(origin * Double(run.tag.timescale)))
                set.representations = [representation]
                period.adaptationSets.append(set)
            }
            output.periods.append(period)
            presentationStart += duration
        }
        output.mediaPresentationDuration = Self.milliseconds(presentationStart)
        // The profile of the forms written (the source's may be on-demand, or name others): the
        // live profile's templates, else the full profile, which allows lists.
        let templatesOnly = output.periods.allSatisfy { period in
            period.adaptationSets.allSatisfy { $0.representations.allSatisfy { $0.segments.template != nil } }
        }
        output.profiles = templatesOnly ? "urn:mpeg:dash:profile:isoff-live:2011" : "urn:mpeg:dash:profile:full:2011"
        return output
    }

    /// A run's segment description over the package's files.
    private static func segments(of run: Run, folder: String, presentationTimeOffset: UInt64) -> SegmentInformation {
        var timing = SegmentTiming()
        timing.timescale = run.tag.timescale
        timing.presentationTimeOffset = presentationTimeOffset
        let first = run.segments[0].segment
        if let map = first.localMap {
            timing.initialization = URLWithRange(
                sourceURL: folder + "/" + map.uri, range: map.range.map(Self.rangeText))
        }
        timing.timeline = timeline(run.segments.map { ($0.time, $0.duration) })
        let references = run.segments.map(\.segment.local)
        if references.allSatisfy({ $0.range != nil }) {
            // Ranges of files (one, normally): a list of mediaRanges.
            return SegmentInformation(
                list: SegmentList(
                    timing: timing,
                    segments: references.map {
                        SegmentList.SegmentURL(media: folder + "/" + $0.uri, mediaRange: $0.range.map(Self.rangeText))
                    }))
        }
        // Files of their own named by number: a template, when numbers follow each other and the
        // extension is the same; a list otherwise.
        let names = references.map(\.uri)
        let numbers = run.segments.map(\.segment.localSequence)
        let ext = names[0].split(separator: ".").last.map(String.init) ?? "m4s"
        let consecutive = zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 &+ 1 }
        let numbered =
            references.allSatisfy { $0.range == nil }
            && zip(names, numbers).allSatisfy { $0 == PackageLayout.numberedName($1, extension: ext) }
        if consecutive, numbered {
            timing.startNumber = numbers[0]
            var template = SegmentTemplate(timing: timing, media: folder + "/$Number%05d$." + ext)
            template.timing.initialization = nil
            template.initializationTemplate = timing.initialization?.sourceURL
            if timing.initialization?.range != nil {
                // A template's initialization cannot name a range: keep it as an element.
                template.initializationTemplate = nil
                template.timing.initialization = timing.initialization
            }
            return SegmentInformation(template: template)
        }
        return SegmentInformation(
            list: SegmentList(
                timing: timing, segments: names.map { SegmentList.SegmentURL(media: folder + "/" + $0) }))
    }

    /// S elements: `t` on the first and after any gap, runs of equal durations folded with `r`.
    static func timeline(_ slots: [(time: UInt64, duration: UInt64)]) -> [TimelineEntry] {
        var entries: [TimelineEntry] = []
        var expected: UInt64?
        for (time, duration) in slots {
            if time == expected, var last = entries.last, last.d == duration {
                last.r += 1
                entries[entries.count - 1] = last
            } else {
                entries.append(TimelineEntry(t: time == expected ? nil : time, d: duration))
            }
            expected = time &+ duration
        }
        return entries
    }

    /// `seconds` up to the next millisecond (after the noise of the division: 20.031999999999996
    /// is 20.032), so that the MPD's durations read as written and cover the last sample.
    static func milliseconds(_ seconds: Double) -> Double {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return ((seconds * 1_000_000).rounded() / 1000).rounded(.up) / 1000
    }

    /// `value` ticks, to the nearest; 0 for what is not a positive number, `UInt64.max` past it.
    static func ticks(_ value: Double) -> UInt64 {
        guard value.isFinite, value > 0 else { return 0 }
        return value < 1.8e19 ? UInt64(value.rounded()) : .max
    }

    private static func rangeText(_ range: ByteRange) -> ByteRangeText {
        ByteRangeText(first: range.lowerBound, last: range.upperBound - 1)
    }
}
