import StreamKitDASH
import StreamKitHLS
import Testing

/// A dynamic MPD's `@duration` template placed on the wall clock, and live segments numbered
/// by their time from one reload to the next.
struct LiveMPDTests {
    /// ffmpeg's live form (`-use_timeline 0`): 2 s segments from `availabilityStartTime`.
    private func mpd(depth: String? = "PT10S", startNumber: Int = 5, periodDuration: String? = nil) throws -> MPD {
        let attributes = depth.map { " timeShiftBufferDepth=\"\($0)\"" } ?? ""
        let duration = periodDuration.map { " duration=\"\($0)\"" } ?? ""
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" minimumUpdatePeriod="PT500S" \
            availabilityStartTime="2026-12-07T10:00:00Z"\(attributes) profiles="urn:mpeg:dash:profile:isoff-live:2011">
            <Period id="0" start="PT0S"\(duration)><AdaptationSet contentType="video" mimeType="video/mp4">
            <Representation id="v" bandwidth="300000" codecs="avc1.42c00d">
            <SegmentTemplate timescale="1000" duration="2000" initialization="init-$RepresentationID$.m4s" \
            media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="\(startNumber)"/>
            </Representation></AdaptationSet></Period></MPD>
            """
        return try MPD.parse(Array(text.utf8))
    }

    /// 2026-12-07T10:00:00Z in seconds since 1970, plus `seconds`.
    private func at(_ seconds: Double) -> Double {
        HLSDateTime("2026-12-07T10:00:00Z")!.timeIntervalSince1970 + seconds
    }

    private func playlist(_ mpd: MPD, now: Double?) throws -> MediaPlaylist {
        try DASHPresentation(mpd: mpd, mpdURL: "http://o.test/live/manifest.mpd")
            .mediaPlaylist(for: .init(adaptationSet: 0, representation: 0), now: now)
    }

    @Test func theWindowIsTheTimeShiftBufferUpToTheLastWholeSegmentBeforeTheEdge() throws {
        // 61.5 s in: 30 whole segments (0...29); the 30th, ending at the edge, is left for the
        // next reload; 10 s of depth is 5 segments: 24...28, numbered from startNumber 5.
        let media = try playlist(try mpd(), now: at(61.5))
        #expect(media.mediaSequence == 29 && media.segments.count == 5)
        #expect(media.segments.first?.uri == "http://o.test/live/chunk-v-00029.m4s")
        #expect(media.segments.last?.uri == "http://o.test/live/chunk-v-00033.m4s")
        #expect(!media.hasEndList && media.playlistType == nil)
        let tags = media.segments.map { DASHSegmentTag(lines: $0.extraLines) }
        #expect(tags.map { $0?.time } == [48_000, 50_000, 52_000, 54_000, 56_000])
        // Two seconds later the window has moved by one, numbered the same.
        let later = try playlist(try mpd(), now: at(63.5))
        #expect(later.mediaSequence == 30 && later.segments.first?.uri == "http://o.test/live/chunk-v-00030.m4s")
    }

    @Test func withoutADepthTheLast30SecondsAndNothingBeforeTheStart() throws {
        let media = try playlist(try mpd(depth: nil, startNumber: 1), now: at(3_600))
        #expect(media.segments.count == 15 && media.mediaSequence == 1_800 - 15)
        // Before a whole segment and the one after it: nothing yet; before the start: nothing.
        #expect(try playlist(try mpd(), now: at(3.9)).segments.isEmpty)
        #expect(try playlist(try mpd(), now: at(-100)).segments.isEmpty)
        // A Period with a duration ends its segments there.
        let ended = try playlist(try mpd(depth: "PT1H", startNumber: 1, periodDuration: "PT20S"), now: at(3_600))
        #expect(ended.segments.count == 10 && ended.segments.last?.uri == "http://o.test/live/chunk-v-00010.m4s")
    }

    @Test func withoutAClockItIsRefusedAndAFarEdgeIsRefusedNotTrapped() throws {
        #expect(throws: SegmentResolutionError.self) { try playlist(try mpd(), now: nil) }
        #expect(throws: SegmentResolutionError.self) { try playlist(try mpd(), now: at(1e300)) }
        #expect(throws: SegmentResolutionError.self) { try playlist(try mpd(), now: .nan) }
    }

    /// A reload's playlist with segments at `times` (each 100 ticks), numbered from `sequence`.
    private func reload(_ times: [UInt64], sequence: UInt64 = 1) -> MediaPlaylist {
        let segments = times.map { time in
            MediaSegment(
                uri: "t\(time).m4s", duration: 1,
                extraLines: [
                    DASHSegmentTag(
                        period: 0, adaptationSet: 0, representation: 0, time: time, duration: 100, timescale: 100
                    ).line
                ])
        }
        return MediaPlaylist(targetDuration: 1, mediaSequence: sequence, segments: segments)
    }

    @Test func aWindowAddressedByTimeKeepsItsNumbersAsItSlides() {
        // A server that leaves startNumber at 1 while its $Time$ window slides.
        let (first, mark) = DASHLiveNumbering.continuing(reload([100, 200, 300]), after: nil)
        #expect(first.mediaSequence == 1 && mark == .init(time: 300, duration: 100, sequence: 3))
        let (second, secondMark) = DASHLiveNumbering.continuing(reload([200, 300, 400]), after: mark)
        #expect(second.mediaSequence == 2 && secondMark?.sequence == 4)
        // Right after the mark: continued; later: a gap of one, which the recorder marks.
        let (next, _) = DASHLiveNumbering.continuing(reload([500, 600]), after: secondMark)
        #expect(next.mediaSequence == 5)
        let (gap, _) = DASHLiveNumbering.continuing(reload([900, 1_000]), after: secondMark)
        #expect(gap.mediaSequence == 6)
        // A server that numbers its segments itself keeps its numbers.
        let (numbered, _) = DASHLiveNumbering.continuing(reload([500, 600], sequence: 5), after: secondMark)
        #expect(numbered.mediaSequence == 5)
        // Segments without times are left as they are.
        let untimed = MediaPlaylist(
            targetDuration: 1, mediaSequence: 7, segments: [MediaSegment(uri: "a", duration: 1)])
        #expect(DASHLiveNumbering.continuing(untimed, after: secondMark).0.mediaSequence == 7)
    }

    @Test func utcTimingSourcesAreReadInTheirOrderThoseWithoutAReaderLeftOut() throws {
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-12-07T10:00:00Z">
            <Period id="0"/>
            <UTCTiming schemeIdUri="urn:mpeg:dash:utc:ntp:2014" value="pool.ntp.org"/>
            <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="/time?iso https://t2.test/x"/>
            <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-head:2014" value="https://t3.test/"/>
            <UTCTiming schemeIdUri="urn:mpeg:dash:utc:direct:2014" value="2026-12-07T10:01:40.5Z"/>
            <UTCTiming schemeIdUri="urn:mpeg:dash:utc:direct:2014" value="yesterday"/>
            <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014"/>
            </MPD>
            """
        let mpd = try MPD.parse(Array(text.utf8))
        #expect(
            mpd.utcTimingSources(mpdURL: "https://o.test/live/manifest.mpd") == [
                .httpDateTime(url: "https://o.test/time?iso"), .httpHead(url: "https://t3.test/"),
                .direct(HLSDateTime("2026-12-07T10:01:40.5Z")!),
            ])
        #expect(
            try MPD.parse(Array("<MPD type=\"dynamic\"><Period/></MPD>".utf8)).utcTimingSources(mpdURL: "x").isEmpty)
    }
}
