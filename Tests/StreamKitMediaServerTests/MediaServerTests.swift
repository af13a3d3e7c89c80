import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitMediaServer
import StreamKitTestSupport
import Synchronization
import Testing

/// A library directory the tests fill, and a media server over it.
struct LibraryServer {
    let root: URL
    let server: MediaServer

    var port: UInt16 { server.port }

    static func start(
        _ fill: (URL) throws -> Void, configure: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws -> LibraryServer {
        let base = try TestRun.makeTemporaryDirectory("library")
        let root = base.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try fill(root)
        var http = HTTPServerConfiguration()
        configure(&http)
        return LibraryServer(
            root: root, server: try MediaServer.start(configuration: .init(libraryRoot: root.path, http: http)))
    }

    func stop() async { await server.shutdown(gracePeriod: .seconds(2)) }

    /// Sends `GET target` with a correct Host on a new connection (exact bytes, nothing normalized).
    func get(_ target: String, method: String = "GET", _ fields: String = "") async throws -> RawHTTPResponse {
        let port = port
        return try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(fields)\r\n")
            return try connection.readResponse(bodyless: method == "HEAD")
        }
    }
}

/// Writes `text` to `name` in `directory`, creating the directory.
func write(_ text: String, _ name: String, in directory: URL) throws {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
}

@Suite struct MediaServerLibraryTests {
    @Test func thePageListsTheFoldersWithAPlaylist() async throws {
        let outside = try TestRun.makeTemporaryDirectory("outside")
        try write("#EXTM3U\n", "index.m3u8", in: outside)
        let library = try LibraryServer.start { root in
            try write(
                "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4.000,\na.ts\n#EXTINF:3.5,\nb.ts\n#EXT-X-ENDLIST\n",
                "index.m3u8",
                in: root.appendingPathComponent("Movie One"))
            try Data(count: 1_500_000).write(to: root.appendingPathComponent("Movie One/a.ts"))
            try write(
                "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlow/index.m3u8\n", "index.m3u8",
                in: root.appendingPathComponent("Master & \"co\" <script>"))
            try write(
                "#EXTM3U\n#EXTINF:61,\ns.ts\n#EXTINF:62,\nt.ts\n", "index.m3u8",
                in: root.appendingPathComponent("Master & \"co\" <script>/low"))
            try write("not a package", "notes.txt", in: root.appendingPathComponent("no-playlist"))
            try write("#EXTM3U\n", "index.m3u8", in: root.appendingPathComponent(".partial"))
            try write("stray", "stray.txt", in: root)
            try FileManager.default.createSymbolicLink(
                at: root.appendingPathComponent("linked-outside"), withDestinationURL: outside)
        }
        let page = try await library.get("/")
        #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
        let html = page.text
        #expect(html.contains("<td>Movie One</td><td>downloaded</td><td>1.4 MiB</td><td>0:08</td>"))
        #expect(html.contains("<a href=\"/library/Movie%20One/index.m3u8\">index.m3u8</a>"))
        #expect(html.contains("<td>Master &amp; &quot;co&quot; &lt;script&gt;</td>"))
        #expect(html.contains("<td>2:03</td>"), "a master playlist's duration is its first variant's")
        #expect(html.contains("/library/Master%20%26%20%22co%22%20%3Cscript%3E/index.m3u8"))
        // The title's markup is escaped: the one script is the page's own file.
        #expect(html.components(separatedBy: "<script").count == 2)
        #expect(html.contains("<script src=\"/static/library.js\" defer></script>"))
        for absent in ["no-playlist", "partial", "stray", "linked-outside"] {
            #expect(!html.contains(absent), "\(absent) is listed")
        }
        #expect(try library.server.library.items().map(\.id) == ["Master & \"co\" <script>", "Movie One"])

        // The links work.
        let playlist = try await library.get("/library/Movie%20One/index.m3u8")
        #expect(playlist.status == 200 && playlist.header("Content-Type") == "application/vnd.apple.mpegurl")
        let master = try await library.get("/library/Master%20%26%20%22co%22%20%3Cscript%3E/low/index.m3u8")
        #expect(master.status == 200 && master.text.hasPrefix("#EXTM3U"))
        await library.stop()
    }

