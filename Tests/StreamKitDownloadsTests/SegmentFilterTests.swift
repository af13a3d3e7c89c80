import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// Which segments `--section` and `--exclude-segments` keep, and how the package's playlist
/// closes what they leave out.
@Suite struct SegmentFilterTests {
    private func filter(sections: [String] = [], excluding patterns: [String] = []) throws -> SegmentFilter {
        try SegmentFilter(
            HLSSelection(sections: try sections.map { try TimeSection.parse($0) }, excludedSegments: patterns))
    }

    /// The kept positions of ten 2 s segments.
    private func kept(_ filter: SegmentFilter, durations: [Double] = Array(repeating: 2, count: 10)) -> [Int] {
        var start = 0.0
        var kept: [Int] = []
        for (position, duration) in durations.enumerated() {
            if filter.exclusion(uri: "https://a/s\(position).ts", start: start, duration: duration, live: false) == nil
            {
                kept.append(position)
            }
            start += duration
        }
        return kept
    }

    @Test func aSegmentCoveringAnyPartOfASectionIsKeptWhole() throws {
        #expect(kept(try filter(sections: ["0:04-0:10"])) == [2, 3, 4])
        #expect(kept(try filter(sections: ["0:05-0:09"])) == [2, 3, 4])
        #expect(kept(try filter(sections: ["0:04.001-0:09.999"])) == [2, 3, 4])
        #expect(kept(try filter(sections: ["-0:03"])) == [0, 1])
        #expect(kept(try filter(sections: ["0:15-"])) == [7, 8, 9])
        #expect(kept(try filter(sections: ["2-4", "3-6", "14-16"])) == [1, 2, 7])
        #expect(kept(try filter(sections: ["100-"])) == [])
        #expect(kept(try filter()) == Array(0..<10))
        // Durations summed from rounded EXTINF values.
        let rounded = [2.002, 1.998, 2.002, 1.998, 2.0]
        #expect(kept(try filter(sections: ["4-8"]), durations: rounded) == [2, 3])
    }

    @Test func patternsMatchTheAbsoluteURIAndSectionsDoNotCutALiveRecording() throws {
        let filter = try filter(sections: ["4-6"], excluding: ["/ads?/", "break\\d+\\.ts$"])
        #expect(filter.exclusion(uri: "https://a/ad/x.ts", start: 4, duration: 2, live: false) == .matchedPattern)
        #expect(filter.exclusion(uri: "https://a/break12.ts", start: 4, duration: 2, live: false) == .matchedPattern)
        #expect(filter.exclusion(uri: "https://a/break12.ts?x", start: 4, duration: 2, live: false) == nil)
        #expect(filter.exclusion(uri: "https://a/v/x.ts", start: 0, duration: 2, live: false) == .outsideSections)
        #expect(filter.exclusion(uri: "https://a/v/x.ts", start: 0, duration: 2, live: true) == nil)
        #expect(filter.exclusion(uri: "https://a/ads/x.ts", start: 0, duration: 2, live: true) == .matchedPattern)
        #expect(throws: HLSDownloadError(.invalidSegmentFilter)) { try self.filter(excluding: ["(unclosed"]) }
    }

