import StreamKitCore

extension MPD {
    /// The MPD as an XML document: the named fields, then what the model kept unnamed (`other`
    /// attributes after the named ones, `extra` elements where the schema puts them: before
    /// the Periods, except Metrics, properties, UTCTiming and LeapSecondInformation after).
    /// Durations are written in seconds (`PT12.5S`). What ``parse(_:limits:)`` reads from the
    /// text is the same MPD.
    public func serialized() -> String {
        var xml = XMLText()
        xml.text("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n")
        // The default namespace first, the MPD's own or DASH's: written in one place whatever the
        // MPD read had, so that writing what was written gives the same text.
        var attributes = [
            other.first { $0.name == "xmlns" } ?? Attribute("xmlns", "urn:mpeg:dash:schema:mpd:2011"),
            Attribute("type", type.rawValue),
        ]
        attributes += [
            ("profiles", profiles), ("availabilityStartTime", availabilityStartTime), ("publishTime", publishTime),
        ].compactMap { name, value in value.map { Attribute(name, $0) } }
        attributes += [
            ("mediaPresentationDuration", mediaPresentationDuration), ("minBufferTime", minBufferTime),
            ("minimumUpdatePeriod", minimumUpdatePeriod), ("timeShiftBufferDepth", timeShiftBufferDepth),
            ("suggestedPresentationDelay", suggestedPresentationDelay), ("maxSegmentDuration", maxSegmentDuration),
        ].compactMap { name, value in value.map { Attribute(name, ISO8601Duration.text($0)) } }
        xml.open("MPD", attributes + other.filter { $0.name != "xmlns" })
        let after: Set<Substring> = [
            "Metrics", "EssentialProperty", "SupplementalProperty", "UTCTiming", "LeapSecondInformation",
        ]
        for element in extra where !after.contains(element.localName) { xml.element(element) }
        for url in baseURLs { xml.leaf("BaseURL", url) }
        for period in periods { xml.period(period) }
        for element in extra where after.contains(element.localName) { xml.element(element) }
        xml.close("MPD")
        return xml.output
    }
}

extension ISO8601Duration {
    /// `PT12.5S`: seconds only, with the digits that read back as the same number.
    public static func text(_ seconds: Double) -> String {
        if seconds == seconds.rounded(), abs(seconds) < 1e15 { return "PT\(Int64(seconds))S" }
        let shortest = "\(seconds)"
        if !shortest.contains("e") { return "PT\(shortest)S" }
        // Very small or very large: whole milliseconds (what players use), whole seconds past 10^15.
        guard seconds < 1e15 else { return "PT\(Int64(min(seconds, 9e15)))S" }
        let value = (seconds * 1_000).rounded() / 1_000
        return value == value.rounded() ? "PT\(Int64(value))S" : "PT\(value)S"
    }
}

/// XML text with indentation and escaping.
struct XMLText {
    var output = ""
    private var depth = 0

    mutating func text(_ text: String) { output += text }

    mutating func open(_ name: String, _ attributes: [Attribute], empty: Bool = false) {
        output += String(repeating: "  ", count: depth) + "<" + name
        for attribute in attributes { output += " \(attribute.name)=\"\(Self.escape(attribute.value))\"" }
        output += empty ? "/>\n" : ">\n"
        if !empty { depth += 1 }
    }

    mutating func close(_ name: String) {
        depth -= 1
        output += String(repeating: "  ", count: depth) + "</\(name)>\n"
    }

    mutating func leaf(_ name: String, _ text: String, _ attributes: [Attribute] = []) {
        output += String(repeating: "  ", count: depth) + "<" + name
        for attribute in attributes { output += " \(attribute.name)=\"\(Self.escape(attribute.value))\"" }
        output += ">\(Self.escape(text))</\(name)>\n"
    }

    /// A kept element as it was read (text, then children).
    mutating func element(_ element: DASHXML.Element) {
        let attributes = element.attributes.map { Attribute($0.name, $0.value) }
        let text = element.text.allSatisfy(\.isWhitespace) ? "" : element.text
        if element.children.isEmpty {
            if text.isEmpty {
                open(element.name, attributes, empty: true)
            } else {
                leaf(element.name, text, attributes)
            }
            return
        }
        open(element.name, attributes)
        if !text.isEmpty { output += String(repeating: "  ", count: depth) + Self.escape(text) + "\n" }
        for child in element.children { self.element(child) }
        close(element.name)
    }

