import StreamKitCLI
import Testing

/// Snapshot of the real root command's help; update it together with docs/CLI.md.
@Suite struct StreamKitHelpTests {
    @Test func rootHelpSnapshot() async {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: ["--help"], context: context)
        #expect(code == .success)
        #expect(
            context.output.text == """
                OVERVIEW: Take streaming media offline and hand it back to any player.

                StreamKit downloads HLS and DASH streams into local packages that play with no
                network, serves them from 127.0.0.1, caches progressive media as it plays, and
                records and publishes RTMP.

                USAGE: streamkit <command>

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.

                GETTING STARTED:
                  demo                    Show StreamKit working end to end on this machine,
                                          with no network.

                DOWNLOADS:
                  download                Download an HLS or DASH stream into a local package
                                          that plays offline, or a file; resumes when run again.
                  export                  Write a downloaded HLS or DASH package as one .ts,
                                          .mp4 or .mkv file.
                  queue                   Keep a persistent download queue: add, list, start,
                                          stop, remove, and run it.

                PLAYBACK:
                  serve                   Serve the library over HTTP for offline playback, and
                                          the caching proxy.
                  play                    Play a URL through the caching proxy: seek anywhere,
                                          and play it again offline.
                  cache                   List, preload, pin, remove or clear what the media
                                          cache holds.

                PLAYLISTS:
                  inspect                 Parse an HLS playlist or a DASH MPD and summarize it,
                                          or print it as JSON.

                LIVE STREAMS:
                  rtmp                    Record an RTMP stream to FLV, or publish FLV to an
                                          RTMP server.

                SHELL:
                  completions             Print a completion script for bash, zsh or fish.
                  manpage                 Print the manual page, streamkit.1, made from the help
                                          of every command.

                  See 'streamkit help <command>' for help on a command.

                EXAMPLES:
                  See everything work on this machine, offline:
                    streamkit demo
                  Summarize a playlist:
                    streamkit inspect index.m3u8
                  Keep an HLS stream for offline play:
                    streamkit download https://example.com/show/master.m3u8
                  Download a file, resuming if run again:
                    streamkit download https://example.com/talk.mp4 -o talk.mp4
                  Serve the library for offline playback:
                    streamkit serve --port 12345
                  Play a URL, caching it as it plays:
                    streamkit play https://example.com/talk.mp4
                  Record a live RTMP stream:
                    streamkit rtmp record rtmp://example.com/live/show -o show.flv

                """)
    }

    @Test func versionAndUnknownOption() async {
        let context = CommandContext.capturing()
        #expect(await CommandRunner.run(StreamKitCommand.self, arguments: ["--version"], context: context) == .success)
        #expect(context.output.text == "streamkit \(streamKitVersion)\n")
        let bad = CommandContext.capturing()
        #expect(await CommandRunner.run(StreamKitCommand.self, arguments: ["--frobnicate"], context: bad) == .usage)
        #expect(bad.errorOutput.text.hasPrefix("error: unknown option '--frobnicate'"))
    }

    /// The hint under a command group's list names a command that works: each group's help says
    /// `streamkit help GROUP <command>`, and that command shows the subcommand's help.
    @Test(arguments: [("queue", "add"), ("cache", "list"), ("rtmp", "record")])
    func theHintUnderACommandListWorks(group: String, command: String) async {
        let list = CommandContext.capturing()
        #expect(
            await CommandRunner.run(StreamKitCommand.self, arguments: [group, "--help"], context: list) == .success)
        #expect(list.output.text.contains("See 'streamkit help \(group) <command>' for help on a command."))
        let help = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: ["help", group, command], context: help)
        #expect(code == .success)
        #expect(help.output.text.contains("USAGE: streamkit \(group) \(command)"), "\(help.errorOutput.text)")
    }
}
