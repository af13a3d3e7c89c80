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

                StreamKit downloads HLS streams into local packages that play with no network, serves them
                from 127.0.0.1, caches progressive media as it plays, and records and publishes RTMP.

                USAGE: streamkit <command>

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.

                PLAYBACK:
                  serve                   Serve the library over HTTP for offline playback.

                  See 'streamkit help <command>' for help on a command.

                EXAMPLES:
                  Show the version:
                    streamkit --version

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
}
