import StreamKitCore
import StreamKitHLS
import Testing

@Suite struct URIResolutionTests {
    private let base = "http://a/b/c/d;p?q"

    /// RFC 3986 §5.4.1.
    @Test(arguments: [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
        ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
        ("../../g", "http://a/g"),
    ])
    func normalExamples(reference: String, expected: String) {
        #expect(resolveURI(reference, against: base) == expected)
    }

    /// RFC 3986 §5.4.2.
    @Test(arguments: [
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g?y/../x", "http://a/b/c/g?y/../x"), ("g#s/./x", "http://a/b/c/g#s/./x"),
        ("g#s/../x", "http://a/b/c/g#s/../x"),
        ("http:g", "http:g"),
    ])
    func abnormalExamples(reference: String, expected: String) {
        #expect(resolveURI(reference, against: base) == expected)
    }

    @Test func playlistURIsKeepTheirQueryStrings() {
        let playlist = "https://cdn.example.com/vod/movie/index.m3u8?token=abc&exp=1"
        #expect(
            resolveURI("seg1.ts?part=2&sig=x%2Fy", against: playlist)
                == "https://cdn.example.com/vod/movie/seg1.ts?part=2&sig=x%2Fy")
        #expect(resolveURI("seg1.ts", against: playlist) == "https://cdn.example.com/vod/movie/seg1.ts")
        #expect(resolveURI("../keys/k.bin", against: playlist) == "https://cdn.example.com/vod/keys/k.bin")
        #expect(resolveURI("//other.example/x.ts", against: playlist) == "https://other.example/x.ts")
        #expect(resolveURI("/abs/x.ts", against: playlist) == "https://cdn.example.com/abs/x.ts")
        #expect(resolveURI("skd://key-id", against: playlist) == "skd://key-id")
        #expect(resolveURI("a b/ü.ts", against: "file:///tmp/pl/index.m3u8") == "file:///tmp/pl/a b/ü.ts")
        #expect(resolveURI("x.ts", against: "http://h") == "http://h/x.ts")
    }
}

@Suite struct ResolvedSegmentTests {
    private func media(_ text: String) throws -> MediaPlaylist {
        try #require(try Playlist.parse(text).playlist.media)
    }

    @Test func keysPerKeyFormatAndIVs() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-VERSION:5
            #EXT-X-TARGETDURATION:4
            #EXT-X-MEDIA-SEQUENCE:41
            #EXT-X-KEY:METHOD=AES-128,URI="k1",IV=0x0F0E0D0C0B0A09080706050403020100
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://drm",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
            #EXTINF:4,
            a.ts
            #EXT-X-KEY:METHOD=AES-128,URI="k2"
            #EXTINF:4,
            b.ts
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:4,
            c.ts

