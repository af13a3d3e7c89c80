import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// A growing playlist appended to as its head grows reads, at every step, exactly as the head
/// composed whole: keys and maps written where they change, sequence numbers (and the IVs they
/// give) past left-out segments, discontinuities and date ranges of left-out segments moved on.
@Suite struct GrowingPlaylistFileTests {
    private static let base = "https://cdn.example.com/show/v/index.m3u8"

    /// Keys that change (an IV from the sequence number, an explicit IV, none), a map that
    /// changes, a source gap, a discontinuity, date ranges and unknown tags, date-times.
    private static let source = """
        #EXTM3U
        #EXT-X-VERSION:6
        #EXT-X-TARGETDURATION:4
        #EXT-X-MEDIA-SEQUENCE:40
        #EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:00.000Z
        #EXT-X-MAP:URI="init-a.mp4"
        #EXTINF:4,
        s0.m4s
        #EXT-X-KEY:METHOD=AES-128,URI="k1.key"
        #EXTINF:4,
        s1.m4s
        #EXTINF:4,
        s2.m4s
        #EXT-X-DATERANGE:ID="ad",START-DATE="2024-05-01T10:00:12.000Z",DURATION=8
        #EXT-X-GAP
        #EXTINF:4,
        s3.m4s
        #EXT-X-CUE-OUT:8
        #EXTINF:4,
        s4.m4s
        #EXTINF:4,
        s5.m4s
        #EXT-X-KEY:METHOD=AES-128,URI="k2.key",IV=0x000102030405060708090a0b0c0d0e0f
        #EXT-X-MAP:URI="init-b.mp4"
        #EXT-X-DISCONTINUITY
        #EXT-X-PROGRAM-DATE-TIME:2024-05-01T11:00:00.000Z
        #EXTINF:4,
        s6.m4s
        #EXT-X-KEY:METHOD=NONE
        #EXTINF:4,
        s7.m4s
        #EXT-X-GAP
        #EXTINF:4,
        s8.m4s
        #EXT-X-GAP
        #EXTINF:4,
        s9.m4s
        #EXT-X-KEY:METHOD=AES-128,URI="k1.key"
        #EXTINF:4,
        s10.m4s
        #EXTINF:4,
        s11.m4s
        """

    private func plan(_ text: String) throws -> (segments: ChunkedArray<RecordedSegment>, header: MediaPlaylistHeader) {
        let playlist = try #require(try Playlist.parse(text).playlist.media)
        var planner = RenditionPlanner(
            rendition: 0, folder: "video", role: .main, decrypt: false, sharesRangedFiles: true)
        let entries = Array(zip(playlist.segments, playlist.resolvedSegments(baseURL: Self.base)))
        return (try planner.plan(entries, playlistURL: Self.base).segments, MediaPlaylistHeader(playlist))
    }

    /// Grows the file through `heads` as the engine does, and checks it against the whole
    /// composition at each step. Returns how many steps wrote, and how many of them appended.
    private func grow(
        _ text: String, heads: [Int], skipped: Set<Int> = [], gaps: PlaylistComposer.GapForm = .omitted
    ) throws -> (writes: Int, appends: Int) {
        var (segments, header) = try plan(text)
        for index in skipped { segments[index].skipped = true }
        let ending = PlaylistComposer.Ending.growing(targetDuration: 4)
        var file: GrowingPlaylistFile?
        var written = ""
        var appends = 0
        var writes = 0
        for head in heads {
            let range = GrowingPlaylistFile.range(appendingTo: file, head: head) { position in
                PlaylistComposer.leavesOut(segments[position], skipped: segments[position].skipped, gaps: gaps)
            }
            guard let range else { continue }
            #expect(range.upperBound <= head)
            writes += 1
            var appended = false
            if let known = file {
                let tail = PlaylistComposer.compose(
                    segments[range], header: header, target: .local, gaps: gaps, ending: ending,
                    firstSequence: known.lastSequence)
                if let (next, entries) = known.appending(tail, upTo: range.upperBound) {
                    written += MediaPlaylist.serializedSegments(entries)
                    file = next
                    appended = true
                    appends += 1
                }
            }
            let whole = PlaylistComposer.compose(
                segments[..<range.upperBound], header: header, target: .local, gaps: gaps, ending: ending)
            if !appended {
                written = whole.serialized()
                file = GrowingPlaylistFile(segmentCount: range.upperBound, playlist: whole)
            }
            #expect(written == whole.serialized(), "head of \(head) segments")
            // What a player reads: the same segments as the whole head.
            let read = try #require(try Playlist.parse(written).playlist.media)
            #expect(read.segments.count == whole.segments.count)
        }
        return (writes, appends)
    }

