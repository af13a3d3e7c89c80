import StreamKitHLS
import Testing

/// EXT-X-STREAM-INF and EXT-X-I-FRAME-STREAM-INF share most of their attributes (RFC 8216bis §4.4.6.3) and one
/// reader and writer of them: each tag keeps its own order, and the attributes only the other tag defines stay
/// unknown attributes.
@Suite struct VariantTagTests {
    private static let groups = """
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="A"
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="v",NAME="V"
        #EXT-X-MEDIA:TYPE=SUBTITLES,URI="s.m3u8",GROUP-ID="s",NAME="S"
        #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC",INSTREAM-ID="CC1"

        """

    /// Tag lines with every attribute in reverse order, and how the writer puts them.
    @Test(arguments: [
        (
            #"#EXT-X-STREAM-INF:PATHWAY-ID="p",CLOSED-CAPTIONS="cc",SUBTITLES="s",VIDEO="v",AUDIO="a",STABLE-VARIANT-ID="id",REQ-VIDEO-LAYOUT="CH-STEREO",VIDEO-RANGE=PQ,ALLOWED-CPC="com.example:SMART-TV",HDCP-LEVEL=TYPE-1,FRAME-RATE=59.94,RESOLUTION=3840x2160,SUPPLEMENTAL-CODECS="dvh1.08.07/db4h",CODECS="hvc1.2.4.L153.B0",SCORE=2.5,AVERAGE-BANDWIDTH=15000000,BANDWIDTH=20000000,X-V="1",URI="u""#
                + "\nv.m3u8",
            #"#EXT-X-STREAM-INF:BANDWIDTH=20000000,AVERAGE-BANDWIDTH=15000000,SCORE=2.5,CODECS="hvc1.2.4.L153.B0",SUPPLEMENTAL-CODECS="dvh1.08.07/db4h",RESOLUTION=3840x2160,FRAME-RATE=59.94,HDCP-LEVEL=TYPE-1,ALLOWED-CPC="com.example:SMART-TV",VIDEO-RANGE=PQ,REQ-VIDEO-LAYOUT="CH-STEREO",STABLE-VARIANT-ID="id",AUDIO="a",VIDEO="v",SUBTITLES="s",CLOSED-CAPTIONS="cc",PATHWAY-ID="p",X-V="1",URI="u""#
                + "\nv.m3u8"
        ),
        (
            "#EXT-X-STREAM-INF:CLOSED-CAPTIONS=NONE,BANDWIDTH=1\nv.m3u8",
            "#EXT-X-STREAM-INF:BANDWIDTH=1,CLOSED-CAPTIONS=NONE\nv.m3u8"
        ),
        (
            #"#EXT-X-I-FRAME-STREAM-INF:PATHWAY-ID="p",VIDEO="v",STABLE-VARIANT-ID="id",REQ-VIDEO-LAYOUT="CH-MONO",VIDEO-RANGE=SDR,ALLOWED-CPC="x",HDCP-LEVEL=NONE,RESOLUTION=640x360,SUPPLEMENTAL-CODECS="s",CODECS="avc1.4d401e",SCORE=1,AVERAGE-BANDWIDTH=90000,BANDWIDTH=100000,FRAME-RATE=25,AUDIO="a",SUBTITLES="s",CLOSED-CAPTIONS=NONE,URI="i.m3u8""#,
            #"#EXT-X-I-FRAME-STREAM-INF:URI="i.m3u8",BANDWIDTH=100000,AVERAGE-BANDWIDTH=90000,SCORE=1,CODECS="avc1.4d401e",SUPPLEMENTAL-CODECS="s",RESOLUTION=640x360,HDCP-LEVEL=NONE,ALLOWED-CPC="x",VIDEO-RANGE=SDR,REQ-VIDEO-LAYOUT="CH-MONO",STABLE-VARIANT-ID="id",VIDEO="v",PATHWAY-ID="p",FRAME-RATE=25,AUDIO="a",SUBTITLES="s",CLOSED-CAPTIONS=NONE"#
        ),
    ])
    func attributesAreWrittenInTheTagsOrder(line: String, written: String) throws {
        let parsed = try Playlist.parse("#EXTM3U\n" + Self.groups + line + "\n")
        let playlist = try #require(parsed.playlist.multivariant)
        let text = playlist.serialized()
        #expect(text.hasSuffix(Self.groups + written + "\n"), "\(text)")
        #expect(try Playlist.parse(text).playlist.multivariant == playlist)
    }

    @Test func theIFrameTagKeepsTheVariantTagsOwnAttributesAsUnknown() throws {
        let line = #"#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,FRAME-RATE=25,AUDIO="a",URI="i.m3u8""#
        let playlist = try #require(try Playlist.parse("#EXTM3U\n\(line)\n").playlist.multivariant)
        let variant = try #require(playlist.iFrameVariants.first)
        #expect(variant.uri == "i.m3u8" && variant.bandwidth == 1)
        #expect(
            variant.otherAttributes == [
                Attribute(name: "FRAME-RATE", value: .unquoted("25")), Attribute(name: "AUDIO", value: .quoted("a")),
            ])
    }

    /// Diagnostics of one tag come in the order of its attributes in the RFC, whatever the order written.
    @Test(arguments: [
        (
            #"#EXT-X-STREAM-INF:BANDWIDTH=1,SUBTITLES=s,FRAME-RATE="25",AUDIO=a,HDCP-LEVEL="TYPE-0"\#nv.m3u8"#,
            [
                "FRAME-RATE should not be quoted", "HDCP-LEVEL should not be quoted",
                "AUDIO should be a quoted string", "SUBTITLES should be a quoted string",
            ]
        ),
        (
            #"#EXT-X-I-FRAME-STREAM-INF:VIDEO=v,URI=i.m3u8,HDCP-LEVEL="NONE",BANDWIDTH=1"#,
            ["URI should be a quoted string", "HDCP-LEVEL should not be quoted", "VIDEO should be a quoted string"]
        ),
    ])
    func diagnosticsFollowTheAttributeOrder(line: String, reasons: [String]) throws {
        let text = "#EXTM3U\n" + line + "\n"
        let lenient = try Playlist.parse(text).warnings.map(\.reason)
        #expect(Array(lenient.prefix(reasons.count)) == reasons, "\(lenient)")
        let strict = try #require(throws: PlaylistError.self) { try Playlist.parse(text, options: .strict) }
        #expect(Array(strict.diagnostics.map(\.reason).prefix(reasons.count)) == reasons, "\(strict)")
    }
}
