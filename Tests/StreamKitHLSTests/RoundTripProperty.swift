import Foundation
import StreamKitHLS
import Testing

/// The property the fuzz target checks (Fuzz/HLSPlaylistParser): whatever parses leniently writes back to
/// text that parses to an equal model, strict mode agrees when it accepts, and resolving never traps.
enum RoundTripProperty {
    static let playlistURL = URL(string: "https://example.com/live/index.m3u8?token=abc&v=1")!
    static let imported = ["base": "https://cdn.example.com", "token": "xyz"]

    static func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let options = PlaylistParseOptions(playlistURL: playlistURL, importedVariables: imported)
        var strict = options
        strict.strictness = .strict
        let strictResult = try? Playlist.parse(bytes, options: strict)
        guard let parsed = try? Playlist.parse(bytes, options: options) else {
            #expect(strictResult == nil, sourceLocation: sourceLocation)
            return
        }
        if let strictResult { #expect(strictResult.playlist == parsed.playlist, sourceLocation: sourceLocation) }
        let text = parsed.playlist.serialized()
        do {
            let again = try Playlist.parse(text, options: options)
            #expect(
                again.playlist == parsed.playlist, "round trip changed the model:\n\(text)",
                sourceLocation: sourceLocation)
            #expect(again.playlist.serialized() == text, sourceLocation: sourceLocation)
        } catch {
            Issue.record("written playlist does not parse: \(error)\n\(text)", sourceLocation: sourceLocation)
        }
        if case .media(let media) = parsed.playlist {
            #expect(media.resolvedSegments(baseURL: playlistURL.absoluteString).count == media.segments.count)
        }
    }
}

/// Inputs the fuzzer (Fuzz/HLSPlaylistParser) found, reduced by hand, with what must happen now.
@Suite struct FuzzRegressionTests {
    @Test func anUnquotedValueHoldingAQuoteIsAViolation() throws {
        // Found: URI=5555"filePart.mp4" was read as a URI with quotes in it, which the writer could not keep.
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-PART:DURATION=1,URI=5\"p.mp4\"\n"
        RoundTripProperty.check(Array(text.utf8))
        let parsed = try Playlist.parse(text)
        #expect(
            parsed.warnings.map(\.description) == [
                "line 3: the unquoted value of URI in EXT-X-PART holds a double quote; the tag is ignored",
                "line 3: EXT-X-PART needs EXT-X-PART-INF",
            ]
                || parsed.warnings.first?.description
                    == "line 3: the unquoted value of URI in EXT-X-PART holds a double quote; the tag is ignored",
            "\(parsed.warnings)")
        #expect(parsed.playlist.media?.pendingSegment.parts.isEmpty == true)
        #expect(throws: PlaylistError.self) { try Playlist.parse(text, options: .strict) }
        // A quoted value where an unquoted one belongs may not hold a comma either.
        let quoted = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,HDCP-LEVEL=\"TYPE,0\"\nv.m3u8\n"
        RoundTripProperty.check(Array(quoted.utf8))
        // Its only variant is ignored, which leaves nothing of the multivariant playlist.
        let error = try #require(throws: PlaylistError.self) { try Playlist.parse(quoted) }
        #expect(error.description == "line 2: no tag of this multivariant playlist could be read")
        let strict = try #require(throws: PlaylistError.self) { try Playlist.parse(quoted, options: .strict) }
        #expect(
            strict.diagnostics.first?.reason
                == "HDCP-LEVEL must not be quoted, and its quoted value holds a comma; the tag is ignored")
    }

    @Test func aTrailingEXTINFKeepsTheLinesAfterItWhereTheyWere() throws {
        // Found: with the trailing EXTINF dropped, the unknown lines after it were written where a second
        // read took them for header lines.
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:5\n#EXT-X-D\u{0}V\n#EXTINF:5,20\n#EXT-media/e.ts\n#EXDLIST\n"
        RoundTripProperty.check(Array(text.utf8))
        let media = try #require(try Playlist.parse(text).playlist.media)
        #expect(media.segments.isEmpty)
        #expect(media.pendingSegment.extraLines.map(\.text) == ["#EXTINF:5,20", "#EXT-media/e.ts", "#EXDLIST"])
        // After a unknown line, with a byte range, and after a raw-kept segment tag.
        for tail in [
            "#EXT-A\n#EXTINF:5,\n#EXT-B\n", "#EXTINF:5,\n#EXT-X-BYTERANGE:10@0\n#EXT-B\n",
            "#EXT-X-BYTERANGE:10@0\n#EXT-B\n#EXTINF:5,\n", "#EXTINF:5,\n#EXT-X-BITRATE:bad\n",
            "#EXTINF:5,\na.ts\n#EXT-X-BITRATE:bad\n#EXTINF:5,\n#EXT-C\n",
            // Found: an ignored EXTINF (IPTV attributes) put the unknown lines after it in a segment never written.
            "#EXT-A\n#EXTINF:-1 tvg-id=\"x\",Channel\n#EXT-B\n", "#EXT-X-PART:URI=\"p\"\n#EXT-B\n",
            "#EXTINF:x,\n#EXT-B\na.ts\n",
        ] {
            RoundTripProperty.check(Array(("#EXTM3U\n#EXT-X-TARGETDURATION:5\n" + tail).utf8))
        }
    }

    @Test func aCarriageReturnInsideAnUnknownTag() throws {
        // Found: "#EXT\rX-TARGETDURATION:15" was kept as an unknown tag whose CR the writer dropped.
        let bytes = Array("#EXTM3U\n#EXT\rX-TARGETDURATION:15\n#EXTINF:1,\na.ts\n".utf8)
        RoundTripProperty.check(bytes)
        let error = try #require(throws: PlaylistError.self) { try Playlist.parse(bytes) }
        #expect(error.line == 2)
    }

    @Test func linesBeforeVariantsAndIFrameVariantsKeepACanonicalOrder() throws {
        // Found: a comment before an I-frame variant, then one before a variant; written back, their order in
        // `extraLines` swapped because variants are written before I-frame variants.
        let text = """
            #EXTM3U
            # before the I-frame variant
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI="i.m3u8"
            ##EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=2
            v.m3u8

            """
        RoundTripProperty.check(Array(text.utf8))
        let playlist = try #require(try Playlist.parse(text).playlist.multivariant)
        #expect(playlist.extraLines.map(\.position) == [.beforeVariant(0), .beforeIFrameVariant(0)])
    }
}
