import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// The package's playlist without the segments it does not have (the default gap form): what the
/// segment after a left-out one must carry, and how the written playlist resolves.
@Suite struct GapFormComposerTests {
    private func plan(
        _ text: String, base: String = "https://cdn.example.com/show/v/index.m3u8"
    ) throws -> (segments: [RecordedSegment], header: MediaPlaylistHeader) {
        let playlist = try #require(try Playlist.parse(text).playlist.media)
        var planner = RenditionPlanner(
            rendition: 0, folder: "video", role: .main, decrypt: false, sharesRangedFiles: true)
        let entries = Array(zip(playlist.segments, playlist.resolvedSegments(baseURL: base)))
        let (_, segments) = try planner.plan(entries, playlistURL: base)
        return (Array(segments), MediaPlaylistHeader(playlist))
    }

    private func compose(
        _ text: String, skipping skipped: Set<Int>, gaps: PlaylistComposer.GapForm = .omitted
    ) throws -> String {
        var (segments, header) = try plan(text)
        for index in skipped { segments[index].skipped = true }
        for target in [PlaylistComposer.Target.local, .source] {
            Self.expectStreamedEqualsWhole(segments, header: header, target: target, gaps: gaps)
        }
        return PlaylistComposer.compose(segments, header: header, target: .local, gaps: gaps).serialized()
    }

    /// A playlist written from its frame with its entries composed again as they are written (as
    /// the download writes its final playlists) is the composed playlist's text.
    static func expectStreamedEqualsWhole(
        _ segments: [RecordedSegment], header: MediaPlaylistHeader, target: PlaylistComposer.Target,
        gaps: PlaylistComposer.GapForm
    ) {
        func frame(_ each: (MediaSegment) -> Void) -> MediaPlaylist {
            PlaylistComposer.frame(segments, header: header, target: target, gaps: gaps, each: each)
        }
        var streamed: [UInt8] = []
        var entries = 0
        frame { _ in entries += 1 }.serialized(chunkSize: 64, segments: { each in _ = frame(each) }) { streamed += $0 }
        let whole = PlaylistComposer.compose(segments, header: header, target: target, gaps: gaps)
        #expect(String(decoding: streamed, as: UTF8.self) == whole.serialized())
        #expect(entries == whole.segments.count)
    }

    /// One discontinuity for a run of missing segments (skipped or EXT-X-GAP in the source), one
    /// where a missing segment carried the source's, none at the start or the end; date-times
    /// written again after each, date ranges, unknown tags and bitrates moved on.
    @Test func missingSegmentsAreLeftOutWithOneDiscontinuityAfterEachRun() throws {
        let source = """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:100
            #EXT-X-DISCONTINUITY-SEQUENCE:3
            #EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:00.000Z
            #EXTINF:6,
            a.ts
            #EXTINF:6,
            b.ts
            #EXT-X-CUE-OUT:30
            #EXT-X-DATERANGE:ID="ad",START-DATE="2024-05-01T10:00:12.000Z",DURATION=30
            #EXT-X-BITRATE:800
            #EXTINF:6,
            c.ts
            #EXT-X-GAP
            #EXTINF:6,
            d.ts
            #EXTINF:6,
            e.ts
            #EXT-X-DISCONTINUITY
            #EXTINF:6,
            f.ts
            #EXTINF:6,
            g.ts
            #EXTINF:6,
            h.ts
            #EXT-X-ENDLIST
            """
        let local = try compose(source, skipping: [0, 2, 5, 7])
        #expect(
            local == """
                #EXTM3U
                #EXT-X-VERSION:3
                #EXT-X-TARGETDURATION:6
                #EXT-X-MEDIA-SEQUENCE:100
                #EXT-X-DISCONTINUITY-SEQUENCE:3
                #EXT-X-PLAYLIST-TYPE:VOD
                #EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:06.000Z
                #EXTINF:6,
                00101.ts
                #EXT-X-CUE-OUT:30
                #EXT-X-DISCONTINUITY
                #EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:24.000Z
                #EXT-X-DATERANGE:ID="ad",START-DATE="2024-05-01T10:00:12.000Z",DURATION=30
                #EXT-X-BITRATE:800
                #EXTINF:6,
                00104.ts
                #EXT-X-DISCONTINUITY
                #EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:36.000Z
                #EXTINF:6,
                00106.ts
                #EXT-X-ENDLIST

                """)
        let resolved = try #require(try Playlist.parse(local, options: .strict).playlist.media).resolvedSegments()
        #expect(resolved.map(\.discontinuitySequence) == [3, 4, 5])
        #expect(resolved.map(\.mediaSequence) == [100, 101, 102])