    /// Titles read well and are never URLs: the title given, else the source's session-data
    /// title, else the name in the source URL's path (not a generic file name, not the query),
    /// else its host, else the folder's name.
    @Test func titlesAreNeverURLs() throws {
        let base = try TestRun.makeTemporaryDirectory("library-titles")
        let media = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nvideo/0.ts\n#EXT-X-ENDLIST\n"
        let packages: [(folder: String, record: String?, playlist: String, title: String)] = [
            ("given", #"{"title":"Given","source":"http://127.0.0.1:9/a/master.m3u8"}"#, media, "Given"),
            (
                "session",
                #"{"source":"http://127.0.0.1:9/b/master.m3u8"}"#,
                "#EXTM3U\n#EXT-X-SESSION-DATA:DATA-ID=\"com.apple.hls.title\",VALUE=\"Big Buck Bunny\"\n"
                    + "#EXT-X-STREAM-INF:BANDWIDTH=1000\nlow/index.m3u8\n",
                "Big Buck Bunny"
            ),
            (
                "path", #"{"source":"https://cdn.example/shows/My%20Show/hls/master.m3u8?token=secret"}"#, media,
                "My Show"
            ),
            ("file", #"{"source":"https://cdn.example/talks/keynote-2026.m3u8?sig=1"}"#, media, "keynote-2026"),
            ("host", #"{"source":"http://127.0.0.1:18081/master.m3u8"}"#, media, "127.0.0.1"),
            ("bare folder", nil, media, "bare folder"),
        ]
        for package in packages {
            let folder = base.appendingPathComponent(package.folder)
            try write(package.playlist, "index.m3u8", in: folder)
            if let record = package.record { try write(record, "package.json", in: folder) }
        }
        let titles = Dictionary(
            uniqueKeysWithValues: try MediaLibrary(root: base.path).items().map { ($0.id, $0.title) })
        for package in packages {
            #expect(titles[package.folder] == package.title, "\(package.folder)")
        }
    }

    /// Items are remembered between pages and read again when what they come from changes: a
    /// package's `package.json` (rewritten at each checkpoint), a plain folder's inner folders
    /// (segments are renamed into them), a playlist, a folder removed.
    @Test func itemsAreReadAgainWhenTheirFilesChange() throws {
        let base = try TestRun.makeTemporaryDirectory("library")
        let package = base.appendingPathComponent("package")
        let plain = base.appendingPathComponent("plain")
        try write("#EXTM3U\n#EXTINF:4,\nvideo/0.ts\n", "index.m3u8", in: package)
        try write("{\"status\":\"downloading\",\"title\":\"Show\"}", "package.json", in: package)
        let playlist = "#EXTM3U\n#EXTINF:2,\nvideo/0.ts\n"
        try write(playlist, "index.m3u8", in: plain)
        try write("", "0.ts", in: plain.appendingPathComponent("video"))
        try Data(count: 1_000).write(to: plain.appendingPathComponent("video/0.ts"))
        let library = try MediaLibrary(root: base.path)
        func item(_ id: String) throws -> MediaLibraryItem? { try library.items().first { $0.id == id } }
        #expect(try item("package")?.state == "downloading" && item("package")?.title == "Show")
        #expect(try item("plain")?.size == Int64(1_000 + playlist.utf8.count))

        try write("{\"status\":\"complete\",\"title\":\"Show\"}", "package.json", in: package)
        #expect(try item("package")?.state == "downloaded")
        try Data(count: 500).write(to: plain.appendingPathComponent("video/1.ts"))
        #expect(try item("plain")?.size == Int64(1_500 + playlist.utf8.count))
        try write("#EXTM3U\n#EXTINF:2,\nvideo/0.ts\n#EXTINF:3.5,\nvideo/1.ts\n", "index.m3u8", in: plain)
        #expect(try item("plain")?.duration == 5.5)
        try FileManager.default.removeItem(at: package)
        #expect(try library.items().map(\.id) == ["plain"])
    }

    /// A folder without a playlist is not looked into again while nothing changes in it (watched,
    /// or without a watch while its stamp stays), yet becomes an item as soon as a playlist is
    /// made in it: at once when it changed within the last second (whose clock may not have
    /// ticked), and when it had been still for longer.
    @Test(arguments: [true, false])
    func foldersWithoutAPlaylistBecomeItemsWhenOneAppears(watched: Bool) async throws {
        let base = try TestRun.makeTemporaryDirectory("library")
        let fresh = base.appendingPathComponent("fresh")
        let still = base.appendingPathComponent("still")
        try write("x", "movie.mp4", in: still)
        try await Task.sleep(for: .milliseconds(1_100))
        try write("x", "movie.mp4", in: fresh)
        let library = try MediaLibrary(root: base.path, watchesFolders: watched)
        #expect(try library.items().isEmpty)
        #expect(try library.items().isEmpty, "asked again, with the still folder remembered")
        try write("#EXTM3U\n#EXTINF:2,\n0.ts\n", "index.m3u8", in: fresh)
        try write("#EXTM3U\n#EXTINF:3,\n0.ts\n", "index.m3u8", in: still)
        #expect(try library.items().map(\.id).sorted() == ["fresh", "still"])
        try FileManager.default.removeItem(at: still.appendingPathComponent("index.m3u8"))
        #expect(try library.items().map(\.id) == ["fresh"])
    }

    /// The watched library sees each way a playlist comes or goes without looking into the
    /// folders that did not change: a playlist renamed into a folder (how packages write it), a
    /// folder renamed and then given a playlist, a new folder with one, a folder removed, and a
    /// folder that loses its playlist and gets it back.
    @Test func aWatchedLibrarySeesEveryChange() throws {
        let base = try TestRun.makeTemporaryDirectory("library")
        for name in ["a", "b", "c", "d"] { try write("x", "movie.mp4", in: base.appendingPathComponent(name)) }
        let library = try MediaLibrary(root: base.path)
        func ids() throws -> [String] { try library.items().map(\.id).sorted() }
        #expect(try ids() == [])
        let playlist = "#EXTM3U\n#EXTINF:2,\n0.ts\n"
        try write(playlist, "index.tmp", in: base.appendingPathComponent("a"))
        try FileManager.default.moveItem(
            at: base.appendingPathComponent("a/index.tmp"), to: base.appendingPathComponent("a/index.m3u8"))
        #expect(try ids() == ["a"])
        try FileManager.default.moveItem(at: base.appendingPathComponent("b"), to: base.appendingPathComponent("e"))
        #expect(try ids() == ["a"])
        try write(playlist, "index.m3u8", in: base.appendingPathComponent("e"))
        #expect(try ids() == ["a", "e"])
        try write(playlist, "index.m3u8", in: base.appendingPathComponent("f"))
        try FileManager.default.removeItem(at: base.appendingPathComponent("c"))
        #expect(try ids() == ["a", "e", "f"])
        try FileManager.default.removeItem(at: base.appendingPathComponent("a/index.m3u8"))
        #expect(try ids() == ["e", "f"])
        try write(playlist, "index.m3u8", in: base.appendingPathComponent("a"))
        try write(playlist, "index.m3u8", in: base.appendingPathComponent("d"))
        #expect(try ids() == ["a", "d", "e", "f"])
    }

    /// Pages asked for at once while playlists come: each page takes the watch's news and looks
    /// into what changed, and none stores a folder as without a playlist after another saw one
    /// come, so the next page lists every playlist (not ten seconds later).
    @Test func pagesAtOnceMissNoPlaylist() async throws {
        let base = try TestRun.makeTemporaryDirectory("library")
        let names = (0..<40).map { "f\($0)" }
        for name in names { try write("x", "movie.mp4", in: base.appendingPathComponent(name)) }
        let library = try MediaLibrary(root: base.path)
        #expect(try library.items().isEmpty)
        final class Flag: Sendable { let on = Atomic<Bool>(true) }
        let writing = Flag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                // Threads of their own: loops on the cooperative pool would hold its threads
                // and keep the writer below from running.
                group.addTask {
                    try await runBlocking {
                        while writing.on.load(ordering: .acquiring) { _ = try library.items() }
                    }
                }
            }
            for name in names {
                try write("#EXTM3U\n#EXTINF:2,\n0.ts\n", "index.m3u8", in: base.appendingPathComponent(name))
                try await Task.sleep(for: .milliseconds(2))
            }
            writing.on.store(false, ordering: .releasing)
            try await group.waitForAll()
        }
        #expect(try library.items().map(\.id).sorted() == names.sorted())
    }

    /// With a file to keep them in, items survive the process: a new library takes what the file
    /// remembers while the stamps match (a file added in a package's inner folder changes no stamp,
    /// so its size is the remembered one until `package.json` changes), and ignores a file of
    /// another root or a damaged one.
    @Test func itemsAreRememberedBetweenProcesses() throws {
        let base = try TestRun.makeTemporaryDirectory("library-remembered")
        let package = base.appendingPathComponent("package")
        try write("#EXTM3U\n#EXTINF:4,\nvideo/0.ts\n", "index.m3u8", in: package)
        try write("{\"status\":\"complete\",\"title\":\"Show\"}", "package.json", in: package)
        try write("", "0.ts", in: package.appendingPathComponent("video"))
        try Data(count: 1_000).write(to: package.appendingPathComponent("video/0.ts"))
        let file = try TestRun.makeTemporaryDirectory("library-items").appendingPathComponent("items.json").path
        let first = try MediaLibrary(root: base.path, rememberedItemsFile: file)
        let size = try #require(try first.items().first?.size)
        #expect(FileManager.default.fileExists(atPath: file))

        try Data(count: 500).write(to: package.appendingPathComponent("video/1.ts"))
        let second = try MediaLibrary(root: base.path, rememberedItemsFile: file)
        #expect(try second.items().first?.size == size, "the remembered item")
        #expect(try MediaLibrary(root: base.path).items().first?.size == size + 500, "read afresh")

        try write("{\"status\":\"complete\",\"title\":\"Show 2\"}", "package.json", in: package)
        let third = try MediaLibrary(root: base.path, rememberedItemsFile: file)
        #expect(try third.items().first.map { [$0.title, "\($0.size)"] } == ["Show 2", "\(size + 502)"])

        // Another root's file and a damaged file are not taken.
        let other = try TestRun.makeTemporaryDirectory("library-other")
        try FileManager.default.copyItem(at: package, to: other.appendingPathComponent("package"))
        #expect(try MediaLibrary(root: other.path, rememberedItemsFile: file).items().first?.title == "Show 2")
        try Data("{\"root\":".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try MediaLibrary(root: base.path, rememberedItemsFile: file).items().first?.title == "Show 2")
    }

    @Test func anEmptyLibrarySaysSo() async throws {
        let library = try LibraryServer.start { _ in }
        let page = try await library.get("/")
        #expect(page.status == 200 && page.text.contains("The library is empty"))
        await library.stop()
    }

    @Test func redirectsLeadToThePlaylistAndThePage() async throws {
        let library = try LibraryServer.start { root in
            try write("#EXTM3U\n", "index.m3u8", in: root.appendingPathComponent("item"))
        }
        let toPage = try await library.get("/library")
        #expect(toPage.status == 302 && toPage.header("Location") == "/")
        let toPlaylist = try await library.get("/library/item")
        #expect(toPlaylist.status == 302 && toPlaylist.header("Location") == "/library/item/index.m3u8")
        let fromSlash = try await library.get("/library/item/")
        #expect(fromSlash.status == 302 && fromSlash.header("Location") == "index.m3u8")
        #expect(try await library.get("/library/missing/index.m3u8").status == 404)
        #expect(try await library.get("/elsewhere").status == 404)
        await library.stop()
    }

    @Test func mediaFilesHaveTheirTypes() async throws {
        let types = [
            "index.m3u8": "application/vnd.apple.mpegurl", "seg0.ts": "video/mp2t", "seg1.m4s": "video/iso.segment",
            "init.mp4": "video/mp4", "audio.aac": "audio/aac", "audio.mp3": "audio/mpeg", "audio.m4a": "audio/mp4",
            "subs.vtt": "text/vtt; charset=utf-8", "aes.key": "application/octet-stream",
            "key.bin": "application/octet-stream",
        ]
        let library = try LibraryServer.start { root in
            for name in types.keys { try write("x", name, in: root.appendingPathComponent("item")) }
        }
        for (name, type) in types {
            let response = try await library.get("/library/item/\(name)")
            #expect(response.status == 200 && response.header("Content-Type") == type, "\(name)")
            #expect(response.header("Access-Control-Allow-Origin") == nil, "CORS is off by default")
        }
        await library.stop()
    }

    @Test func corsForANamedWebPlayer() async throws {
        let library = try LibraryServer.start(
            { root in try write("#EXTM3U\n", "index.m3u8", in: root.appendingPathComponent("item")) },
            configure: { $0.allowedOrigins = ["https://player.example"] })
        let response = try await library.get("/library/item/index.m3u8", "Origin: https://player.example\r\n")
        #expect(response.header("Access-Control-Allow-Origin") == "https://player.example")
        await library.stop()
    }

    @Test func aLibraryThatIsNotADirectoryCannotBeServed() throws {
        #expect(throws: SystemError.self) {
            try MediaServer.start(configuration: .init(libraryRoot: "/nonexistent/streamkit-library"))
        }
    }

