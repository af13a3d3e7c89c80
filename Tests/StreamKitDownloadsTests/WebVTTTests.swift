import Foundation
import StreamKitDownloads
import Testing

/// WebVTT segments: what the parser reads and leaves out, how segments merge onto the package's
/// timeline through `X-TIMESTAMP-MAP`, and the SubRip conversion.
@Suite struct WebVTTTests {
    struct Parsing: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let map: WebVTTTimestampMap?
        let cues: [WebVTTCue]
        var testDescription: String { name }
    }

    static let parsing: [Parsing] = [
        Parsing(
            name: "map, identifier, settings, two-line text",
            text: "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:126000,LOCAL:00:00:00.000\n\n"
                + "intro\n00:00:01.000 --> 00:00:02.500 line:0 align:start\nHello\n<i>world</i>\n",
            map: WebVTTTimestampMap(mpegts: 126_000, local: 0),
            cues: [
                WebVTTCue(
                    identifier: "intro", start: 1_000, end: 2_500, settings: "line:0 align:start",
                    text: "Hello\n<i>world</i>")
            ]),
        Parsing(
            name: "LOCAL first, minutes-only times, CRLF, BOM",
            text: "\u{FEFF}WEBVTT - a title\r\nX-TIMESTAMP-MAP=LOCAL:00:00:10.000,MPEGTS:900000\r\n\r\n"
                + "00:01.000 --> 00:02.000\r\nOne\r\n\r\n\r\n01:00:00.001 --> 01:00:00.002\r\nTwo\r\n",
            map: WebVTTTimestampMap(mpegts: 900_000, local: 10_000),
            cues: [
                WebVTTCue(start: 1_000, end: 2_000, text: "One"),
                WebVTTCue(start: 3_600_001, end: 3_600_002, text: "Two"),
            ]),
        Parsing(
            name: "NOTE, STYLE and REGION blocks and a bad timing line left out",
            text: "WEBVTT\n\nNOTE a comment\nover two lines\n\nSTYLE\n::cue { color: red }\n\n"
                + "REGION\nid:r1\n\n00:00:00.000 --> 00:00:01.000\nKept\n\n"
                + "00:00:0.000 --> 00:00:01.000\nBad time\n\nNOTES\n00:00:02.000 --> 00:00:03.000\nCue named NOTES\n",
            map: nil,
            cues: [
                WebVTTCue(start: 0, end: 1_000, text: "Kept"),
                WebVTTCue(identifier: "NOTES", start: 2_000, end: 3_000, text: "Cue named NOTES"),
            ]),
        Parsing(name: "signature only", text: "WEBVTT", map: nil, cues: []),
    ]

    @Test(arguments: parsing) func parses(_ example: Parsing) throws {
        let file = try WebVTTFile.parse(example.text)
        #expect(file.timestampMap == example.map)
        #expect(file.cues == example.cues)
        // Written back, it reads as the same file.
        #expect(try WebVTTFile.parse(file.serialized()) == file)
    }

    @Test(arguments: [
        "", "WEBVTTX\n", "1\n00:00:00,000 --> 00:00:01,000\nSubRip\n", "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:0\n",
    ])
    func refuses(_ text: String) {
        #expect(throws: WebVTTFile.ParseError.self) { try WebVTTFile.parse(text) }
    }

    struct Merging: Sendable, CustomTestStringConvertible {
        let name: String
        /// Each segment: its map and its cues as (start, end, text), in milliseconds.
        let segments: [(WebVTTTimestampMap?, [(Int64, Int64, String)])]
        let expected: [(Int64, Int64, String)]
        var testDescription: String { name }
    }

    static let merging: [Merging] = [
        Merging(
            name: "every segment mapped the same (ffmpeg's 1.4 s start): times kept",
            segments: [
                (WebVTTTimestampMap(mpegts: 126_000, local: 0), [(0, 1_000, "a"), (1_000, 2_000, "b")]),
                (WebVTTTimestampMap(mpegts: 126_000, local: 0), [(2_000, 3_000, "c")]),
            ],
            expected: [(0, 1_000, "a"), (1_000, 2_000, "b"), (2_000, 3_000, "c")]),
        Merging(
            name: "segment-local times, MPEGTS advancing",
            segments: [
                (WebVTTTimestampMap(mpegts: 126_000, local: 0), [(0, 1_000, "a"), (1_000, 2_000, "b")]),
                (WebVTTTimestampMap(mpegts: 306_000, local: 0), [(0, 1_000, "c"), (1_000, 2_000, "d")]),
                (WebVTTTimestampMap(mpegts: 486_000, local: 0), [(500, 1_500, "e")]),
            ],
            expected: [
                (0, 1_000, "a"), (1_000, 2_000, "b"), (2_000, 3_000, "c"), (3_000, 4_000, "d"),
                (4_500, 5_500, "e"),
            ]),
        Merging(
            name: "LOCAL not zero, one hour of MPEGTS as in GStreamer's muxer",
            segments: [
                (WebVTTTimestampMap(mpegts: 324_000_000, local: 3_600_000), [(3_600_000, 3_601_000, "a")]),
                (WebVTTTimestampMap(mpegts: 324_180_000, local: 0), [(0, 1_000, "b")]),
            ],
            expected: [(0, 1_000, "a"), (2_000, 3_000, "b")]),
        Merging(
            name: "a cue repeated across a boundary appears once",
            segments: [
                (WebVTTTimestampMap(mpegts: 90_000, local: 0), [(1_500, 2_500, "spans")]),
                (WebVTTTimestampMap(mpegts: 270_000, local: 2_000), [(1_500, 2_500, "spans"), (2_600, 2_900, "next")]),
            ],
            expected: [(1_500, 2_500, "spans"), (2_600, 2_900, "next")]),
        Merging(
            name: "MPEGTS wraps at 2^33",
            segments: [
                (WebVTTTimestampMap(mpegts: 8_589_840_000, local: 0), [(0, 1_000, "a")]),
                (WebVTTTimestampMap(mpegts: 85_408, local: 0), [(0, 1_000, "b")]),
            ],
            expected: [(0, 1_000, "a"), (2_000, 3_000, "b")]),
        Merging(
            name: "ticks rounded to the millisecond; a cue before the start dropped or clamped",
            segments: [
                (WebVTTTimestampMap(mpegts: 90_000, local: 0), [(0, 1_000, "a")]),
                (WebVTTTimestampMap(mpegts: 270_046, local: 0), [(0, 1_000, "b")]),
                (WebVTTTimestampMap(mpegts: 0, local: 0), [(0, 1_000, "gone"), (500, 1_500, "c")]),
            ],
            expected: [(0, 1_000, "a"), (0, 500, "c"), (2_001, 3_001, "b")]),
        Merging(
            name: "cues and media on one clock that starts at 1.4 s",
            segments: [
                (WebVTTTimestampMap(mpegts: 126_000, local: 1_400), [(1_400, 2_400, "a")]),
                (WebVTTTimestampMap(mpegts: 126_000, local: 1_400), [(3_400, 4_400, "b")]),
            ],
            expected: [(0, 1_000, "a"), (2_000, 3_000, "b")]),
        Merging(
            name: "no map anywhere: times kept",
            segments: [(nil, [(0, 1_000, "a")]), (nil, [(2_000, 3_000, "b")])],
            expected: [(0, 1_000, "a"), (2_000, 3_000, "b")]),
    ]

    @Test(arguments: merging) func merges(_ example: Merging) {
        let segments = example.segments.map { map, cues in
            WebVTTFile(timestampMap: map, cues: cues.map { WebVTTCue(start: $0.0, end: $0.1, text: $0.2) })
        }
        let merged = WebVTTMerge.merge(segments)
        #expect(merged.timestampMap == nil)
        let got = merged.cues.map { "\($0.start)-\($0.end) \($0.text)" }
        #expect(got == example.expected.map { "\($0.0)-\($0.1) \($0.2)" })
    }

    @Test func mergedIdentifiersStayUnique() {
        let segment = WebVTTFile(cues: [WebVTTCue(identifier: "1", start: 0, end: 1_000, text: "a")])
        var second = segment
        second.cues[0].start = 1_000
        second.cues[0].end = 2_000
        let merged = WebVTTMerge.merge([segment, second])
        #expect(merged.cues.map(\.identifier) == ["1", nil])
    }

    struct Conversion: Sendable, CustomTestStringConvertible {
        let cueText: String
        let subRip: String
        var testDescription: String { cueText }
    }

    static let conversions: [Conversion] = [
        Conversion(
            cueText: "<b>bold</b> <i.loud>italic</i> <u>under</u>", subRip: "<b>bold</b> <i>italic</i> <u>under</u>"),
        Conversion(cueText: "<v Roger Bingham>We are in New York City</v>", subRip: "We are in New York City"),
        Conversion(cueText: "<c.yellow.bg_blue>x</c> <ruby>漢<rt>kan</rt></ruby>", subRip: "x 漢kan"),
        Conversion(cueText: "one <00:00:01.500>two", subRip: "one two"),
        Conversion(cueText: "Fish &amp; chips &lt;3 &amp;lt;", subRip: "Fish & chips <3 &lt;"),
        Conversion(cueText: "two\nlines", subRip: "two\nlines"),
    ]

    @Test(arguments: conversions) func convertsMarkup(_ example: Conversion) {
        let file = WebVTTFile(cues: [WebVTTCue(start: 0, end: 1_000, text: example.cueText)])
        #expect(SubRipWriter.text(of: file) == "1\n00:00:00,000 --> 00:00:01,000\n\(example.subRip)\n")
    }

    @Test func numbersCuesAndWritesHours() {
        let file = WebVTTFile(cues: [
            WebVTTCue(start: 1_001, end: 2_002, settings: "align:start", text: "a"),
            WebVTTCue(start: 3_723_004, end: 36_000_000, text: "b"),
        ])
        #expect(
            SubRipWriter.text(of: file)
                == "1\n00:00:01,001 --> 00:00:02,002\na\n\n2\n01:02:03,004 --> 10:00:00,000\nb\n")
    }
}