    @Test(arguments: [
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        [2, 5, 9, 12],
        [4, 6, 10, 11, 12],
        [1, 12],
        [3, 4, 9, 10],
    ])
    func appendedTailsReadAsTheWholeHead(heads: [Int]) throws {
        let (writes, appends) = try grow(Self.source, heads: heads)
        #expect(writes >= 2 && appends == writes - 1)
    }

    /// Segments given up at the end of a head are written once an entry follows them, with
    /// the discontinuity and the date ranges they carry.
    @Test func segmentsGivenUpWaitForTheNextEntry() throws {
        let first = try grow(Self.source, heads: [2, 3, 4, 5, 6, 12], skipped: [1, 2, 4])
        #expect(first.writes >= 3 && first.appends == first.writes - 1)
        let second = try grow(Self.source, heads: [5, 9, 10, 12], skipped: [10, 11])
        #expect(second.writes == 2 && second.appends == 1)
    }

    @Test func gapsWrittenAsTagsAppendToo() throws {
        #expect(try grow(Self.source, heads: [1, 3, 4, 9, 12], skipped: [6], gaps: .tagged) == (5, 4))
    }

    /// A head with no entry yet is composed whole each time; once it has one, it is appended to.
    @Test func aHeadOfLeftOutSegmentsIsWrittenWhole() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-GAP
            #EXTINF:4,
            a.ts
            #EXT-X-GAP
            #EXTINF:4,
            b.ts
            #EXTINF:4,
            c.ts
            #EXTINF:4,
            d.ts
            """
        #expect(GrowingPlaylistFile.range(appendingTo: nil, head: 2) { _ in true } == 0..<2)
        #expect(try grow(text, heads: [1, 2, 3, 4]) == (4, 1))
    }

    /// A tail that needs a higher version (a byte range) or a longer target duration than the
    /// file states is not appended: the file is written whole.
    @Test func aTailThatChangesTheHeaderIsNotAppended() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXTINF:4,
            a.ts
            #EXTINF:4,
            b.ts
            #EXT-X-BYTERANGE:1000@0
            #EXTINF:4,
            c.ts
            #EXTINF:4,
            d.ts
            """
        let (segments, header) = try plan(text)
        let whole = PlaylistComposer.compose(
            segments[..<2], header: header, target: .local, ending: .growing(targetDuration: 4))
        let file = try #require(GrowingPlaylistFile(segmentCount: 2, playlist: whole))
        #expect(file.version == 3 && file.targetDuration == 4 && file.lastSequence == 1)
        let ranged = PlaylistComposer.compose(
            segments[1..<3], header: header, target: .local, ending: .growing(targetDuration: 4),
            firstSequence: file.lastSequence)
        #expect(file.appending(ranged, upTo: 3) == nil)
        let (longer, _) = try plan(
            text.replacingOccurrences(of: "#EXT-X-BYTERANGE:1000@0\n#EXTINF:4", with: "#EXTINF:9"))
        let longTail = PlaylistComposer.compose(
            longer[1..<3], header: header, target: .local, ending: .growing(targetDuration: 4),
            firstSequence: file.lastSequence)
        #expect(longTail.version == 3 && longTail.targetDuration == 9)
        #expect(file.appending(longTail, upTo: 3) == nil)
        // Nothing new, or only the last entry again: nothing to append.
        let same = PlaylistComposer.compose(
            segments[1..<2], header: header, target: .local, ending: .growing(targetDuration: 4),
            firstSequence: file.lastSequence)
        #expect(file.appending(same, upTo: 2) == nil)
        #expect(GrowingPlaylistFile.range(appendingTo: file, head: 2) { _ in false } == nil)
        #expect(GrowingPlaylistFile.range(appendingTo: file, head: 4) { _ in false } == 1..<4)
    }
}