    @Test func extraRoutesPlugIn() async throws {
        let root = try TestRun.makeTemporaryDirectory("library-extra")
        var extra = HTTPRouter()
        extra.get("/api/extra") { _ in .json(Array("[]".utf8)) }
        extra.post("/api/extra") { request in .json(request.body, status: HTTPStatus(201)) }
        let server = try MediaServer.start(configuration: .init(libraryRoot: root.path), additionalRoutes: extra)
        let port = server.port
        let token = server.accessToken
        let (list, refused, created) = try await runBlocking {
            () -> (RawHTTPResponse, RawHTTPResponse, RawHTTPResponse) in
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /api/extra HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
            let list = try connection.readResponse()
            try connection.send("POST /api/extra HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Length: 2\r\n\r\n{}")
            let refused = try connection.readResponse()
            try connection.send(
                "POST /api/extra HTTP/1.1\r\nHost: localhost:\(port)\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Length: 2\r\n\r\n{}")
            return (list, refused, try connection.readResponse())
        }
        #expect(list.status == 200 && list.text == "[]" && list.header("Content-Type") == "application/json")
        #expect(refused.status == 401)
        #expect(created.status == 201 && created.text == "{}")
        // The queue's own route answers even without a queue: an empty list.
        let tasks = try await LibraryServer(root: root, server: server).get("/api/tasks")
        #expect(
            tasks.status == 200 && tasks.text == #"{"limit":1000,"offset":0,"states":{},"tasks":[],"total":0}"#,
            "\(tasks.text)")
        await server.shutdown()
    }
}

