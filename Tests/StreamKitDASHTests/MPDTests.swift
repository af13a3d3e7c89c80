import Foundation
import StreamKitDASH
import Testing

/// The XML reader: what it reads, what it refuses (with the line), and its limits.
struct DASHXMLTests {
    @Test func readsElementsAttributesTextAndReferences() throws {
        let document = """
            <?xml version="1.0" encoding="utf-8"?>
            <!-- a comment -->
            <a x="1" y='two &amp; &#x33;'><b/><c>text &lt;here&gt; <![CDATA[<raw>]]></c><?pi data?><d:e k="v"/></a>
            """
        let root = try DASHXML.parse(Array(document.utf8))
        #expect(root.name == "a" && root["x"] == "1" && root["y"] == "two & 3")
        #expect(root.children.map(\.name) == ["b", "c", "d:e"])
        #expect(root.children[1].text == "text <here> <raw>")
        #expect(root.children[2].localName == "e" && root.children[2]["k"] == "v")
        #expect(try DASHXML.parse(Array("\u{FEFF}<r/>".utf8)).name == "r")
    }

    @Test(arguments: [
        ("<a><b></a>", "closes <b>", 1),
        ("<a>\n<b x=1/></a>", "not quoted", 2),
        ("<a x='1' x='2'/>", "twice", 1),
        ("<!DOCTYPE a [<!ENTITY lol \"lol\">]><a>&lol;</a>", "document type declaration", 1),
        ("<a>&lol;</a>", "the entity &lol;", 1),
        ("<a>&#0;</a>", "reference", 1),
        ("<a>", "ends inside <a>", 1),
        ("<a/><b/>", "after the root", 1),
        ("", "no root element", 1),
        ("<a x='<'/>", "'<' in the value", 1),
    ])
    func refusesWhatIsNotWellFormed(document: String, words: String, line: Int) {
        #expect {
            _ = try DASHXML.parse(Array(document.utf8))
        } throws: { error in
            guard let error = error as? DASHXML.ParseError else { return false }
            return error.reason.contains(words) && error.line == line
        }
    }

    /// Depth (at most 1,000 whatever is asked: a tree is freed recursively) and element count
    /// are bounded.
    @Test func limitsHold() throws {
        let deep = String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)
        #expect(throws: DASHXML.ParseError.self) { try DASHXML.parse(Array(deep.utf8)) }
        let limits = DASHXML.Limits(maximumDepth: 200_000)
        #expect(limits.maximumDepth == 1_000)
        let deeper = String(repeating: "<a>", count: 1_000) + String(repeating: "</a>", count: 1_000)
        #expect(try DASHXML.parse(Array(deeper.utf8), limits: limits).name == "a")
        let deepest = String(repeating: "<a>", count: 1_001) + String(repeating: "</a>", count: 1_001)
        #expect(throws: DASHXML.ParseError.self) { try DASHXML.parse(Array(deepest.utf8), limits: limits) }
        let many = "<r>" + String(repeating: "<s/>", count: 11) + "</r>"
        #expect(throws: DASHXML.ParseError.self) {
            try DASHXML.parse(Array(many.utf8), limits: DASHXML.Limits(maximumElements: 10))
        }
    }
}

/// MPDs to the model, and each Representation's segments resolved.
struct MPDTests {
    static let mpdURL = "https://cdn.example/show/manifest.mpd"

    @Test func anFFmpegTimelineMPD() throws {
        let mpd = try MPD.parse(Array(FFmpegMPDs.timeline.utf8))
        #expect(mpd.type == .static && mpd.mediaPresentationDuration == 6 && mpd.minBufferTime == 4)
        #expect(mpd.profiles == "urn:mpeg:dash:profile:isoff-live:2011")
        #expect(mpd.extra.map(\.localName) == ["ProgramInformation", "ServiceDescription"])
        let period = try #require(mpd.periods.first)
        #expect(period.id == "0" && period.start == 0)
        #expect(period.adaptationSets.map(\.kind) == ["video", "audio"])
        let video = period.adaptationSets[0]
        #expect(video.representations.map(\.id) == ["0", "1"])
        #expect(video.representations.map(\.bandwidth) == [300_000, 150_000])
        #expect(video.representations[1].common.width == 160 && video.representations[1].common.codecs == "avc1.f4000b")

        let low = try mpd.resolve(
            periodIndex: 0, adaptationSet: video, representation: video.representations[1], mpdURL: Self.mpdURL)
        #expect(low.initialization?.url == "https://cdn.example/show/init-stream1.m4s")
        #expect(low.segments.map(\.url) == (1...3).map { "https://cdn.example/show/chunk-stream1-0000\($0).m4s" })
        #expect(low.segments.map(\.start) == [0, 2, 4] && low.segments.allSatisfy { $0.duration == 2 })
        // Audio: S entries without t follow each other.
        let audio = period.adaptationSets[1]
        let sound = try mpd.resolve(
            periodIndex: 0, adaptationSet: audio, representation: audio.representations[0], mpdURL: Self.mpdURL)
        #expect(sound.segments.map(\.time) == [0, 84_992, 173_056, 262_144])
        #expect(sound.segments.map(\.number) == [1, 2, 3, 4])
        #expect(audio.representations[0].extra.map(\.localName) == ["AudioChannelConfiguration"])
    }

