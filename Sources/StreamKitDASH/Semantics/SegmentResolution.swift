import StreamKitHLS

/// One resource to fetch: its absolute URL and, for part of a file, the bytes (both ends
/// included), with its place on the Period's timeline.
public struct DASHSegment: Hashable, Sendable {
    public var url: String
    public var range: ByteRangeText?
    /// Seconds from the Period's start.
    public var start: Double
    public var duration: Double
    /// `$Number$`, for templates and lists.
    public var number: UInt64?
    /// `$Time$`, in the timescale, for templates with a timeline.
    public var time: UInt64?
    /// The duration in the timescale, where the MPD gives one.
    public var ticks: UInt64?

    public init(
        url: String, range: ByteRangeText? = nil, start: Double = 0, duration: Double = 0, number: UInt64? = nil,
        time: UInt64? = nil, ticks: UInt64? = nil
    ) {
        self.url = url
        self.range = range
        self.start = start
        self.duration = duration
        self.number = number
        self.time = time
        self.ticks = ticks
    }

    /// The URL and the range (`URL#first-last`): one resource, or one part of it.
    public var identity: String { url + (range.map { "#" + $0.text } ?? "") }
}

/// A Representation's resources: its initialization segment, its media segments, and, for a
/// SegmentBase with an `indexRange`, where its `sidx` box is (the segments then come from it,
/// ``SegmentIndex``).
public struct ResolvedRepresentation: Hashable, Sendable {
    public var baseURL: String
    public var initialization: DASHSegment?
    public var segments: [DASHSegment]
    public var index: DASHSegment?
    public var timescale: UInt64
    /// The presentation time, in the timescale, at the Period's start.
    public var presentationTimeOffset: UInt64 = 0
}

/// What resolving a Representation's segments refused.
public struct SegmentResolutionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why, by kind.
    public enum Kind: Hashable, Sendable {
        /// The MPD describes more segments than the caller's limit (`maximumSegments`): a valid
        /// MPD, perhaps, that a higher limit would take.
        case tooManySegments
        /// The description is broken: numbers out of range, a template without media, …
        case invalid
    }

    public var kind: Kind
    public var reason: String
    public init(_ reason: String, kind: Kind = .invalid) {
        self.kind = kind
        self.reason = reason
    }
    public var description: String { reason }
}

extension MPD {
    /// The resources of `representation` of `adaptationSet` in Period `periodIndex`, with every
    /// URL resolved against `mpdURL` through the BaseURLs of each level (the first of each), and
    /// the segment description inherited from the levels above (§5.3.9). A static MPD's
    /// timeline; a dynamic MPD's SegmentTimeline as it stands, and its `@duration` segments
    /// available at `now` (seconds since 1970; see ``LiveClock``). At most `maximumSegments`
    /// segments (a timeline of a billion segments is refused, not expanded).
    public func resolve(
        periodIndex: Int, adaptationSet: AdaptationSet, representation: Representation, mpdURL: String,
        maximumSegments: Int = 2_000_000, now: Double? = nil
    ) throws(SegmentResolutionError) -> ResolvedRepresentation {
        let period = periods[periodIndex]
        var base = mpdURL
        for urls in [baseURLs, period.baseURLs, adaptationSet.baseURLs, representation.baseURLs] {
            if let first = urls.first, !first.isEmpty { base = resolveURI(first, against: base) }
        }
        let levels = [period.segments, adaptationSet.segments, representation.segments]
        let (periodStart, periodDuration) = periodTimes(periodIndex)
        var clock: LiveClock?
        if type == .dynamic, let now,
            let start = availabilityStartTime.flatMap(HLSDateTime.init)?.timeIntervalSince1970
        {
            clock = LiveClock(elapsed: now - start - periodStart, timeShiftBufferDepth: timeShiftBufferDepth)
        }
        let context = TemplateContext(
            representationID: representation.id, bandwidth: representation.bandwidth, base: base,
            periodDuration: periodDuration, maximumSegments: maximumSegments, clock: clock)
        if levels.contains(where: { $0.template != nil }) {
            return try context.template(SegmentInheritance.template(levels))
        }
        if levels.contains(where: { $0.list != nil }) {
            return try context.list(SegmentInheritance.list(levels))
        }
        // SegmentBase, or nothing: the whole resource at the BaseURL is the one segment.
        let segmentBase = SegmentInheritance.base(levels)
        let timescale = segmentBase.timing.timescale ?? 1
        var resolved = ResolvedRepresentation(
            baseURL: base, initialization: nil,
            segments: [DASHSegment(url: base, start: 0, duration: periodDuration ?? 0)], index: nil,
            timescale: timescale, presentationTimeOffset: segmentBase.timing.presentationTimeOffset ?? 0)
        if let initialization = segmentBase.timing.initialization {
            resolved.initialization = DASHSegment(
                url: initialization.sourceURL.map { resolveURI($0, against: base) } ?? base, range: initialization.range
            )
        }
        if let indexRange = segmentBase.indexRange {
            resolved.index = DASHSegment(url: base, range: indexRange)
        }
        return resolved
    }
}

