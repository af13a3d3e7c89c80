import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitTestSupport
import Testing

@Suite struct WriterTests {
    @Test func canonicalMediaPlaylist() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:6
            #EXT-X-VERSION:7
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-START:PRECISE=YES,TIME-OFFSET=-3.000
            #EXT-X-MAP:BYTERANGE="100@0",URI="init.mp4"
            #EXT-X-KEY:URI="k.bin",METHOD=AES-128,IV=0x1
            #EXTINF:6.00600,title
            #EXT-X-BYTERANGE:5000@100
            media.mp4
            #EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:06.006000Z
            #EXT-X-DATERANGE:START-DATE="2024-01-01T00:00:06Z",ID="ad",DURATION=30.0,X-AD="1",SCTE35-OUT=0xfc01
            #EXTINF:6,
            #EXT-X-BYTERANGE:5000
            media.mp4
            #EXT-X-ENDLIST

            """
        let playlist = try #require(try Playlist.parse(text).playlist.media)
        #expect(
            playlist.serialized() == """
                #EXTM3U
                #EXT-X-VERSION:7
                #EXT-X-TARGETDURATION:6
                #EXT-X-MEDIA-SEQUENCE:0
                #EXT-X-PLAYLIST-TYPE:VOD
                #EXT-X-START:TIME-OFFSET=-3,PRECISE=YES
                #EXT-X-MAP:URI="init.mp4",BYTERANGE="100@0"
                #EXT-X-KEY:METHOD=AES-128,URI="k.bin",IV=0x00000000000000000000000000000001
                #EXTINF:6.006,title
                #EXT-X-BYTERANGE:5000@100
                media.mp4
                #EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:06.006Z
                #EXT-X-DATERANGE:ID="ad",START-DATE="2024-01-01T00:00:06.000Z",DURATION=30,SCTE35-OUT=0xFC01,X-AD="1"
                #EXTINF:6,
                #EXT-X-BYTERANGE:5000
                media.mp4
                #EXT-X-ENDLIST

                """)
    }

    /// A key applies only to the maps written after it (RFC 8216bis §4.4.4.4): the order of
    /// EXT-X-MAP and EXT-X-KEY before one segment is kept, and the resolved map says which keys
    /// apply to it.
    @Test func theOrderOfAMapAndAKeyIsKept() throws {
        let mapFirst = """
            #EXTM3U
            #EXT-X-TARGETDURATION:6
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-KEY:METHOD=AES-128,URI="k.bin",IV=0x1
            #EXTINF:6,
            a.m4s
            #EXT-X-MAP:URI="init2.mp4"
            #EXTINF:6,
            b.m4s
            #EXT-X-ENDLIST

            """
        let playlist = try #require(try Playlist.parse(mapFirst).playlist.media)
        #expect(playlist.segments[0].keysBeforeMap == 0)
        let resolved = playlist.resolvedSegments()
        #expect(resolved[0].map?.keys.isEmpty == true && resolved[0].identityKey != nil)
        #expect(resolved[1].map?.identityKey?.isIVExplicit == true)
        let text = playlist.serialized()
        let map = try #require(text.range(of: "init.mp4"))
        let key = try #require(text.range(of: "k.bin"))
        #expect(map.lowerBound < key.lowerBound, "\(text)")
        #expect(try Playlist.parse(text).playlist.media == playlist)
        // Key first: the map is under it.
        let keyFirst = mapFirst.replacingOccurrences(
            of: "#EXT-X-MAP:URI=\"init.mp4\"\n#EXT-X-KEY:METHOD=AES-128,URI=\"k.bin\",IV=0x1",
            with: "#EXT-X-KEY:METHOD=AES-128,URI=\"k.bin\",IV=0x1\n#EXT-X-MAP:URI=\"init.mp4\"")
        let underKey = try #require(try Playlist.parse(keyFirst).playlist.media)
        #expect(underKey.segments[0].keysBeforeMap == nil)
        #expect(underKey.resolvedSegments()[0].map?.identityKey != nil)
    }

    @Test func canonicalMultivariantPlaylist() throws {
        let text = """
            #EXTM3U
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-STREAM-INF:AUDIO="a",CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,BANDWIDTH=2000000,FRAME-RATE=25.000
            720.m3u8
            #EXT-X-MEDIA:URI="en.m3u8",NAME="English",GROUP-ID="a",TYPE=AUDIO,DEFAULT=YES,AUTOSELECT=NO
            #EXT-X-SESSION-DATA:VALUE="x",DATA-ID="com.example"
            #EXT-X-I-FRAME-STREAM-INF:URI="i.m3u8",BANDWIDTH=100000

