import Foundation
import StreamKitDownloads
import StreamKitHTTPClient
import StreamKitHTTPServer
import StreamKitMediaCache
import StreamKitMediaServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `streamkit serve`: the library over HTTP on 127.0.0.1 until Ctrl-C.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the library over HTTP for offline playback, and the caching proxy.",
        discussion: """
            Serves every downloaded item under /library/ID/index.m3u8 and a page listing them at /, \
            on 127.0.0.1 unless --host says otherwise, and the caching proxy: /proxy/file?url=URL and \
            /proxy/hls?url=URL play remote media through the cache ($STREAMKIT_HOME/cache), so that it \
            plays again offline. Prints the base URL, the access token that routes changing state \
            require (every route, reads included, when --host is not loopback), and a sign-in URL \
            (?token=) that sets it as a cookie, then runs until Ctrl-C: the first Ctrl-C (or SIGTERM) finishes the responses in \
            flight and exits 0; a second one stops at once and exits 130.

            The page and the JSON API under /api/ (docs/API.md) add, start, stop, retry and remove queue \
            tasks, and pin and remove cache entries. Tasks run in the process that runs the queue: `queue \
            run`, or serve itself with --run-queue.
            """,
        examples: [
            .init("Serve the library on the default port", "streamkit serve"),
            .init("Serve a directory on a free port", "streamkit serve --root ~/Videos/hls --port 0"),
        ],
        group: "Playback")

    @Option(valueName: "dir", help: "The library to serve (default: $STREAMKIT_HOME/library).")
    var root: String?
    @OptionGroup var home: HomeOptions
    @Option(valueName: "address", help: "The address to listen on; not loopback: reachable from the network.")
    var host = "127.0.0.1"
    @Option(help: "The port to listen on; 0 picks a free one.") var port = 12345
    @Option(
        name: "allow-origin", valueName: "origin", help: "A web origin whose pages may fetch from the server (CORS).")
    var allowedOrigins: [String] = []
    @Option(name: "host-name", valueName: "name", help: "Another name clients may use for this server in Host.")
    var hostNames: [String] = []
    @Option(
        name: "cache-limit", valueName: "size",
        help: "The proxy cache's byte cap, such as 500M or 2G, remembered for later commands (default: 1G).")
    var cacheLimit: ByteSize?
    @Option(name: "cache-key", valueName: "mode", help: CacheAccess.keyHelp) var cacheKey: CacheKeyMode?
    @Option(
        name: "proxy-allow", valueName: "ranges",
        help: "The only private and loopback addresses the proxy may connect to, such as 192.168.1.0/24,127.0.0.1 "
            + "(default: all of them; public addresses stay allowed).")
    var proxyAllow: [AddressRangeList] = []
    @Option(
        name: "proxy-deny", valueName: "ranges",
        help: "Addresses the proxy may not connect to, such as 10.0.0.0/8,fd00::/8.")
    var proxyDeny: [AddressRangeList] = []
    @Flag(
        name: "run-queue",
        help: "Also run the download queue, as `queue run` does, so that tasks added from the page run.")
    var runQueue = false

    init() {}

    mutating func validate() throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port must be between 0 and 65535, got \(port)")
        }
        guard HTTPServerConfiguration.isValidHost(host) else {
            throw ValidationError("--host must be an IP address or localhost, got '\(host)'")
        }
        if let root {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--root: '\(root)' is not a directory")
            }
        }
        for origin in allowedOrigins where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            throw ValidationError("--allow-origin takes an origin such as http://example.com:8080, got '\(origin)'")
        }
    }

    func run(_ context: CommandContext) async throws {
        let homePath = home.path(context)
        let libraryRoot: String
        if let root {
            libraryRoot = root
        } else {
            libraryRoot = StreamKitHome.library(in: homePath)
            try StreamKitHome.prepare(homePath)
        }
        let queueHome = URL(fileURLWithPath: homePath, isDirectory: true)
        var http = HTTPServerConfiguration(host: host, port: UInt16(port))
        http.allowedOrigins = allowedOrigins
        http.hostNames = hostNames

        // Without the cache (another process has it) the library is still served.
        let destinations = DestinationPolicy(
            allowedPrivateRanges: proxyAllow.isEmpty ? nil : proxyAllow.flatMap(\.ranges),
            deniedRanges: proxyDeny.flatMap(\.ranges))
        let cache = try? CacheAccess.open(
            home: homePath, limit: cacheLimit, keys: cacheKey, destinations: destinations, context: context)
        if cache == nil { context.writeError("warning: serving without the caching proxy\n") }
        // With --run-queue serve holds the queue and runs its tasks; the page's changes then go
        // straight to it, and other processes' (`queue add`) come through its index.
        var manager: DownloadManager?
        if runQueue {
            do {
                manager = try await DownloadManager(
                    configuration: DownloadManagerConfiguration(
                        directory: queueHome, userAgent: "streamkit/\(streamKitVersion)",
                        liveRecorder: QueueRTMPRecorder()))
            } catch {
                await cache?.shutdown()
                context.writeError("error: cannot run the queue: \(error)\n")
                throw ExitCode.failure
            }
        }
        let server: MediaServer
        do {
            var configuration = MediaServer.Configuration(
                libraryRoot: libraryRoot, http: http,
                queue: { try QueueSummaries.read(home: queueHome, libraryRoot: libraryRoot, request: $0) }, cache: cache
            )
            configuration.warmsUpProxy = true
            configuration.cacheLimitChanged = { CacheAccess.rememberLimit($0, home: homePath) }
            configuration.libraryItemsFile = homePath + "/library-items.json"
            configuration.exportMP4 = PackageExport.mp4Exporter(
                exports: StreamKitHome.exports(in: homePath), environment: context.environment)
            configuration.makePoster = ExternalTool.find("ffmpeg", environment: context.environment).map {
                PackageExport.posterMaker(exports: StreamKitHome.exports(in: homePath), ffmpeg: $0)
            }
            configuration.queueControl =
                ServeQueueControl(
                    home: queueHome, libraryRoot: libraryRoot, manager: manager, environment: context.environment
                ).control
            server = try MediaServer.start(configuration: configuration)
        } catch {
            await manager?.close()
            await cache?.shutdown()
            context.writeError("error: cannot serve on \(host):\(port): \(error)\n")
            throw ExitCode.failure
        }
        let watcher = SignalWatcher()  // before the wait: a Ctrl-C meanwhile still stops cleanly
        defer { watcher.cancel() }
        // Ready once the proxy's path has run once (a few milliseconds): the first player's
        // request is then as quick as the next, and the process holds only what it serves with.
        await server.proxyWarmedUp()
        if server.http.isReachableFromNetwork {
            context.writeError(
                "warning: listening on \(host):\(server.port): reachable from other machines, which need the token "
                    + "for every request (the sign-in URL with this machine's address); "
                    + "the caching proxy answers this machine only\n")
        }
        var proxy = ""
        if let cache {
            proxy =
                "Proxy: \(server.baseURL)proxy/file?url=URL and \(server.baseURL)proxy/hls?url=URL "
                + "(cache \(cache.configuration.directory), limit \(ByteCountText.format(Double(cache.configuration.byteLimit))))\n"
        }
        context.write(
            """
            Serving \(server.library.root)
            URL: \(server.baseURL)
            Token: \(server.accessToken)
            Sign-in URL: \(server.http.signInURL)
            \(proxy)\(manager == nil ? "" : "Queue: running its tasks (\(queueHome.path))\n")Press Ctrl-C to stop.

            """)

        let signals = watcher.signals
        let stopRequests = Task { () -> Int in
            var count = 0
            for await _ in signals {
                count += 1
                if count == 1 {
                    context.write("Stopping: finishing responses in flight (Ctrl-C again to stop at once).\n")
                    server.beginShutdown(gracePeriod: .seconds(10))
                } else {
                    server.beginShutdown(gracePeriod: .zero)
                    break
                }
            }
            return count
        }
        // Commands other processes post to the queue are looked for every 50 ms, as `queue run` does.
        let queueLoop = manager.map { manager in
            Task {
                while !Task.isCancelled {
                    await manager.serveRemoteCommands()
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
        await server.waitUntilStopped()
        queueLoop?.cancel()
        await queueLoop?.value
        // Running tasks come back ready, as after `queue run` is interrupted.
        await manager?.close()
        await cache?.shutdown()
        stopRequests.cancel()
        let forced = await stopRequests.value > 1
        context.write("Stopped.\n")
        if forced { throw ExitCode.interrupted }
    }
}
