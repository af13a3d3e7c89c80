/// Why an MPD could not be read.
public struct MPDParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

extension MPD {
    /// Reads an MPD document. Unknown elements and attributes are kept; values that break the
    /// standard where the meaning is still clear are read (lenient), those that leave it unclear
    /// throw.
    public static func parse(_ bytes: [UInt8], limits: DASHXML.Limits = DASHXML.Limits()) throws(MPDParseError) -> MPD {
        let root: DASHXML.Element
        do {
            root = try DASHXML.parse(bytes, limits: limits)
        } catch {
            throw MPDParseError("not an XML document: \(error)")
        }
        guard root.localName == "MPD" else { throw MPDParseError("the root element is <\(root.name)>, not <MPD>") }
        return try MPDReader.mpd(root)
    }
}

/// The element tree to the model.
enum MPDReader {
    static let mpdAttributes: Set<String> = [
        "type", "profiles", "mediaPresentationDuration", "minBufferTime", "minimumUpdatePeriod",
        "timeShiftBufferDepth", "suggestedPresentationDelay", "maxSegmentDuration", "availabilityStartTime",
        "publishTime",
    ]

    static func mpd(_ element: DASHXML.Element) throws(MPDParseError) -> MPD {
        var mpd = MPD()
        switch element["type"] ?? "static" {
        case "static": mpd.type = .static
        case "dynamic": mpd.type = .dynamic
        case let other: throw MPDParseError("MPD@type is \(other), not static or dynamic")
        }
        mpd.profiles = element["profiles"]
        mpd.mediaPresentationDuration = try duration(element, "mediaPresentationDuration")
        mpd.minBufferTime = try duration(element, "minBufferTime")
        mpd.minimumUpdatePeriod = try duration(element, "minimumUpdatePeriod")
        mpd.timeShiftBufferDepth = try duration(element, "timeShiftBufferDepth")
        mpd.suggestedPresentationDelay = try duration(element, "suggestedPresentationDelay")
        mpd.maxSegmentDuration = try duration(element, "maxSegmentDuration")
        mpd.availabilityStartTime = element["availabilityStartTime"]
        mpd.publishTime = element["publishTime"]
        // The default namespace first, where the writer puts it.
        let attributes = others(element, known: mpdAttributes)
        mpd.other = attributes.filter { $0.name == "xmlns" } + attributes.filter { $0.name != "xmlns" }
        for child in element.children {
            switch child.localName {
            case "BaseURL": mpd.baseURLs.append(trimmed(child.text))
            case "Period": mpd.periods.append(try period(child))
            default: mpd.extra.append(kept(child))
            }
        }
        guard !mpd.periods.isEmpty else { throw MPDParseError("the MPD has no Period") }
        return mpd
    }

    static func period(_ element: DASHXML.Element) throws(MPDParseError) -> Period {
        var period = Period(id: element["id"], start: try duration(element, "start"))
        period.duration = try duration(element, "duration")
        period.other = others(element, known: ["id", "start", "duration"])
        for child in element.children {
            if try segmentInformation(child, into: &period.segments) { continue }
            switch child.localName {
            case "BaseURL": period.baseURLs.append(trimmed(child.text))
            case "AdaptationSet": period.adaptationSets.append(try adaptationSet(child))
            default: period.extra.append(kept(child))
            }
        }
        return period
    }

    static func adaptationSet(_ element: DASHXML.Element) throws(MPDParseError) -> AdaptationSet {
        var set = AdaptationSet()
        set.id = element["id"]
        set.contentType = element["contentType"]
        set.lang = element["lang"]
        set.common = try common(element)
        set.other = others(element, known: commonAttributes.union(["id", "contentType", "lang"]))
        for child in element.children {
            if try segmentInformation(child, into: &set.segments) { continue }
            switch child.localName {
            case "BaseURL": set.baseURLs.append(trimmed(child.text))
            case "Role": set.roles.append(Descriptor(kept(child)))
            case "Accessibility": set.accessibility.append(Descriptor(kept(child)))
            case "Label": set.labels.append(trimmed(child.text))
            case "ContentProtection": set.contentProtection.append(Descriptor(kept(child)))
            case "EssentialProperty": set.essentialProperties.append(Descriptor(kept(child)))
            case "SupplementalProperty": set.supplementalProperties.append(Descriptor(kept(child)))
            case "Representation":
                set.representations.append(try representation(child, position: set.representations.count))
            default: set.extra.append(kept(child))
            }
        }
        return set
    }