            """
        let playlist = try #require(try Playlist.parse(text).playlist.multivariant)
        #expect(
            playlist.serialized() == """
                #EXTM3U
                #EXT-X-INDEPENDENT-SEGMENTS
                #EXT-X-SESSION-DATA:DATA-ID="com.example",VALUE="x"
                #EXT-X-MEDIA:TYPE=AUDIO,URI="en.m3u8",GROUP-ID="a",NAME="English",DEFAULT=YES
                #EXT-X-STREAM-INF:BANDWIDTH=2000000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=25,AUDIO="a"
                720.m3u8
                #EXT-X-I-FRAME-STREAM-INF:URI="i.m3u8",BANDWIDTH=100000

                """)
    }

    @Test(arguments: [
        (0.0, "0"), (10, "10"), (9.009, "9.009"), (4.00008, "4.00008"), (0.1 + 0.2, "0.30000000000000004"),
        (1e-5, "0.00001"), (1.5e-7, "0.00000015"), (1e21, "1000000000000000000000"), (123456789.125, "123456789.125"),
        (-2.5, "-2.5"), (6.006, "6.006"),
    ])
    func numbersAreWrittenExactlyWithoutExponents(value: Double, text: String) throws {
        let playlist = MediaPlaylist(targetDuration: 1, segments: [MediaSegment(uri: "a.ts", duration: abs(value))])
        let written = playlist.serialized()
        #expect(written.contains("#EXTINF:\(text.hasPrefix("-") ? String(text.dropFirst()) : text),\n"), "\(written)")
        let reread = try #require(try Playlist.parse(written).playlist.media)
        #expect(reread.segments[0].duration == abs(value))
        let start = MediaPlaylist(targetDuration: 1, start: StartPoint(timeOffset: value)).serialized()
        #expect(start.contains("#EXT-X-START:TIME-OFFSET=\(text)\n"))
        #expect(try Playlist.parse(start).playlist.media?.start?.timeOffset == value)
    }

    @Test func decimalParsingIsCorrectlyRounded() throws {
        for text in [
            "0.1", "2.2250738585072014", "9007199254740993", "0.000000000000000000000000001",
            "123456789012345678901234567890.5", "4.35", "1.0000000000000002",
        ] {
            let playlist = try #require(try Playlist.parse("#EXTM3U\n#EXTINF:\(text),\na.ts\n").playlist.media)
            #expect(playlist.segments[0].duration == Double(text), "\(text)")
        }
    }

    @Test func dateTimes() throws {
        let parsed = try #require(HLSDateTime("2016-06-22T09:20:16.166-04:00"))
        #expect(parsed.utcOffsetMinutes == -240 && parsed.description == "2016-06-22T09:20:16.166-04:00")
        #expect(parsed.isSameInstant(as: try #require(HLSDateTime("2016-06-22T13:20:16.166Z"))))
        #expect(HLSDateTime("2020-02-29T23:59:60.5Z")?.description == "2020-03-01T00:00:00.500Z")  // a leap second
        #expect(HLSDateTime("2018-12-31T09:47:22+08:00")?.description == "2018-12-31T09:47:22.000+08:00")
        #expect(HLSDateTime("2022-04-26T13:11:31.333300Z")?.description == "2022-04-26T13:11:31.3333Z")
        #expect(HLSDateTime("1970-01-01T00:00:00.123456789123Z")?.nanoseconds == 123_456_789)
        #expect(HLSDateTime("2024-01-01T00:00:00")?.utcOffsetMinutes == nil)  // no zone: read as UTC, kept so
        #expect(HLSDateTime("2024-01-01T00:00:00")?.description == "2024-01-01T00:00:00.000")
        #expect(HLSDateTime("0001-01-01T00:00:00Z")?.secondsSince1970 == -62_135_596_800)
        for bad in [
            "2019-02-29T00:00:00Z", "2019-13-01T00:00:00Z", "2019-01-01 00:00:00Z", "2019-01-01T24:00:00Z",
            "2019-01-01T00:00:00+24:00", "2019-01-01T00:00:00.Z", "19-01-01T00:00:00Z", "2019-01-01T00:00:00Zjunk",
        ] {
            #expect(HLSDateTime(bad) == nil, "\(bad)")
        }
        let later = try #require(parsed.adding(seconds: 3_600.5))
        #expect(later.description == "2016-06-22T10:20:16.666-04:00")
        #expect(parsed.adding(seconds: .infinity) == nil && parsed.adding(seconds: 1e300) == nil)
    }

    @Test func textTheFormatCannotCarryIsDroppedNotWritten() throws {
        var segment = MediaSegment(uri: "a\nb.ts", duration: 1, title: "two\nlines")
        segment.extraLines = [PlaylistLine("no hash"), PlaylistLine("#EXT-X-OK:1\r\n")]
        segment.keys = [EncryptionKey(method: .aes128, uri: "k\"ey")]
        let written = MediaPlaylist(targetDuration: 1, segments: [segment]).serialized()
        #expect(written.contains("ab.ts\n") && written.contains("#EXTINF:1,twolines\n"))
        #expect(written.contains("# no hash\n") && written.contains("#EXT-X-OK:1\n") && written.contains("URI=\"key\""))
        #expect(throws: Never.self) { try Playlist.parse(written) }
    }

    /// ffprobe reads written copies of every ffmpeg HLS fixture (not FLV, not DASH), served by nginx: the
    /// canonical form is real HLS.
    @Test(
        .requires(.ffprobe, .nginx, .ffmpeg, .openssl),
        arguments: FixtureRecipe.Kind.allCases.filter { $0 != .flv && !$0.rawValue.hasPrefix("dash") })
    func ffprobeReadsWrittenCopiesOfTheFixtures(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let copy = try TestRun.makeTemporaryDirectory("written-\(kind.rawValue)")
        var rewritten = 0
        for file in try fixture.files() {
            let source = fixture.directory.appendingPathComponent(file)
            let target = copy.appendingPathComponent(file)
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard file.hasSuffix(".m3u8") else {
                try FileManager.default.copyItem(at: source, to: target)
                continue
            }
            let original = try Playlist.parse(try Data(contentsOf: source), options: .strict)
            let written = original.playlist.serialized()
            #expect(try Playlist.parse(written).playlist == original.playlist)
            try Data(written.utf8).write(to: target)
            rewritten += 1
        }
        #expect(rewritten == (kind == .hlsMaster ? 7 : 1))
        let nginx = try await Nginx.static(root: copy)
        let probe = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "stream=codec_type:format=duration", "-of", "csv=p=0",
            nginx.url(fixture.recipe.entry).absoluteString,
        ])
        let lines = probe.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("video") && lines.contains("audio"), "\(kind): \(lines)")
        let duration = try #require(lines.compactMap(Double.init).first)
        #expect(abs(duration - Double(fixture.recipe.seconds)) < 1, "\(kind) lasts \(duration) s")
        let failed = try await nginx.settledAccessLog().filter { ![200, 206].contains($0.status) }
        #expect(failed.isEmpty, "\(failed)")
        await nginx.stop()
    }

    /// The IV of a key without one is the media sequence number: decrypting the fixture with the resolved key
    /// and IV gives MPEG-TS.
    @Test(.requires(.ffmpeg, .openssl), arguments: [FixtureRecipe.Kind.hlsAES128SequenceIV, .hlsAES128ExplicitIV])
    func resolvedKeysDecryptTheEncryptedFixtures(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let playlist = try #require(try Playlist.parse(try Data(contentsOf: fixture.entryFile)).playlist.media)
        let resolved = playlist.resolvedSegments(baseURL: fixture.entryFile.absoluteString)
        #expect(resolved.count == 5)
        for segment in resolved {
            let key = try #require(segment.identityKey)
            #expect(key.method == .aes128 && key.isIVExplicit == (kind == .hlsAES128ExplicitIV))
            let keyURI = try #require(key.uri)
            let keyBytes = Array(try Data(contentsOf: try #require(URL(string: keyURI))))
            #expect(keyBytes == fixture.key)
            let cipher = Array(try Data(contentsOf: try #require(URL(string: segment.uri))))
            let plain = try AES128CBC.decrypt(cipher, key: keyBytes, iv: key.iv)
            #expect(plain.first == 0x47 && plain.count % 188 == 0, "\(segment.uri)")
        }
    }
}
