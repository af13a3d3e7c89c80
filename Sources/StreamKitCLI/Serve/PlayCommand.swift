import Foundation
import StreamKitHTTPClient
import StreamKitHTTPServer
import StreamKitMediaCache
import StreamKitMediaServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `streamkit play URL [--player mpv|ffplay|vlc|none]`: play through the caching proxy.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a URL through the caching proxy: seek anywhere, and play it again offline.",
        discussion: """
            Starts the caching proxy on 127.0.0.1 and opens the URL's local address in a player: --player, \
            else the first of mpv, ffplay and vlc that is installed. Everything the player reads is kept in \
            the cache ($STREAMKIT_HOME/cache), so what played once plays again without the network. HLS \
            playlists (.m3u8) go through /proxy/hls, which routes their segments, keys and maps through \
            the cache too. With --player none, or no player installed, it prints the local URL and serves \
            until Ctrl-C (exit 0). When the player exits, so does play.
            """,
        examples: [
            .init("Play a file with the first player found", "streamkit play https://example.com/talk.mp4"),
            .init(
                "Serve a stream for another player", "streamkit play https://example.com/show/index.m3u8 --player none"),
        ],
        group: "Playback")

    /// The players `play` can start.
    enum PlayerChoice: String, CaseIterable, ExpressibleByArgument, Decodable, Sendable {
        case mpv, ffplay, vlc, none

        /// The arguments that play `url` and end when it ends.
        func arguments(for url: String) -> [String] {
            switch self {
            case .mpv: ["--force-window=immediate", url]
            case .ffplay: ["-autoexit", "-hide_banner", url]
            case .vlc: ["--play-and-exit", url]
            case .none: []
            }
        }
    }

    @Argument(valueName: "url", help: "The http or https URL of a media file or an HLS playlist.")
    var url: String
    @Option(
        valueName: "player", help: "mpv, ffplay, vlc, or none to print the local URL (default: the first installed).")
    var player: PlayerChoice?
    @OptionGroup var home: HomeOptions
    @Option(name: "cache-limit", valueName: "size", help: CacheAccess.limitHelp) var cacheLimit: ByteSize?
    @Option(name: "cache-key", valueName: "mode", help: CacheAccess.keyHelp) var cacheKey: CacheKeyMode?
    @Option(help: "The port to listen on; 0 picks a free one.") var port = 0

    init() {}

    mutating func validate() throws {
        try URLCredentialCheck.refuseForCache(url)
        guard MediaCache.isFetchable(url) else {
            throw ValidationError("<url> must be an http or https URL, got '\(url)'")
        }
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port must be between 0 and 65535, got \(port)")
        }
    }

    func run(_ context: CommandContext) async throws {
        let home = home.path(context)
        // The player, before anything starts: a missing one is reported at once.
        let executable: (choice: PlayerChoice, path: String)?
        switch player {
        case .none?:
            executable = nil
        case let choice?:
            guard let path = Self.find(choice.rawValue, environment: context.environment) else {
                context.writeError("error: --player \(choice.rawValue): \(choice.rawValue) is not installed\n")
                throw ExitCode.failure
            }
            executable = (choice, path)
        case nil:
            executable =
                [PlayerChoice.mpv, .ffplay, .vlc].lazy
                .compactMap { choice in
                    Self.find(choice.rawValue, environment: context.environment).map { (choice, $0) }
                }
                .first
        }

        // The default destination policy, as serve's: the proxy answers any page of this machine.
        let cache = try CacheAccess.open(
            home: home, limit: cacheLimit, keys: cacheKey, destinations: DestinationPolicy(), context: context)
        let library = StreamKitHome.library(in: home)
        let server: MediaServer
        do {
            var configuration = MediaServer.Configuration(
                libraryRoot: library, http: HTTPServerConfiguration(host: "127.0.0.1", port: UInt16(port)), cache: cache
            )
            configuration.warmsUpProxy = true
            server = try MediaServer.start(configuration: configuration)
        } catch {
            await cache.shutdown()
            context.writeError("error: cannot serve on 127.0.0.1:\(port): \(error)\n")
            throw ExitCode.failure
        }
        let watcher = SignalWatcher()  // before the waits: a Ctrl-C meanwhile still stops cleanly
        defer { watcher.cancel() }
        await server.proxyWarmedUp()
        let isPlaylist = await Self.isPlaylist(url, cache: cache)
        let local = server.baseURL + ProxyRoutes.localPath(for: url, isPlaylist: isPlaylist).dropFirst()
        context.write("Playing \(url)\nLocal URL: \(local)\n")

        var outcome: ExitCode = .success
        if let executable {
            context.write("Starting \(executable.choice.rawValue). Press Ctrl-C to stop.\n")
            outcome = await Self.runPlayer(
                executable.path, arguments: executable.choice.arguments(for: local), signals: watcher.signals,
                name: executable.choice.rawValue, context: context)
        } else {
            context.write(
                (player == PlayerChoice.none ? "" : "No player found (mpv, ffplay, vlc). ")
                    + "Open the local URL in any player. Press Ctrl-C to stop.\n")
            for await _ in watcher.signals { break }
        }
        server.http.beginShutdown(gracePeriod: .seconds(2))
        await server.waitUntilStopped()
        await cache.shutdown()
        context.write("Stopped.\n")
        if outcome != .success { throw outcome }
    }

    /// Runs the player until it exits (its status decides the outcome) or a signal stops it (130).
    private static func runPlayer(
        _ path: String, arguments: [String], signals: AsyncStream<Int32>, name: String, context: CommandContext
    ) async -> ExitCode {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { process in
            exited.continuation.yield(process.terminationStatus)
            exited.continuation.finish()
        }
        do {
            try process.run()
        } catch {
            context.writeError("error: cannot start \(name) (\(path)): \(error)\n")
            return .failure
        }
        return await withTaskGroup(of: ExitCode?.self) { group in
            group.addTask {
                for await status in exited.stream {
                    if status == 0 { return .success }
                    context.writeError("error: \(name) exited with status \(status)\n")
                    return .failure
                }
                return .success
            }
            group.addTask {
                for await _ in signals {
                    if process.isRunning { kill(process.processIdentifier, SIGTERM) }
                    return .interrupted
                }
                return nil
            }
            var result: ExitCode = .success
            while let next = await group.next() {
                guard let code = next else { continue }
                result = code
                break
            }
            group.cancelAll()
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            return result
        }
    }

    /// Whether `url` is an HLS playlist: by its extension, else by the media type the cache or
    /// the origin gives.
    private static func isPlaylist(_ url: String, cache: MediaCache) async -> Bool {
        if ProxyPaths.looksLikePlaylist(url) { return true }
        let type = (try? await cache.metadata(for: url))?.mimeType?.lowercased() ?? ""
        return type.contains("mpegurl")
    }

    /// The executable `name` on `PATH`.
    static func find(_ name: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
