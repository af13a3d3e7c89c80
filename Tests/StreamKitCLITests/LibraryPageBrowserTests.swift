import Foundation
import StreamKitCLI
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

/// The page at `/` of `streamkit serve`, loaded by a real browser (headless Chromium).
@Suite(.requires(.chromium, .nginx, .ffmpeg)) struct LibraryPageBrowserTests {
    @Test func chromiumShowsBothItemsOfTheLibrary() async throws {
        // Two real packages through the queue (`streamkit queue add` and `queue run`), and a task
        // whose URL the origin does not have, which fails.
        let home = try TestRun.makeTemporaryDirectory("page-home")
        var origins: [Nginx] = []
        func streamkit(_ arguments: [String]) async -> (ExitCode, String) {
            let context = CommandContext.capturing()
            let code = await CommandRunner.run(
                StreamKitCommand.self, arguments: arguments + ["--home", home.path], context: context)
            return (code, context.errorOutput.text)
        }
        for (kind, title) in [(FixtureRecipe.Kind.hlsTS, "Test card (TS)"), (.hlsFMP4, "Test card (fMP4)")] {
            let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
            let nginx = try await Nginx.static(root: fixture.directory)
            origins.append(nginx)
            let (code, error) = await streamkit([
                "queue", "add", nginx.url(fixture.recipe.entry).absoluteString, "--title", title, "--start",
            ])
            #expect(code == .success, "\(error)")
        }
        let (added, addError) = await streamkit([
            "queue", "add", origins[0].url("missing.mp4").absoluteString, "--title", "Missing file", "--start",
        ])
        #expect(added == .success, "\(addError)")
        let (ran, runError) = await streamkit(["queue", "run", "--exit-when-done"])
        #expect(ran == .failure, "one task failed: \(runError)")
        for origin in origins { await origin.stop() }
        let queueHome = home
        let libraryRoot = home.appendingPathComponent("library").path
        // The server as `streamkit serve` starts it: the library and the queue of this home.
        let server = try MediaServer.start(
            configuration: MediaServer.Configuration(
                libraryRoot: libraryRoot,
                queue: { try QueueSummaries.read(home: queueHome, libraryRoot: libraryRoot, request: $0) }))
        let directory = try TestRun.makeTemporaryDirectory("chromium")
        let screenshot = directory.appendingPathComponent("page.png")
        let common = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(directory.appendingPathComponent("profile").path)", "--window-size=1000,700",
        ]
        let baseURL = server.baseURL
        let dom = try await BrowserGate.run {
            try await Tool.chromium.run(common + ["--dump-dom", baseURL], timeout: .seconds(90))
        }
        _ = try await BrowserGate.run {
            try await Tool.chromium.run(
                common + ["--screenshot=\(screenshot.path)", baseURL], timeout: .seconds(90),
                workingDirectory: directory)
        }
        let client = try HTTPClient()
        let (apiHead, apiBody) = try await client.data(for: HTTPClientRequest(url: server.baseURL + "api/tasks"))
        await client.shutdown()
        await server.shutdown(gracePeriod: .seconds(1))

        // The page's text, as the browser built it: the library's two items (state, size,
        // duration, link), then the queue's three tasks.
        let text = dom.standardOutput
        #expect(text.contains("<h1>StreamKit library</h1>"), "\(text)")
        let sections = text.components(separatedBy: "<h2>Download queue</h2>")
        #expect(sections.count == 2, "\(text)")
        let libraryRows = sections[0].components(separatedBy: "<tr>").dropFirst(2)  // the header row first
        #expect(libraryRows.count == 2, "\(text)")
        // Named by the titles the tasks were given (kept in package.json), not by their URLs.
        for (row, title) in zip(libraryRows, ["Test card (fMP4)", "Test card (TS)"]) {
            #expect(row.hasPrefix("<td>\(title)</td>"), "\(row)")
            #expect(row.contains("<td>downloaded</td>"), "\(row)")
            #expect(row.contains("<td>0:10</td>"), "\(row)")
            #expect(row.contains("/index.m3u8\">index.m3u8</a>"), "\(row)")
        }
        // The counts by state, then the unfinished task first, then the finished ones, newest first.
        #expect(sections[1].contains("<p id=\"queue-summary\">3 tasks: 1 failed, 2 success.</p>"), "\(sections[1])")
        // Each row carries its task's id, for the script that keeps it live.
        let queueRows = Array(sections[1].components(separatedBy: "<tr data-id=").dropFirst())
        #expect(queueRows.count == 3, "\(sections[1])")
        #expect(queueRows.first?.contains("<td>Missing file</td><td>failed</td>") == true, "\(queueRows)")
        #expect(queueRows.first?.contains("404") == true, "\(queueRows)")
        for (row, title) in zip(queueRows.dropFirst(), ["Test card (fMP4)", "Test card (TS)"]) {
            #expect(row.contains("<td>\(title)</td><td>success</td>") && row.contains("100%"), "\(row)")
            #expect(row.contains(">play</a>"), "\(row)")
        }
        // It refreshes itself by its own script (no meta refresh), with nothing inline.
        #expect(text.contains("<script src=\"/static/library.js\""))
        #expect(!text.contains("<style>") && !text.contains("http-equiv"))
        // The same queue as JSON.
        #expect(apiHead.status == .ok && apiHead.headers["Content-Type"]?.hasPrefix("application/json") == true)
        struct API: Decodable { let tasks: [QueueTaskSummary] }
        let api = try JSONDecoder().decode(API.self, from: Data(apiBody))
        #expect(api.tasks.map(\.state) == ["success", "success", "failed"], "\(api.tasks)")
        #expect(api.tasks.first?.playPath?.hasPrefix("/library/") == true && api.tasks.first?.progress == 1)
        // The screenshot: a PNG of the window's size, not blank.
        let png = try Data(contentsOf: screenshot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
        #expect(width == 1000 && height == 700, "\(width)x\(height)")
        #expect(png.count > 8_000, "\(png.count) bytes")
    }

    /// The library page in a signed-in browser: the filter hides what does not match, a column
    /// sorts, and Delete (confirmed) removes an item with its files; the page does not scroll
    /// sideways. Without the sign-in cookie the removal is refused.
    @Test func theLibraryFiltersSortsAndDeletesInTheBrowser() async throws {
        let root = try TestRun.makeTemporaryDirectory("page-library")
        let media = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nvideo/0.ts\n#EXT-X-ENDLIST\n"
        for (folder, title, bytes) in [
            ("a", "Alpha talk", 1_000), ("b", "Beta show", 3_000), ("c", "Gamma show", 2_000),
        ] {
            let directory = URL(fileURLWithPath: root.path + "/" + folder)
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("video"), withIntermediateDirectories: true)
            try media.write(to: directory.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
            try #"{"title":"\#(title)"}"#.write(
                to: directory.appendingPathComponent("package.json"), atomically: true, encoding: .utf8)
            try Data(count: bytes).write(to: directory.appendingPathComponent("video/0.ts"))
        }
        let server = try MediaServer.start(configuration: MediaServer.Configuration(libraryRoot: root.path))
        // Without the cookie or token, a removal is refused and nothing is removed.
        let client = try HTTPClient()
        let (refused, _) = try await client.data(
            for: HTTPClientRequest(url: server.baseURL + "api/library/a", method: .delete))
        await client.shutdown()
        #expect(refused.status.rawValue == 401)

        let directory = try TestRun.makeTemporaryDirectory("library-browser")
        let probe = """
            const rows = Array.from(document.querySelectorAll('#items tbody tr'));
            return {shown: rows.filter((row) => !row.hidden).map((row) => row.cells[0].textContent),
                    sideways: document.documentElement.scrollWidth > document.documentElement.clientWidth};
            """
        struct Shown: Decodable {
            var shown: [String]
            var sideways: Bool
        }
        // Signed in by the sign-in URL (the cookie), then: "show" filters, Size sorts ascending.
        let filtered = try await Selenium.visit(
            [server.baseURL + "?token=" + server.accessToken], settle: .seconds(1), directory: directory,
            prepare: """
                const filter = document.getElementById('filter');
                filter.value = 'show';
                filter.dispatchEvent(new Event('input', {bubbles: true}));
                document.querySelector('button[data-sort="size"]').click();
                """, probe: probe)
        let first = try JSONDecoder().decode(Shown.self, from: Data(try #require(filtered.first?.probe).utf8))
        #expect(first.shown == ["Gamma show", "Beta show"], "the shows, the smaller first")
        #expect(!first.sideways)
        // Delete, confirmed: the row goes, and so does the folder.
        let deleted = try await Selenium.visit(
            [server.baseURL + "?token=" + server.accessToken], settle: .seconds(2), directory: directory,
            prepare: """
                window.confirm = () => true;
                document.querySelector('button.delete[data-id="a"]').click();
                """, probe: probe)
        await server.shutdown(gracePeriod: .seconds(1))
        let second = try JSONDecoder().decode(Shown.self, from: Data(try #require(deleted.first?.probe).utf8))
        #expect(second.shown == ["Beta show", "Gamma show"])
        #expect(!FileManager.default.fileExists(atPath: root.path + "/a"))
        #expect(FileManager.default.fileExists(atPath: root.path + "/b/index.m3u8"))
    }
}

/// The server's pages at a phone's width and a desktop's: nothing scrolls sideways, and each is
/// saved as a screenshot in a folder the test prints.
@Suite(.requires(.chromium, .selenium)) struct PageLayoutBrowserTests {
    @Test(arguments: [360, 1440]) func pagesFitTheWindow(width: Int) async throws {
        let root = try TestRun.makeTemporaryDirectory("layout-library")
        let package = URL(fileURLWithPath: root.path + "/a-package")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\n0.ts\n#EXT-X-ENDLIST\n".write(
            to: package.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let title = "A rather long title of a show that goes on and on, as the titles of some shows do"
        try #"{"title":"\#(title)"}"#.write(
            to: package.appendingPathComponent("package.json"), atomically: true, encoding: .utf8)
        let server = try MediaServer.start(configuration: MediaServer.Configuration(libraryRoot: root.path))
        let directory = try TestRun.makeTemporaryDirectory("layout-\(width)")
        let visits = try await Selenium.visit(
            [server.baseURL, server.baseURL + "watch/a-package"], settle: .seconds(1), directory: directory,
            probe: """
                const page = document.documentElement;
                return {width: window.innerWidth, sideways: page.scrollWidth > page.clientWidth};
                """, width: width, screenshots: true)
        await server.shutdown(gracePeriod: .seconds(1))
        print("screenshots at \(width) px: \(directory.path)")
        struct Layout: Decodable {
            var width: Int
            var sideways: Bool
        }
        for (index, visit) in visits.enumerated() {
            let layout = try JSONDecoder().decode(Layout.self, from: Data(try #require(visit.probe).utf8))
            #expect(layout.width == width, "\(visit.url)")
            #expect(!layout.sideways, "\(visit.url) scrolls sideways at \(width) px")
            let png = try Data(contentsOf: directory.appendingPathComponent("page-\(index + 1).png"))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 2_000)
        }
    }
}