/// The player page's two routes that may run ffmpeg (the MP4 and the poster) refuse other sites'
/// pages before running anything, and run for the server's own page.
@Suite struct WatchRouteSiteTests {
    @Test func otherSitesCannotMakeTheServerWriteAnMP4OrAPoster() async throws {
        let root = try TestRun.makeTemporaryDirectory("watch-sites")
        try write(
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n", "index.m3u8",
            in: root.appendingPathComponent("pkg"))
        let runs = Mutex(0)
        var configuration = MediaServer.Configuration(libraryRoot: root.path)
        configuration.exportMP4 = { _, _ in
            runs.withLock { $0 += 1 }
            throw TestSupportError("not written in this test")
        }
        configuration.makePoster = { _, _ in
            runs.withLock { $0 += 1 }
            throw TestSupportError("not made in this test")
        }
        let server = try MediaServer.start(configuration: configuration)
        let library = LibraryServer(root: root, server: server)
        for path in ["/watch/pkg/video.mp4", "/watch/pkg/poster"] {
            let foreign = try await library.get(path, "Sec-Fetch-Site: cross-site\r\n")
            #expect(foreign.status == 403, "\(path)")
            let other = try await library.get(path, "Origin: http://evil.example\r\n")
            #expect(other.status == 403, "\(path)")
        }
        #expect(runs.withLock { $0 } == 0)
        let own = try await library.get("/watch/pkg/video.mp4", "Sec-Fetch-Site: same-origin\r\n")
        #expect(own.status == 500)
        let typed = try await library.get("/watch/pkg/poster")
        #expect(typed.status == 404)
        #expect(runs.withLock { $0 } == 2)
        #expect(try await library.get("/watch/none/video.mp4").status == 404)
        await library.stop()
    }
}