extension MPD {
    /// Period `index`'s start and duration in the presentation (§5.3.2.1): its `@start`, else the
    /// previous Period's end, else 0; its `@duration`, else up to the next Period's start, else
    /// up to the presentation's end; `nil` when none of them is known (a live Period).
    public func periodTimes(_ index: Int) -> (start: Double, duration: Double?) {
        var start = 0.0
        var duration: Double?
        for position in 0...index {
            let period = periods[position]
            if position > 0 {
                guard let previous = duration else {
                    start = period.start ?? start
                    duration = period.duration
                    continue
                }
                start = period.start ?? start + previous
            } else {
                start = period.start ?? 0
            }
            duration = period.duration
            if duration == nil {
                let next = periods.dropFirst(position + 1).first?.start
                duration = (next ?? mediaPresentationDuration).map { $0 - start }
            }
        }
        return (start, duration.map { max(0, $0) })
    }
}

/// The levels' segment descriptions merged, the lowest level winning attribute by attribute.
enum SegmentInheritance {
    static func timing(_ timings: [SegmentTiming]) -> SegmentTiming {
        var merged = SegmentTiming()
        for timing in timings {
            merged.timescale = timing.timescale ?? merged.timescale
            merged.presentationTimeOffset = timing.presentationTimeOffset ?? merged.presentationTimeOffset
            merged.duration = timing.duration ?? merged.duration
            merged.startNumber = timing.startNumber ?? merged.startNumber
            merged.timeline = timing.timeline ?? merged.timeline
            merged.initialization = timing.initialization ?? merged.initialization
        }
        return merged
    }

    static func template(_ levels: [SegmentInformation]) -> SegmentTemplate {
        let templates = levels.compactMap(\.template)
        var merged = SegmentTemplate(timing: timing(templates.map(\.timing)))
        for template in templates {
            merged.media = template.media ?? merged.media
            merged.initializationTemplate = template.initializationTemplate ?? merged.initializationTemplate
            merged.index = template.index ?? merged.index
        }
        return merged
    }

    static func list(_ levels: [SegmentInformation]) -> SegmentList {
        let lists = levels.compactMap(\.list)
        return SegmentList(timing: timing(lists.map(\.timing)), segments: lists.last?.segments ?? [])
    }

    static func base(_ levels: [SegmentInformation]) -> SegmentBase {
        let bases = levels.compactMap(\.base)
        return SegmentBase(timing: timing(bases.map(\.timing)), indexRange: bases.last?.indexRange)
    }
}

