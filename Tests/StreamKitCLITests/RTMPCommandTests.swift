import StreamKitCLI
import Testing

/// Help snapshots and usage exit codes of `streamkit rtmp`; the commands against real servers
/// are tested in RTMPTests.
@Suite struct RTMPCommandTests {
    private func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        await CommandRunner.runCapturing(arguments: arguments)
    }

    @Test func groupHelpSnapshot() async {
        let (code, output, _) = await run(["rtmp", "--help"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: Record an RTMP stream to FLV, or publish FLV to an RTMP server.

                USAGE: streamkit rtmp <command>

                OPTIONS:
                  -h, --help              Show help information.

                COMMANDS:
                  record                  Record a live RTMP stream to an FLV file, an HLS
                                          package, or both.
                  publish                 Publish an FLV file to an RTMP server.

                  See 'streamkit help rtmp <command>' for help on a command.

                EXAMPLES:
                  Record 60 seconds of a live stream:
                    streamkit rtmp record rtmp://example.com/live/show -o show.flv --duration 60
                  Publish a file at its own pace:
                    streamkit rtmp publish show.flv rtmp://example.com/live/show --realtime

                """)
    }

    @Test func recordHelpSnapshot() async {
        let (code, output, _) = await run(["help", "rtmp", "record"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: Record a live RTMP stream to an FLV file, an HLS package, or both.

                The file starts with the stream's metadata and sequence headers, then media from
                the first keyframe, with timestamps starting at zero. It is written as
                OUT.flv.part and renamed to OUT.flv with the first media; an existing OUT.flv is
                refused unless --overwrite, and nothing is left when no media arrives. Recording
                stops after --duration seconds of media, when the server ends the stream, or
                when no media arrives for --idle-timeout seconds. A dropped connection is
                reopened (--reconnect times in a row, waiting 1 s, then 2, 4, up to 30 s) and
                the file continues. Exit code 0 when media was recorded, however the stream
                ended; 2 when it ended before --duration; 1 when nothing was recorded; Ctrl-C
                stops it with a complete file (130).

                --hls DIR also writes the stream as an HLS package while it records (H.264 or
                HEVC, AAC; MPEG-TS segments cut at the first keyframe after --segment-duration),
                laid out as a download: DIR/index.m3u8, DIR/video/index.m3u8 rewritten after
                each segment, EXT-X-ENDLIST when the recording ends. --library puts the package
                in the library ($STREAMKIT_HOME/library/ID) instead, where `streamkit serve`
                lists it as recording from its first segment and serves it live; `streamkit
                export ID` exports it. -o may then be left out.

                USAGE: streamkit rtmp record <rtmp-url> [--output <out.flv>] [--hls <dir>]
                       [--library] [--segment-duration <seconds>] [--duration <seconds>]
                       [--idle-timeout <seconds>] [--reconnect <n>] [--reconnect-forever]
                       [--overwrite] [--digest-handshake] [--enhanced-codecs <fourccs>]
                       [--ca-file <path>] [--insecure] [--json] [--home <dir>]

                ARGUMENTS:
                  <rtmp-url>              The stream:
                                          rtmp[s]://host[:port]/app[/instance]/stream[?query].

                OPTIONS:
                  -o, --output <out.flv>  The FLV file to write.
                  --hls <dir>             Also write an HLS package into this folder while
                                          recording.
                  --library               Write the HLS package into the library, served live by
                                          `streamkit serve`.
                  --segment-duration <seconds>
                                          The HLS segment length aimed at (cut at the next
                                          keyframe). (default: 4.0)
                  --duration <seconds>    Stop after this many seconds of media.
                  --idle-timeout <seconds>
                                          Stop when no media arrives for this long. (default:
                                          10.0)
                  --reconnect <n>         Reopen a dropped connection up to this many times in a
                                          row. (default: 1)
                  --reconnect-forever     Reopen a dropped connection however many times it
                                          takes.
                  --overwrite             Replace an existing output file.
                  --digest-handshake      Use the Flash Player 9 digest handshake.
                  --enhanced-codecs <fourccs>
                                          Also announce these Enhanced RTMP codecs in connect
                                          (comma-separated: hvc1, av01, vp09, avc1, Opus, fLaC,
                                          ac-3, ec-3, .mp3, mp4a). publish always announces
                                          those its file uses; record announces none without
                                          this.
                  --ca-file <path>        For rtmps://, also trust the CA certificates in this
                                          PEM file.
                  --insecure              For rtmps://, accept the server's certificate without
                                          verifying it.
                  --json                  Print progress and the result as JSON lines.
                  --home <dir>            StreamKit's data (default: $STREAMKIT_HOME,
                                          $XDG_DATA_HOME/streamkit, ~/.local/share/streamkit).
                  -h, --help              Show help information.

                EXAMPLES:
                  Record until the stream ends:
                    streamkit rtmp record rtmp://example.com/live/show -o show.flv
                  Record 30 seconds:
                    streamkit rtmp record rtmp://example.com/live/show -o show.flv --duration 30
                  Record into the library as live HLS:
                    streamkit rtmp record rtmp://example.com/live/show --library

                """)
    }

    @Test func publishHelpSnapshot() async {
        let (code, output, _) = await run(["rtmp", "publish", "-h"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: Publish an FLV file to an RTMP server.

                Metadata and sequence headers are sent first. With --realtime, tags are paced by
                their timestamps, as a live source would send them; without it, as fast as the
                server reads.

                USAGE: streamkit rtmp publish <in.flv> <rtmp-url> [--realtime]
                       [--digest-handshake] [--enhanced-codecs <fourccs>] [--ca-file <path>]
                       [--insecure] [--json]

                ARGUMENTS:
                  <in.flv>                The FLV file to publish.
                  <rtmp-url>              Where to publish:
                                          rtmp[s]://host[:port]/app[/instance]/stream[?query].

                OPTIONS:
                  --realtime              Send at the pace of the file's timestamps.
                  --digest-handshake      Use the Flash Player 9 digest handshake.
                  --enhanced-codecs <fourccs>
                                          Also announce these Enhanced RTMP codecs in connect
                                          (comma-separated: hvc1, av01, vp09, avc1, Opus, fLaC,
                                          ac-3, ec-3, .mp3, mp4a). publish always announces
                                          those its file uses; record announces none without
                                          this.
                  --ca-file <path>        For rtmps://, also trust the CA certificates in this
                                          PEM file.
                  --insecure              For rtmps://, accept the server's certificate without
                                          verifying it.
                  --json                  Print progress and the result as JSON lines.
                  -h, --help              Show help information.

                EXAMPLES:
                  Publish as fast as possible:
                    streamkit rtmp publish show.flv rtmp://example.com/live/show
                  Publish as a live stream:
                    streamkit rtmp publish show.flv rtmp://example.com/live/show --realtime

                """)
    }

    @Test(arguments: [
        (["rtmp", "record", "http://h/live/s", "-o", "x.flv"], "invalid <rtmp-url>: scheme 'http' is not supported"),
        (
            ["rtmp", "record", "rtmp://h/live", "-o", "x.flv"],
            "invalid <rtmp-url>: no stream name after the application"
        ),
        (["rtmp", "record", "rtmp://h/live/s"], "nothing to write: give -o FILE, --hls DIR or --library"),
        (["rtmp", "record", "rtmp://h/live/s", "--hls", "d", "--library"], "--hls and --library are exclusive"),
        (
            ["rtmp", "record", "rtmp://h/live/s", "--hls", "d", "--segment-duration", "0.1"],
            "--segment-duration must be at least 0.5"
        ),
        (["rtmp", "record", "rtmp://h/live/s", "-o", "x.flv", "--duration", "0"], "--duration must be positive"),
        (
            ["rtmp", "record", "rtmp://h/live/s", "-o", "x.flv", "--duration", "soon"],
            "invalid value 'soon' for --duration"
        ),
        (
            ["rtmp", "record", "rtmp://h/live/s", "-o", "x.flv", "--idle-timeout", "-1"],
            "--idle-timeout must be positive"
        ),
        (
            ["rtmp", "record", "rtmps://h/live/s", "-o", "x.flv", "--ca-file", "/nonexistent/ca.pem"],
            "--ca-file /nonexistent/ca.pem: no such file"
        ),
        (
            ["rtmp", "publish", "in.flv", "rtmps://h/live/s", "--ca-file", "ca.pem", "--insecure"],
            "--ca-file and --insecure contradict each other"
        ),
        (["rtmp", "publish", "in.flv"], "missing argument <rtmp-url>"),
        (["rtmp", "publish", "in.flv", "rtmp://h:70000/live/s"], "invalid <rtmp-url>: bad port '70000'"),
        (["rtmp", "stream"], "unknown command 'stream'"),
        (
            ["rtmp", "publish", "in.flv", "rtmp://h/live/s", "--enhanced-codecs", "hvc1,hevc"],
            "--enhanced-codecs: 'hvc1,hevc' names a codec that is not one of hvc1, av01"
        ),
    ])
    func usageErrorsExit64(_ arguments: [String], _ message: String) async {
        let (code, output, error) = await run(arguments)
        #expect(code == .usage)
        #expect(output.isEmpty)
        #expect(error.hasPrefix("error: \(message)"), "\(error)")
        #expect(error.contains("usage: streamkit rtmp"))
    }

    /// A file that is not there fails with exit code 1 before any connection is made, naming the file.
    @Test func missingInputFileExits1() async {
        let (code, _, error) = await run(["rtmp", "publish", "/nonexistent/in.flv", "rtmp://127.0.0.1:1/live/s"])
        #expect(code == .failure)
        #expect(error.contains("/nonexistent/in.flv") && error.contains("No such file"), "\(error)")
    }
}
