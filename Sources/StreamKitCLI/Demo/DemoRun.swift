import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitHTTPServer
import StreamKitMediaCache
import StreamKitMediaServer
import Synchronization

/// The steps of `streamkit demo`, each printing what it verified.
final class DemoRun: Sendable {
    private let context: CommandContext
    /// The demo's StreamKit home: `library/` inside it.
    private let home: URL
    private let removeHome: Bool
    private let sample: URL
    private let started = ContinuousClock.now
    private let client: HTTPClient
    /// Servers to stop at the end.
    private let servers = Mutex<[HTTPServer]>([])
    /// The proxy's cache, closed at the end.
    private let cache = Mutex<MediaCache?>(nil)

    /// Everything the origin served, by URL, for the comparisons after it is gone.
    private let originBytes = Mutex<[String: [UInt8]]>([:])

    init(context: CommandContext, home: String?, keep: Bool) throws {
        self.context = context
        sample = try DemoSample.locate(environment: context.environment)
        if let home {
            self.home = URL(fileURLWithPath: home, isDirectory: true)
            removeHome = false
        } else {
            let base = URL(fileURLWithPath: context.environment["TMPDIR"] ?? NSTemporaryDirectory(), isDirectory: true)
            self.home = base.appendingPathComponent("streamkit-demo-\(UUID().uuidString.prefix(8).lowercased())")
            removeHome = !keep
        }
        try StreamKitHome.prepare(self.home.path)
        client = try HTTPClient(
            configuration: HTTPClientConfiguration(
                userAgent: "streamkit/\(streamKitVersion) demo", environment: [:], maximumConnectionsPerHost: 8))
    }

