import Foundation
import StreamKitCLI
import StreamKitCore
import StreamKitMediaCache
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `streamkit play`, `streamkit cache` and `serve --cache-limit`: help, exit codes, the real
/// process serving a player, and an index that survives SIGKILL claiming nothing not on disk.
@Suite struct CacheCommandTests {
    private func run(_ arguments: [String], home: URL? = nil) async -> (ExitCode, String, String) {
        await CommandRunner.runCapturing(
            arguments: arguments, environment: home.map { ["STREAMKIT_HOME": $0.path] } ?? [:])
    }

    @Test func playHelpSnapshot() async {
        let (code, output, _) = await run(["play", "--help"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: Play a URL through the caching proxy: seek anywhere, and play it again
                offline.

                Starts the caching proxy on 127.0.0.1 and opens the URL's local address in a
                player: --player, else the first of mpv, ffplay and vlc that is installed.
                Everything the player reads is kept in the cache ($STREAMKIT_HOME/cache), so
                what played once plays again without the network. HLS playlists (.m3u8) go
                through /proxy/hls, which routes their segments, keys and maps through the cache
                too. With --player none, or no player installed, it prints the local URL and
                serves until Ctrl-C (exit 0). When the player exits, so does play.

                USAGE: streamkit play <url> [--player <player>] [--home <dir>]
                       [--cache-limit <size>] [--cache-key <mode>] [--port <port>]

                ARGUMENTS:
                  <url>                   The http or https URL of a media file or an HLS
                                          playlist.

                OPTIONS:
                  --player <player>       mpv, ffplay, vlc, or none to print the local URL
                                          (default: the first installed).
                  --home <dir>            StreamKit's data (default: $STREAMKIT_HOME,
                                          $XDG_DATA_HOME/streamkit, ~/.local/share/streamkit).
                  --cache-limit <size>    The cache's byte cap, remembered for later commands
                                          (default: 1G).
                  --cache-key <mode>      How cache entries are named, remembered for later
                                          commands: url (default), signed (without token,
                                          Expires, Signature and the like), or ignore:NAME,NAME
                                          (without those query parameters).
                  --port <port>           The port to listen on; 0 picks a free one. (default:
                                          0)
                  -h, --help              Show help information.

                EXAMPLES:
                  Play a file with the first player found:
                    streamkit play https://example.com/talk.mp4
                  Serve a stream for another player:
                    streamkit play https://example.com/show/index.m3u8 --player none

                """)
        let (_, viaHelp, _) = await run(["help", "play"])
        #expect(viaHelp == output)
    }

    @Test func cacheHelpSnapshots() async {
        let (code, output, _) = await run(["cache", "--help"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: List, preload, pin, remove or clear what the media cache holds.

                The cache ($STREAMKIT_HOME/cache) keeps the bytes that played through `streamkit
                play` and the proxy of `streamkit serve`, so that they play again without the
                network. It is apart from the library: downloads are never in it.

                USAGE: streamkit cache <command>

                OPTIONS:
                  -h, --help              Show help information.

                COMMANDS:
                  list                    List the cache's entries, most recently used first.
                  preload                 Cache the start of a URL ahead of playback.
                  pin                     Keep one URL's cached bytes: never evicted, and
                                          outside the cap (until unpinned).
                  unpin                   Let one pinned URL's cached bytes be evicted again.
                  rm                      Remove one URL's entry from the cache, with its file.
                  clear                   Remove every entry from the cache, pinned ones
                                          included.

                  See 'streamkit help cache <command>' for help on a command.

                EXAMPLES:
                  List the cache:
                    streamkit cache list
                  Forget one URL:
                    streamkit cache rm https://example.com/talk.mp4
                  Empty the cache:
                    streamkit cache clear

                """)
        let (_, list, _) = await run(["cache", "list", "--help"])
        #expect(
            list == """
                OVERVIEW: List the cache's entries, most recently used first.

                Each entry shows the bytes cached, the length, the share cached, whether it is
                pinned, when it was last used, and its URL; the most recently used 100 by
                default, then the number and bytes of all entries. Works while another streamkit
                process uses the cache (bytes that process has not yet recorded are not
                counted).

                USAGE: streamkit cache list [--home <dir>] [--json] [--limit <count>] [--all]

                OPTIONS:
                  --home <dir>            StreamKit's data (default: $STREAMKIT_HOME,
                                          $XDG_DATA_HOME/streamkit, ~/.local/share/streamkit).
                  --json                  Print one JSON object per entry, then a summary
                                          object.
                  --limit <count>         List the most recently used COUNT entries (default
                                          100).
                  --all                   List every entry.
                  -h, --help              Show help information.

                EXAMPLES:
                  List the entries:
                    streamkit cache list
                  As JSON lines:
                    streamkit cache list --json
                  Every entry:
                    streamkit cache list --all

                """)
        let (_, remove, _) = await run(["help", "cache", "rm"])
        #expect(
            remove == """
                OVERVIEW: Remove one URL's entry from the cache, with its file.

                USAGE: streamkit cache rm <url> [--home <dir>]

                ARGUMENTS:
                  <url>                   The URL whose cached bytes to remove.

                OPTIONS:
                  --home <dir>            StreamKit's data (default: $STREAMKIT_HOME,
                                          $XDG_DATA_HOME/streamkit, ~/.local/share/streamkit).
                  -h, --help              Show help information.

                EXAMPLES:
                  Forget a file:
                    streamkit cache rm https://example.com/talk.mp4

                """)
        let (_, clear, _) = await run(["cache", "clear", "-h"])
        #expect(clear.hasPrefix("OVERVIEW: Remove every entry from the cache, pinned ones included.\n"))
        let (_, preload, _) = await run(["cache", "preload", "--help"])
        #expect(preload.contains("USAGE: streamkit cache preload <url> [--bytes <size>] [--seconds <seconds>]"))
    }

    @Test(arguments: [
        (["play", "file:///etc/passwd"], "<url> must be an http or https URL, got 'file:///etc/passwd'", "play"),
        (["play", "https://a.example/x.mp4", "--player", "winamp"], "invalid value 'winamp' for --player", "play"),
        (
            ["play", "https://a.example/x.mp4", "--port", "70000"], "--port must be between 0 and 65535, got 70000",
            "play"
        ),
        (["play"], "missing argument <url>", "play"),
        (
            ["cache", "preload", "gopher://a.example/"],
            "<url> must be an http or https URL, got 'gopher://a.example/'",
            "cache preload"
        ),
        (
            ["cache", "preload", "https://a.example/a", "--bytes", "lots"], "invalid value 'lots' for --bytes",
            "cache preload"
        ),
        (
            ["cache", "preload", "https://a.example/a", "--bytes", "1M", "--seconds", "3"],
            "--bytes and --seconds cannot be used together", "cache preload"
        ),
        (["cache", "rm"], "missing argument <url>", "cache rm"),
        (["cache", "list", "--limit", "0"], "--limit must be at least 1, got 0", "cache list"),
        (["cache", "list", "--limit", "5", "--all"], "give --limit or --all, not both", "cache list"),
        (["cache", "frobnicate"], "unknown command 'frobnicate'", "cache"),
        (["serve", "--cache-limit", "0"], "invalid value '0' for --cache-limit", "serve"),
    ])
    func usageErrorsExit64(arguments: [String], message: String, command: String) async {
        let (code, output, error) = await run(arguments)
        #expect(code == .usage)
        #expect(output.isEmpty)
        #expect(error.hasPrefix("error: \(message)"), "stderr was: \(error)")
        #expect(error.contains("usage: streamkit \(command)"), "stderr was: \(error)")
    }

    @Test func sizesParseAsCurlDoes() {
        #expect(ByteSize(argument: "500M")?.bytes == 500 << 20)
        #expect(ByteSize(argument: "2G")?.bytes == 2 << 30)
        #expect(ByteSize(argument: "1GiB")?.bytes == 1 << 30)
        #expect(ByteSize(argument: "800MB")?.bytes == 800 << 20)
        #expect(ByteSize(argument: "1.5g")?.bytes == 3 << 29)
        #expect(ByteSize(argument: "100000")?.bytes == 100_000)
        for bad in ["", "0", "-1", "G", "1X", "1.2.3M", "abc"] { #expect(ByteSize(argument: bad) == nil, "\(bad)") }
    }

    @Test func listingAnEmptyCache() async throws {
        let home = try TestRun.makeTemporaryDirectory("home-empty")
        let (code, output, _) = await run(["cache", "list"], home: home)
        #expect(code == .success)
        #expect(output == "The cache is empty (\(home.path)/cache).\n")
        let (_, json, _) = await run(["cache", "list", "--json"], home: home)
        #expect(
            json
                == "{\"cachedBytes\":0,\"directory\":\"\(home.path)/cache\",\"entries\":0,\"event\":\"result\",\"limit\":1073741824}\n"
        )
    }

    @Test(.requires(.nginx)) func preloadListRemoveAndClear() async throws {
        let root = try TestRun.makeTemporaryDirectory("cli-origin")
        let content = (0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try Data(content).write(to: root.appendingPathComponent("a.mp4"))
        try Data(content.prefix(1000)).write(to: root.appendingPathComponent("b.ts"))
        let nginx = try await Nginx.static(root: root)
        let home = try TestRun.makeTemporaryDirectory("home")
        let a = nginx.url("a.mp4").absoluteString
        let b = nginx.url("b.ts").absoluteString

        let (preloaded, preloadOutput, preloadError) = await run(
            ["cache", "preload", a, "--bytes", "100000", "--cache-limit", "50M"], home: home)
        #expect(preloaded == .success, "\(preloadError)")
        #expect(preloadOutput == "Cached 97.7 KB of \(a).\n")
        #expect(await run(["cache", "preload", b], home: home).0 == .success)

        let (listed, list, _) = await run(["cache", "list"], home: home)
        #expect(listed == .success)
        let lines = list.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("CACHED    SIZE      %       PINNED  LAST USED         URL"))
        #expect(lines[1].hasPrefix("1000 B    1000 B    100.0%  no      "))
        #expect(lines[1].hasSuffix(b))
        #expect(lines[2].hasPrefix("97.7 KB   391 KB    25.0%   no      "))
        #expect(lines[3] == "2 entries, 98.6 KB cached (limit 50.0 MB, \(home.path)/cache).", "the limit is remembered")

        let (_, json, _) = await run(["cache", "list", "--json"], home: home)
        let objects = try json.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
        #expect(objects.count == 3)
        #expect(objects[1]["url"] as? String == a)
        #expect(objects[1]["length"] as? Int == 400_000)
        #expect(objects[1]["cachedBytes"] as? Int == 100_000)
        #expect(objects[1]["cachedPercent"] as? Double == 25)
        #expect(objects[2]["event"] as? String == "result")
        #expect(objects[2]["listed"] == nil, "every entry listed")

        // The most recent first, and what was left out counted.
        let (_, limited, _) = await run(["cache", "list", "--limit", "1"], home: home)
        let limitedLines = limited.split(separator: "\n").map(String.init)
        #expect(limitedLines.count == 4)
        #expect(limitedLines[1].hasSuffix(b))
        #expect(limitedLines[2] == "… and 1 more, less recently used (--all lists every entry).")
        #expect(limitedLines[3] == lines[3])
        #expect(await run(["cache", "list", "--all"], home: home).1 == list)
        let (_, limitedJSON, _) = await run(["cache", "list", "--limit", "1", "--json"], home: home)
        let limitedObjects = try limitedJSON.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
        #expect(limitedObjects.count == 2)
        #expect(limitedObjects[0]["url"] as? String == b)
        #expect(limitedObjects[1]["entries"] as? Int == 2)
        #expect(limitedObjects[1]["listed"] as? Int == 1)

        let (removed, removeOutput, _) = await run(["cache", "rm", a], home: home)
        #expect(removed == .success)
        #expect(removeOutput == "Removed \(a) from the cache.\n")
        let (again, _, againError) = await run(["cache", "rm", a], home: home)
        #expect(again == .failure)
        #expect(againError == "error: \(a) is not in the cache\n")
        let (cleared, clearOutput, _) = await run(["cache", "clear"], home: home)
        #expect(cleared == .success)
        #expect(clearOutput == "Removed 1 entry (1000 B) from the cache.\n")
        #expect(await run(["cache", "list"], home: home).1.hasPrefix("The cache is empty"))
        let (failed, _, failure) = await run(["cache", "preload", nginx.url("missing.mp4").absoluteString], home: home)
        #expect(failed == .failure)
        #expect(failure.contains("HTTP 404"), "\(failure)")
        await nginx.stop()
    }
}

