import Foundation
import StreamKitCLI
import StreamKitTestSupport
import Testing

@Suite struct InspectCommandTests {
    private func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        await CommandRunner.runCapturing(arguments: ["inspect"] + arguments)
    }

    private func write(_ text: String, name: String = "index.m3u8") throws -> String {
        let directory = try TestRun.makeTemporaryDirectory("inspect")
        let file = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }

    private let media = """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:4
        #EXT-X-MEDIA-SEQUENCE:7
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXT-X-MAP:URI="init.mp4",BYTERANGE="800@0"
        #EXT-X-KEY:METHOD=AES-128,URI="key.bin"
        #EXT-X-PROGRAM-DATE-TIME:2024-05-01T12:00:00.000Z
        #EXTINF:4,
        #EXT-X-BYTERANGE:1000@800
        media.mp4
        #EXTINF:4,
        #EXT-X-BYTERANGE:1000
        media.mp4
        #EXT-X-DISCONTINUITY
        #EXT-X-KEY:METHOD=NONE
        #EXTINF:2.5,
        tail.mp4
        #EXT-X-ENDLIST

        """

    @Test func summarizesAMediaPlaylist() async throws {
        let file = try write(media)
        let (code, output, error) = await run([file])
        #expect(code == .success && error.isEmpty)
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        #expect(
            output == """
                \(file): media playlist, version 7
                  type: complete (EXT-X-ENDLIST), VOD
                  segments: 3, total duration 10.500 s (0:11), target duration 4 s
                  media sequence: 7, discontinuities: 1
                  encryption: AES-128 on 2 of 3 segments, 1 key, IV from the media sequence
                    key file://\(directory)/key.bin
                  maps: 1
                    file://\(directory)/init.mp4
                  byte ranges: 2 segments in 1 resource
                  program date-time: 2024-05-01T12:00:00.000Z to 2024-05-01T12:00:08.000Z

                """)
    }

    @Test func summarizesAMultivariantPlaylist() async throws {
        let file = try write(
            """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="en.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2",AUDIO="aud"
            hi.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=200000,RESOLUTION=320x180,AUDIO="aud"
            lo.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,URI="iframe.m3u8"

            """, name: "master.m3u8")
        let (code, output, _) = await run([file])
        #expect(code == .success)
        #expect(
            output == """
                \(file): multivariant playlist, version 1 (no EXT-X-VERSION)
                  variants: 2
                    800000 bit/s, 640x360, avc1.64001e,mp4a.40.2, audio aud: hi.m3u8
                    200000 bit/s, 320x180, audio aud: lo.m3u8
                  renditions: 1
                    AUDIO aud, "English", en, default, autoselect: en.m3u8
                  I-frame playlists: 1
                    90000 bit/s: iframe.m3u8

                """)
    }

    @Test func printsTheModelAsOneJSONObject() async throws {
        let file = try write(media)
        let (code, output, error) = await run([file, "--json"])
        #expect(code == .success && error.isEmpty)
        #expect(output.hasSuffix("\n") && output.dropLast().split(separator: "\n").count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(object["kind"] as? String == "media" && object["file"] as? String == file)
        let summary = try #require(object["summary"] as? [String: Any])
        #expect(summary["segmentCount"] as? Int == 3 && summary["totalDuration"] as? Double == 10.5)
        #expect(summary["encryptedSegments"] as? Int == 2 && summary["byteRangeSegments"] as? Int == 2)
        let playlist = try #require(object["playlist"] as? [String: Any])
        #expect(playlist["targetDuration"] as? Int == 4 && playlist["mediaSequence"] as? Int == 7)
        let segments = try #require(playlist["segments"] as? [[String: Any]])
        #expect(segments.count == 3)
        #expect(segments[0]["programDateTime"] as? String == "2024-05-01T12:00:00.000Z")
        #expect((segments[0]["byteRange"] as? [String: Any])?["offset"] as? Int == 800)
        #expect(((segments[0]["keys"] as? [[String: Any]])?.first?["uri"]) as? String == "key.bin")
        #expect(segments[2]["discontinuity"] as? Bool == true)
    }

    @Test func warningsGoToStandardErrorAndStrictModeFailsOnThem() async throws {
        let file = try write("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10\na.ts\n")
        let (code, output, error) = await run([file])
        #expect(code == .success)
        #expect(
            output.hasPrefix("\(file): media playlist, version 1 (no EXT-X-VERSION), 1 warning (on standard error)"))
        #expect(error == "warning: \(file): line 3: EXTINF has no comma after the duration\n")
        let (strictCode, strictOutput, strictError) = await run([file, "--strict"])
        #expect(strictCode == .failure && strictOutput.isEmpty)
        #expect(strictError == "error: \(file): line 3: EXTINF has no comma after the duration\n")
    }

    @Test func aPlaylistWhoseMediaCannotBeDecryptedExitsWithOneNamingFileAndLine() async throws {
        let file = try write("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-KEY:METHOD=AES-128\n#EXTINF:10,\na.ts\n")
        let (code, output, error) = await run([file])
        #expect(code == .failure && output.isEmpty)
        #expect(error == "error: \(file): line 3: EXT-X-KEY METHOD=AES-128 needs a URI\n")
    }

    @Test func aTagTheMediaCanDoWithoutIsAWarningUnlessStrict() async throws {
        let file = try write("#EXTM3U\n#EXT-X-TARGETDURATION:ten\n#EXTINF:10,\na.ts\n")
        let (code, output, error) = await run([file])
        #expect(code == .success && output.contains("segments: 1,"))
        #expect(
            error.contains(
                "warning: \(file): line 2: EXT-X-TARGETDURATION is not a decimal integer: 'ten'; the tag is ignored\n"))
        let (strictCode, strictOutput, strictError) = await run([file, "--strict"])
        #expect(strictCode == .failure && strictOutput.isEmpty)
        #expect(strictError.contains("error: \(file): line 2: EXT-X-TARGETDURATION is not a decimal integer: 'ten'"))
    }

    @Test func anUnreadableFileExitsWithOneNamingTheFile() async throws {
        let missing = try TestRun.makeTemporaryDirectory("inspect").appendingPathComponent("missing.m3u8").path
        let (code, _, error) = await run([missing])
        #expect(code == .failure && error == "error: \(missing): no such file\n")
        let directory = try TestRun.makeTemporaryDirectory("inspect").path
        let (directoryCode, _, directoryError) = await run([directory])
        #expect(directoryCode == .failure && directoryError == "error: \(directory): is a directory\n")
        // Over the limit: refused from its size, before reading (a sparse file takes no disk).
        let huge = try TestRun.makeTemporaryDirectory("inspect").appendingPathComponent("huge.m3u8").path
        #expect(FileManager.default.createFile(atPath: huge, contents: Data("#EXTM3U\n".utf8)))
        #expect(truncate(huge, 257 << 20) == 0)
        let (hugeCode, _, hugeError) = await run([huge])
        #expect(hugeCode == .failure && hugeError == "error: \(huge): larger than 256 MiB\n", "\(hugeError)")
        let (schemeCode, _, schemeError) = await run(["ftp://example.com/index.m3u8"])
        #expect(
            schemeCode == .failure
                && schemeError
                    == "error: ftp://example.com/index.m3u8: only http and https URLs (or files) can be read\n"
        )
    }

    /// A URL is fetched over HTTP; relative URIs resolve against it; a failed fetch names the URL and status.
    @Test(.requires(.nginx, .ffmpeg))
    func aURLIsFetchedAndResolvedAgainstItself() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsMaster))
        let nginx = try await Nginx.static(root: fixture.directory)
        let url = nginx.url("master.m3u8").absoluteString
        let (code, output, _) = await run([url])
        #expect(code == .success)
        #expect(output.hasPrefix("\(url): multivariant playlist") && output.contains("video_360p/index.m3u8"))
        let (jsonCode, json, _) = await run([nginx.url("video_180p/index.m3u8").absoluteString, "--json"])
        #expect(jsonCode == .success && json.contains("\"kind\":\"media\""))
        let missing = nginx.url("missing.m3u8").absoluteString
        let (missingCode, _, missingError) = await run([missing])
        #expect(missingCode == .failure && missingError == "error: \(missing): HTTP 404 Not Found\n")
        #expect(
            try await nginx.settledAccessLog().map(\.uri) == [
                "/master.m3u8", "/video_180p/index.m3u8", "/missing.m3u8",
            ])
        await nginx.stop()
    }

    @Test func usageErrorsExit64() async throws {
        let (missing, _, missingError) = await run([])
        #expect(missing == .usage && missingError.hasPrefix("error: missing argument <url-or-file>\n"))
        let (unknown, _, unknownError) = await run(["x.m3u8", "--frobnicate"])
        #expect(unknown == .usage && unknownError.hasPrefix("error: unknown option '--frobnicate'\n"))
        let (extra, _, extraError) = await run(["a.m3u8", "b.m3u8"])
        #expect(extra == .usage && extraError.hasPrefix("error: unexpected argument 'b.m3u8'\n"))
    }

    @Test func helpSnapshot() async {
        let (code, output, _) = await run(["--help"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: Parse an HLS playlist or a DASH MPD and summarize it, or print it as
                JSON.

                Prints the variants and renditions of a multivariant playlist, or the segment
                count, total duration, encryption, maps and byte ranges of a media playlist.
                Problems the parser tolerates are listed on standard error as warnings; --strict
                turns every one into an error. An MPD (told by its first element) is summarized
                by Period, AdaptationSet and Representation; with --json, every Representation's
                segments are listed resolved: URLs, byte ranges, times.

                USAGE: streamkit inspect <url-or-file> [--json] [--strict]

                ARGUMENTS:
                  <url-or-file>           The playlist or MPD: an http(s) URL or a file (.m3u8,
                                          .mpd).

                OPTIONS:
                  --json                  Print the parsed playlist as one JSON object on
                                          standard output.
                  --strict                Report every violation of RFC 8216bis and fail if
                                          there is any.
                  -h, --help              Show help information.

                EXAMPLES:
                  Summarize a media playlist:
                    streamkit inspect index.m3u8
                  Summarize a playlist on a server:
                    streamkit inspect https://example.com/live/master.m3u8
                  Print the parsed model as one JSON object:
                    streamkit inspect master.m3u8 --json
                  Check a playlist against RFC 8216bis:
                    streamkit inspect index.m3u8 --strict
                  List a DASH stream's Representations and segments:
                    streamkit inspect manifest.mpd --json

                """)
        let context = CommandContext.capturing()
        #expect(
            await CommandRunner.run(StreamKitCommand.self, arguments: ["help", "inspect"], context: context) == .success
        )
        #expect(context.output.text == output)
    }
}
