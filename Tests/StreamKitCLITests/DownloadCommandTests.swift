import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// `streamkit download`: help, usage errors, exit codes, JSON lines, resume; in-process against nginx.
@Suite struct DownloadCommandTests {
    /// Runs `streamkit ARGUMENTS` with a home of its own (the download is a task of its queue).
    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let home = (try? TestRun.makeTemporaryDirectory("download-home").path) ?? ""
        return await CommandRunner.runCapturing(arguments: arguments, environment: ["STREAMKIT_HOME": home])
    }

    @Test func helpSnapshot() async {
        let (code, output, _) = await run(["download", "--help"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: Download an HLS or DASH stream into a local package that plays
                offline, or a file; resumes when run again.

                HLS (a URL ending in .m3u8, or answered with an HLS Content-Type or a body
                starting with #EXTM3U) becomes a package folder: index.m3u8 (a multivariant
                playlist with relative URIs), package.json, and one folder per rendition with
                its playlist, segments, maps and keys. It goes to $STREAMKIT_HOME/library/ID
                (STREAMKIT_HOME defaults to $XDG_DATA_HOME/streamkit, else
                ~/.local/share/streamkit), where ID is 16 hex digits of SHA-256 over the URL,
                --variant, --audio, --subs, --section, --exclude-segments and --decrypt, so the
                same command resumes the same package; -o DIR puts it in DIR. The package plays
                through `streamkit serve` from its first segments on, while it downloads: until
                it completes, its playlists are EVENT playlists of the segments in place from
                the first (players that start such a playlist at its end, as ffplay and mpv do,
                start at the beginning with -live_start_index 0). With --subs-format, each
                WebVTT subtitle rendition is also merged into one file next to its folder once
                the package is complete (subtitles-eng.vtt or .srt), its times counted from the
                start of the media (X-TIMESTAMP-MAP honoured); the playlists stay as they are.
                Files already in place are never fetched again (resuming an unfinished package
                checks their ETag with a HEAD each; a file changed on the server is fetched
                again); a partial file continues with If-Range. A live playlist is recorded
                (reloaded every target duration) until ENDLIST, --live-duration or Ctrl-C, and
                left as VOD. A segment that still fails after retries fails the download (exit
                1, everything kept); with --skip-broken it becomes a gap (exit 2): left out of
                the package's playlist, with EXT-X-DISCONTINUITY on the segment after it, so
                that every player plays on (--gap-tags writes EXT-X-GAP instead, which some
                players stop at). package.json records the gap: running the same command again
                fetches it and writes the playlist whole. A playlist that breaks RFC 8216bis in
                ways players read past is downloaded, its problems printed once as warnings with
                their line numbers; --strict refuses it.
                DASH (a URL ending in .mpd, or answered with application/dash+xml or an MPD
                body) is downloaded the same way, with the same options: --variant chooses a
                video Representation, --audio and --subs AdaptationSets (by language, en,fr,
                name:LABEL or role:ROLE); the package holds manifest.mpd (DASH, relative to the
                package) beside index.m3u8 over the same files. Representations under DRM
                (ContentProtection) are refused unless --keep-encrypted.
                Any other URL is downloaded as a file: partial data in FILE.streamkit-partial,
                its validator in that file's attributes. Ctrl-C stops cleanly and exits 130 (a
                live recording is finished instead and exits 0). Play a package with `streamkit
                serve`.
                Each download is a task of the download queue in $STREAMKIT_HOME (--home):
                `streamkit queue list` and the served page show it; the same command resumes the
                same task. A queue that another process holds (queue run) is refused with exit
                1.

                USAGE: streamkit download <url> [--output <path>] [--variant <variant>]
                       [--codec <codecs>] [--audio <audio>] [--subs <subs>] [--connections <n>]
                       [--section <start-end> ...] [--exclude-segments <regex> ...]
                       [--subs-format <format>] [--decrypt] [--key <hex>]
                       [--key-file <uri=file> ...] [--iv <hex>] [--keep-encrypted]
                       [--skip-broken] [--gap-tags] [--strict] [--limit-rate <rate>]
                       [--header <header> ...] [--live-duration <seconds>]
                       [--max-segments <count>] [--home <dir>] [--retries <count>] [--json]

                ARGUMENTS:
                  <url>                   The http or https URL to download.

                OPTIONS:
                  -o, --output <path>     HLS: the package folder. A file: the file to write, or
                                          a directory to write it into.
                  --variant <variant>     HLS variant: best, worst, a bandwidth cap (1500k, 2M)
                                          or WxH. (default: best)
                  --codec <codecs>        HLS: only variants with one of these codecs
                                          (comma-separated prefixes: avc1, hvc1, av01).
                  --audio <audio>         Audio (HLS renditions, DASH sets): auto (the default
                                          one), all, none, a language, en,fr, name:NAME,
                                          role:ROLE. (default: auto)
                  --subs <subs>           Subtitles (HLS, DASH): all, none, a language, en,fr,
                                          name:NAME, role:ROLE. (default: all)
                  -j, --connections <n>   HLS: transfers at once (default: 8, up to 15 while
                                          more fetch more). A file: range connections (default
                                          1, one request).
                  --section <start-end>   HLS: only the segments covering this time span,
                                          [HH:]MM:SS[.ms] or seconds, either end optional
                                          (0:04-0:10, -1:00, 90-); repeatable. Live: where in
                                          the DVR window to begin, and for how long.
                  --exclude-segments <regex>
                                          HLS: leave out segments whose URL matches this regular
                                          expression (ads); repeatable.
                  --subs-format <format>  HLS: also merge each WebVTT subtitle rendition into
                                          one file, vtt or srt, beside its folder.
                  --decrypt               Store AES-128 and SAMPLE-AES (MPEG-TS) segments
                                          decrypted and drop their keys.
                  --key <hex>             HLS: one AES-128 key (32 hex digits) for every key
                                          URI; no key is then fetched.
                  --key-file <uri=file>   HLS: the key of one key URI (absolute, or as the media
                                          playlist writes it), never fetched: URI=FILE (16 bytes
                                          or 32 hex digits) or URI=HEX. Repeatable.
                  --iv <hex>              HLS: the IV (32 hex digits) of every AES-128 key, for
                                          a wrong or missing IV.
                  --keep-encrypted        DASH: download Representations under DRM
                                          (ContentProtection) as they are, still encrypted.
                  --skip-broken           Mark segments that still fail after retries as gaps
                                          and go on (exit code 2).
                  --gap-tags              Write missing segments as EXT-X-GAP instead of leaving
                                          them out (some players stop at it).
                  --strict                HLS: refuse playlists with any violation of RFC
                                          8216bis (otherwise they are warnings).
                  --limit-rate <rate>     At most this many bytes a second in all, such as 500k
                                          or 2M.
                  -H, --header <header>   An extra request header, 'Name: value'.
                  --live-duration <seconds>
                                          Live HLS: stop after recording this many seconds of
                                          media.
                  --max-segments <count>  HLS: refuse media playlists listing more segments than
                                          this. (default: 100000)
                  --home <dir>            StreamKit's data (default: $STREAMKIT_HOME,
                                          $XDG_DATA_HOME/streamkit, ~/.local/share/streamkit).
                  --retries <count>       Failed attempts in a row to retry (each from the byte
                                          reached). (default: 4)
                  --json                  Print progress and the result as JSON lines on
                                          standard output.
                  -h, --help              Show help information.

                EXAMPLES:
                  Download an HLS stream (best variant, default audio, all subtitles):
                    streamkit download https://example.com/show/master.m3u8
                  A DASH stream: the worst video, with English and French audio:
                    streamkit download https://example.com/show/manifest.mpd --variant worst
                      --audio eng,fra
                  French audio, no subtitles, 720p at most, 16 connections, decrypted:
                    streamkit download URL --audio fr --subs none --variant 1280x720 -j 16
                      --decrypt
                  Only 0:04 to 0:10 and 2:00 to the end, without the ad segments:
                    streamkit download URL --section 0:04-0:10 --section 2:00-
                      --exclude-segments '/ads?/'
                  Record 10 minutes of a live stream into a folder:
                    streamkit download URL --live-duration 600 -o show
                  Download a file to a path at most 2 MB a second:
                    streamkit download URL -o ~/Movies/talk.mp4 --limit-rate 2M
                  Send a header and print JSON progress:
                    streamkit download URL -H 'Cookie: a=1' --json

                """)
    }

    @Test(arguments: [
        (["download"], "missing argument <url>"),
        (["download", "ftp://127.0.0.1/a"], "<url> must be an http or https URL, got 'ftp://127.0.0.1/a'"),
        (["download", "file:///etc/passwd"], "<url> must be an http or https URL, got 'file:///etc/passwd'"),
        (["download", "http://127.0.0.1/a", "-H", "no colon"], "--header must be 'Name: value', got 'no colon'"),
        (["download", "http://127.0.0.1/a", "--limit-rate", "fast"], "invalid value 'fast' for --limit-rate"),
        (["download", "http://127.0.0.1/a", "--limit-rate", "0"], "invalid value '0' for --limit-rate"),
        (["download", "http://127.0.0.1/a", "--retries", "101"], "--retries must be between 0 and 100, got 101"),
        (["download", "http://127.0.0.1/a", "-j", "0"], "--connections must be between 1 and 64, got 0"),
        (["download", "http://127.0.0.1/a", "-k"], "unknown option '-k'"),
        (
            ["download", "http://127.0.0.1/a", "--variant", "huge"],
            "--variant must be best, worst, a bandwidth such as 1500k, or WxH, got 'huge'"
        ),
        (
            ["download", "http://127.0.0.1/a", "--subs", "a b"],
            "--subs must be all, none, a language, languages (en,fr), name:NAME or role:ROLE, got 'a b'"
        ),
        (
            ["download", "http://127.0.0.1/a", "--live-duration", "-3"],
            "--live-duration must be a number of seconds above 0, got -3.0"
        ),
        (["download", "http://127.0.0.1/a", "--max-segments", "0"], "--max-segments must be at least 1, got 0"),
    ])
    func usageErrorsExit64(arguments: [String], message: String) async {
        let (code, output, error) = await run(arguments)
        #expect(code == .usage)
        #expect(output.isEmpty)
        #expect(error.hasPrefix("error: \(message)"), "stderr: \(error)")
    }

    @Test func ratesParseLikeCurl() {
        let cases: [(String, Int64?)] = [
            ("500k", 512_000), ("2M", 2_097_152), ("1.5m", 1_572_864), ("100000", 100_000), ("1G", 1_073_741_824),
            ("0", nil), ("-5k", nil), ("k", nil), ("2MB", nil), ("fast", nil), ("0.0001", nil),
        ]
        for (text, bytes) in cases { #expect(TransferRate(argument: text)?.bytesPerSecond == bytes, "\(text)") }
    }

    @Test func fileNamesFromURLsAreSanitized() {
        let cases = [
            ("http://h/a/b/video.mp4?x=1", "video.mp4"), ("http://h/", "download"), ("http://h", "download"),
            ("http://h/a/..", "download"), ("http://h/%2E%2E%2Fetc%2Fpasswd", "_etc_passwd"),
            ("http://h/.hidden", "hidden"), ("http://h/a%00b", "a_b"), ("http://h/caf%C3%A9.ts", "café.ts"),
            ("http://h/live/index.m3u8", "index.m3u8"),
        ]
        for (url, name) in cases { #expect(DownloadCommand.fileName(fromURL: url) == name, "\(url)") }
    }

    @Test(.requires(.nginx)) func downloadsToAFileAndPrintsWhereItWent() async throws {
        let fixture = try await DownloadFixture.make(size: 700_000)
        let target = fixture.directory.appendingPathComponent("out.bin")
        let (code, output, error) = await run([
            "download", fixture.nginx.url("file.bin").absoluteString, "-o", target.path,
        ])
        #expect(code == .success, "stderr: \(error)")
        #expect(output.hasPrefix("Saved \(target.path) (684 KB, "))
        #expect(error.hasPrefix("Downloading \(fixture.nginx.url("file.bin").absoluteString)\n  to \(target.path)\n"))
        #expect(try Data(contentsOf: target) == fixture.bytes)
        #expect(!FileManager.default.fileExists(atPath: target.path + ".streamkit-partial"))
        #expect(!FileManager.default.fileExists(atPath: target.path + ".streamkit-resume"))
        await fixture.nginx.stop()
    }

    @Test(.requires(.nginx)) func intoADirectoryTheNameComesFromTheURL() async throws {
        let fixture = try await DownloadFixture.make(size: 1000)
        let (code, _, _) = await run([
            "download", fixture.nginx.url("file.bin").absoluteString, "-o", fixture.directory.path,
        ])
        #expect(code == .success)
        #expect(try Data(contentsOf: fixture.directory.appendingPathComponent("file.bin")) == fixture.bytes)
        await fixture.nginx.stop()
    }

    @Test(.requires(.nginx)) func jsonModePrintsOnlyJSONLinesEndingWithTheResult() async throws {
        let fixture = try await DownloadFixture.make(size: 50_000)
        let target = fixture.directory.appendingPathComponent("j.bin")
        let url = fixture.nginx.url("file.bin").absoluteString
        let (code, output, error) = await run(["download", url, "-o", target.path, "--json", "-H", "X-Trace: 1"])
        #expect(code == .success)
        #expect(error.isEmpty)
        let objects = try output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.dropLast().allSatisfy { $0["event"] as? String == "progress" })
        let result = try #require(objects.last)
        #expect(result["event"] as? String == "result" && result["status"] as? String == "completed")
        #expect(result["bytes"] as? Int == 50_000 && result["path"] as? String == target.path)
        #expect(result["url"] as? String == url && result["resumedFrom"] as? Int == 0)
        await fixture.nginx.stop()
    }

    @Test(.requires(.nginx)) func aMissingFileExits1NamingTheURLAndStatus() async throws {
        let fixture = try await DownloadFixture.make(size: 10)
        let url = fixture.nginx.url("missing.bin").absoluteString
        let target = fixture.directory.appendingPathComponent("m.bin")
        let (code, output, error) = await run(["download", url, "-o", target.path])
        #expect(code == .failure)
        #expect(output.isEmpty)
        #expect(error.contains("error: unexpected status for \(url): HTTP 404 Not Found"), "stderr: \(error)")
        #expect(!FileManager.default.fileExists(atPath: target.path + ".streamkit-partial"))
        let (jsonCode, json, _) = await run(["download", url, "-o", target.path, "--json"])
        #expect(jsonCode == .failure)
        let result = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(result["status"] as? String == "failed" && result["httpStatus"] as? Int == 404)
        await fixture.nginx.stop()
    }

    @Test func headersAreSent() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(ScriptedTCPResponder.httpResponse(status: 200, headers: [("Content-Length", "2")], body: [1, 2])),
            .close,
        ])
        let target = try TestRun.makeTemporaryDirectory("headers").appendingPathComponent("h.bin")
        let (code, _, _) = await run([
            "download", responder.url("h").absoluteString, "-o", target.path, "-H", "Cookie: session=abc",
            "-H", "X-Trace:  7 ",
        ])
        #expect(code == .success)
        let head = try #require(responder.requests.first)
        #expect(head.contains("Cookie: session=abc\r\n") && head.contains("X-Trace: 7\r\n"))
        #expect(head.contains("User-Agent: streamkit/\(streamKitVersion)\r\n"))
        await responder.stop()
    }

    @Test(.requires(.nginx)) func aRefusedConnectionExits1AfterItsRetries() async throws {
        let refusing = try LocalNetwork.refusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let directory = try TestRun.makeTemporaryDirectory("refused")
        let (code, _, error) = await run([
            "download", "http://127.0.0.1:\(port)/x", "-o", directory.appendingPathComponent("x").path, "--retries",
            "0",
        ])
        #expect(code == .failure)
        #expect(error.contains("connect failed for http://127.0.0.1:\(port)/x"), "stderr: \(error)")
    }
}

/// A random file served by nginx from a fresh directory.
struct DownloadFixture {
    let directory: URL
    let bytes: Data
    let nginx: Nginx

    static func make(size: Int, limitRate: Int? = nil) async throws -> DownloadFixture {
        let directory = try TestRun.makeTemporaryDirectory("download")
        let root = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        let bytes = try handle.read(upToCount: size) ?? Data()
        try handle.close()
        try bytes.write(to: root.appendingPathComponent("file.bin"))
        let nginx = try await Nginx.static(root: root, limitRatePerConnection: limitRate)
        return DownloadFixture(directory: directory, bytes: bytes, nginx: nginx)
    }
}
