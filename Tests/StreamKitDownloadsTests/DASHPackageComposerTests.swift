import StreamKitDASH
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// The package's MPD from the segments as the engine records them: the source's DASH playlist,
/// planned into package files, composed again. Templates for numbered files, lists around gaps
/// and over byte ranges, timelines folded with `r`, Periods kept apart.
struct DASHPackageComposerTests {
    static let url = "https://cdn.example/show/manifest.mpd"

    /// `key`'s segments of `mpd` planned into folder `folder`, `excluded` (indices) left out.
    static func recorded(
        _ presentation: DASHPresentation, _ key: DASHPresentation.Key, folder: String, excluded: Set<Int> = [],
        sharesRangedFiles: Bool = true
    ) throws -> [RecordedSegment] {
        let playlist = try presentation.mediaPlaylist(for: key)
        let resolved = playlist.resolvedSegments(baseURL: presentation.url(of: key))
        var planner = RenditionPlanner(
            rendition: 0, folder: folder, role: .main, decrypt: false, sharesRangedFiles: sharesRangedFiles)
        let exclusions = resolved.indices.map { excluded.contains($0) ? SegmentFilter.Exclusion.matchedPattern : nil }
        return Array(
            try planner.plan(Array(zip(playlist.segments, resolved)), exclusions: exclusions, playlistURL: Self.url)
                .segments)
    }

    static func presentation(_ text: String) throws -> DASHPresentation {
        DASHPresentation(mpd: try MPD.parse(Array(text.utf8)), mpdURL: url)
    }

    static let timeline = """
        <MPD type="static" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" mediaPresentationDuration="PT8S">
          <Period id="only">
            <AdaptationSet id="7" contentType="video" mimeType="video/mp4" lang="und">
              <Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
              <SegmentTemplate timescale="12800" presentationTimeOffset="1280" initialization="init-$RepresentationID$.mp4"
                media="seg-$RepresentationID$-$Time$.m4s">
                <SegmentTimeline><S t="1280" d="25600" r="2"/><S d="12800"/></SegmentTimeline>
              </SegmentTemplate>
              <Representation id="v" bandwidth="300000" width="320" height="240"/>
              <Representation id="w" bandwidth="100000" width="160" height="120"/>
            </AdaptationSet>
          </Period>
        </MPD>
        """