            """)
        let resolved = playlist.resolvedSegments(baseURL: "https://h/p/index.m3u8")
        #expect(resolved.map(\.mediaSequence) == [41, 42, 43])
        #expect(resolved[0].keys.map(\.keyFormat) == ["identity", "com.apple.streamingkeydelivery"])
        #expect(resolved[0].identityKey?.uri == "https://h/p/k1")
        #expect(
            resolved[0].identityKey?.iv == Array((0...15).reversed()) && resolved[0].identityKey?.isIVExplicit == true)
        #expect(resolved[0].keys[1].uri == "skd://drm" && resolved[0].keys[1].keyFormatVersions == "1")
        // A new identity key replaces the old one and keeps the other format; its IV is the media sequence number.
        #expect(resolved[1].keys.map(\.uri) == ["https://h/p/k2", "skd://drm"])
        #expect(
            resolved[1].identityKey?.iv == AES128CBC.iv(mediaSequence: 42)
                && resolved[1].identityKey?.isIVExplicit == false)
        #expect(resolved[2].keys.isEmpty)
    }

    @Test func programDateTimesAreExtrapolatedBothWays() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXTINF:10,
            a.ts
            #EXTINF:9.5,
            b.ts
            #EXT-X-PROGRAM-DATE-TIME:2020-01-01T00:00:00.000+01:00
            #EXTINF:10,
            c.ts
            #EXTINF:4.25,
            d.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-PROGRAM-DATE-TIME:2020-01-02T00:00:00Z
            #EXTINF:1,
            e.ts

            """)
        let dates = playlist.resolvedSegments().map { $0.programDateTime?.description }
        #expect(
            dates == [
                "2019-12-31T23:59:40.500+01:00", "2019-12-31T23:59:50.500+01:00", "2020-01-01T00:00:00.000+01:00",
                "2020-01-01T00:00:10.000+01:00", "2020-01-02T00:00:00.000Z",
            ])
        #expect(playlist.resolvedSegments().map(\.discontinuitySequence) == [0, 0, 0, 0, 1])
    }

    @Test func discontinuitySequenceAndGapsAndBitrate() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-DISCONTINUITY-SEQUENCE:5
            #EXT-X-BITRATE:800
            #EXTINF:2,
            a.ts
            #EXT-X-GAP
            #EXTINF:2,
            b.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-BITRATE:1200
            #EXTINF:2,
            c.ts

            """)
        let resolved = playlist.resolvedSegments()
        #expect(resolved.map(\.discontinuitySequence) == [5, 5, 6])
        #expect(resolved.map(\.isGap) == [false, true, false])
        #expect(resolved.map(\.bitrate) == [800, 800, 1200])
    }
}

@Suite struct SelectionTests {
    private let master = """
        #EXTM3U
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="en.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Français",LANGUAGE="fra",AUTOSELECT=YES,URI="fr.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English (US)",LANGUAGE="en-US",URI="en-us.m3u8"
        #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="eng",AUTOSELECT=YES,URI="s-en.m3u8"
        #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Deutsch",LANGUAGE="de",URI="s-de.m3u8"
        #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",LANGUAGE="en",INSTREAM-ID="CC1"
        #EXT-X-STREAM-INF:BANDWIDTH=5000000,AVERAGE-BANDWIDTH=4000000,RESOLUTION=1920x1080,CODECS="hvc1.2.4.L123.B0,mp4a.40.2",AUDIO="aac",SUBTITLES="subs",CLOSED-CAPTIONS="cc"
        1080-hevc.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=4500000,AVERAGE-BANDWIDTH=4200000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2",AUDIO="aac",SUBTITLES="subs"
        1080.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aac"
        720.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=600000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2",AUDIO="aac"
        360.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=64000,CODECS="mp4a.40.2",AUDIO="aac"
        audio.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=9000000,RESOLUTION=1920x1080,URI="iframe.m3u8"

        """

    private func playlist() throws -> MultivariantPlaylist {
        try #require(try Playlist.parse(master).playlist.multivariant)
    }

    @Test func variantsByPreference() throws {
        let playlist = try playlist()
        // AVERAGE-BANDWIDTH decides: 4.2 Mbit/s beats 4.0 Mbit/s although the HEVC peak is higher.
        #expect(playlist.selectVariant(.best)?.uri == "1080.m3u8")
        #expect(playlist.selectVariant(.worst)?.uri == "360.m3u8")  // audio-only is not "worst video"
        #expect(playlist.selectVariant(.maximumBandwidth(4_100_000))?.uri == "1080-hevc.m3u8")
        #expect(playlist.selectVariant(.maximumBandwidth(1_000_000))?.uri == "360.m3u8")
        #expect(playlist.selectVariant(.maximumBandwidth(10_000))?.uri == nil)
        #expect(playlist.selectVariant(.maximumResolution(Resolution(width: 1280, height: 720)))?.uri == "720.m3u8")
        #expect(playlist.selectVariant(.maximumResolution(Resolution(width: 1000, height: 1000)))?.uri == "360.m3u8")
        #expect(playlist.selectVariant(.maximumResolution(Resolution(width: 100, height: 100))) == nil)
        #expect(playlist.selectVariant(.best, codecs: ["hvc1"])?.uri == "1080-hevc.m3u8")
        #expect(playlist.selectVariant(.worst, codecs: ["mp4a"])?.uri == "360.m3u8")
        #expect(playlist.variants.last?.isAudioOnly == true && playlist.iFrameVariants.map(\.uri) == ["iframe.m3u8"])
        #expect(!playlist.variants.map(\.uri).contains("iframe.m3u8"))
    }

    @Test(arguments: [
        ("best", VariantPreference.best), ("WORST", .worst), ("1500000", .maximumBandwidth(1_500_000)),
        ("1500k", .maximumBandwidth(1_500_000)), ("2.5M", .maximumBandwidth(2_500_000)),
        ("1280x720", .maximumResolution(Resolution(width: 1280, height: 720))),
    ])
    func variantPreferencesParse(text: String, expected: VariantPreference) {
        #expect(VariantPreference(text) == expected)
    }

    @Test func resolutionsOrderByPixelsThenWidthThenHeight() {
        let sorted = [
            Resolution(width: 1280, height: 720), Resolution(width: 0, height: 9), Resolution(width: 720, height: 1280),
            Resolution(width: 0, height: 5), Resolution(width: 640, height: 360),
        ].sorted()
        #expect(sorted.map(\.description) == ["0x5", "0x9", "640x360", "720x1280", "1280x720"])
        #expect(Resolution("1920X1080") == Resolution(width: 1920, height: 1080) && Resolution("1920x") == nil)
    }

    @Test func badVariantPreferencesDoNotParse() {
        for text in ["", "fast", "12x", "x720", "-5", "1e9", "k", "1.2.3M"] { #expect(VariantPreference(text) == nil) }
    }

    @Test func renditionGroupsOfAVariant() throws {
        let playlist = try playlist()
        let best = try #require(playlist.selectVariant(.best, codecs: ["hvc1"]))
        #expect(playlist.audioRenditions(for: best).map(\.uri) == ["en.m3u8", "fr.m3u8", "en-us.m3u8"])
        #expect(playlist.subtitleRenditions(for: best).map(\.name) == ["English", "Deutsch"])
        #expect(playlist.closedCaptionRenditions(for: best).map(\.instreamID) == ["CC1"])
        let small = try #require(playlist.selectVariant(.worst))
        #expect(playlist.subtitleRenditions(for: small).isEmpty && playlist.closedCaptionRenditions(for: small).isEmpty)
    }

    @Test func renditionsByLanguageOrName() throws {
        let playlist = try playlist()
        let audio = playlist.audioRenditions(for: playlist.variants[0])
        #expect(RenditionPreference("en")?.select(from: audio).map(\.uri) == ["en.m3u8", "en-us.m3u8"])
        #expect(RenditionPreference("eng")?.select(from: audio).map(\.uri) == ["en.m3u8", "en-us.m3u8"])
        #expect(RenditionPreference("en-US")?.select(from: audio).map(\.uri) == ["en-us.m3u8", "en.m3u8"])
        #expect(RenditionPreference("fr")?.select(from: audio).map(\.uri) == ["fr.m3u8"])
        #expect(RenditionPreference("ja")?.select(from: audio).isEmpty == true)
        #expect(RenditionPreference("all")?.select(from: audio).count == 3)
        #expect(RenditionPreference("none")?.select(from: audio).isEmpty == true)
        #expect(RenditionPreference("auto")?.select(from: audio).map(\.uri) == ["en.m3u8"])
        #expect(RenditionPreference("name:français")?.select(from: audio).map(\.uri) == ["fr.m3u8"])
        let subtitles = playlist.subtitleRenditions(for: playlist.variants[0])
        #expect(RenditionPreference.automatic.select(from: subtitles).map(\.name) == ["English"])  // AUTOSELECT
        #expect(playlist.renditions(language: "en", type: .subtitles).map(\.uri) == ["s-en.m3u8"])
        #expect(playlist.renditions(language: "en").count == 4)
        #expect(playlist.renditions(named: "deutsch").map(\.uri) == ["s-de.m3u8"])
        #expect(RenditionPreference("two words") == nil)
    }
}
