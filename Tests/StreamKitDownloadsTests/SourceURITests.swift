import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// A segment's source URI kept as written with its playlist's URL: the same absolute URI as the
/// resolution gave, whatever the written form.
@Suite struct SourceURITests {
    static let base = PlaylistBase(url: "http://origin.example/live/v/index.m3u8?token=1")

    @Test(arguments: [
        "seg/12.ts", "../a/b.ts", "/root.ts", "x.ts?q=1#f", "with space.ts", "http://other.example/x.ts",
        "//cdn.example/y.ts", "",
    ])
    func aWrittenURIGivesBackItsResolution(_ written: String) {
        let absolute = RenditionPlanner.withSpacesEncoded(resolveURI(written, against: Self.base.url))
        let source = SourceURI(absolute: absolute, written: written, base: Self.base)
        #expect(source.absolute == absolute)
        #expect(source == SourceURI(absolute: absolute))
        #expect(source.hashValue == SourceURI(absolute: absolute).hashValue)
    }

    /// The base's shortcut for plain relative paths gives what the general resolution gives,
    /// against bases with and without a path, a query or a fragment.
    @Test(arguments: [
        "http://origin.example/live/v/index.m3u8?token=1", "https://h.example", "https://h.example/",
        "http://h.example:8080/a/b/c.m3u8#frag", "http://h.example/a/b/?x=/y/z", "http://h.example/a;p/b.m3u8",
        "/local/path/.streamkit/video.m3u8",
    ])
    func theShortcutResolvesAsTheGeneralResolution(_ url: String) {
        let base = PlaylistBase(url: url)
        for written in [
            "seg/12.ts", "12.ts", "a b.ts", "x.ts?q=1", "x.ts#f", "a/b/c/d.m4s", "../up.ts", "./here.ts", "a/../b.ts",
            "/abs.ts", "?only", "#frag", "//cdn.example/y.ts", "http://other.example/x.ts", "", "a:b.ts", "%41.ts",
        ] {
            #expect(base.resolve(written) == resolveURI(written, against: url), "\(written) against \(url)")
        }
    }

    /// An absolute URI that the written one does not resolve to (the resolution was made
    /// against another URL) is kept whole.
    @Test func anAbsoluteURIThatTheWrittenOneDoesNotGiveIsKeptWhole() {
        let source = SourceURI(absolute: "http://elsewhere.example/z/seg.ts", written: "seg.ts", base: Self.base)
        #expect(source.absolute == "http://elsewhere.example/z/seg.ts")
        #expect(source != SourceURI(absolute: "http://origin.example/live/v/seg.ts"))
    }

    /// Planned from a playlist, a segment's file and record hold the resolved URI.
    @Test func aPlannedSegmentKeepsItsResolvedURI() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nseg/0 a.ts\n#EXTINF:2,\nhttp://cdn.example/1.ts\n"
        let media = try #require(try Playlist.parse(Array(text.utf8)).playlist.media)
        var planner = RenditionPlanner(
            rendition: 0, folder: "video", role: .main, decrypt: false, sharesRangedFiles: true, iv: nil)
        let (files, segments) = try planner.plan(
            Array(zip(media.segments, media.resolvedSegments(baseURL: Self.base.url))), playlistURL: Self.base.url)
        let expected = ["http://origin.example/live/v/seg/0%20a.ts", "http://cdn.example/1.ts"]
        #expect(files.map(\.url) == expected)
        #expect(segments.map(\.resolved.uri) == expected)
    }
}