    mutating func period(_ period: Period) {
        var attributes = [("id", period.id)].compactMap { name, value in value.map { Attribute(name, $0) } }
        attributes += [("start", period.start), ("duration", period.duration)].compactMap { name, value in
            value.map { Attribute(name, ISO8601Duration.text($0)) }
        }
        open("Period", attributes + period.other)
        for url in period.baseURLs { leaf("BaseURL", url) }
        segments(period.segments)
        for set in period.adaptationSets { adaptationSet(set) }
        for element in period.extra { self.element(element) }
        close("Period")
    }

    mutating func adaptationSet(_ set: AdaptationSet) {
        let named = [("id", set.id), ("contentType", set.contentType), ("lang", set.lang)]
        open(
            "AdaptationSet",
            named.compactMap { name, value in value.map { Attribute(name, $0) } } + common(set.common) + set.other)
        for descriptor in set.contentProtection + set.essentialProperties + set.supplementalProperties
            + set.accessibility + set.roles
        {
            element(descriptor.element)
        }
        for label in set.labels { leaf("Label", label) }
        for url in set.baseURLs { leaf("BaseURL", url) }
        segments(set.segments)
        for element in set.extra { self.element(element) }
        for representation in set.representations { self.representation(representation) }
        close("AdaptationSet")
    }

    mutating func representation(_ representation: Representation) {
        open(
            "Representation",
            [Attribute("id", representation.id), Attribute("bandwidth", String(representation.bandwidth))]
                + common(representation.common) + representation.other)
        for descriptor in representation.contentProtection { element(descriptor.element) }
        for url in representation.baseURLs { leaf("BaseURL", url) }
        for element in representation.extra { self.element(element) }
        segments(representation.segments)
        close("Representation")
    }

    func common(_ common: CommonAttributes) -> [Attribute] {
        [
            ("mimeType", common.mimeType), ("codecs", common.codecs), ("width", common.width.map(String.init)),
            ("height", common.height.map(String.init)), ("frameRate", common.frameRate),
            ("audioSamplingRate", common.audioSamplingRate),
        ].compactMap { name, value in value.map { Attribute(name, $0) } }
    }

    mutating func segments(_ information: SegmentInformation) {
        if let base = information.base {
            timed("SegmentBase", base.timing, [("indexRange", base.indexRange?.text)])
        }
        if let list = information.list {
            timed("SegmentList", list.timing, []) { xml in
                for segment in list.segments {
                    let attributes = [("media", segment.media), ("mediaRange", segment.mediaRange?.text)]
                    xml.open(
                        "SegmentURL", attributes.compactMap { name, value in value.map { Attribute(name, $0) } },
                        empty: true)
                }
            }
        }
        if let template = information.template {
            timed(
                "SegmentTemplate", template.timing,
                [
                    ("media", template.media), ("initialization", template.initializationTemplate),
                    ("index", template.index),
                ])
        }
    }

    /// A segment element: its own attributes, the timing's, then Initialization, the timeline
    /// and what `body` writes.
    mutating func timed(
        _ name: String, _ timing: SegmentTiming, _ own: [(String, String?)], body: (inout XMLText) -> Void = { _ in }
    ) {
        var attributes = own.compactMap { name, value in value.map { Attribute(name, $0) } }
        attributes += [
            ("timescale", timing.timescale), ("presentationTimeOffset", timing.presentationTimeOffset),
            ("duration", timing.duration), ("startNumber", timing.startNumber),
        ].compactMap { name, value in value.map { Attribute(name, String($0)) } }
        attributes += timing.other
        let hasChildren = timing.initialization != nil || timing.timeline != nil || name == "SegmentList"
        open(name, attributes, empty: !hasChildren)
        guard hasChildren else { return }
        if let initialization = timing.initialization {
            let pairs = [("sourceURL", initialization.sourceURL), ("range", initialization.range?.text)]
            open("Initialization", pairs.compactMap { name, value in value.map { Attribute(name, $0) } }, empty: true)
        }
        if let timeline = timing.timeline {
            open("SegmentTimeline", [])
            for entry in timeline {
                var pairs: [Attribute] = []
                if let t = entry.t { pairs.append(Attribute("t", String(t))) }
                pairs.append(Attribute("d", String(entry.d)))
                if entry.r != 0 { pairs.append(Attribute("r", String(entry.r))) }
                open("S", pairs, empty: true)
            }
            close("SegmentTimeline")
        }
        body(&self)
        close(name)
    }

    static func escape(_ text: String) -> String { MarkupText.escaped(text) }
}