    /// A Representation. Both `@id` and `@bandwidth` are required (§5.3.5.2), but players read
    /// MPDs without them (ExoPlayer's tests keep one): a missing id is the Representation's
    /// position in its set (`0`, `1`…), a missing bandwidth 0. A bandwidth that is written but
    /// is not a number is refused.
    static func representation(_ element: DASHXML.Element, position: Int) throws(MPDParseError) -> Representation {
        let id = element["id"].flatMap { $0.isEmpty ? nil : $0 } ?? String(position)
        let bandwidth: Int
        if let text = element["bandwidth"] {
            guard let value = Int(text), value >= 0 else {
                throw MPDParseError("Representation \(id) has the bandwidth '\(text)'")
            }
            bandwidth = value
        } else {
            bandwidth = 0
        }
        var representation = Representation(id: id, bandwidth: bandwidth)
        representation.common = try common(element)
        representation.other = others(element, known: commonAttributes.union(["id", "bandwidth"]))
        for child in element.children {
            if try segmentInformation(child, into: &representation.segments) { continue }
            switch child.localName {
            case "BaseURL": representation.baseURLs.append(trimmed(child.text))
            case "ContentProtection": representation.contentProtection.append(Descriptor(kept(child)))
            default: representation.extra.append(kept(child))
            }
        }
        return representation
    }

    static let commonAttributes: Set<String> = [
        "mimeType", "codecs", "width", "height", "frameRate", "audioSamplingRate",
    ]
    static let segmentAttributes: Set<String> = [
        "timescale", "presentationTimeOffset", "duration", "startNumber", "indexRange", "media", "initialization",
        "index",
    ]

    /// An element kept for writing, its text trimmed (the indentation around it is not
    /// content), so that what is written reads back the same.
    static func kept(_ element: DASHXML.Element) -> DASHXML.Element {
        var element = element
        element.text = trimmed(element.text)
        element.children = element.children.map(kept)
        return element
    }

    /// The attributes of `element` not in `known`, kept for writing.
    static func others(_ element: DASHXML.Element, known: Set<String>) -> [Attribute] {
        element.attributes.filter { !known.contains($0.name) }.map { Attribute($0.name, $0.value) }
    }

    static func common(_ element: DASHXML.Element) throws(MPDParseError) -> CommonAttributes {
        var common = CommonAttributes()
        common.mimeType = element["mimeType"]
        common.codecs = element["codecs"]
        common.width = try integer(element, "width").map(Int.init)
        common.height = try integer(element, "height").map(Int.init)
        common.frameRate = element["frameRate"]
        common.audioSamplingRate = element["audioSamplingRate"]
        return common
    }

    /// Reads a SegmentBase, SegmentList or SegmentTemplate child into `information`; false for
    /// any other element.
    static func segmentInformation(
        _ element: DASHXML.Element, into information: inout SegmentInformation
    ) throws(MPDParseError) -> Bool {
        switch element.localName {
        case "SegmentBase":
            information.base = SegmentBase(timing: try timing(element), indexRange: try range(element, "indexRange"))
        case "SegmentList":
            var list = SegmentList(timing: try timing(element))
            for child in element.children(named: "SegmentURL") {
                list.segments.append(
                    SegmentList.SegmentURL(media: child["media"], mediaRange: try range(child, "mediaRange")))
            }
            information.list = list
        case "SegmentTemplate":
            var template = SegmentTemplate(timing: try timing(element), media: element["media"])
            template.initializationTemplate = element["initialization"]
            template.index = element["index"]
            information.template = template
        default:
            return false
        }
        return true
    }