    @Test func anFFmpegNumberMPDCountsSegmentsFromTheDuration() throws {
        let mpd = try MPD.parse(Array(FFmpegMPDs.number.utf8))
        let set = mpd.periods[0].adaptationSets[0]
        let resolved = try mpd.resolve(
            periodIndex: 0, adaptationSet: set, representation: set.representations[0], mpdURL: Self.mpdURL)
        #expect(resolved.segments.count == 3)
        #expect(resolved.segments.last?.url == "https://cdn.example/show/chunk-stream0-00003.m4s")
        #expect(resolved.segments.last?.start == 4)
    }

    @Test func anFFmpegSingleFileMPDIsAListOfByteRanges() throws {
        let mpd = try MPD.parse(Array(FFmpegMPDs.singleFile.utf8))
        let set = mpd.periods[0].adaptationSets[0]
        let resolved = try mpd.resolve(
            periodIndex: 0, adaptationSet: set, representation: set.representations[0], mpdURL: Self.mpdURL)
        let file = "https://cdn.example/show/manifest-stream0.mp4"
        #expect(resolved.initialization == DASHSegment(url: file, range: ByteRangeText(first: 0, last: 814)))
        #expect(resolved.segments.map(\.url) == [file, file, file])
        #expect(resolved.segments.map { $0.range?.text } == ["815-13153", "13154-25252", "25253-37131"])
        #expect(resolved.segments.map(\.start) == [0, 2, 4])
    }