/// Where a dynamic MPD's Period stands on the wall clock, for SegmentTemplates numbered by
/// `@duration` (ISO/IEC 23009-1 §5.3.9.5.3, A.3.4): segment k of the Period (from 0) is whole on
/// the server once the Period has run (k + 1) durations since `availabilityStartTime` + its
/// start, and stays for `timeShiftBufferDepth` after.
struct LiveClock {
    /// Seconds since the Period's start on the wall clock.
    var elapsed: Double
    var timeShiftBufferDepth: Double?
    /// The window without a `timeShiftBufferDepth`: the last 30 s, as a player joining the live
    /// edge would start (the MPD then promises every segment since the start, which few keep).
    static let defaultDepth = 30.0
}

struct TemplateContext {
    let representationID: String
    let bandwidth: Int
    let base: String
    let periodDuration: Double?
    let maximumSegments: Int
    var clock: LiveClock? = nil

    func template(_ template: SegmentTemplate) throws(SegmentResolutionError) -> ResolvedRepresentation {
        let timescale = template.timing.timescale ?? 1
        guard let media = template.media else { throw SegmentResolutionError("a SegmentTemplate has no media") }
        var resolved = ResolvedRepresentation(
            baseURL: base, initialization: nil, segments: [], index: nil, timescale: timescale,
            presentationTimeOffset: template.timing.presentationTimeOffset ?? 0)
        if let initialization = template.initializationTemplate {
            resolved.initialization = DASHSegment(
                url: resolveURI(
                    try SegmentTemplateText.expand(initialization, id: representationID, bandwidth: bandwidth),
                    against: base))
        } else if let initialization = template.timing.initialization, let source = initialization.sourceURL {
            resolved.initialization = DASHSegment(url: resolveURI(source, against: base), range: initialization.range)
        }
        let startNumber = template.timing.startNumber ?? 1
        let offset = template.timing.presentationTimeOffset ?? 0
        let scale = Double(timescale)
        var first: UInt64 = 0
        let slots: [(time: UInt64, duration: UInt64)]
        if template.timing.timeline == nil, let clock {
            (first, slots) = try liveSlots(template.timing, timescale: timescale, clock: clock)
        } else {
            slots = try self.slots(template.timing, timescale: timescale)
        }
        guard startNumber <= UInt64.max - first - UInt64(slots.count) else {
            throw SegmentResolutionError("startNumber \(startNumber) leaves no room for \(slots.count) segments")
        }
        // Compiled once: a long timeline expands the same template a million times.
        let compiled = try SegmentTemplateText.Compiled(media, id: representationID, bandwidth: bandwidth)
        let resolver = TemplateURLResolver(compiled, base: base)
        resolved.segments.reserveCapacity(slots.count)
        for (index, slot) in slots.enumerated() {
            let number = startNumber + first + UInt64(index)
            resolved.segments.append(
                DASHSegment(
                    url: try resolver.url(number: number, time: slot.time),
                    start: (Double(slot.time) - Double(offset)) / scale, duration: Double(slot.duration) / scale,
                    number: number, time: slot.time, ticks: slot.duration))
        }
        return resolved
    }

    func list(_ list: SegmentList) throws(SegmentResolutionError) -> ResolvedRepresentation {
        let timescale = list.timing.timescale ?? 1
        var resolved = ResolvedRepresentation(
            baseURL: base, initialization: nil, segments: [], index: nil, timescale: timescale,
            presentationTimeOffset: list.timing.presentationTimeOffset ?? 0)
        if let initialization = list.timing.initialization {
            resolved.initialization = DASHSegment(
                url: initialization.sourceURL.map { resolveURI($0, against: base) } ?? base, range: initialization.range
            )
        }
        guard list.segments.count <= maximumSegments else {
            throw SegmentResolutionError(
                "a SegmentList of more than \(maximumSegments) segments", kind: .tooManySegments)
        }
        let timeline = list.timing.timeline != nil ? try slots(list.timing, timescale: timescale) : []
        let startNumber = list.timing.startNumber ?? 1
        guard startNumber <= UInt64.max - UInt64(list.segments.count) else {
            throw SegmentResolutionError(
                "startNumber \(startNumber) leaves no room for \(list.segments.count) segments")
        }
        var start = 0.0
        var time = list.timing.presentationTimeOffset ?? 0
        for (index, segment) in list.segments.enumerated() {
            let ticks = index < timeline.count ? timeline[index].duration : list.timing.duration
            if index < timeline.count { time = timeline[index].time }
            let duration = Double(ticks ?? 0) / Double(timescale)
            resolved.segments.append(
                DASHSegment(
                    url: segment.media.map { resolveURI($0, against: base) } ?? base, range: segment.mediaRange,
                    start: start, duration: duration, number: startNumber + UInt64(index),
                    time: ticks == nil ? nil : time, ticks: ticks))
            start += duration
            time = time &+ (ticks ?? 0)
        }
        return resolved
    }

