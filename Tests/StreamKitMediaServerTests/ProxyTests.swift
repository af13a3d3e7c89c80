import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTPClient
import StreamKitHTTPServer
import StreamKitMediaCache
import StreamKitMediaServer
import StreamKitTestSupport
import Synchronization
import Testing

/// One HTTP client (one I/O thread) for every proxy the tests start: other suites count the
/// process's threads.
let proxyTestClient: HTTPClient = {
    do {
        return try HTTPClient(
            configuration: HTTPClientConfiguration(
                timeouts: HTTPClientTimeouts(connect: .seconds(15), idle: .seconds(30)),
                bodyBufferLimit: 1 << 20, receiveBufferSize: 256 << 10))
    } catch {
        fatalError("cannot make the tests' HTTP client: \(error)")
    }
}()

/// An nginx origin, a cache, and a media server with the proxy routes in front of them.
struct ProxySetup {
    let originRoot: URL
    let nginx: Nginx
    let cache: MediaCache
    let server: MediaServer

    var port: UInt16 { server.port }

    static func start(
        origin root: URL? = nil, cacheDirectory: URL? = nil, byteLimit: Int64 = 1 << 30,
        configure: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) async throws -> ProxySetup {
        let originRoot = try root ?? TestRun.makeTemporaryDirectory("proxy-origin")
        let nginx = try await Nginx.static(root: originRoot)
        let directory = try cacheDirectory ?? TestRun.makeTemporaryDirectory("proxy-cache")
        let cache = try MediaCache(
            configuration: MediaCacheConfiguration(directory: directory.path, byteLimit: byteLimit),
            client: proxyTestClient)
        let library = try TestRun.makeTemporaryDirectory("proxy-library")
        var http = HTTPServerConfiguration()
        configure(&http)
        let server = try MediaServer.start(configuration: .init(libraryRoot: library.path, http: http, cache: cache))
        return ProxySetup(originRoot: originRoot, nginx: nginx, cache: cache, server: server)
    }

    func originURL(_ path: String) -> String { nginx.url(path).absoluteString }

    /// `/proxy/file?url=...` for an origin path.
    func filePath(_ path: String) -> String { ProxyRoutes.localPath(for: originURL(path), isPlaylist: false) }

    /// `/proxy/hls?url=...` for an origin path.
    func playlistPath(_ path: String) -> String { ProxyRoutes.localPath(for: originURL(path), isPlaylist: true) }

    /// The full proxy URL of `target` (a path with a query).
    func url(_ target: String) -> String { "http://127.0.0.1:\(port)\(target)" }

    /// Sends exact bytes: `METHOD target` with a correct Host unless `host` says otherwise.
    func request(
        _ target: String, method: String = "GET", host: String? = nil, _ fields: String = ""
    ) async throws -> RawHTTPResponse {
        let port = port
        return try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send(
                "\(method) \(target) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\n\(fields)\r\n")
            return try connection.readResponse(bodyless: method == "HEAD")
        }
    }

    func stop() async {
        await server.shutdown(gracePeriod: .seconds(2))
        await cache.shutdown()
        await nginx.stop()
    }
}