    @Test func numberedFilesBecomeATemplateWithTheSourcesTimeline() throws {
        let presentation = try Self.presentation(Self.timeline)
        let key = DASHPresentation.Key(adaptationSet: 0, representation: 0)
        let segments = try Self.recorded(presentation, key, folder: "video")
        #expect(segments.map(\.file) == ["video/00001.m4s", "video/00002.m4s", "video/00003.m4s", "video/00004.m4s"])
        let mpd = try MPD.parse(
            Array(
                DASHPackageComposer.compose(source: presentation.mpd, renditions: [("video", segments)]).serialized()
                    .utf8)
        )
        #expect(mpd.type == .static && mpd.profiles == "urn:mpeg:dash:profile:isoff-live:2011")
        #expect(mpd.mediaPresentationDuration == 7 && mpd.periods.map(\.id) == ["only"])
        let set = try #require(mpd.periods.first?.adaptationSets.first)
        // The set's attributes and Role kept; only the downloaded Representation.
        #expect(set.id == "7" && set.lang == "und" && set.roles.map(\.value) == ["main"])
        #expect(set.representations.map(\.id) == ["v"] && set.representations[0].common.width == 320)
        let template = try #require(set.representations[0].segments.template)
        #expect(template.media == "video/$Number%05d$.m4s" && template.timing.startNumber == 1)
        #expect(template.initializationTemplate == "video/init-0.mp4")
        #expect(template.timing.timescale == 12800 && template.timing.presentationTimeOffset == 1280)
        #expect(template.timing.timeline == [TimelineEntry(t: 1280, d: 25600, r: 2), TimelineEntry(t: nil, d: 12800)])
        // Resolved again, the package's MPD names the package's files at the source's times.
        let again = try mpd.resolve(
            periodIndex: 0, adaptationSet: set, representation: set.representations[0],
            mpdURL: "http://127.0.0.1/p/manifest.mpd")
        #expect(again.segments.map(\.url).last == "http://127.0.0.1/p/video/00004.m4s")
        #expect(
            again.segments.map(\.start) == [0, 2, 4, 6] && again.segments.map(\.time) == [1280, 26880, 52480, 78080])
    }

    @Test func aGapMakesAListWhoseTimelineStepsOverIt() throws {
        let presentation = try Self.presentation(Self.timeline)
        let key = DASHPresentation.Key(adaptationSet: 0, representation: 1)
        let segments = try Self.recorded(presentation, key, folder: "low", excluded: [1])
        let mpd = DASHPackageComposer.compose(source: presentation.mpd, renditions: [("low", segments)])
        let representation = try #require(mpd.periods.first?.adaptationSets.first?.representations.first)
        #expect(representation.id == "w")
        let list = try #require(representation.segments.list)
        #expect(list.segments.map(\.media) == ["low/00001.m4s", "low/00003.m4s", "low/00004.m4s"])
        #expect(list.timing.initialization?.sourceURL == "low/init-0.mp4")
        #expect(
            list.timing.timeline == [
                TimelineEntry(t: 1280, d: 25600), TimelineEntry(t: 52480, d: 25600),
                TimelineEntry(t: nil, d: 12800),
            ])
        #expect(mpd.profiles == "urn:mpeg:dash:profile:full:2011")
    }

    @Test func byteRangesOfOneFileBecomeAListOfMediaRanges() throws {
        let presentation = try Self.presentation(
            """
            <MPD type="static" mediaPresentationDuration="PT4S"><Period>
              <AdaptationSet contentType="audio" mimeType="audio/mp4"><Representation id="a" bandwidth="1">
                <BaseURL>a.mp4</BaseURL>
                <SegmentList timescale="1000" duration="2000">
                  <Initialization range="0-99"/>
                  <SegmentURL mediaRange="100-199"/><SegmentURL mediaRange="200-349"/>
                </SegmentList>
              </Representation></AdaptationSet>
            </Period></MPD>
            """)
        let segments = try Self.recorded(
            presentation, DASHPresentation.Key(adaptationSet: 0, representation: 0), folder: "a")
        let mpd = DASHPackageComposer.compose(source: presentation.mpd, renditions: [("a", segments)])
        let list = try #require(mpd.periods.first?.adaptationSets.first?.representations.first?.segments.list)
        #expect(list.timing.initialization == URLWithRange(sourceURL: "a/media-0.mp4", range: ByteRangeText("0-99")))
        #expect(list.segments.map(\.media) == ["a/media-0.mp4", "a/media-0.mp4"])
        #expect(list.segments.map(\.mediaRange) == [ByteRangeText("100-199"), ByteRangeText("200-349")])
        #expect(list.timing.timeline == [TimelineEntry(t: 0, d: 2000, r: 1)])
    }

    /// Segments whose tags name what the source MPD no longer has (a live MPD that dropped a set)
    /// are left out, not a trap.
    @Test func tagsTheSourceNoLongerHasAreLeftOut() throws {
        let presentation = try Self.presentation(Self.timeline)
        let segments = try Self.recorded(
            presentation, DASHPresentation.Key(adaptationSet: 0, representation: 1), folder: "low")
        var smaller = presentation.mpd
        smaller.periods[0].adaptationSets[0].representations.removeLast()
        #expect(DASHPackageComposer.compose(source: smaller, renditions: [("low", segments)]).periods.isEmpty)
        smaller.periods[0].adaptationSets.removeAll()
        #expect(DASHPackageComposer.compose(source: smaller, renditions: [("low", segments)]).periods.isEmpty)
    }

    @Test func timelinesFoldEqualDurationsAndMarkGaps() {
        let entries = DASHPackageComposer.timeline([(0, 10), (10, 10), (20, 10), (40, 10), (50, 5), (55, 5)])
        #expect(
            entries == [
                TimelineEntry(t: 0, d: 10, r: 2), TimelineEntry(t: 40, d: 10), TimelineEntry(t: nil, d: 5, r: 1),
            ])
        #expect(DASHPackageComposer.timeline([]).isEmpty)
        #expect(DASHPackageComposer.ticks(.nan) == 0 && DASHPackageComposer.ticks(-1) == 0)
        #expect(DASHPackageComposer.ticks(1e30) == .max && DASHPackageComposer.ticks(95231.9999) == 95232)
        #expect(DASHPackageComposer.milliseconds(20.031999999999996) == 20.032)
        #expect(DASHPackageComposer.milliseconds(8.0213333) == 8.022 && DASHPackageComposer.milliseconds(.nan) == 0)
    }
}