extension CacheCommandTests {
    /// `--cache-key signed`: a newly signed URL of a cached file is found in the cache (one entry,
    /// one fetch); the mode is remembered for later commands, `cache rm` included. A bad mode is a
    /// usage error.
    @Test(.requires(.nginx)) func signedURLsShareOneEntryFromTheCommandLine() async throws {
        let root = try TestRun.makeTemporaryDirectory("cli-signed")
        try Data(randomBytes(50_000)).write(to: root.appendingPathComponent("a.mp4"))
        let nginx = try await Nginx.static(root: root)
        let home = try TestRun.makeTemporaryDirectory("home")
        let first = nginx.url("a.mp4").absoluteString + "?token=abc&Expires=1"
        let second = nginx.url("a.mp4").absoluteString + "?token=xyz&Expires=2"
        let (code, _, error) = await run(["cache", "preload", first, "--cache-key", "signed"], home: home)
        #expect(code == .success, "\(error)")
        let fetched = try await nginx.settledAccessLogCount()
        let (again, output, _) = await run(["cache", "preload", second], home: home)
        #expect(again == .success)
        #expect(output.contains("Cached 48.8 KB"), "\(output)")
        #expect(try await nginx.settledAccessLogCount() == fetched, "the newly signed URL was fetched again")
        let (_, list, _) = await run(["cache", "list"], home: home)
        #expect(list.contains("1 entry"), "\(list)")
        #expect(
            await run(["cache", "rm", nginx.url("a.mp4").absoluteString + "?token=other"], home: home).0 == .success)
        #expect(await run(["cache", "list"], home: home).1.hasPrefix("The cache is empty"))
        let (bad, _, badError) = await run(["cache", "preload", first, "--cache-key", "maybe"], home: home)
        #expect(bad == .usage && badError.contains("--cache-key"), "\(badError)")
        #expect(CacheKeyMode(argument: "ignore:sig, exp")?.description == "ignore:sig,exp")
        #expect(CacheKeyMode(argument: "ignore:") == nil)
        await nginx.stop()
    }
}