    func run(serveAfterwards: Bool) async throws {
        context.write("StreamKit demo: every server runs on 127.0.0.1 and nothing leaves this machine.\n\n")

        // 1. The origin.
        let origin = try startOrigin()
        let masterURL = origin.baseURL + "sample/master.m3u8"
        step(1, "Origin: the sample stream (320x180 clear, 640x360 AES-128, English audio, 10 s)")
        detail("serving \(masterURL)")

        // 2. A fresh queue in the demo's home runs the download, with live progress.
        step(2, "Add it to a fresh download queue and run it (best variant and its audio)")
        let library = home.appendingPathComponent("library")
        let task = try await runQueue(masterURL, kind: .hls, title: "StreamKit demo sample")
        let id = task.id
        let packageDirectory = URL(fileURLWithPath: task.location, isDirectory: true)
        detail(
            "task \(id) \(task.state): \(ByteCountText.format(Double(task.bytesDone))) in \(packageDirectory.path)")

        // 3. The offline copy, served, with the caching proxy beside it.
        let mediaCache = try openCache()
        let server = try MediaServer.start(
            configuration: MediaServer.Configuration(libraryRoot: library.path, cache: mediaCache))
        servers.withLock { $0.append(server.http) }
        let offlineURL = server.baseURL + "library/\(id)/index.m3u8"
        step(3, "Serve the offline copy")
        detail("playing at \(offlineURL)")

        // 4. Everything back through the local server, against the origin.
        step(4, "Fetch the offline copy back and compare it with the origin")
        let manifest = try loadManifest(packageDirectory)
        let checked = try await verify(manifest, id: id, server: server.baseURL, fetchOrigin: true)
        detail("\(checked.summary): byte-identical to the origin")

        // 5. The stream played through the caching proxy, as `streamkit play` would.
        let proxyURL = server.baseURL.dropLast() + ProxyRoutes.localPath(for: masterURL)
        step(5, "Play the stream through the caching proxy")
        let proxied = try await playThroughProxy(String(proxyURL), server: server.baseURL, fetchOrigin: true)
        detail("\(proxied.summary) through /proxy/hls, identical to the origin, and kept in the cache")

        // 6. The same video and audio as DASH: an MPD through the same queue and engine.
        let dashURL = origin.baseURL + "sample/dash/manifest.mpd"
        step(6, "The same stream as DASH: queue its MPD, serve the package's manifest.mpd")
        let dashTask = try await runQueue(dashURL, kind: .dash, title: "StreamKit demo sample (DASH)")
        let dashManifest = try loadManifest(URL(fileURLWithPath: dashTask.location, isDirectory: true))
        let dashChecked = try await verifyDASH(
            dashManifest, id: dashTask.id, server: server.baseURL, fetchOrigin: true)
        detail("\(dashChecked.summary) named by manifest.mpd: byte-identical to the origin")

        // 7. The origin goes away; neither the copies nor the cache need it.
        await origin.shutdown(gracePeriod: .seconds(1))
        servers.withLock { $0.removeAll { $0 === origin } }
        step(7, "Stop the origin and play the copies and the cached stream again")
        let offline = try await verify(manifest, id: id, server: server.baseURL, fetchOrigin: false)
        detail("origin stopped; \(offline.summary) served again from disk, identical")
        let cached = try await playThroughProxy(String(proxyURL), server: server.baseURL, fetchOrigin: false)
        detail("\(cached.summary) played again through the proxy from the cache, identical")
        let dashOffline = try await verifyDASH(
            dashManifest, id: dashTask.id, server: server.baseURL, fetchOrigin: false)
        detail("\(dashOffline.summary) of the DASH copy served again from disk, identical")

        // 8. A player's view, when there is one.
        step(8, "Decode the offline copies")
        if let ffprobe = ExternalTool.find("ffprobe", environment: context.environment) {
            let frames = try await DemoProbe.decodedFrames(ffprobe: ffprobe, url: offlineURL)
            detail("ffprobe decoded \(frames) through the local server")
            let dashFrames = try await DemoProbe.decodedFrames(
                ffprobe: ffprobe, url: server.baseURL + "library/\(dashTask.id)/manifest.mpd")
            detail("ffprobe decoded \(dashFrames) from the DASH copy's manifest.mpd")
        } else {
            detail("skipped: ffprobe is not installed (apt-get install ffmpeg)")
        }

        let seconds = started.duration(to: .now)
        context.write(
            "\nDone in \(ByteCountText.fixed(Self.seconds(seconds), digits: 1)) s: downloaded, served, played through "
                + "the cache, and verified offline.\n\n")
        context.write(
            """
            Try next:
              streamkit download https://example.com/show/master.m3u8      keep a stream for offline play
              streamkit download https://example.com/show/manifest.mpd     the same for DASH
              streamkit queue add URL && streamkit queue run --exit-when-done   the same through the queue
              streamkit serve                                               serve the library on 127.0.0.1:12345
              streamkit play https://example.com/talk.mp4                   play through the cache, again offline
              streamkit cache list                                          what the cache holds
              streamkit export ID show.mp4                                  one file from a package
              streamkit inspect https://example.com/show/master.m3u8       what a playlist holds
              streamkit rtmp record rtmp://example.com/live/show -o show.flv
              streamkit help                                                every command

            """)
        if serveAfterwards {
            context.write("Serving the offline copy at \(offlineURL) (library \(library.path)); Ctrl-C stops.\n")
            context.write("The cached stream plays at \(proxyURL), with no origin.\n")
            await Self.waitForInterrupt()
        } else if !removeHome {
            context.write(
                "The demo's library is kept in \(library.path); `streamkit serve --home \(home.path)` serves it.\n")
        }
    }

    /// Stops the servers and the client, and removes the temporary home unless kept.
    func tearDown() async {
        for server in servers.withLock({ $0 }) { await server.shutdown(gracePeriod: .seconds(1)) }
        if let mediaCache = cache.withLock({ $0 }) { await mediaCache.shutdown() }
        await client.shutdown()
        if removeHome { try? FileManager.default.removeItem(at: home) }
    }

