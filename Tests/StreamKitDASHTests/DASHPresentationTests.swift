import StreamKitDASH
import StreamKitHLS
import Testing

/// An MPD read as HLS: the multivariant playlist's variants and renditions, Representations found
/// again in later Periods, media playlists over several Periods, SegmentBase through its `sidx`,
/// and what hostile numbers do.
struct DASHPresentationTests {
    static let url = "https://cdn.example/show/manifest.mpd"

    /// Two Periods; the second gives its sets other ids and lists the English description first.
    static let twoPeriods = """
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT10S">
          <Period id="p1" duration="PT4S">
            <AdaptationSet id="v" contentType="video" mimeType="video/mp4" codecs="avc1.64001f">
              <SegmentTemplate timescale="10" duration="20" media="v-$RepresentationID$-$Number$.m4s"
                initialization="v-$RepresentationID$-init.m4s"/>
              <Representation id="hi" bandwidth="1000000" width="1280" height="720"/>
              <Representation id="lo" bandwidth="500000" width="640" height="360"/>
            </AdaptationSet>
            <AdaptationSet id="trick" contentType="video" mimeType="video/mp4">
              <EssentialProperty schemeIdUri="http://dashif.org/guidelines/trickmode" value="v"/>
              <SegmentTemplate duration="4" media="t-$Number$.m4s"/>
              <Representation id="t" bandwidth="100000"/>
            </AdaptationSet>
            <AdaptationSet id="a-main" contentType="audio" lang="eng" mimeType="audio/mp4" codecs="mp4a.40.2">
              <Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
              <SegmentTemplate duration="2" media="a-main-$Number$.m4s" initialization="a-main-init.m4s"/>
              <Representation id="am" bandwidth="128000"/>
              <Representation id="am-low" bandwidth="64000"/>
            </AdaptationSet>
            <AdaptationSet id="a-desc" contentType="audio" lang="eng" mimeType="audio/mp4">
              <Role schemeIdUri="urn:mpeg:dash:role:2011" value="description"/>
              <SegmentTemplate duration="2" media="a-desc-$Number$.m4s"/>
              <Representation id="ad" bandwidth="64000"/>
            </AdaptationSet>
            <AdaptationSet id="a-fr" contentType="audio" lang="fra" mimeType="audio/mp4">
              <Label>Français</Label>
              <SegmentTemplate duration="2" media="a-fr-$Number$.m4s"/>
              <Representation id="af" bandwidth="64000"/>
            </AdaptationSet>
            <AdaptationSet id="s" contentType="text" lang="eng" mimeType="application/mp4" codecs="stpp">
              <SegmentTemplate duration="2" media="s-$Number$.m4s"/>
              <Representation id="st" bandwidth="1000"/>
            </AdaptationSet>
          </Period>
          <Period id="p2">
            <AdaptationSet id="b-desc" contentType="audio" lang="eng" mimeType="audio/mp4">
              <Role schemeIdUri="urn:mpeg:dash:role:2011" value="description"/>
              <SegmentTemplate duration="2" media="b-desc-$Number$.m4s"/>
              <Representation id="bd" bandwidth="64000"/>
            </AdaptationSet>
            <AdaptationSet id="b-main" contentType="audio" lang="eng" mimeType="audio/mp4">
              <Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
              <SegmentTemplate duration="2" media="b-main-$Number$.m4s"/>
              <Representation id="bm" bandwidth="128000"/>
            </AdaptationSet>
            <AdaptationSet id="v2" contentType="video" mimeType="video/mp4">
              <SegmentTemplate timescale="10" duration="20" startNumber="7" media="w-$RepresentationID$-$Number$.m4s"
                initialization="w-$RepresentationID$-init.m4s"/>
              <Representation id="x" bandwidth="900000"/>
              <Representation id="lo" bandwidth="450000"/>
            </AdaptationSet>
          </Period>
        </MPD>
        """

    static func presentation(_ text: String = twoPeriods) throws -> DASHPresentation {
        DASHPresentation(mpd: try MPD.parse(Array(text.utf8)), mpdURL: url)
    }

