import Foundation
import StreamKitCore
import StreamKitDASH

/// `inspect` of an MPEG-DASH MPD: a summary by Period, AdaptationSet and Representation, or one
/// JSON object with every Representation's segments resolved (absolute URLs, byte ranges, start
/// times and durations, numbers and `$Time$`), streamed as it is written.
enum InspectMPD {
    /// One Representation's segments, or why they cannot be listed.
    struct Resolution {
        var resolved: ResolvedRepresentation?
        var error: String?

        init(_ mpd: MPD, period: Int, set: AdaptationSet, representation: Representation, url: String) {
            do {
                // A live `@duration` template: the segments available now.
                resolved = try mpd.resolve(
                    periodIndex: period, adaptationSet: set, representation: representation, mpdURL: url,
                    now: Date().timeIntervalSince1970)
            } catch {
                self.error = error.reason
            }
        }

        /// `template`, `list` or `base` (SegmentBase, or the whole resource).
        static func form(_ levels: [SegmentInformation]) -> String {
            if levels.contains(where: { $0.template != nil }) { return "template" }
            if levels.contains(where: { $0.list != nil }) { return "list" }
            return "base"
        }
    }

    // MARK: Text

    static func text(file: String, mpd: MPD, url: String) -> String {
        var lines = ["\(file): DASH MPD, \(mpd.type.rawValue), \(mpd.periods.count) Period(s)"]
        if let duration = mpd.mediaPresentationDuration {
            lines.append("  duration: \(InspectSummary.duration(duration))")
        }
        if mpd.type == .dynamic {
            let live: [(String, String?)] = [
                ("availabilityStartTime", mpd.availabilityStartTime), ("publishTime", mpd.publishTime),
                ("timeShiftBufferDepth", mpd.timeShiftBufferDepth.map { "\($0) s" }),
                ("minimumUpdatePeriod", mpd.minimumUpdatePeriod.map { "\($0) s" }),
            ]
            for case (let name, let value?) in live { lines.append("  \(name): \(value)") }
        }
        for (index, period) in mpd.periods.enumerated() {
            let times = mpd.periodTimes(index)
            lines.append(
                "Period \(period.id ?? String(index)): from \(InspectSummary.duration(times.start))"
                    + (times.duration.map { ", \(InspectSummary.duration($0))" } ?? ""))
            for set in period.adaptationSets {
                var words = [set.kind.isEmpty ? "unknown" : set.kind]
                if let id = set.id { words.append("id \(id)") }
                if let lang = set.lang { words.append("language \(lang)") }
                words += set.labels.map { "label \"\($0)\"" }
                let roles = (set.roles + set.accessibility).compactMap(\.value)
                if !roles.isEmpty { words.append("role " + roles.joined(separator: ",")) }
                let protection = Set(
                    (set.contentProtection + set.representations.flatMap(\.contentProtection)).map(\.schemeIdUri))
                if !protection.isEmpty {
                    words.append("ContentProtection " + protection.sorted().joined(separator: ", "))
                }
                if !set.essentialProperties.isEmpty {
                    words.append(
                        "EssentialProperty " + set.essentialProperties.map(\.schemeIdUri).joined(separator: ", "))
                }
                lines.append("  AdaptationSet " + words.joined(separator: ", "))
                for representation in set.representations {
                    lines.append("    " + describe(representation, in: set, mpd: mpd, period: index, url: url))
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func describe(
        _ representation: Representation, in set: AdaptationSet, mpd: MPD, period: Int, url: String
    ) -> String {
        var words = ["\(representation.id): \(representation.bandwidth) bit/s"]
        if let codecs = representation.common.codecs ?? set.common.codecs { words.append(codecs) }
        if let width = representation.common.width ?? set.common.width,
            let height = representation.common.height ?? set.common.height
        {
            words.append("\(width)x\(height)")
        }
        let form = Resolution.form([mpd.periods[period].segments, set.segments, representation.segments])
        let resolution = Resolution(mpd, period: period, set: set, representation: representation, url: url)
        if let resolved = resolution.resolved {
            if let index = resolved.index {
                words.append("SegmentBase, index at bytes \(index.range?.text ?? "?") of \(index.url)")
            } else {
                let total = resolved.segments.reduce(0) { $0 + $1.duration }
                words.append("\(form): \(resolved.segments.count) segments, \(InspectSummary.duration(total))")
                if let first = resolved.segments.first { words.append("first \(first.url)") }
            }
        } else if let error = resolution.error {
            words.append("\(form): \(error)")
        }
        return words.joined(separator: ", ")
    }

    // MARK: JSON

    /// Writes the report and a newline to `sink`: `file`, `kind` (`mpd`), `type`, the MPD's
    /// times, and `periods` with their sets and Representations, each Representation's
    /// `segments` resolved (or its `error`).
    static func write(file: String, mpd: MPD, url: String, to sink: OutputSink) {
        var writer = JSONWriter { sink.write(bytes: $0) }
        writer.beginObject()
        writer.field("file", file)
        writer.field("kind", "mpd")
        writer.field("url", url)
        writer.field("type", mpd.type.rawValue)
        if let value = mpd.profiles { writer.field("profiles", value) }
        let times: [(StaticString, Double?)] = [
            ("mediaPresentationDuration", mpd.mediaPresentationDuration), ("minBufferTime", mpd.minBufferTime),
            ("minimumUpdatePeriod", mpd.minimumUpdatePeriod), ("timeShiftBufferDepth", mpd.timeShiftBufferDepth),
            ("suggestedPresentationDelay", mpd.suggestedPresentationDelay),
            ("maxSegmentDuration", mpd.maxSegmentDuration),
        ]
        for case (let name, let value?) in times { writer.field(name, value) }
        if let value = mpd.availabilityStartTime { writer.field("availabilityStartTime", value) }
        if let value = mpd.publishTime { writer.field("publishTime", value) }
        writer.key("periods")
        writer.beginArray()
        for (index, period) in mpd.periods.enumerated() {
            writer.beginObject()
            if let id = period.id { writer.field("id", id) }
            let (start, duration) = mpd.periodTimes(index)
            writer.field("start", start)
            if let duration { writer.field("duration", duration) }
            writer.key("adaptationSets")
            writer.beginArray()
            for set in period.adaptationSets {
                writeSet(set, mpd: mpd, period: index, url: url, to: &writer)
            }
            writer.endArray()
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        writer.flush()
        sink.write("\n")
    }

    private static func writeSet(_ set: AdaptationSet, mpd: MPD, period: Int, url: String, to writer: inout JSONWriter)
    {
        writer.beginObject()
        if let id = set.id { writer.field("id", id) }
        writer.field("kind", set.kind)
        if let lang = set.lang { writer.field("lang", lang) }
        writer.key("labels")
        writer.beginArray()
        for label in set.labels { writer.string(label) }
        writer.endArray()
        for (name, descriptors) in [
            ("roles", set.roles), ("accessibility", set.accessibility), ("contentProtection", set.contentProtection),
            ("essentialProperties", set.essentialProperties),
        ] as [(StaticString, [Descriptor])] {
            writer.key(name)
            writeDescriptors(descriptors, to: &writer)
        }
        writer.key("representations")
        writer.beginArray()
        for representation in set.representations {
            writer.beginObject()
            writer.field("id", representation.id)
            writer.field("bandwidth", representation.bandwidth)
            if let codecs = representation.common.codecs ?? set.common.codecs { writer.field("codecs", codecs) }
            if let width = representation.common.width ?? set.common.width { writer.field("width", width) }
            if let height = representation.common.height ?? set.common.height { writer.field("height", height) }
            writer.key("contentProtection")
            writeDescriptors(representation.contentProtection, to: &writer)
            writer.field(
                "form", Resolution.form([mpd.periods[period].segments, set.segments, representation.segments]))
            let resolution = Resolution(mpd, period: period, set: set, representation: representation, url: url)
            if let resolved = resolution.resolved {
                writeResolved(resolved, to: &writer)
            } else if let error = resolution.error {
                writer.field("error", error)
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }

    private static func writeDescriptors(_ descriptors: [Descriptor], to writer: inout JSONWriter) {
        writer.beginArray()
        for descriptor in descriptors {
            writer.beginObject()
            writer.field("schemeIdUri", descriptor.schemeIdUri)
            if let value = descriptor.value { writer.field("value", value) }
            writer.endObject()
        }
        writer.endArray()
    }

    private static func writeResolved(_ resolved: ResolvedRepresentation, to writer: inout JSONWriter) {
        writer.field("timescale", resolved.timescale)
        writer.field("presentationTimeOffset", resolved.presentationTimeOffset)
        if let initialization = resolved.initialization {
            writer.key("initialization")
            writeSegment(initialization, to: &writer)
        }
        if let index = resolved.index {
            // SegmentBase: the segments are in the file's `sidx`, which inspect does not fetch.
            writer.key("index")
            writeSegment(index, to: &writer)
        }
        writer.key("segments")
        writer.beginArray()
        for segment in resolved.segments where resolved.index == nil {
            writeSegment(segment, to: &writer)
        }
        writer.endArray()
    }

    private static func writeSegment(_ segment: DASHSegment, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("url", segment.url)
        if let range = segment.range {
            writer.key("byteRange")
            writer.beginObject()
            writer.field("first", range.first)
            writer.field("last", range.last)
            writer.endObject()
        }
        if segment.duration > 0 || segment.start > 0 {
            writer.field("start", segment.start)
            writer.field("duration", segment.duration)
        }
        if let number = segment.number { writer.field("number", number) }
        if let time = segment.time { writer.field("time", time) }
        writer.endObject()
    }
}