        // The RFC form keeps every segment, the skipped ones as EXT-X-GAP, and adds no discontinuity.
        let tagged = try compose(source, skipping: [0, 2, 5, 7], gaps: .tagged)
        #expect(tagged.components(separatedBy: "#EXT-X-GAP\n").count - 1 == 5)
        #expect(tagged.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count - 1 == 1)
        // Nothing missing: the playlist is the same in both forms.
        let whole = source.replacingOccurrences(of: "#EXT-X-GAP\n", with: "")
        #expect(try compose(whole, skipping: []) == compose(whole, skipping: [], gaps: .tagged))
        #expect(try !compose(whole, skipping: []).contains("DISCONTINUITY\n#EXTINF:6,\n00104.ts"))
    }

    /// A left-out segment that carried the only EXT-X-KEY and EXT-X-MAP: the next segment written
    /// carries them; byte ranges stay explicit; the IVs the source took from the media sequence
    /// number are written out where the package numbers a segment differently.
    @Test func theNextSegmentCarriesTheKeyMapAndIVItNeeds() throws {
        let source = """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:7
            #EXT-X-KEY:METHOD=AES-128,URI="k1"
            #EXT-X-MAP:URI="init.mp4",BYTERANGE="500@0"
            #EXTINF:2,
            #EXT-X-BYTERANGE:1000@500
            all.mp4
            #EXTINF:2,
            #EXT-X-BYTERANGE:1000
            all.mp4
            #EXTINF:2,
            #EXT-X-BYTERANGE:1000
            all.mp4
            #EXTINF:2,
            #EXT-X-BYTERANGE:1000
            all.mp4
            #EXT-X-ENDLIST
            """
        let local = try compose(source, skipping: [0, 2])
        #expect(
            local == """
                #EXTM3U
                #EXT-X-VERSION:6
                #EXT-X-TARGETDURATION:2
                #EXT-X-MEDIA-SEQUENCE:7
                #EXT-X-PLAYLIST-TYPE:VOD
                #EXT-X-KEY:METHOD=AES-128,URI="key-0.key",IV=0x00000000000000000000000000000008
                #EXT-X-MAP:URI="media-0.mp4",BYTERANGE="500@0"
                #EXTINF:2,
                #EXT-X-BYTERANGE:1000@1500
                media-1.mp4
                #EXT-X-DISCONTINUITY
                #EXT-X-KEY:METHOD=AES-128,URI="key-0.key",IV=0x0000000000000000000000000000000A
                #EXTINF:2,
                #EXT-X-BYTERANGE:1000@3500
                media-1.mp4
                #EXT-X-ENDLIST

                """)
        let resolved = try #require(try Playlist.parse(local, options: .strict).playlist.media).resolvedSegments()
        #expect(resolved.map(\.byteRange) == [ByteRange(1500, 2500), ByteRange(3500, 4500)])
        #expect(
            resolved.map { $0.keys.first?.iv } == [AES128CBC.iv(mediaSequence: 8), AES128CBC.iv(mediaSequence: 10)])
        #expect(resolved.allSatisfy { $0.map?.uri == "media-0.mp4" && $0.map?.byteRange == ByteRange(0, 500) })
    }

    /// EXT-X-DISCONTINUITY-SEQUENCE: a left-out first segment that carried a discontinuity moves
    /// the playlist's number on instead of tagging the new first segment; a left-out segment that
    /// carried one gives the next segment one discontinuity, not two; the segments written keep
    /// the source's numbers up to the first discontinuity added.
    @Test(arguments: [
        ([0], [5, 6], ["b.ts", "c.ts"], 1),
        ([1], [5, 6], ["a.ts", "c.ts"], 2),
        ([2], [5, 5], ["a.ts", "b.ts"], 1),
    ])
    func discontinuitySequenceNumbersFollowTheSegmentsWritten(
        skipped: [Int], sequences: [UInt64], kept: [String], discontinuities: Int
    ) throws {
        let source = """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-DISCONTINUITY-SEQUENCE:4
            #EXT-X-DISCONTINUITY
            #EXTINF:2,
            a.ts
            #EXTINF:2,
            b.ts
            #EXT-X-DISCONTINUITY
            #EXTINF:2,
            c.ts
            #EXT-X-ENDLIST
            """
        var (segments, header) = try plan(source)
        for index in skipped { segments[index].skipped = true }
        let local = PlaylistComposer.compose(segments, header: header, target: .local)
        let resolved = try #require(try Playlist.parse(local.serialized(), options: .strict).playlist.media)
            .resolvedSegments()
        #expect(resolved.map(\.discontinuitySequence) == sequences, "\(local.serialized())")
        let names = Dictionary(uniqueKeysWithValues: segments.map { ($0.local.uri, $0.resolved.uri) })
        #expect(resolved.map { names[$0.uri].map { String($0.split(separator: "/").last!) } } == kept)
        #expect(local.segments.filter(\.isDiscontinuity).count == discontinuities)
    }

    /// Every segment missing: a playlist with no segment, still ended.
    @Test func aPlaylistWithEverySegmentMissingIsEmptyAndEnded() throws {
        let local = try compose(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n#EXT-X-ENDLIST\n", skipping: [0, 1])
        #expect(!local.contains("#EXTINF") && local.hasSuffix("#EXT-X-ENDLIST\n"))
    }
}