/// The proxy routes: Range and HEAD on files, playlists rewritten through the cache, and what a
/// web page may not do with them.
@Suite(.requires(.nginx)) struct ProxyRouteTests {
    @Test func theFileRouteHonoursThePlayersRangeConditionsAndHEAD() async throws {
        let proxy = try await ProxySetup.start()
        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        try Data(content).write(to: proxy.originRoot.appendingPathComponent("clip.mp4"))
        let target = proxy.filePath("clip.mp4")

        let first = try await proxy.request(target, "Range: bytes=100-199\r\n")
        #expect(first.status == 206)
        #expect(first.header("Content-Range") == "bytes 100-199/300000")
        #expect(first.header("Content-Type") == "video/mp4")
        #expect(first.header("Accept-Ranges") == "bytes")
        #expect(first.header("X-StreamKit-Cache") == "miss")
        #expect(first.body == Array(content[100..<200]))

        let again = try await proxy.request(target, "Range: bytes=100-199\r\n")
        #expect(again.status == 206)
        #expect(again.header("X-StreamKit-Cache") == "hit")
        #expect(again.body == first.body)

        let whole = try await proxy.request(target)
        #expect(whole.status == 200)
        #expect(whole.header("Content-Length") == "300000")
        #expect(whole.body == content)

        let head = try await proxy.request(target, method: "HEAD")
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "300000")
        #expect(head.body.isEmpty)

        let suffix = try await proxy.request(target, "Range: bytes=-1000\r\n")
        #expect(suffix.status == 206)
        #expect(suffix.header("Content-Range") == "bytes 299000-299999/300000")
        #expect(suffix.body == Array(content[299_000...]))

        let past = try await proxy.request(target, "Range: bytes=300000-\r\n")
        #expect(past.status == 416)
        #expect(past.header("Content-Range") == "bytes */300000")

        let etag = try #require(whole.header("ETag"))
        let notModified = try await proxy.request(target, "If-None-Match: \(etag)\r\n")
        #expect(notModified.status == 304)
        let stale = try await proxy.request(target, "Range: bytes=0-9\r\nIf-Range: \"other\"\r\n")
        #expect(stale.status == 200, "a failed If-Range gets the whole representation")

        let missing = try await proxy.request(proxy.filePath("nope.mp4"))
        #expect(missing.status == 404)
        await proxy.stop()
    }

    @Test func aHEADOfAnUncachedFileAsksTheOriginWithoutFetchingIt() async throws {
        let proxy = try await ProxySetup.start()
        try Data(count: 123_456).write(to: proxy.originRoot.appendingPathComponent("big.ts"))
        let head = try await proxy.request(proxy.filePath("big.ts"), method: "HEAD")
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "123456")
        #expect(head.header("Content-Type") == "video/mp2t")
        #expect(try await proxy.nginx.settledAccessLog().map(\.method) == ["HEAD"])
        await proxy.stop()
    }

    @Test func webPagesCannotUseTheProxy() async throws {
        let proxy = try await ProxySetup.start { $0.allowedOrigins = ["http://player.example"] }
        try Data(count: 1000).write(to: proxy.originRoot.appendingPathComponent("a.ts"))
        let target = proxy.filePath("a.ts")

        // DNS rebinding: a page's own name in Host.
        #expect(try await proxy.request(target, host: "evil.example").status == 421)
        #expect(try await proxy.request(proxy.playlistPath("a.m3u8"), host: "evil.example:\(proxy.port)").status == 421)
        // A page of another origin, with or without CORS mode.
        let foreign = try await proxy.request(target, "Origin: http://evil.example\r\n")
        #expect(foreign.status == 403)
        #expect(foreign.header("Access-Control-Allow-Origin") == nil)
        #expect(try await proxy.request(target, "Sec-Fetch-Site: cross-site\r\n").status == 403)
        #expect(try await proxy.request(target, "Origin: null\r\n").status == 403)
        #expect(try await proxy.request(proxy.playlistPath("x.m3u8"), "Origin: http://evil.example\r\n").status == 403)
        // Only http and https are fetched.
        for url in ["file:///etc/passwd", "gopher://127.0.0.1:70/", "ftp://127.0.0.1/a", "javascript:alert(1)", ""] {
            let encoded = HLSProxyRewriter.percentEncoded(url)
            #expect(try await proxy.request("/proxy/file?url=\(encoded)").status == 400, "\(url)")
            #expect(try await proxy.request("/proxy/hls?url=\(encoded)").status == 400, "\(url)")
        }
        #expect(try await proxy.request("/proxy/file").status == 400)
        // A player (no Origin) and the configured origin may; the latter gets its own origin back, never *.
        let player = try await proxy.request(target)
        #expect(player.status == 200)
        #expect(player.header("Access-Control-Allow-Origin") == nil)
        let allowed = try await proxy.request(target, "Origin: http://player.example\r\nSec-Fetch-Site: cross-site\r\n")
        #expect(allowed.status == 200)
        #expect(allowed.header("Access-Control-Allow-Origin") == "http://player.example")
        #expect(try await proxy.nginx.settledAccessLog().count == 1, "refused requests never reached the origin")
        await proxy.stop()
    }

    /// What an origin sends is data, never a page of the proxy's origin (a proxied HTML page's
    /// scripts would read through the proxy as same-origin requests); a request this process's
    /// cache made is refused (an origin redirecting the proxy to itself looped without end).
    @Test func originContentIsNotAPageAndTheProxyDoesNotFetchThroughItself() async throws {
        let proxy = try await ProxySetup.start()
        try Data("<script>fetch('/')</script>".utf8).write(to: proxy.originRoot.appendingPathComponent("page.html"))
        let page = try await proxy.request(proxy.filePath("page.html"))
        #expect(page.status == 200)
        #expect(page.header("Content-Security-Policy") == "sandbox; default-src 'none'")
        #expect(page.header("X-Content-Type-Options") == "nosniff")
        #expect(page.header("Cross-Origin-Resource-Policy") == "same-origin")
        #expect(page.header("Content-Type") == "application/octet-stream")
        #expect(page.header("Content-Disposition") == "attachment")
        let playlist = try await proxy.request(proxy.playlistPath("none.m3u8"))
        #expect(playlist.header("Content-Security-Policy") == "sandbox; default-src 'none'")

        let marked = try await proxy.request(proxy.filePath("page.html"), "Via: 1.1 \(MediaCache.requestMark)\r\n")
        #expect(marked.status == 403)
        // An origin that sends the proxy back to itself: one refused hop, not a loop.
        let back = Mutex("")  // the proxy URL of this very origin URL, known once it listens
        let redirecting = try ScriptedTCPResponder { _ in
            [

                .readRequestHead,
                .send(
                    ScriptedTCPResponder.httpResponse(
                        status: 302,
                        headers: [
                            ("Location", back.withLock { $0 }), ("Content-Length", "0"), ("Connection", "close"),
                        ], body: [])),
                .close,
            ]
        }
        let target = ProxyRoutes.localPath(for: redirecting.url("a.mp4").absoluteString, isPlaylist: false)
        back.withLock { $0 = proxy.url(target) }
        let started = ContinuousClock.now
        let looped = try await proxy.request(target)
        #expect(looped.status >= 400, "\(looped.status)")
        #expect(redirecting.connectionCount <= 3, "\(redirecting.connectionCount) requests to the origin")
        #expect(started.duration(to: .now) < .seconds(30))
        await redirecting.stop()
        await proxy.stop()
    }

    /// Every URI of a rewritten playlist: variants, renditions, segments, keys, maps.
    private func uris(of playlist: Playlist) -> [String] {
        switch playlist {
        case .multivariant(let multivariant):
            return multivariant.variants.map(\.uri) + multivariant.renditions.compactMap(\.uri)
                + multivariant.iFrameVariants.map(\.uri)
        case .media(let media):
            return media.segments.flatMap { segment in
                [segment.uri] + segment.keys.compactMap(\.uri) + (segment.map.map { [$0.uri] } ?? [])
            }
        }
    }

    /// The fixture file an origin URL names.
    private func local(_ url: String, in fixture: Fixture) -> URL {
        URL(fileURLWithPath: fixture.directory.path + (URLComponents(string: url)?.path ?? ""))
    }

    @Test(.requires(.ffmpeg), arguments: [FixtureRecipe.Kind.hlsMaster, .hlsFMP4, .hlsAES128ExplicitIV, .hlsByteRange])
    func playlistsAreRewrittenSoEverythingGoesThroughTheCache(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let proxy = try await ProxySetup.start(origin: fixture.directory)
        var pending = [proxy.playlistPath(fixture.recipe.entry)]
        var playlists = 0
        var files = 0
        while let target = pending.popLast() {
            let response = try await proxy.request(target)
            #expect(response.status == 200, "\(target): \(response.text)")
            #expect(response.header("Content-Type") == "application/vnd.apple.mpegurl")
            playlists += 1
            let parsed = try Playlist.parse(response.body).playlist
            for uri in uris(of: parsed) {
                #expect(uri.hasPrefix("/proxy/"), "\(uri) does not go through the proxy")
                if uri.hasPrefix("/proxy/hls?url=") { pending.append(uri) }
            }
            guard case .media(let media) = parsed else { continue }
            // Each segment, fetched through the proxy with its byte range, is the origin's bytes.
            let base = try #require(URLComponents(string: target)?.queryItems?.first?.value)
            let original = try Playlist.parse(Data(contentsOf: local(base, in: fixture)))
            guard case .media(let originalMedia) = original.playlist else { continue }
            for (rewritten, source) in zip(media.resolvedSegments(), originalMedia.resolvedSegments(baseURL: base)) {
                #expect(rewritten.byteRange == source.byteRange)
                let range = rewritten.byteRange.map { "Range: bytes=\($0.lowerBound)-\($0.upperBound - 1)\r\n" } ?? ""
                let fetched = try await proxy.request(rewritten.uri, range)
                let file = try Data(contentsOf: local(source.uri, in: fixture))
                let expected =
                    source.byteRange.map { Array(file[Int($0.lowerBound)..<Int($0.upperBound)]) } ?? Array(file)
                #expect(fetched.body == expected, "\(source.uri)")
                files += 1
            }
            if kind == .hlsByteRange {
                #expect(media.segments.allSatisfy { $0.byteRange?.offset != nil }, "offsets are explicit")
            }
        }
        #expect(playlists >= (kind == .hlsMaster ? 7 : 1))
        #expect(files > 0)
        await proxy.stop()
    }
}