extension CacheCommandTests {
    /// `cache pin`: a pinned entry survives what would evict it (it is outside the cap); `cache
    /// unpin` lets it go again; unpinning what is not pinned is exit 1.
    @Test(.requires(.nginx)) func pinnedEntriesSurviveEvictionUntilUnpinned() async throws {
        let root = try TestRun.makeTemporaryDirectory("cli-pin")
        for name in ["a.mp4", "b.mp4", "c.mp4"] {
            try Data(randomBytes(100_000)).write(to: root.appendingPathComponent(name))
        }
        let nginx = try await Nginx.static(root: root)
        let home = try TestRun.makeTemporaryDirectory("home")
        let (a, b, c) = (
            nginx.url("a.mp4").absoluteString, nginx.url("b.mp4").absoluteString, nginx.url("c.mp4").absoluteString
        )
        #expect(await run(["cache", "preload", a, "--cache-limit", "150K"], home: home).0 == .success)
        let (pinned, pinOutput, pinError) = await run(["cache", "pin", a], home: home)
        #expect(pinned == .success && pinOutput == "Pinned \(a): it is never evicted.\n", "\(pinError)")
        #expect(await run(["cache", "preload", b], home: home).0 == .success)
        var list = await run(["cache", "list"], home: home).1
        #expect(list.contains("yes") && list.contains(a) && list.contains(b), "\(list)")
        #expect(await run(["cache", "unpin", a], home: home).0 == .success)
        #expect(await run(["cache", "preload", c], home: home).0 == .success)
        list = await run(["cache", "list"], home: home).1
        #expect(!list.contains(a) && list.contains(c), "unpinned, a is evicted like any other: \(list)")
        let (again, _, againError) = await run(["cache", "unpin", a], home: home)
        #expect(again == .failure && againError == "error: \(a) is not pinned\n")
        await nginx.stop()
    }
}

