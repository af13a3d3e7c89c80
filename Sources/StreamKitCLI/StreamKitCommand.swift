/// The version printed by `streamkit --version`.
public let streamKitVersion = "0.1.0"

/// `streamkit`: the root command. Its subcommands are the jobs; each lives in its own file.
public struct StreamKitCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "streamkit",
        abstract: "Take streaming media offline and hand it back to any player.",
        discussion: """
            StreamKit downloads HLS and DASH streams into local packages that play with no network, serves them \
            from 127.0.0.1, caches progressive media as it plays, and records and publishes RTMP.
            """,
        examples: [
            .init("See everything work on this machine, offline", "streamkit demo"),
            .init("Summarize a playlist", "streamkit inspect index.m3u8"),
            .init(
                "Keep an HLS stream for offline play", "streamkit download https://example.com/show/master.m3u8"),
            .init(
                "Download a file, resuming if run again", "streamkit download https://example.com/talk.mp4 -o talk.mp4"),
            .init("Serve the library for offline playback", "streamkit serve --port 12345"),
            .init("Play a URL, caching it as it plays", "streamkit play https://example.com/talk.mp4"),
            .init("Record a live RTMP stream", "streamkit rtmp record rtmp://example.com/live/show -o show.flv"),
        ],
        subcommands: [
            DemoCommand.self, DownloadCommand.self, ExportCommand.self, QueueCommand.self, ServeCommand.self,
            PlayCommand.self, CacheCommand.self, InspectCommand.self, RTMPCommand.self, CompletionsCommand.self,
            ManpageCommand.self,
        ],
        version: "streamkit \(streamKitVersion)")

    public init() {}
}