    /// BaseURLs resolve level by level; the segment description is inherited attribute by
    /// attribute; `$Time$`, `$Bandwidth$`, `$$` and widths expand; `r=-1` repeats to the next
    /// `t` and then to the Period's end.
    @Test func inheritanceBaseURLsAndTemplates() throws {
        let document = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT1M">
              <BaseURL>https://media.example/root/</BaseURL>
              <Period duration="PT20S">
                <BaseURL>p1/</BaseURL>
                <AdaptationSet mimeType="video/mp4" lang="fr">
                  <Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
                  <ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cenc"/>
                  <SegmentTemplate timescale="10" media="$RepresentationID$/$Bandwidth$/$Time%08d$$$.m4s"
                      initialization="$RepresentationID$/init.mp4">
                    <SegmentTimeline><S t="0" d="40" r="-1"/><S t="100" d="50" r="-1"/></SegmentTimeline>
                  </SegmentTemplate>
                  <Representation id="v1" bandwidth="500000"><BaseURL>/abs/</BaseURL></Representation>
                  <Representation id="v2" bandwidth="900000">
                    <SegmentTemplate startNumber="7"/>
                  </Representation>
                </AdaptationSet>
              </Period>
            </MPD>
            """
        let mpd = try MPD.parse(Array(document.utf8))
        let set = mpd.periods[0].adaptationSets[0]
        #expect(set.lang == "fr" && set.roles.first?.value == "main")
        #expect(set.contentProtection.first?.value == "cenc")
        let first = try mpd.resolve(
            periodIndex: 0, adaptationSet: set, representation: set.representations[0],
            mpdURL: "https://x.example/m.mpd")
        #expect(first.initialization?.url == "https://media.example/abs/v1/init.mp4")
        #expect(
            first.segments.map(\.url).prefix(2) == [
                "https://media.example/abs/v1/500000/00000000$.m4s",
                "https://media.example/abs/v1/500000/00000040$.m4s",
            ])
        // 0, 40, 80 (up to t=100), then 100, 150 (up to 200 = 20 s at 10 a second).
        #expect(first.segments.map(\.time) == [0, 40, 80, 100, 150])
        let second = try mpd.resolve(
            periodIndex: 0, adaptationSet: set, representation: set.representations[1],
            mpdURL: "https://x.example/m.mpd")
        #expect(second.segments.first?.url == "https://media.example/root/p1/v2/900000/00000000$.m4s")
        #expect(second.segments.map(\.number) == [7, 8, 9, 10, 11])
    }

    @Test func durationsAndBadInput() throws {
        #expect(ISO8601Duration.seconds("PT1H2M3.5S") == 3_723.5)
        #expect(ISO8601Duration.seconds("P1DT1S") == 86_401)
        #expect(ISO8601Duration.seconds("PT0S") == 0)
        for bad in ["", "P", "PT", "1S", "PT1X", "-PT1S", "PT1H1D", "PTS"] {
            #expect(ISO8601Duration.seconds(bad) == nil, "\(bad)")
        }
        for (document, words) in [
            ("<html/>", "not <MPD>"),
            ("<MPD/>", "no Period"),
            ("<MPD type='live'><Period/></MPD>", "static or dynamic"),
            (
                "<MPD><Period><AdaptationSet><Representation id='a' bandwidth='fast'/></AdaptationSet></Period></MPD>",
                "the bandwidth 'fast'"
            ),
            ("<MPD mediaPresentationDuration='1 hour'><Period/></MPD>", "ISO 8601"),
            ("<MPD><Period><SegmentTemplate timescale='0'/></Period></MPD>", "timescale is 0"),
        ] {
            #expect(throws: MPDParseError.self, "\(document)") { try MPD.parse(Array(document.utf8)) }
            do {
                _ = try MPD.parse(Array(document.utf8))
            } catch {
                #expect(error.reason.contains(words), "\(document): \(error)")
            }
        }
        // Without @id and @bandwidth (both required), as players read it: its position, and 0.
        let lenient = try MPD.parse(
            Array("<MPD><Period><AdaptationSet><Representation/><Representation/></AdaptationSet></Period></MPD>".utf8))
        #expect(lenient.periods[0].adaptationSets[0].representations.map(\.id) == ["0", "1"])
        #expect(lenient.periods[0].adaptationSets[0].representations.map(\.bandwidth) == [0, 0])
    }

    /// A timeline that claims a billion segments is refused, not expanded; a template needs its
    /// identifiers known.
    @Test func hostileTimelinesAndTemplates() throws {
        let document = """
            <MPD mediaPresentationDuration="PT1000000000S"><Period><AdaptationSet>
            <SegmentTemplate timescale="1" media="$Number$.m4s"><SegmentTimeline><S d="1" r="999999999"/></SegmentTimeline></SegmentTemplate>
            <Representation id="a" bandwidth="1"/></AdaptationSet></Period></MPD>
            """
        let mpd = try MPD.parse(Array(document.utf8))
        let set = mpd.periods[0].adaptationSets[0]
        let started = ContinuousClock.now
        #expect(throws: SegmentResolutionError.self) {
            try mpd.resolve(
                periodIndex: 0, adaptationSet: set, representation: set.representations[0], mpdURL: "http://a/m")
        }
        #expect(started.duration(to: .now) < .seconds(1))
        #expect(throws: SegmentResolutionError.self) {
            try SegmentTemplateText.expand("$Nope$", id: "a", bandwidth: 1)
        }
        #expect(throws: SegmentResolutionError.self) {
            try SegmentTemplateText.expand("$Number", id: "a", bandwidth: 1, number: 1)
        }
        // An identifier that is only a format (found by the fuzz target: it trapped).
        for template in ["$%$", "$%05d$", "$Number%$", "$Number%x$"] {
            #expect(throws: SegmentResolutionError.self, "\(template)") {
                try SegmentTemplateText.expand(template, id: "a", bandwidth: 1, number: 1)
            }
        }
        #expect(try SegmentTemplateText.expand("$Number%03d$-$$", id: "a", bandwidth: 1, number: 7) == "007-$")
    }

    /// Numbers and times at the edges of 64 bits, a Period that ends before it starts, a Period
    /// of 10^30 seconds: refused or empty, never a trap.
    @Test func edgesOfTheNumbers() throws {
        func resolve(_ document: String) throws -> ResolvedRepresentation {
            let mpd = try MPD.parse(Array(document.utf8))
            let set = mpd.periods[0].adaptationSets[0]
            return try mpd.resolve(
                periodIndex: 0, adaptationSet: set, representation: set.representations[0], mpdURL: "http://a/m")
        }
        for (attributes, timeline) in [
            ("duration='10' startNumber='18446744073709551615'", ""),
            ("duration='10' presentationTimeOffset='18446744073709551610'", ""),
            ("", "<SegmentTimeline><S t='18446744073709551610' d='10' r='5'/></SegmentTimeline>"),
        ] {
            let document =
                "<MPD mediaPresentationDuration='PT100S'><Period><AdaptationSet>"
                + "<SegmentTemplate timescale='1' media='$Number$-$Time$' \(attributes)>\(timeline)</SegmentTemplate>"
                + "<Representation id='a' bandwidth='1'/></AdaptationSet></Period></MPD>"
            #expect(throws: SegmentResolutionError.self, "\(attributes)\(timeline)") { try resolve(document) }
        }
        let huge =
            "<MPD mediaPresentationDuration='PT100S'><Period><AdaptationSet>"
            + "<SegmentTemplate timescale='1' media='$Number$'><SegmentTimeline><S t='0' d='18446744073709551615' r='-1'/>"
            + "</SegmentTimeline></SegmentTemplate><Representation id='a' bandwidth='1'/></AdaptationSet></Period></MPD>"
        #expect(try resolve(huge).segments.count == 1)
        let backwards =
            "<MPD mediaPresentationDuration='PT10S'><Period start='PT20S'><AdaptationSet>"
            + "<SegmentTemplate timescale='1' duration='2' media='$Number$'/>"
            + "<Representation id='a' bandwidth='1'/></AdaptationSet></Period></MPD>"
        #expect(try resolve(backwards).segments.isEmpty)
        let forever =
            "<MPD mediaPresentationDuration='PT1000000000000000000000000000000S'><Period><AdaptationSet>"
            + "<SegmentTemplate timescale='1' media='$Number$'><SegmentTimeline><S d='1' r='-1'/></SegmentTimeline>"
            + "</SegmentTemplate><Representation id='a' bandwidth='1'/></AdaptationSet></Period></MPD>"
        #expect(throws: SegmentResolutionError.self) { try resolve(forever) }
    }
}

/// The writer: what it writes reads back as the same MPD, unnamed attributes and elements
/// included, and writing that again gives the same text.
struct MPDWriterTests {
    @Test(arguments: [FFmpegMPDs.timeline, FFmpegMPDs.number, FFmpegMPDs.singleFile])
    func ffmpegMPDsReadBackTheSame(document: String) throws {
        let mpd = try MPD.parse(Array(document.utf8))
        let written = mpd.serialized()
        let again = try MPD.parse(Array(written.utf8))
        #expect(again == mpd, "\(written)")
        #expect(again.serialized() == written)
        // What players need and the model does not name is still there.
        #expect(written.contains(#"segmentAlignment="true""#) || !document.contains("segmentAlignment"))
        #expect(written.contains("xmlns:xlink=") && written.contains("<ProgramInformation/>"))
    }

    @Test func descriptorsTimelinesAndKeptElements() throws {
        let document = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-12-07T00:00:00Z"
                 minimumUpdatePeriod="PT2S" timeShiftBufferDepth="PT30.5S" publishTime="2026-12-07T00:01:00Z">
              <Period id="p0" start="PT0S">
                <AdaptationSet contentType="audio" lang="fr" segmentAlignment="true">
                  <ContentProtection schemeIdUri="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed">
                    <cenc:pssh xmlns:cenc="urn:mpeg:cenc:2013">AAAA</cenc:pssh>
                  </ContentProtection>
                  <Role schemeIdUri="urn:mpeg:dash:role:2011" value="dub"/>
                  <Label>Français &amp; co</Label>
                  <SegmentTemplate timescale="48000" media="a/$Time$.m4s" availabilityTimeOffset="1.5">
                    <SegmentTimeline><S t="96000" d="96000" r="-1"/></SegmentTimeline>
                  </SegmentTemplate>
                  <Representation id="a" bandwidth="128000" codecs="mp4a.40.2" audioSamplingRate="48000"/>
                </AdaptationSet>
              </Period>
              <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="https://time.example/"/>
            </MPD>
            """
        let mpd = try MPD.parse(Array(document.utf8))
        #expect(mpd.type == .dynamic && mpd.timeShiftBufferDepth == 30.5)
        let written = mpd.serialized()
        #expect(try MPD.parse(Array(written.utf8)) == mpd, "\(written)")
        #expect(written.contains("<cenc:pssh xmlns:cenc=\"urn:mpeg:cenc:2013\">AAAA</cenc:pssh>"), "\(written)")
        #expect(
            written.contains("<Label>Français &amp; co</Label>") && written.contains(#"availabilityTimeOffset="1.5""#))
        #expect(written.contains(#"<S t="96000" d="96000" r="-1"/>"#))
        // UTCTiming comes after the Periods, as the schema orders it.
        let utc = try #require(written.range(of: "<UTCTiming"))
        #expect(written.range(of: "</Period>").map { $0.upperBound <= utc.lowerBound } == true)
        #expect(ISO8601Duration.text(30.5) == "PT30.5S" && ISO8601Duration.text(6) == "PT6S")
        #expect(ISO8601Duration.seconds(ISO8601Duration.text(1.0 / 3)) == 1.0 / 3)
    }
}