/// The issue's test: ffmpeg reading through the proxy, with seeks, decodes exactly what it
/// decodes from the origin; then, with the origin gone, all of it again.
@Suite(.requires(.nginx, .ffmpeg)) struct ProxyPlaybackTests {
    /// Checksums of every decoded frame, reading `input` from `start` seconds (for `duration`).
    private func frames(_ input: String, start: Double? = nil, duration: Double? = nil) async throws -> [String] {
        var arguments = ["-nostdin", "-v", "error"]
        if let start { arguments += ["-ss", String(start)] }
        arguments += ["-i", input]
        if let duration { arguments += ["-t", String(duration)] }
        arguments += ["-map", "0", "-f", "framemd5", "-"]
        let output = try await Tool.ffmpeg.run(arguments, timeout: .seconds(120))
        return output.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// A full decode and five seeks, through `read` (origin or proxy URL).
    private func decodes(_ url: String) async throws -> [[String]] {
        async let whole = frames(url)
        var seeks: [[String]] = []
        for start in [1.0, 3.5, 6.0, 8.2, 11.7] { seeks.append(try await frames(url, start: start, duration: 1.5)) }
        return [try await whole] + seeks
    }

    @Test func aProgressiveMP4PlaysThroughTheProxyAndAgainOffline() async throws {
        // The FLV fixture as a progressive MP4 (moov first), with noise so that it is a few MB.
        let source = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: 14))
        let root = try TestRun.makeTemporaryDirectory("mp4-origin")
        try await Tool.ffmpeg.run([
            "-nostdin", "-v", "error", "-y", "-i", source.entryFile.path, "-vf", "noise=alls=40:allf=t",
            "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "3M", "-g", "50", "-c:a", "copy",
            "-movflags", "+faststart", root.appendingPathComponent("movie.mp4").path,
        ])
        let size = try #require(
            try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent("movie.mp4").path)[.size]
                as? Int)
        #expect(size > 2_000_000, "a few MB")
        let proxy = try await ProxySetup.start(origin: root)
        let direct = try await decodes(proxy.originURL("movie.mp4"))
        let proxied = try await decodes(proxy.url(proxy.filePath("movie.mp4")))
        #expect(direct[0].count > 300)
        for (index, decode) in direct.enumerated() {
            #expect(!decode.isEmpty)
            #expect(proxied[index] == decode, "decode \(index) differs through the proxy")
        }
        #expect(proxy.cache.entry(for: proxy.originURL("movie.mp4"))?.isComplete == true)

        await proxy.nginx.stop()
        let offline = try await decodes(proxy.url(proxy.filePath("movie.mp4")))
        for (index, decode) in direct.enumerated() {
            #expect(offline[index] == decode, "offline decode \(index) differs")
        }
        await proxy.server.shutdown(gracePeriod: .seconds(2))
        await proxy.cache.shutdown()
    }

    @Test func anHLSStreamPlaysThroughTheProxyAndAgainOffline() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS, seconds: 14))
        let proxy = try await ProxySetup.start(origin: fixture.directory)
        let direct = try await decodes(proxy.originURL("index.m3u8"))
        let proxied = try await decodes(proxy.url(proxy.playlistPath("index.m3u8")))
        #expect(direct[0].count > 300)
        for (index, decode) in direct.enumerated() {
            #expect(!decode.isEmpty)
            #expect(proxied[index] == decode, "decode \(index) differs through the proxy")
        }
        await proxy.nginx.stop()
        let offline = try await decodes(proxy.url(proxy.playlistPath("index.m3u8")))
        for (index, decode) in direct.enumerated() {
            #expect(offline[index] == decode, "offline decode \(index) differs")
        }
        let playlist = try await proxy.request(proxy.playlistPath("index.m3u8"))
        #expect(playlist.header("X-StreamKit-Cache") == "hit", "the playlist came from the cache")
        await proxy.server.shutdown(gracePeriod: .seconds(2))
        await proxy.cache.shutdown()
    }

    /// An MPD through `/proxy/dash`: the template, single-file and SegmentBase forms decode in
    /// ffmpeg as from the origin, and again with the origin stopped; GStreamer's dashdemux plays
    /// every video frame through it. Every URL of the rewritten MPD is this server's file route.
    @Test(.requires(.gstLaunch), arguments: [FixtureRecipe.Kind.dashTimeline, .dashSingleFile, .dashSegmentBase])
    func aDASHStreamPlaysThroughTheProxyAndAgainOffline(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind, seconds: 8))
        let proxy = try await ProxySetup.start(origin: fixture.directory)
        let target = ProxyRoutes.mpdPath + "?url=" + HLSProxyRewriter.percentEncoded(proxy.originURL("manifest.mpd"))
        let rewritten = try await proxy.request(target)
        #expect(rewritten.status == 200 && rewritten.header("Content-Type") == "application/dash+xml")
        let text = String(decoding: rewritten.body, as: UTF8.self)
        let urls = text.matches(of: /(?:media|initialization|sourceURL)="([^"]*)"|<BaseURL>([^<]*)</).map {
            String($0.1 ?? $0.2 ?? "")
        }
        #expect(!urls.isEmpty)
        #expect(
            urls.allSatisfy { $0.hasPrefix(proxy.url(ProxyRoutes.filePath + "?url=http%3A%2F%2F127.0.0.1")) }, "\(text)"
        )

        let direct = try await HLSPlayers.ffmpeg(proxy.originURL("manifest.mpd"))
        let proxied = try await HLSPlayers.ffmpeg(proxy.url(target))
        #expect(direct.videoFrames > 0 && proxied.videoStreamFrames == direct.videoStreamFrames, "\(proxied)")
        #expect(proxied.audioStreamFrames == direct.audioStreamFrames && proxied.failedRequests.isEmpty, "\(proxied)")
        let gstreamer = try await HLSPlayers.gstreamer(proxy.url(target), dashDemuxer: .dashdemux)
        #expect(gstreamer.playedToTheEnd && gstreamer.videoFrames == 8 * 25, "\(gstreamer)")

        await proxy.nginx.stop()
        let offline = try await HLSPlayers.ffmpeg(proxy.url(target))
        #expect(offline.videoStreamFrames == direct.videoStreamFrames, "\(offline)")
        #expect(offline.audioStreamFrames == direct.audioStreamFrames && offline.failedRequests.isEmpty, "\(offline)")
        let again = try await proxy.request(target)
        #expect(again.header("X-StreamKit-Cache") == "hit", "the MPD came from the cache")
        await proxy.server.shutdown(gracePeriod: .seconds(2))
        await proxy.cache.shutdown()
    }
}