/// The real `streamkit` process: `play` serving a player, and SIGKILL while writing.
@Suite(.requires(.nginx, .curl)) struct CacheProcessTests {
    private struct Running {
        let process: ChildProcess
        let localURL: String
    }

    /// Starts `streamkit play URL ...` and waits for its local URL.
    private func play(_ arguments: [String], home: URL, path: String? = nil) async throws -> Running {
        var environment = ["STREAMKIT_HOME": home.path]
        if let path { environment["PATH"] = path }
        let process = try ChildProcess(
            executable: try BuiltProducts.executable("streamkit"), arguments: ["play"] + arguments,
            environment: environment, logName: "streamkit-play")
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            // Liveness first, output second: a play whose player ended at once has still printed it.
            let running = process.isRunning
            if let line = process.standardOutput.split(separator: "\n").first(where: { $0.hasPrefix("Local URL: ") }) {
                return Running(process: process, localURL: String(line.dropFirst("Local URL: ".count)))
            }
            guard running else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestSupportError("play did not start: \(process.standardOutput)\n\(process.standardError)")
    }

    private func get(_ url: String) async throws -> RawHTTPResponse {
        let components = try #require(URLComponents(string: url))
        let port = UInt16(try #require(components.port))
        let target = components.percentEncodedPath + "?" + (components.percentEncodedQuery ?? "")
        return try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            return try connection.readResponse()
        }
    }

    @Test func playWithoutAPlayerServesThePrintedURLUntilCtrlC() async throws {
        let root = try TestRun.makeTemporaryDirectory("play-origin")
        let content = (0..<250_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try Data(content).write(to: root.appendingPathComponent("talk.mp4"))
        let nginx = try await Nginx.static(root: root)
        let home = try TestRun.makeTemporaryDirectory("play-home")
        let url = nginx.url("talk.mp4").absoluteString

        let running = try await play([url, "--player", "none"], home: home)
        #expect(running.localURL.contains("/proxy/file?url="))
        #expect(running.process.standardOutput.contains("Open the local URL in any player. Press Ctrl-C to stop.\n"))
        let response = try await get(running.localURL)
        #expect(response.status == 200)
        #expect(response.body == content)

        // While it runs the cache is its own: another command cannot change it, but can list it.
        let context = CommandContext.capturing(environment: ["STREAMKIT_HOME": home.path])
        #expect(
            await CommandRunner.run(StreamKitCommand.self, arguments: ["cache", "clear"], context: context) == .failure)
        #expect(context.errorOutput.text.contains("another process (pid \(running.process.pid)) has the cache open"))
        let listing = CommandContext.capturing(environment: ["STREAMKIT_HOME": home.path])
        #expect(
            await CommandRunner.run(StreamKitCommand.self, arguments: ["cache", "list"], context: listing) == .success)

        running.process.signal(SIGINT)
        #expect(try await running.process.wait(timeout: .seconds(10)) == 0)
        #expect(running.process.standardOutput.hasSuffix("Stopped.\n"))
        // Played once, it plays again with the origin gone.
        await nginx.stop()
        let offline = try await play([url, "--player", "none"], home: home)
        #expect(try await get(offline.localURL).body == content)
        offline.process.signal(SIGTERM)
        #expect(try await offline.process.wait(timeout: .seconds(10)) == 0)
    }

    @Test func playLaunchesTheFirstInstalledPlayerAndEndsWithIt() async throws {
        let root = try TestRun.makeTemporaryDirectory("player-origin")
        let content = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 5) }
        try Data(content).write(to: root.appendingPathComponent("song.mp3"))
        let nginx = try await Nginx.static(root: root)
        let home = try TestRun.makeTemporaryDirectory("player-home")
        // A stand-in for mpv, first on PATH: it fetches what it is told to play, with curl.
        let bin = try TestRun.makeTemporaryDirectory("fake-players")
        let received = bin.appendingPathComponent("received.mp3")
        let script = "#!/bin/sh\nfor last; do :; done\nexec curl -s -o '\(received.path)' \"$last\"\n"
        let mpv = bin.appendingPathComponent("mpv")
        try script.write(to: mpv, atomically: true, encoding: .utf8)
        #expect(chmod(mpv.path, 0o755) == 0)

        let running = try await play(
            [nginx.url("song.mp3").absoluteString], home: home,
            path: bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"))
        #expect(try await running.process.wait(timeout: .seconds(20)) == 0)
        #expect(running.process.standardOutput.contains("Starting mpv."))
        #expect(try Data(contentsOf: received) == Data(content))
        await nginx.stop()
    }

    @Test func aProcessKilledWhileWritingLeavesAnIndexClaimingOnlyWhatIsOnDisk() async throws {
        let root = try TestRun.makeTemporaryDirectory("kill-origin")
        // 12 MB made off the cooperative pool at low priority (a debug build is slow at per-byte work).
        let content = try await runInBackground {
            let content = (0..<(12 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) }
            try Data(content).write(to: root.appendingPathComponent("long.ts"))
            return content
        }
        // 2 MB/s: the preload takes several seconds, and is killed in the middle.
        let nginx = try await Nginx.static(root: root, limitRatePerConnection: 2_000_000)
        let home = try TestRun.makeTemporaryDirectory("kill-home")
        let url = nginx.url("long.ts").absoluteString
        let directory = home.appendingPathComponent("cache").path
        let process = try ChildProcess(
            executable: try BuiltProducts.executable("streamkit"), arguments: ["cache", "preload", url],
            environment: ["STREAMKIT_HOME": home.path], logName: "streamkit-preload")
        // Wait until the index claims something (claims come every half second of writing).
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let entry = try? MediaCache.entries(inDirectory: directory).first, entry.cachedBytes > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(process.isRunning, "killed mid-transfer: \(process.standardOutput)\(process.standardError)")
        process.signal(SIGKILL)
        _ = try await process.wait(timeout: .seconds(10))
        await nginx.stop()

        let entry = try #require(try MediaCache.entries(inDirectory: directory).first)
        let claimed = entry.spans
        #expect(claimed.byteCount > 0)
        #expect(claimed.byteCount < Int64(content.count), "the kill came before the end")
        let file = try Data(contentsOf: URL(fileURLWithPath: directory + "/data/" + (try #require(entry.fileName))))
        for span in claimed.ranges {
            #expect(span.upperBound <= Int64(file.count), "claimed \(span) but the file has \(file.count) bytes")
            guard span.upperBound <= Int64(file.count) else { continue }
            #expect(
                file[Int(span.lowerBound)..<Int(span.upperBound)]
                    == Data(content[Int(span.lowerBound)..<Int(span.upperBound)]),
                "the claimed bytes \(span) are the origin's")
        }
        // Opening it finds nothing to repair.
        let cache = try MediaCache(configuration: MediaCacheConfiguration(directory: directory))
        #expect(cache.entry(for: url)?.spans == claimed)
        #expect(cache.repairs.isEmpty)
        await cache.shutdown()
    }
}