    // MARK: Steps

    private func startOrigin() throws -> HTTPServer {
        let files = try HTTPStaticFileResponder(root: sample.path)
        var router = HTTPRouter()
        router.add(
            .get, "/sample/*path",
            runsOnEventLoop: { request in
                files.respond(to: request, rawPath: String(request.path.dropFirst("/sample/".count)))
            })
        let origin = try HTTPServer.start(configuration: HTTPServerConfiguration(), router: router)
        servers.withLock { $0.append(origin) }
        return origin
    }

    /// Adds `url` to a new queue in the demo's home and runs it to the end, drawing the task's
    /// progress; returns the finished task.
    private func runQueue(_ url: String, kind: DownloadKind, title: String) async throws -> DownloadTaskInfo {
        let manager: DownloadManager
        do {
            manager = try await DownloadManager(
                configuration: DownloadManagerConfiguration(
                    directory: home, userAgent: "streamkit/\(streamKitVersion) demo"))
        } catch {
            throw DemoFailure("the queue cannot be opened in \(home.path): \(error)")
        }
        let display = ProgressDisplay(sink: context.errorOutput)
        let events = await manager.events()
        let added: DownloadTaskInfo
        do {
            added = try await manager.add(
                DownloadRequest(url: url, kind: kind, title: title), autoStart: true)
        } catch {
            await manager.close()
            throw DemoFailure("the queue refused the task: \(error)")
        }
        let monitor = InterruptMonitor { Task { try? await manager.stopAll() } }
        defer { monitor.stop() }
        var outcome: Result<DownloadTaskInfo, DemoFailure>?
        for await event in events {
            switch event {
            case .progress(let info) where info.id == added.id:
                display.update([Self.progressLine(info)])
            case .stateChanged(let info, let from) where info.id == added.id:
                display.message("      \(info.id): \(from) → \(info.state)\n")
                if info.state == .stopped { outcome = .failure(DemoFailure("interrupted")) }
            case .completed(let info) where info.id == added.id:
                // Progress events are spaced out: the last may come before the last bytes.
                display.update([Self.progressLine(info)])
                outcome = .success(info)
            case .failed(let info, let error) where info.id == added.id:
                outcome = .failure(DemoFailure("the download failed: \(error)"))
            default:
                break
            }
            if outcome != nil { break }
        }
        display.finish()
        await manager.close()
        if monitor.wasInterrupted { throw ExitCode.interrupted }
        switch outcome {
        case .success(let info): return info
        case .failure(let failure): throw failure
        case nil: throw DemoFailure("the queue's events ended before the task did")
        }
    }

    private static func progressLine(_ info: DownloadTaskInfo) -> ProgressLine {
        ProgressLine(
            label: info.id, fraction: info.progress, bytes: info.bytesDone, totalBytes: info.bytesExpected,
            totalIsEstimate: true, bytesPerSecond: info.bytesPerSecond > 0 ? info.bytesPerSecond : nil)
    }

    /// The cache in the demo's home (`cache/`, where `streamkit play` and `cache` look).
    private func openCache() throws -> MediaCache {
        let directory = home.appendingPathComponent("cache").path
        do {
            let opened = try MediaCache(configuration: MediaCacheConfiguration(directory: directory), client: client)
            cache.withLock { $0 = opened }
            return opened
        } catch {
            throw DemoFailure("the cache cannot be opened in \(directory): \(error)")
        }
    }

