import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// What a package still downloading lists: each rendition's ready head, cut at the same media time
/// across renditions; when the playlists are written again; how a growing playlist reads.
@Suite struct PlayablePrefixTests {
    typealias Rendition = PlayablePrefix.Rendition

    struct Case: Sendable, CustomTestStringConvertible {
        let what: String
        let renditions: [Rendition]
        let counts: [Int]
        var testDescription: String { what }
    }

    static let cases: [Case] = [
        Case(
            what: "one rendition lists its ready head",
            renditions: [Rendition(durations: [2, 2, 2, 2], ready: 3, complete: true)], counts: [3]),
        Case(
            what: "video ahead of its audio waits for it",
            renditions: [
                Rendition(durations: [6, 6, 6, 6], ready: 4, complete: false),
                Rendition(durations: [4, 4, 4, 4, 4, 4], ready: 2, complete: true),
            ], counts: [1, 2]),
        Case(
            what: "segments cut a little apart still pair up (tolerance)",
            renditions: [
                Rendition(durations: [6.006, 6.006, 6.006], ready: 2, complete: true),
                Rendition(durations: [5.995, 5.995, 5.995], ready: 2, complete: true),
            ], counts: [2, 2]),
        Case(
            what: "a rendition with nothing ready holds back every other one",
            renditions: [
                Rendition(durations: [2, 2, 2], ready: 3, complete: true),
                Rendition(durations: [2, 2, 2], ready: 0, complete: true),
            ], counts: [0, 0]),
        Case(
            what: "a complete rendition (one long subtitle file) does not limit the others",
            renditions: [
                Rendition(durations: [2, 2, 2, 2], ready: 2, complete: true),
                Rendition(durations: [600], ready: 1, complete: true),
            ], counts: [2, 1]),
        Case(
            what: "a complete rendition lists up to the segment that covers the cut",
            renditions: [
                Rendition(durations: [4, 4, 4, 4], ready: 4, complete: true),
                Rendition(durations: [3, 3, 3, 3, 3], ready: 2, complete: true),
            ], counts: [2, 2]),
        Case(
            what: "a live rendition fully ready still bounds the cut (more comes)",
            renditions: [
                Rendition(durations: [2, 2, 2], ready: 3, complete: false),
                Rendition(durations: [2, 2, 2, 2], ready: 4, complete: false),
            ], counts: [3, 3]),
        Case(
            what: "everything ready: every segment listed",
            renditions: [
                Rendition(durations: [2, 2], ready: 2, complete: true),
                Rendition(durations: [3], ready: 1, complete: true),
            ], counts: [2, 1]),
        Case(
            what: "ready counts out of range are clamped",
            renditions: [Rendition(durations: [2, 2], ready: 7, complete: false)], counts: [2]),
    ]

    @Test(arguments: cases) func eachRenditionListsItsReadyHeadCutAtTheSameTime(_ testCase: Case) {
        #expect(PlayablePrefix.aligned(testCase.renditions).counts == testCase.counts)
    }

    @Test func aPrefixIsPlayableOnceEveryRenditionWithSegmentsListsOne() {
        #expect(PlayablePrefix(counts: [1, 1]).isPlayable(segmentCounts: [5, 5]))
        #expect(!PlayablePrefix(counts: [1, 0]).isPlayable(segmentCounts: [5, 5]))
        #expect(PlayablePrefix(counts: [1, 0]).isPlayable(segmentCounts: [5, 0]))
        #expect(!PlayablePrefix(counts: [0]).isPlayable(segmentCounts: [0]))
        #expect(!PlayablePrefix(counts: [1]).isPlayable(segmentCounts: [1, 1]))
    }

    @Test func theGateWritesAtOnceThenWhenGrownOnceAnIntervalNotFasterThanTenTimesItsCostAtMostFiveSecondsApart() {
        let start = ContinuousClock.now
        var gate = GrowingPlaylistGate(interval: .seconds(1))
        let one = PlayablePrefix(counts: [1])
        let two = PlayablePrefix(counts: [2])
        #expect(!gate.isDue(one, playable: false, at: start))
        #expect(gate.isDue(one, playable: true, at: start))
        gate.written(one, startedAt: start, endedAt: start + .milliseconds(10))
        #expect(!gate.isDue(one, playable: true, at: start + .seconds(5)), "unchanged")
        #expect(!gate.isDue(two, playable: true, at: start + .milliseconds(900)), "within the interval")
        #expect(gate.isDue(two, playable: true, at: start + .milliseconds(1_010)))
        // A write that took 300 ms: the next waits 3 s.
        gate.written(two, startedAt: start + .seconds(2), endedAt: start + .milliseconds(2_300))
        let three = PlayablePrefix(counts: [3])
        #expect(!gate.isDue(three, playable: true, at: start + .milliseconds(4_000)))
        #expect(gate.isDue(three, playable: true, at: start + .milliseconds(5_300)))
        // A write that took 2 s: the next waits 5 s, not 20.
        gate.written(three, startedAt: start + .seconds(6), endedAt: start + .seconds(8))
        let four = PlayablePrefix(counts: [4])
        #expect(!gate.isDue(four, playable: true, at: start + .milliseconds(12_900)))
        #expect(gate.isDue(four, playable: true, at: start + .seconds(13)))
    }

    /// The growing form: EVENT without ENDLIST, the target duration of every planned segment,
    /// EXT-X-START at the beginning unless the source has its own; the complete form as before.
    @Test func aGrowingPlaylistIsAnEventWithoutEndListStartingAtTheBeginning() throws {
        let source = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXTINF:4,
            a.ts
            #EXTINF:4,
            b.ts
            #EXTINF:7,
            c.ts
            #EXT-X-ENDLIST
            """
        let playlist = try #require(try Playlist.parse(source).playlist.media)
        var planner = RenditionPlanner(
            rendition: 0, folder: "video", role: .main, decrypt: false, sharesRangedFiles: true)
        let base = "https://cdn.example.com/v/index.m3u8"
        let (_, segments) = try planner.plan(
            Array(zip(playlist.segments, playlist.resolvedSegments(baseURL: base))), playlistURL: base)
        let header = MediaPlaylistHeader(playlist)
        let growing = PlaylistComposer.compose(
            Array(segments.prefix(2)), header: header, target: .local, ending: .growing(targetDuration: 7))
        #expect(
            growing.serialized() == """
                #EXTM3U
                #EXT-X-VERSION:3
                #EXT-X-TARGETDURATION:7
                #EXT-X-MEDIA-SEQUENCE:0
                #EXT-X-PLAYLIST-TYPE:EVENT
                #EXT-X-START:TIME-OFFSET=0
                #EXTINF:4,
                00000.ts
                #EXTINF:4,
                00001.ts

                """)
        #expect(try Playlist.parse(growing.serialized(), options: .strict).playlist.media != nil)
        let complete = PlaylistComposer.compose(segments, header: header, target: .local)
        #expect(complete.playlistType == .vod && complete.hasEndList && complete.start == nil)
        #expect(complete.targetDuration == 7)
        var started = header
        started.start = StartPoint(timeOffset: 8, isPrecise: true)
        let own = PlaylistComposer.compose(
            segments, header: started, target: .local, ending: .growing(targetDuration: 7))
        #expect(own.start == StartPoint(timeOffset: 8, isPrecise: true))
    }
}