    @Test func theFirstPeriodIsAMultivariantPlaylist() throws {
        let presentation = try Self.presentation()
        let master = presentation.multivariant()
        // The trick-mode set, whose EssentialProperty a client must not ignore, is no variant.
        #expect(master.variants.map(\.uri) == [Self.url + "#dash=0/0", Self.url + "#dash=0/1"])
        #expect(master.variants.map(\.bandwidth) == [1_128_000, 628_000])
        #expect(master.variants[0].codecs == "avc1.64001f,mp4a.40.2")
        #expect(master.variants[1].resolution == Resolution(width: 640, height: 360))
        #expect(master.variants.allSatisfy { $0.audio == "audio" && $0.subtitles == "subs" })

        let audio = master.renditions.filter { $0.type == .audio }
        #expect(audio.map(\.name) == ["eng", "eng 2", "Français"])
        #expect(audio.map(\.uri) == [Self.url + "#dash=2/0", Self.url + "#dash=3/0", Self.url + "#dash=4/0"])
        #expect(audio.map(\.characteristics) == ["main", "description", nil])
        #expect(audio.map(\.isDefault) == [true, false, false])
        let subtitles = master.renditions.filter { $0.type == .subtitles }
        #expect(subtitles.map(\.uri) == [Self.url + "#dash=5/0"] && subtitles[0].language == "eng")

        // `--audio role:description` and `--audio en,fr` against these renditions.
        #expect(RenditionPreference("role:description")?.select(from: audio).map(\.name) == ["eng 2"])
        #expect(RenditionPreference("role:description")?.description == "role:description")
        // Each language's renditions, as `--audio eng` alone takes them: main first.
        #expect(RenditionPreference("eng,fra")?.select(from: audio).map(\.name) == ["eng", "eng 2", "Français"])
        #expect(RenditionPreference("eng,fra")?.description == "eng,fra")
        #expect(RenditionPreference("en,,fr") == nil && RenditionPreference("role:") == nil)
        #expect(DASHPresentation.Key(url: Self.url + "#dash=-1/0") == nil)
        #expect(
            DASHPresentation.Key(url: Self.url + "#dash=2/0")
                == DASHPresentation.Key(adaptationSet: 2, representation: 0))
    }

    @Test func laterPeriodsFindTheSameSetByIdThenRoleAndTheRepresentationByIdThenBandwidth() throws {
        let presentation = try Self.presentation()
        typealias Key = DASHPresentation.Key
        // The description audio: by its Role, not the first English set.
        #expect(presentation.locate(Key(adaptationSet: 3, representation: 0), inPeriod: 1)! == (0, 0))
        #expect(presentation.locate(Key(adaptationSet: 2, representation: 0), inPeriod: 1)! == (1, 0))
        // Video `lo` by id; `hi` by the nearest bandwidth.
        #expect(presentation.locate(Key(adaptationSet: 0, representation: 1), inPeriod: 1)! == (2, 1))
        #expect(presentation.locate(Key(adaptationSet: 0, representation: 0), inPeriod: 1)! == (2, 0))
        // No French in the second Period; out of range keys have no place.
        #expect(presentation.locate(Key(adaptationSet: 4, representation: 0), inPeriod: 1) == nil)
        #expect(presentation.locate(Key(adaptationSet: 9, representation: 0), inPeriod: 0) == nil)
        #expect(presentation.locate(Key(adaptationSet: 0, representation: 0), inPeriod: 2) == nil)
    }

    @Test func aMediaPlaylistRunsOverEveryPeriodWithADiscontinuityBetween() throws {
        let presentation = try Self.presentation()
        #expect(presentation.mpd.periodTimes(0) == (0, 4))
        #expect(presentation.mpd.periodTimes(1) == (4, 6))
        let key = DASHPresentation.Key(adaptationSet: 0, representation: 1)
        #expect(try presentation.indexRequests(for: key).isEmpty)
        let playlist = try presentation.mediaPlaylist(for: key)
        #expect(
            playlist.segments.map(\.uri)
                == [
                    "v-lo-1.m4s", "v-lo-2.m4s", "w-lo-7.m4s", "w-lo-8.m4s", "w-lo-9.m4s",
                ].map { "https://cdn.example/show/" + $0 })
        #expect(playlist.segments.map(\.isDiscontinuity) == [false, false, true, false, false])
        #expect(
            playlist.segments.map { $0.map?.uri } == [
                "https://cdn.example/show/v-lo-init.m4s", nil, "https://cdn.example/show/w-lo-init.m4s", nil, nil,
            ])
        #expect(playlist.hasEndList && playlist.playlistType == .vod && playlist.mediaSequence == 1)
        let tags = playlist.segments.map { DASHSegmentTag(lines: $0.extraLines) }
        #expect(tags.map { $0?.period } == [0, 0, 1, 1, 1])
        #expect(tags.map { $0?.adaptationSet } == [0, 0, 2, 2, 2])
        #expect(tags.map { $0?.time } == [0, 20, 0, 20, 40] && tags.allSatisfy { $0?.timescale == 10 })
        let line = DASHSegmentTag(
            period: 1, adaptationSet: 2, representation: 3, time: 4, duration: nil, timescale: 5
        ).line
        #expect(line.text == "#STREAMKIT-DASH:P=1,A=2,R=3,T=4,S=5")
        #expect(DASHSegmentTag(lines: [line])?.duration == nil && DASHSegmentTag(lines: [line])?.time == 4)
    }

    /// SegmentBase: the segments are the `sidx`'s references; the initialization the MPD's
    /// range; times from the presentation time offset, in the MPD's timescale.
    @Test func aSegmentBaseIsReadThroughItsIndex() throws {
        let presentation = try Self.presentation(
            """
            <MPD type="static" mediaPresentationDuration="PT4S"><Period>
              <AdaptationSet contentType="audio" mimeType="audio/mp4">
                <Representation id="a" bandwidth="64000"><BaseURL>audio.mp4</BaseURL>
                  <SegmentBase timescale="1000" presentationTimeOffset="500" indexRange="700-755">
                    <Initialization range="0-699"/>
                  </SegmentBase>
                </Representation>
              </AdaptationSet>
            </Period></MPD>
            """)
        let key = DASHPresentation.Key(adaptationSet: 0, representation: 0)
        let requests = try presentation.indexRequests(for: key)
        #expect(requests.map(\.identity) == ["https://cdn.example/show/audio.mp4#700-755"])
        let bytes = SegmentIndexTests.sidx(
            timescale: 48000, earliest: 24000, references: [(1000, 96000), (2000, 96000)])
        let index = try SegmentIndex.parse(bytes, fileOffset: 700)
        let playlist = try presentation.mediaPlaylist(for: key, indexes: [requests[0].identity: index])
        #expect(
            playlist.segments.map(\.byteRange) == [
                SegmentByteRange(length: 1000, offset: 756), SegmentByteRange(length: 2000, offset: 1756),
            ])
        #expect(playlist.segments.map(\.duration) == [2, 2])
        #expect(playlist.segments[0].map?.byteRange == SegmentByteRange(length: 700, offset: 0))
        let tags = playlist.segments.compactMap { DASHSegmentTag(lines: $0.extraLines) }
        #expect(tags.map(\.time) == [24000, 120_000] && tags.allSatisfy { $0.timescale == 48000 })
        #expect(throws: SegmentResolutionError.self) { try presentation.mediaPlaylist(for: key) }
    }

    /// Numbers an MPD may write but no media has: refused or saturated, never a trap.
    @Test func hostileNumbersAreRefusedNotTrapped() throws {
        let huge = try Self.presentation(
            """
            <MPD type="static" mediaPresentationDuration="PT10S"><Period>
              <AdaptationSet contentType="video" mimeType="video/mp4">
                <SegmentTemplate timescale="1" duration="18446744073709551615" media="$Number$.m4s"/>
                <Representation id="v" bandwidth="9223372036854775807"/>
              </AdaptationSet>
              <AdaptationSet contentType="audio" mimeType="audio/mp4">
                <SegmentTemplate duration="2" media="a$Number$.m4s"/>
                <Representation id="a" bandwidth="9223372036854775807"/>
              </AdaptationSet>
            </Period></MPD>
            """)
        #expect(huge.multivariant().variants.map(\.bandwidth) == [Int.max])
        #expect {
            try huge.mediaPlaylist(for: DASHPresentation.Key(adaptationSet: 0, representation: 0))
        } throws: {
            let error = $0 as? SegmentResolutionError
            return error?.reason.contains("seconds") == true && error?.kind == .invalid
        }
        // A byte range ending at the last Int64 has no length: not a range.
        #expect(ByteRangeText("0-9223372036854775807") == nil && ByteRangeText("0-9223372036854775806") != nil)
        // A billion-segment timeline is refused before it is expanded.
        let billion = try Self.presentation(
            """
            <MPD type="static" mediaPresentationDuration="PT10S"><Period>
              <AdaptationSet contentType="audio" mimeType="audio/mp4">
                <SegmentTemplate media="$Time$.m4s"><SegmentTimeline><S d="1" r="999999999"/></SegmentTimeline>
                </SegmentTemplate>
                <Representation id="a" bandwidth="1"/>
              </AdaptationSet>
            </Period></MPD>
            """)
        let clock = ContinuousClock()
        let started = clock.now
        // Too many for the limit: a kind of its own, which a higher limit may take.
        #expect {
            try billion.mediaPlaylist(for: DASHPresentation.Key(adaptationSet: 0, representation: 0))
        } throws: { ($0 as? SegmentResolutionError)?.kind == .tooManySegments }
        #expect(clock.now - started < .seconds(1))
    }

    @Test func anMPDIsToldByItsFirstElement() {
        for yes in [
            "<MPD/>", "\u{FEFF}  <?xml version=\"1.0\"?>\n<!-- a --><MPD type=\"static\">",
            "<dash:MPD xmlns:dash=\"urn:mpeg:dash:schema:mpd:2011\">",
            "<?xml version=\"1.0\"?><!DOCTYPE MPD [<!ENTITY a \"b\">]><MPD>", "<!DOCTYPE MPD><MPD>",
        ] {
            #expect(MPD.looksLikeMPD(Array(yes.utf8)), "\(yes)")
        }
        for no in ["#EXTM3U", "<html><MPD>", "<MPDX/>", "<?xml version=\"1.0\"", "<!-- never closed <MPD>", ""] {
            #expect(!MPD.looksLikeMPD(Array(no.utf8)), "\(no)")
        }
        // Past the first 4 KB it does not look.
        let padded = "<!--" + String(repeating: " ", count: 5000) + "--><MPD>"
        #expect(!MPD.looksLikeMPD(Array(padded.utf8)))
    }
}