    /// Plays `proxyURL` (the master playlist through /proxy/hls) as a player would: every
    /// rewritten playlist, then every key, init section and segment they name, each through the
    /// proxy, and compares each with what the origin serves for the URL the proxy was given.
    private func playThroughProxy(_ proxyURL: String, server: String, fetchOrigin: Bool) async throws -> Checked {
        var checked = Checked()
        let origin = server.hasSuffix("/") ? String(server.dropLast()) : server
        func local(_ uri: String) -> String { uri.hasPrefix("/") ? origin + uri : uri }
        func target(_ uri: String) throws -> String {
            guard let components = URLComponents(string: local(uri)),
                components.path == ProxyRoutes.filePath || components.path == ProxyRoutes.playlistPath,
                let url = components.queryItems?.first(where: { $0.name == "url" })?.value
            else {
                throw DemoFailure("the proxy left \(uri) pointing elsewhere than through itself")
            }
            return url
        }
        let master = try await fetch(proxyURL, what: "the proxied master playlist")
        checked.playlists += 1
        guard case .multivariant(let multivariant) = try parse(master, proxyURL).playlist else {
            throw DemoFailure("the proxied master playlist is not a master playlist")
        }
        var playlists = Set<String>()
        var files = Set<String>()
        for uri in multivariant.variants.map(\.uri) + multivariant.renditions.compactMap(\.uri)
        where playlists.insert(uri).inserted {
            _ = try target(uri)
            let bytes = try await fetch(local(uri), what: "the proxied playlist \(uri)")
            checked.playlists += 1
            guard case .media(let media) = try parse(bytes, local(uri)).playlist else {
                throw DemoFailure("\(uri) through the proxy is not a media playlist")
            }
            for file in Self.files(of: media) where files.insert(file.uri).inserted {
                let count = try await fetchSame(
                    local(file.uri), what: "the proxied \(file.kind) \(file.uri)", as: try target(file.uri),
                    fetchOrigin: fetchOrigin)
                checked.add(file.kind, bytes: count)
            }
        }
        guard checked.segments > 0 else { throw DemoFailure("the proxied stream lists no segment") }
        return checked
    }

    func loadManifest(_ directory: URL) throws -> PackageManifest {
        do {
            guard let manifest = try PackageManifest.load(from: directory) else {
                throw DemoFailure("the package has no \(directory.appendingPathComponent("package.json").path)")
            }
            return manifest
        } catch let error as HLSDownloadError {
            throw DemoFailure("the package's manifest cannot be read: \(error)")
        }
    }

    /// What one verification pass fetched.
    struct Checked {
        var mpds = 0
        var playlists = 0
        var segments = 0
        var keys = 0
        var maps = 0
        var bytes = 0
        /// Counts a file of `kind` ("key", "map" or "segment") and its bytes.
        mutating func add(_ kind: String, bytes count: Int) {
            bytes += count
            switch kind {
            case "key": keys += 1
            case "map": maps += 1
            default: segments += 1
            }
        }

        var summary: String {
            var parts = mpds > 0 ? ["\(mpds) MPD\(mpds == 1 ? "" : "s")"] : []
            if playlists > 0 { parts.append("\(playlists) playlists") }
            parts.append("\(segments) segments")
            if keys > 0 { parts.append("\(keys) key\(keys == 1 ? "" : "s")") }
            if maps > 0 { parts.append("\(maps) init sections") }
            return parts.joined(separator: ", ") + " (\(ByteCountText.format(Double(bytes))))"
        }
    }