    @Test func aSectionAfterTheEndIsRefusedNamingTheDuration() throws {
        try filter(sections: ["0:04-0:10", "0:19-1:00"]).check(duration: 20, url: "u")
        #expect {
            try filter(sections: ["0:04-0:10", "0:20-"]).check(duration: 20, url: "u")
        } throws: { error in
            "\(error)".contains("--section 0:20- starts after the end of the stream, which lasts 0:20 (20 s)")
        }
        #expect(throws: HLSDownloadError(.invalidSegmentFilter)) {
            try filter(sections: ["1:00:00-"]).check(duration: 3599.5, url: "u")
        }
    }

    @Test func aLiveSectionPicksWhereTheRecordingBeginsAndBoundsItsLength() throws {
        let window = [4.0, 4, 4, 4]
        #expect(try filter().liveStart(durations: window, url: "u") == 0)
        #expect(try filter(sections: ["-0:06"]).liveStart(durations: window, url: "u") == 0)
        #expect(try filter(sections: ["0:05-"]).liveStart(durations: window, url: "u") == 1)
        #expect(try filter(sections: ["0:08-0:20"]).liveStart(durations: window, url: "u") == 2)
        #expect {
            try filter(sections: ["0:16-"]).liveStart(durations: window, url: "u")
        } throws: { error in
            "\(error)".contains("window, which lasts 0:16 (16 s)")
        }
        #expect {
            try filter(sections: ["0:01-0:02", "0:05-0:06"]).liveStart(durations: window, url: "u")
        } throws: { error in
            "\(error)".contains("a live recording takes one --section")
        }
        #expect(try filter(sections: ["0:08-0:20"]).recordingLimit(liveDuration: nil) == 12)
        #expect(try filter(sections: ["0:08-0:20"]).recordingLimit(liveDuration: 5) == 5)
        #expect(try filter(sections: ["-0:30"]).recordingLimit(liveDuration: 60) == 30)
        #expect(try filter(sections: ["0:08-"]).recordingLimit(liveDuration: nil) == nil)
        #expect(try filter().recordingLimit(liveDuration: 7) == 7)
    }

    @Test func theSectionsAndPatternsAreWhatMakesThePackage() throws {
        let plain = HLSSelection()
        let cut = HLSSelection(sections: [try TimeSection.parse("4-10")])
        let noAds = HLSSelection(excludedSegments: ["ad"])
        let ids = [plain, cut, noAds].map {
            HLSDownloadJob.packageID(source: "https://a/b.m3u8", selection: $0, decrypt: false)
        }
        #expect(Set(ids).count == 3)
        // Written in package.json and the queue, and read back the same; older records have neither.
        let both = HLSSelection(
            sections: [try TimeSection.parse("4-10"), try TimeSection.parse("1:00-")], excludedSegments: ["ad", "x,y"])
        let data = try JSONEncoder().encode(both)
        #expect(String(decoding: data, as: UTF8.self).contains(#""sections":["0:04-0:10","1:00-"]"#))
        #expect(try JSONDecoder().decode(HLSSelection.self, from: data) == both)
        let old = Data(#"{"variant":"best","audio":"auto","subtitles":"all"}"#.utf8)
        #expect(try JSONDecoder().decode(HLSSelection.self, from: old) == plain)
        // A selection without them writes neither, so that older readers read it.
        #expect(!String(decoding: try JSONEncoder().encode(plain), as: UTF8.self).contains("sections"))
    }

    /// Left-out segments have no file, their keys and maps are not fetched, and the package's
    /// playlist leaves them out with one EXT-X-DISCONTINUITY after each run, none at the start,
    /// even with `--gap-tags`; the media sequence numbers run on and the IVs they implied are written.
    @Test func leftOutSegmentsAreOmittedWithADiscontinuityInEitherGapForm() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:10
            #EXT-X-KEY:METHOD=AES-128,URI="intro.key"
            #EXTINF:2,
            s0.ts
            #EXT-X-KEY:METHOD=AES-128,URI="main.key"
            #EXTINF:2,
            s1.ts
            #EXTINF:2,
            ad/a0.ts
            #EXTINF:2,
            ad/a1.ts
            #EXTINF:2,
            s2.ts
            #EXTINF:2,
            s3.ts
            #EXT-X-ENDLIST
            """
        let playlist = try #require(try Playlist.parse(text).playlist.media)
        let base = "https://cdn.example.com/v/index.m3u8"
        let resolved = playlist.resolvedSegments(baseURL: base)
        let filter = try filter(sections: ["2-"], excluding: ["/ad/"])
        let exclusions = resolved.map {
            filter.exclusion(uri: $0.uri, start: $0.startTime, duration: $0.duration, live: false)
        }
        #expect(exclusions == [.outsideSections, nil, .matchedPattern, .matchedPattern, nil, nil])
        var planner = RenditionPlanner(
            rendition: 0, folder: "video", role: .main, decrypt: false, sharesRangedFiles: true)
        let (files, segments) = try planner.plan(
            Array(zip(playlist.segments, resolved)), exclusions: exclusions, playlistURL: base)
        #expect(files.map(\.url).allSatisfy { !$0.contains("/ad/") && !$0.contains("intro") }, "\(files.map(\.url))")
        #expect(files.map(\.path) == ["video/key-0.key", "video/00011.ts", "video/00014.ts", "video/00015.ts"])
        #expect(segments.map(\.file) == [nil, "video/00011.ts", nil, nil, "video/00014.ts", "video/00015.ts"])

        let header = MediaPlaylistHeader(playlist)
        for gaps in [PlaylistComposer.GapForm.omitted, .tagged] {
            let local = PlaylistComposer.compose(segments, header: header, target: .local, gaps: gaps).serialized()
            #expect(
                local.hasSuffix(
                    """
                    #EXT-X-MEDIA-SEQUENCE:10
                    #EXT-X-PLAYLIST-TYPE:VOD
                    #EXT-X-KEY:METHOD=AES-128,URI="key-0.key",IV=0x0000000000000000000000000000000B
                    #EXTINF:2,
                    00011.ts
                    #EXT-X-DISCONTINUITY
                    #EXT-X-KEY:METHOD=AES-128,URI="key-0.key",IV=0x0000000000000000000000000000000E
                    #EXTINF:2,
                    00014.ts
                    #EXT-X-KEY:METHOD=AES-128,URI="key-0.key",IV=0x0000000000000000000000000000000F
                    #EXTINF:2,
                    00015.ts
                    #EXT-X-ENDLIST

                    """), "\(gaps)\n\(local)")
        }
        // The recorded source keeps them all, so that a resumed run decides again from the same times.
        let source = PlaylistComposer.compose(segments, header: header, target: .source).serialized()
        #expect(source.contains("https://cdn.example.com/v/ad/a1.ts") && source.contains("/v/s0.ts"))
    }
}