    /// The segments' start times and durations in the timescale: from the SegmentTimeline, or
    /// `duration` repeated over the Period.
    func slots(
        _ timing: SegmentTiming, timescale: UInt64
    ) throws(SegmentResolutionError) -> [(time: UInt64, duration: UInt64)] {
        // The Period's end in the timescale (saturating: a duration of 10^30 seconds is no end).
        let end = periodDuration.map { seconds -> UInt64 in
            let ticks = max(0, seconds) * Double(timescale) + Double(timing.presentationTimeOffset ?? 0)
            return ticks < 1.8e19 ? UInt64(ticks) : UInt64.max
        }
        var slots: [(time: UInt64, duration: UInt64)] = []
        if let timeline = timing.timeline {
            var time = timeline.first?.t ?? timing.presentationTimeOffset ?? 0
            for (position, entry) in timeline.enumerated() {
                if let t = entry.t { time = t }
                guard entry.d > 0 else { throw SegmentResolutionError("an S of a SegmentTimeline has d=0") }
                var repeats = entry.r
                if repeats < 0 {
                    // To the next S's start, else the end of the Period.
                    guard let until = position + 1 < timeline.count ? timeline[position + 1].t ?? nil : end else {
                        throw SegmentResolutionError(
                            "S@r=-1 with no end to repeat to (no next S@t, no Period duration)")
                    }
                    // Segments that start before `until`, less the first.
                    let count = until > time ? (until - time - 1) / entry.d + 1 : 1
                    guard count <= UInt64(maximumSegments) else {
                        throw SegmentResolutionError(
                            "a SegmentTimeline of more than \(maximumSegments) segments", kind: .tooManySegments)
                    }
                    repeats = Int64(count) - 1
                }
                guard repeats < Int64(maximumSegments) - Int64(slots.count) else {
                    throw SegmentResolutionError(
                        "a SegmentTimeline of more than \(maximumSegments) segments", kind: .tooManySegments)
                }
                for _ in 0...repeats {
                    slots.append((time, entry.d))
                    let (next, overflow) = time.addingReportingOverflow(entry.d)
                    guard !overflow else { throw SegmentResolutionError("SegmentTimeline times overflow") }
                    time = next
                }
            }
            return slots
        }
        guard let duration = timing.duration, duration > 0 else {
            throw SegmentResolutionError("a SegmentTemplate has neither a SegmentTimeline nor a duration")
        }
        guard let periodDuration else {
            throw SegmentResolutionError("the Period's duration is unknown (a dynamic MPD needs its live window)")
        }
        let count = max(0, (periodDuration * Double(timescale) / Double(duration)).rounded(.up))
        guard count <= Double(maximumSegments) else {
            throw SegmentResolutionError(
                "\(count) segments, more than \(maximumSegments)", kind: .tooManySegments)
        }
        var time = timing.presentationTimeOffset ?? 0
        for _ in 0..<Int(count) {
            slots.append((time, duration))
            let (next, overflow) = time.addingReportingOverflow(duration)
            guard !overflow else { throw SegmentResolutionError("segment times overflow") }
            time = next
        }
        return slots
    }
}