    /// Fetches the package's playlists through `server` and every file they name, and compares
    /// each file with what the origin serves (fetched now, or remembered from the first pass).
    private func verify(
        _ manifest: PackageManifest, id: String, server: String, fetchOrigin: Bool
    ) async throws -> Checked {
        let base = server + "library/\(id)/"
        let sources = Dictionary(manifest.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var checked = Checked()
        let master = try await fetch(base + PackageLayout.indexName, what: "the offline master playlist")
        checked.playlists += 1
        guard case .multivariant(let multivariant) = try parse(master, base + PackageLayout.indexName).playlist else {
            throw DemoFailure("the offline index.m3u8 is not a master playlist")
        }
        let mediaURIs = multivariant.variants.map(\.uri) + multivariant.renditions.compactMap(\.uri)
        var seen = Set<String>()
        for mediaURI in mediaURIs where seen.insert(mediaURI).inserted {
            let folder = String(mediaURI.split(separator: "/").dropLast().joined(separator: "/"))
            let playlistBytes = try await fetch(base + mediaURI, what: "the offline playlist \(mediaURI)")
            checked.playlists += 1
            guard case .media(let media) = try parse(playlistBytes, base + mediaURI).playlist else {
                throw DemoFailure("\(mediaURI) is not a media playlist")
            }
            let files = Self.files(of: media).map { (path: folder + "/" + $0.uri, kind: $0.kind) }
            var compared = Set<String>()
            for file in files where compared.insert(file.path).inserted {
                guard let source = sources[file.path] else {
                    throw DemoFailure("\(mediaURI) names \(file.path), which the package does not list")
                }
                let count = try await fetchSame(
                    base + file.path, what: "the offline file \(file.path)", as: source.url, fetchOrigin: fetchOrigin)
                checked.add(file.kind, bytes: count)
            }
        }
        guard checked.segments > 0 else { throw DemoFailure("the offline copy lists no segment") }
        return checked
    }

    /// The files a media playlist names, in order: each segment's key and init section before it
    /// (repeats included; the callers skip what they have seen).
    private static func files(of media: MediaPlaylist) -> [(uri: String, kind: String)] {
        var files: [(uri: String, kind: String)] = []
        for segment in media.resolvedSegments() where !segment.isGap {
            if let key = segment.identityKey, let uri = key.uri { files.append((uri, "key")) }
            if let map = segment.map { files.append((map.uri, "map")) }
            files.append((segment.uri, "segment"))
        }
        return files
    }

    /// Fetches `url` (`what` names it) and fails unless its bytes are the origin's at `originURL`
    /// (fetched now, or remembered from the first pass).
    ///
    /// - Returns: The byte count.
    func fetchSame(_ url: String, what: String, as originURL: String, fetchOrigin: Bool) async throws -> Int {
        let bytes = try await fetch(url, what: what)
        let expected = try await originFile(originURL, fetch: fetchOrigin)
        guard bytes == expected else {
            throw DemoFailure(
                "\(what) (\(bytes.count) bytes) differs from the origin's \(originURL) (\(expected.count) bytes)")
        }
        return bytes.count
    }

    private func originFile(_ url: String, fetch fromOrigin: Bool) async throws -> [UInt8] {
        if fromOrigin {
            let bytes = try await fetch(url, what: "the origin's \(url)")
            originBytes.withLock { $0[url] = bytes }
            return bytes
        }
        guard let bytes = originBytes.withLock({ $0[url] }) else {
            throw DemoFailure("\(url) was not fetched from the origin before it stopped")
        }
        return bytes
    }

    func fetch(_ url: String, what: String) async throws -> [UInt8] {
        let head: HTTPClientResponseHead
        let body: [UInt8]
        do {
            (head, body) = try await client.data(for: HTTPClientRequest(url: url))
        } catch {
            throw DemoFailure("fetching \(what) failed: \(error)")
        }
        guard head.status == .ok else { throw DemoFailure("\(what): HTTP \(head.status.rawValue) for \(url)") }
        return body
    }

    private func parse(_ bytes: [UInt8], _ url: String) throws -> ParsedPlaylist {
        do {
            return try Playlist.parse(bytes)
        } catch {
            throw DemoFailure("\(url) does not parse: \(error)")
        }
    }

    // MARK: Output

    private func step(_ number: Int, _ title: String) {
        context.write("[\(number)/8] \(title)\n")
    }

    private func detail(_ text: String) {
        let elapsed = ByteCountText.fixed(Self.seconds(started.duration(to: .now)), digits: 2)
        context.write("      ✓ \(text)  (\(elapsed) s)\n")
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private static func waitForInterrupt() async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let monitor = InterruptMonitor { continuation.finish() }
        for await _ in stream {}
        monitor.stop()
    }
}