    static func timing(_ element: DASHXML.Element) throws(MPDParseError) -> SegmentTiming {
        var timing = SegmentTiming()
        timing.other = others(element, known: segmentAttributes)
        timing.timescale = try integer(element, "timescale")
        if timing.timescale == 0 { throw MPDParseError("\(element.name)@timescale is 0") }
        timing.presentationTimeOffset = try integer(element, "presentationTimeOffset")
        timing.duration = try integer(element, "duration")
        timing.startNumber = try integer(element, "startNumber")
        if let initialization = element.children(named: "Initialization").first {
            timing.initialization = URLWithRange(
                sourceURL: initialization["sourceURL"], range: try range(initialization, "range"))
        }
        if let timeline = element.children(named: "SegmentTimeline").first {
            var entries: [TimelineEntry] = []
            for s in timeline.children(named: "S") {
                guard let d = try integer(s, "d") else { throw MPDParseError("an S of a SegmentTimeline has no d") }
                var r: Int64 = 0
                if let text = s["r"] {
                    guard let value = Int64(text), value >= -1 else { throw MPDParseError("S@r is \(text)") }
                    r = value
                }
                entries.append(TimelineEntry(t: try integer(s, "t"), d: d, r: r))
            }
            timing.timeline = entries
        }
        return timing
    }

    static func integer(_ element: DASHXML.Element, _ name: String) throws(MPDParseError) -> UInt64? {
        guard let text = element[name] else { return nil }
        guard let value = UInt64(trimmed(text)) else { throw MPDParseError("\(element.name)@\(name) is '\(text)'") }
        return value
    }

    static func range(_ element: DASHXML.Element, _ name: String) throws(MPDParseError) -> ByteRangeText? {
        guard let text = element[name] else { return nil }
        guard let range = ByteRangeText(trimmed(text)) else {
            throw MPDParseError("\(element.name)@\(name) is '\(text)', not FIRST-LAST")
        }
        return range
    }

    static func duration(_ element: DASHXML.Element, _ name: String) throws(MPDParseError) -> Double? {
        guard let text = element[name] else { return nil }
        guard let seconds = ISO8601Duration.seconds(trimmed(text)) else {
            throw MPDParseError("\(element.name)@\(name) is '\(text)', not an ISO 8601 duration")
        }
        return seconds
    }

    static func trimmed(_ text: String) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.isWhitespace { scalars = scalars.dropLast() }
        return String(scalars)
    }
}

/// `xs:duration` (ISO 8601: `PT1H2M3.5S`, `P1DT12H`, `-` refused), in seconds. Years and months
/// count as 365 and 30 days, as players read them.
public enum ISO8601Duration {
    public static func seconds(_ text: String) -> Double? {
        var rest = Substring(text)
        guard rest.first == "P" else { return nil }
        rest = rest.dropFirst()
        var total = 0.0
        var inTime = false
        var sawValue = false
        while !rest.isEmpty {
            if rest.first == "T" {
                guard !inTime else { return nil }
                inTime = true
                rest = rest.dropFirst()
                continue
            }
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number), value.isFinite else { return nil }
            rest = rest.dropFirst(number.count)
            guard let unit = rest.first else { return nil }
            rest = rest.dropFirst()
            switch (unit, inTime) {
            case ("Y", false): total += value * 365 * 86_400
            case ("M", false): total += value * 30 * 86_400
            case ("W", false): total += value * 7 * 86_400
            case ("D", false): total += value * 86_400
            case ("H", true): total += value * 3_600
            case ("M", true): total += value * 60
            case ("S", true): total += value
            default: return nil
            }
            sawValue = true
        }
        return sawValue && total.isFinite ? total : nil
    }
}
