import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@Suite struct ParserTests {
    private func media(
        _ text: String, options: PlaylistParseOptions = .lenient
    ) throws -> (MediaPlaylist, [PlaylistDiagnostic]) {
        let parsed = try Playlist.parse(text, options: options)
        return (try #require(parsed.playlist.media), parsed.warnings)
    }

    private func failure(_ text: String, options: PlaylistParseOptions = .lenient) throws -> PlaylistError {
        try #require(throws: PlaylistError.self) { try Playlist.parse(text, options: options) }
    }

    private let simple =
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:9.5,first\na.ts\n#EXTINF:10,\nb.ts\n#EXT-X-ENDLIST\n"

    // MARK: What real servers emit

    @Test func crlfLineEndsParseLikeLF() throws {
        let (lf, lfWarnings) = try media(simple)
        let (crlf, crlfWarnings) = try media(simple.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(crlf == lf && lfWarnings.isEmpty && crlfWarnings.isEmpty)
        #expect(crlf.segments.map(\.uri) == ["a.ts", "b.ts"] && crlf.segments[0].title == "first")
    }

    @Test func aByteOrderMarkIsSkippedWithAWarning() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(simple.utf8)
        let parsed = try Playlist.parse(bytes)
        #expect(parsed.playlist.media?.segments.count == 2)
        #expect(parsed.warnings.map(\.line) == [1] && parsed.warnings[0].reason.contains("byte order mark"))
        let strict = try #require(throws: PlaylistError.self) { try Playlist.parse(bytes, options: .strict) }
        #expect(strict.diagnostics.count == 1 && strict.line == 1)
    }

    @Test func whitespaceAndBlankLinesAreTolerated() throws {
        let text =
            "#EXTM3U\n\n#EXT-X-TARGETDURATION: 10 \n   \n#EXTINF: 9.5 ,t\n  a.ts\t\n\n#EXT-X-KEY:METHOD=AES-128 , URI = \"k.bin\"\n#EXTINF:10,\nb.ts \n"
        let (playlist, warnings) = try media(text)
        #expect(playlist.targetDuration == 10)
        #expect(playlist.segments.map(\.uri) == ["a.ts", "b.ts"] && playlist.segments[0].duration == 9.5)
        #expect(playlist.segments[1].keys == [EncryptionKey(method: .aes128, uri: "k.bin")])
        #expect(warnings.map(\.line) == [3, 3, 4, 5, 5, 6, 6, 8, 10])
        #expect(warnings[4].reason.hasPrefix("a decimal EXTINF duration needs EXT-X-VERSION 3"))
        #expect(warnings.contains { $0.line == 8 && $0.reason == "whitespace in the attribute list of EXT-X-KEY" })
        #expect(try failure(text, options: .strict).diagnostics == warnings)
    }

    @Test func lowerCaseTagAndAttributeNamesAreTolerated() throws {
        let text = "#EXTM3U\n#ext-x-targetduration:6\n#EXT-X-KEY:method=aes-128,uri=\"k\",iv=0x0102\n#extinf:6,\ns.ts\n"
        let (playlist, warnings) = try media(text)
        #expect(playlist.targetDuration == 6)
        let key = try #require(playlist.segments.first?.keys.first)
        #expect(key.method == .aes128 && key.uri == "k")
        #expect(key.iv == [UInt8](repeating: 0, count: 14) + [1, 2])
        #expect(warnings.contains { $0.line == 2 && $0.reason.contains("not upper-case") })
        #expect(
            warnings.contains { $0.line == 3 && $0.reason == "attribute name method of EXT-X-KEY is not upper-case" })
        #expect(warnings.contains { $0.line == 3 && $0.reason == "METHOD=aes-128 is not upper-case" })
        #expect(warnings.contains { $0.line == 4 })
        #expect(
            playlist.serialized().contains(
                "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x00000000000000000000000000000102\n"))
    }

    @Test func byteRangeBeforeEXTINFAndMapInTheMiddle() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:4
            #EXT-X-MAP:URI="init-a.mp4",BYTERANGE="700@0"
            #EXT-X-BYTERANGE:1000@700
            #EXTINF:4,
            media.mp4
            #EXT-X-BYTERANGE:2000
            #EXTINF:4,
            media.mp4
            #EXT-X-DISCONTINUITY
            #EXT-X-MAP:URI="init-b.mp4"
            #EXTINF:4,
            #EXT-X-BYTERANGE:500@0
            other.mp4
            #EXTINF:4,
            other.mp4
            #EXT-X-ENDLIST

            """
        let (playlist, warnings) = try media(text)
        #expect(warnings.isEmpty)
        #expect(
            playlist.segments.map(\.byteRange) == [
                SegmentByteRange(length: 1000, offset: 700), SegmentByteRange(length: 2000),
                SegmentByteRange(length: 500, offset: 0), nil,
            ])
        #expect(playlist.segments[2].map?.uri == "init-b.mp4" && playlist.segments[1].map == nil)
        let resolved = playlist.resolvedSegments(baseURL: "http://h/v/index.m3u8")
        #expect(resolved.map(\.byteRange) == [ByteRange(700, 1700), ByteRange(1700, 3700), ByteRange(0, 500), nil])
        #expect(
            resolved.map { $0.map?.uri } == [
                "http://h/v/init-a.mp4", "http://h/v/init-a.mp4", "http://h/v/init-b.mp4", "http://h/v/init-b.mp4",
            ])
        #expect(resolved[0].map?.byteRange == ByteRange(0, 700) && resolved[2].map?.byteRange == nil)
        #expect(resolved.map(\.discontinuitySequence) == [0, 0, 1, 1])
        #expect(resolved.map(\.startTime) == [0, 4, 8, 12])
    }

    @Test func extinfWithoutCommaAndMissingTargetDurationAreWarnings() throws {
        let (playlist, warnings) = try media("#EXTM3U\n#EXTINF:10\na.ts\n")
        #expect(playlist.segments.first?.duration == 10 && playlist.targetDuration == nil)
        #expect(
            warnings.map(\.description) == [
                "line 1: EXT-X-TARGETDURATION is missing (RFC 8216bis §4.4.3.1 requires it)",
                "line 2: EXTINF has no comma after the duration",
            ])
    }

    @Test func commentsBeforeTheHeaderAreKept() throws {
        let parsed = try Playlist.parse("# made by a packager\n\n#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n")
        let playlist = try #require(parsed.playlist.media)
        #expect(playlist.headerLines == [PlaylistLine("# made by a packager")])
        #expect(parsed.warnings.map(\.line) == [1, 2])
        #expect(!playlist.headerLines[0].isTag && playlist.headerLines[0].tagName == nil)
    }

    // MARK: The attribute-list grammar (RFC 8216bis §4.2)

    @Test func attributeValueTypes() throws {
        let text = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=1280000,AVERAGE-BANDWIDTH=1000000,CODECS="avc1.640029,mp4a.40.2",RESOLUTION=1920x1080,FRAME-RATE=29.97,SCORE=1.5,HDCP-LEVEL=TYPE-0,X-VENDOR="a,b",PROGRAM-ID=1,CLOSED-CAPTIONS=NONE
            hi.m3u8
            #EXT-X-START:TIME-OFFSET=-12.5,PRECISE=YES

            """
        let parsed = try Playlist.parse(text)
        let playlist = try #require(parsed.playlist.multivariant)
        #expect(parsed.warnings.isEmpty)
        let variant = try #require(playlist.variants.first)
        #expect(variant.bandwidth == 1_280_000 && variant.averageBandwidth == 1_000_000)
        #expect(variant.codecs == "avc1.640029,mp4a.40.2")  // a quoted string holding a comma
        #expect(variant.resolution == Resolution(width: 1920, height: 1080))  // decimal resolution
        #expect(variant.frameRate == 29.97 && variant.score == 1.5)  // decimal floats
        #expect(variant.hdcpLevel == "TYPE-0" && variant.closedCaptions == .noneDeclared)  // enumerated strings
        #expect(
            variant.otherAttributes == [
                Attribute(name: "X-VENDOR", value: .quoted("a,b")),
                Attribute(name: "PROGRAM-ID", value: .unquoted("1")),
            ])
        #expect(playlist.start == StartPoint(timeOffset: -12.5, isPrecise: true))  // a signed float
        let dateRange = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-PROGRAM-DATE-TIME:2020-01-01T00:00:00Z\n"
                + "#EXT-X-DATERANGE:ID=\"x\",START-DATE=\"2020-01-01T00:00:00Z\",SCTE35-OUT=0xFC0A,X-COM-EXAMPLE-AD-ID=\"XYZ\",X-N=0x1F\n"
                + "#EXTINF:1,\na.ts\n"
        ).0.segments[0].dateRanges[0]
        #expect(dateRange.scte35Out == [0xFC, 0x0A])  // hexadecimal sequence
        #expect(
            dateRange.otherAttributes == [
                Attribute(name: "X-COM-EXAMPLE-AD-ID", value: .quoted("XYZ")),
                Attribute(name: "X-N", value: .unquoted("0x1F")),
            ])
    }

    /// Tags without which the segments cannot be found or decrypted: an error, in lenient mode too.
    @Test(arguments: [
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"unterminated", "unterminated quoted string in attribute URI of EXT-X-KEY"),
        ("#EXT-X-KEY:METHOD=AES-128,URI", "attribute URI of EXT-X-KEY has no value (expected NAME=VALUE)"),
        ("#EXT-X-KEY:METHOD=AES-128,=\"x\"", "an attribute of EXT-X-KEY has no name"),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"k\"x", "unexpected text after the quoted value of URI in EXT-X-KEY"),
        ("#EXT-X-KEY:METHOD=AES-128,URI=k\"x\"", "the unquoted value of URI in EXT-X-KEY holds a double quote"),
        ("#EXT-X-KEY:METHOD=AES-128", "EXT-X-KEY METHOD=AES-128 needs a URI"),
        ("#EXT-X-KEY:URI=\"k\"", "EXT-X-KEY needs METHOD"),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x0102030405060708090a0b0c0d0e0f1011", "IV must be a 128-bit number"),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=12", "IV is not a hexadecimal sequence (0x…): '12'"),
        ("#EXT-X-BYTERANGE:10@x", "EXT-X-BYTERANGE must be <length>[@<offset>], not '10@x'"),
        ("#EXT-X-BYTERANGE:99999999999999999999", "EXT-X-BYTERANGE must be <length>[@<offset>]"),
        ("#EXT-X-MAP:BYTERANGE=\"1@0\"", "EXT-X-MAP needs a URI"),
    ])
    func tagsTheMediaNeedsFailNamingLineAndReason(tags: String, reason: String) throws {
        let error = try failure("#EXTM3U\n" + tags + "\n#EXTINF:1,\na.ts\n")
        let expectedLine = 1 + tags.split(separator: "\n").count
        #expect(error.line == expectedLine, "\(error)")
        #expect(error.reason.hasPrefix(reason), "\(error)")
    }

    /// Tags the media can do without: a lenient parse warns and goes on, as players do; strict mode fails.
    @Test(arguments: [
        (
            "#EXT-X-PROGRAM-DATE-TIME:2020-02-30T00:00:00Z", "EXT-X-PROGRAM-DATE-TIME is not an ISO 8601 date-time",
            "kept"
        ),
        ("#EXT-X-PART:URI=\"p\"", "EXT-X-PART needs a DURATION; the tag is ignored", "ignored"),
        (
            "#EXT-X-DATERANGE:START-DATE=\"2020-01-01T00:00:00Z\"", "EXT-X-DATERANGE needs an ID; the tag is kept",
            "kept"
        ),
        ("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=MAYBE", "CAN-BLOCK-RELOAD must be YES or NO, not 'MAYBE'", "kept"),
        (
            "#EXT-X-TARGETDURATION:1.5",
            "EXT-X-TARGETDURATION is a decimal number where an integer is due: '1.5'; read as 2", "read"
        ),
        ("#EXTINF:1e3,", "EXTINF duration is not a decimal number: '1e3'; the tag is ignored", "ignored"),
        (
            "#EXT-X-SESSION-KEY:METHOD=AES-128,URI=\"k\"",
            "EXT-X-SESSION-KEY belongs in a multivariant playlist, but EXTINF at line 3 makes this a media playlist",
            "ignored"
        ),
        (
            "#EXT-X-VERSION:3\n#EXT-X-VERSION:4", "EXT-X-VERSION appears again (first at line 2); the tag is ignored",
            "ignored"
        ),
        ("#EXT-X-TARGETDURATION", "EXT-X-TARGETDURATION needs a value after a colon; the tag is ignored", "ignored"),
        ("#EXT-X-MEDIA-SEQUENCE:18446744073709551616", "EXT-X-MEDIA-SEQUENCE is not a decimal integer", "ignored"),
        ("#EXT-X-MEDIA-SEQUENCE:-5", "EXT-X-MEDIA-SEQUENCE is negative: '-5'; read as 0", "read"),
        (
            "#EXT-X-KEY:METHOD=NONE,IV=[IV]", "IV is not a hexadecimal sequence (0x…): '[IV]'; ignored, as METHOD=NONE",
            "ignored"
        ),
    ])
    func tagsTheMediaCanDoWithoutAreWarnings(tags: String, reason: String, outcome: String) throws {
        let text = "#EXTM3U\n" + tags + "\n#EXTINF:1,\na.ts\n"
        let expectedLine = 1 + tags.split(separator: "\n").count
        let parsed = try Playlist.parse(text)
        let warning = try #require(parsed.warnings.first { $0.line == expectedLine }, "\(parsed.warnings)")
        #expect(warning.reason.hasPrefix(reason), "\(warning)")
        #expect(warning.reason.contains(outcome), "\(warning)")
        // The segment is there either way.
        #expect(parsed.playlist.media?.segments.map(\.uri) == ["a.ts"])
        let strict = try failure(text, options: .strict)
        #expect(strict.diagnostics.contains(warning), "\(strict)")
    }

    @Test func attributeEdgeCases() throws {
        // An empty item, a trailing comma, a duplicate attribute (the first wins), an unknown attribute.
        let (playlist, warnings) = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-KEY:METHOD=AES-128,,URI=\"a\",URI=\"b\",X-Y=Z,\n#EXTINF:1,\ns.ts\n"
        )
        let key = try #require(playlist.segments.first?.keys.first)
        #expect(key.uri == "a" && key.otherAttributes == [Attribute(name: "X-Y", value: .unquoted("Z"))])
        #expect(
            warnings.map(\.reason) == [
                "empty item in the attribute list of EXT-X-KEY", "trailing comma in the attribute list of EXT-X-KEY",
                "attribute URI appears twice in EXT-X-KEY; the first is used",
            ])
        // A 21-digit IV is read as a 128-bit number, with a warning.
        let (short, shortWarnings) = try media(
            "#EXTM3U\n#EXT-X-VERSION:2\n#EXT-X-TARGETDURATION:1\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0X000000000000000000001\n#EXTINF:1,\ns.ts\n"
        )
        #expect(short.segments[0].keys[0].iv == [UInt8](repeating: 0, count: 15) + [1])
        #expect(shortWarnings.map(\.reason) == ["IV has 21 hexadecimal digits, not 32; read as a 128-bit number"])
    }

    // MARK: Strict mode

    @Test func strictModeReportsEveryViolationWithLineAndReason() throws {
        let text = """
            # packager 1.0
            #EXTM3U
            #EXT-X-VERSION:2
            #EXT-X-TARGETDURATION:5
            #EXTINF:9.5
            a.ts
            #EXT-X-BYTERANGE:100@0
            #EXTINF:5,
            b.ts\u{20}
            #EXT-X-KEY:METHOD=AES-128,URI="k",KEYFORMAT="identity"
            #EXT-X-MEDIA-SEQUENCE:bad
            #EXTINF:x,
            c.ts
            #EXTINF:5,
            d.ts

            """
        let lenient = try Playlist.parse(text)
        #expect(lenient.playlist.media?.segments.map(\.uri) == ["a.ts", "b.ts", "c.ts", "d.ts"])
        #expect(lenient.playlist.media?.segments[2].duration == 5)  // its EXTINF was unreadable: the target duration
        let strict = try failure(text, options: .strict)
        #expect(
            strict.diagnostics.map(\.description) == [
                "line 1: comment before #EXTM3U (RFC 8216bis §4.1: the first line must be #EXTM3U)",
                "line 5: EXTINF has no comma after the duration",
                "line 5: EXTINF duration 9.5 exceeds EXT-X-TARGETDURATION 5 (RFC 8216bis §4.4.3.1)",
                "line 5: a decimal EXTINF duration needs EXT-X-VERSION 3 or higher; the playlist declares version 2",
                "line 7: EXT-X-BYTERANGE needs EXT-X-VERSION 4 or higher; the playlist declares version 2",
                "line 9: trailing whitespace",
                "line 10: KEYFORMAT or KEYFORMATVERSIONS needs EXT-X-VERSION 5 or higher; the playlist declares version 2",
                "line 11: EXT-X-MEDIA-SEQUENCE is not a decimal integer: 'bad'; the tag is ignored",
                "line 12: EXTINF duration is not a decimal number: 'x'; the tag is ignored",
                "line 13: URI line without an EXTINF tag before it; its duration is taken as the target duration",
            ])
        #expect(strict.diagnostics == lenient.warnings)
        #expect(
            "\(strict)".hasPrefix("line 1: comment before #EXTM3U") && "\(strict)".hasSuffix("(and 9 more violations)"))
    }

    /// Found by Fuzz/HLSPlaylistParser: strict mode reads on after a segment is thrown away, and the segment
    /// without EXTINF must not be remembered for a duration it will never get.
    @Test func aSegmentWithoutEXTINFThrownAwayLeavesNoTrace() throws {
        let text = "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:10\n#EXTINF:4,\nb.ts\n#EXT-X-BYTERANGE:100\na.ts\n"
        let strict = try failure(text, options: .strict)
        #expect(
            strict.diagnostics.map(\.description) == [
                "line 6: EXT-X-BYTERANGE has no offset, and the previous segment is not a sub-range of a.ts "
                    + "(RFC 8216bis §4.4.4.2)",
                "line 7: URI line without an EXTINF tag before it; its duration is taken as the target duration",
            ])
        #expect(throws: PlaylistError.self) { try Playlist.parse(text) }
    }

    @Test func headerErrorsAreFatal() throws {
        #expect(try failure("").description == "line 1: the playlist is empty (no #EXTM3U)")
        #expect(try failure("a.ts\n").description == "line 1: the playlist does not start with #EXTM3U")
        #expect(try failure("\n\n#EXTINF:1,\n").description == "line 3: the playlist does not start with #EXTM3U")
        #expect(try failure("# only a comment\n").description == "line 1: the playlist has no #EXTM3U line")
        let noURI = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n#EXT-X-ENDLIST\n"
        #expect(
            try failure(noURI, options: .strict).diagnostics.map(\.description) == [
                "line 2: EXT-X-STREAM-INF is not followed by a URI line (EXT-X-ENDLIST comes first); the variant is ignored",
                "line 2: no tag of this multivariant playlist could be read",
                "line 3: EXT-X-ENDLIST belongs in a media playlist, but EXT-X-STREAM-INF at line 2 makes this a "
                    + "multivariant playlist; the tag is ignored",
            ])
        #expect(try failure(noURI).description == "line 2: no tag of this multivariant playlist could be read")
    }

    @Test func invalidUTF8NamesLineAndColumn() throws {
        let bytes =
            Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,ab".utf8) + [0xC3, 0x28] + Array("\nx.ts\n".utf8)
        let error = try #require(throws: PlaylistError.self) { try Playlist.parse(bytes) }
        #expect(error.description == "line 3: invalid UTF-8 (byte 0xC3 at column 13)")
        for bad: [UInt8] in [
            [0xFF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
        ] {
            #expect(throws: PlaylistError.self) { try Playlist.parse(Array("#EXTM3U\n# ".utf8) + bad) }
        }
        let fine = try Playlist.parse(Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,€😀é\nä.ts\n".utf8))
        #expect(
            fine.playlist.media?.segments.first?.title == "€😀é" && fine.playlist.media?.segments.first?.uri == "ä.ts")
    }

    @Test func aCarriageReturnInsideALineIsAnError() throws {
        let error = try failure("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\na\rb.ts\n")
        #expect(error.description == "line 4: carriage return inside a line (lines end with LF or CRLF)")
    }

    // MARK: Unknown tags and comments

    @Test func unknownTagsAndCommentsSurviveInPlace() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-ALLOW-CACHE:YES
            #EXTINF:10,
            a.ts
            #EXT-X-CUE-OUT:30
            # ad break
            #EXTINF:10,
            ad.ts
            #EXT-X-CUE-IN
            #EXTINF:10,
            b.ts
            #EXT-X-VENDOR-END

            """
        let (playlist, _) = try media(text)
        #expect(playlist.headerLines == [PlaylistLine("#EXT-X-ALLOW-CACHE:YES")])
        #expect(playlist.segments[1].extraLines == [PlaylistLine("#EXT-X-CUE-OUT:30"), PlaylistLine("# ad break")])
        #expect(playlist.segments[2].extraLines == [PlaylistLine("#EXT-X-CUE-IN")])
        #expect(playlist.pendingSegment.extraLines == [PlaylistLine("#EXT-X-VENDOR-END")])
        #expect(
            playlist.serialized() == """
                #EXTM3U
                #EXT-X-TARGETDURATION:10
                #EXT-X-MEDIA-SEQUENCE:0
                #EXT-X-ALLOW-CACHE:YES
                #EXTINF:10,
                a.ts
                #EXT-X-CUE-OUT:30
                # ad break
                #EXTINF:10,
                ad.ts
                #EXT-X-CUE-IN
                #EXTINF:10,
                b.ts
                #EXT-X-VENDOR-END

                """)
    }

    @Test func vendorLinesOfAMultivariantPlaylistKeepTheirPlace() throws {
        let text =
            "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\"\n#VENDOR-A\n#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"a\"\nv1.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2,AUDIO=\"a\"\n# between tag and URI\nv2.m3u8\n#EXT-X-VENDOR-Z\n"
        let playlist = try #require(try Playlist.parse(text).playlist.multivariant)
        #expect(
            playlist.extraLines == [
                PlacedLine(PlaylistLine("#VENDOR-A"), position: .beforeVariant(0)),
                PlacedLine(PlaylistLine("# between tag and URI"), position: .beforeVariant(1)),
                PlacedLine(PlaylistLine("#EXT-X-VENDOR-Z"), position: .end),
            ])
        #expect(
            playlist.serialized().hasSuffix(
                "#VENDOR-A\n#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"a\"\nv1.m3u8\n# between tag and URI\n#EXT-X-STREAM-INF:BANDWIDTH=2,AUDIO=\"a\"\nv2.m3u8\n#EXT-X-VENDOR-Z\n"
            ))
    }

    // MARK: EXT-X-DEFINE (RFC 8216bis §4.4.2.3, §4.3)

    @Test func variablesAreSubstitutedInURIsQuotedStringsAndHexSequences() throws {
        let url = URL(string: "https://example.com/live/index.m3u8?token=a%20b&cdn=2")!
        let text = """
            #EXTM3U
            #EXT-X-VERSION:8
            #EXT-X-DEFINE:NAME="path",VALUE="media/v1"
            #EXT-X-DEFINE:IMPORT="host"
            #EXT-X-DEFINE:QUERYPARAM="token"
            #EXT-X-DEFINE:NAME="iv",VALUE="0x000102030405060708090a0b0c0d0e0f"
            #EXT-X-TARGETDURATION:4
            #EXT-X-KEY:METHOD=AES-128,URI="{$host}/key?t={$token}",IV={$iv}
            #EXTINF:4,{$path} is not substituted in titles
            {$host}/{$path}/seg1.ts?t={$token}
            #EXT-X-VENDOR:{$path}

            """
        let options = PlaylistParseOptions(playlistURL: url, importedVariables: ["host": "https://cdn.example.com"])
        let parsed = try Playlist.parse(text, options: options)
        let playlist = try #require(parsed.playlist.media)
        #expect(parsed.warnings.isEmpty)
        #expect(
            playlist.definitions == [
                VariableDefinition(name: "path", value: "media/v1"),
                VariableDefinition(name: "host", value: "https://cdn.example.com", source: .imported),
                VariableDefinition(name: "token", value: "a b", source: .queryParameter),
                VariableDefinition(name: "iv", value: "0x000102030405060708090a0b0c0d0e0f"),
            ])
        #expect(playlist.segments[0].uri == "https://cdn.example.com/media/v1/seg1.ts?t=a b")
        #expect(playlist.segments[0].title == "{$path} is not substituted in titles")
        #expect(playlist.segments[0].keys[0].uri == "https://cdn.example.com/key?t=a b")
        #expect(playlist.segments[0].keys[0].iv == Array(0...15))
        #expect(playlist.pendingSegment.extraLines == [PlaylistLine("#EXT-X-VENDOR:{$path}")])
        let again = try Playlist.parse(playlist.serialized(), options: options)
        #expect(again.playlist == parsed.playlist)
        #expect(ParsedPlaylist(playlist: .media(playlist), warnings: []).variables["host"] == "https://cdn.example.com")
    }

    @Test(arguments: [
        ("#EXTINF:1,\n{$missing}.ts", 3, "undefined variable {$missing} in URI line"),
        (
            "#EXT-X-DEFINE:NAME=\"a\",VALUE=\"1\"\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"2\"", 3,
            "variable a is already defined at line 2"
        ),
        ("#EXT-X-DEFINE:NAME=\"a b\",VALUE=\"1\"", 2, "variable name 'a b' may hold only"),
        ("#EXT-X-DEFINE:NAME=\"a\"", 2, "EXT-X-DEFINE needs NAME and VALUE, or IMPORT, or QUERYPARAM"),
        (
            "#EXT-X-DEFINE:IMPORT=\"nothing\"", 2,
            "EXT-X-DEFINE IMPORT=\"nothing\": the multivariant playlist defines no such"
        ),
        (
            "#EXT-X-DEFINE:QUERYPARAM=\"q\"", 2,
            "EXT-X-DEFINE QUERYPARAM=\"q\": the playlist URL has no such query parameter (no URL"
        ),
        (
            "#EXT-X-DEFINE:NAME=\"a\",VALUE=\"{$\"\n#EXT-X-DEFINE:NAME=\"b\",VALUE=\"{$a}b}\"", 3,
            "substituting variables in VALUE produced a new variable reference"
        ),
    ])
    func badDefinitionsFail(tags: String, line: Int, reason: String) throws {
        let error = try failure("#EXTM3U\n" + tags + "\n#EXTINF:1,\na.ts\n")
        #expect(error.line == line && error.reason.hasPrefix(reason), "\(error)")
    }

    @Test func importIsOnlyForMediaPlaylists() throws {
        let text = "#EXTM3U\n#EXT-X-DEFINE:IMPORT=\"x\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n"
        let error = try failure(text, options: PlaylistParseOptions(importedVariables: ["x": "1"]))
        #expect(error.description == "line 2: EXT-X-DEFINE IMPORT is only allowed in a media playlist")
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n#EXT-X-DEFINE:IMPORT=\"x\"\n"
        let late = try failure(master, options: PlaylistParseOptions(importedVariables: ["x": "1"]))
        #expect(late.description == "line 4: EXT-X-DEFINE IMPORT is only allowed in a media playlist")
    }

    @Test func aMultivariantPlaylistHandsItsVariablesToMediaPlaylists() throws {
        let master = try Playlist.parse(
            "#EXTM3U\n#EXT-X-DEFINE:NAME=\"cdn\",VALUE=\"https://a.example\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\n{$cdn}/v.m3u8\n"
        )
        #expect(master.playlist.multivariant?.variants.first?.uri == "https://a.example/v.m3u8")
        let media = try Playlist.parse(
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-DEFINE:IMPORT=\"cdn\"\n#EXTINF:1,\n{$cdn}/s.ts\n",
            options: PlaylistParseOptions(importedVariables: master.variables))
        #expect(media.playlist.media?.segments.first?.uri == "https://a.example/s.ts")
    }

    // MARK: Inputs

    @Test func parsesBytesDataAndText() throws {
        let fromString = try Playlist.parse(simple).playlist
        #expect(try Playlist.parse(Array(simple.utf8)).playlist == fromString)
        #expect(try Playlist.parse(Data(simple.utf8)).playlist == fromString)
        #expect(try Playlist.parse(simple.utf8).playlist == fromString)  // a String's UTF-8 view
        #expect(try Playlist.parse(ArraySlice(Array(("xx" + simple).utf8).dropFirst(2))).playlist == fromString)
        #expect(try Playlist.parse(simple.utf8.lazy.map { $0 }).playlist == fromString)  // not contiguous: copied first
    }
}
