import Foundation
import MediaServer
import StreamKitCLI
import TestSupport
import Testing

/// The page at `/` of `streamkit serve`, loaded by a real browser (headless Chromium).
@Suite(.requires(.chromium, .nginx, .ffmpeg)) struct LibraryPageBrowserTests {
    @Test func chromiumShowsBothItemsOfTheLibrary() async throws {
        // Two real packages, downloaded by `streamkit download` from nginx.
        let home = try TestRun.makeTemporaryDirectory("page-home")
        var origins: [Nginx] = []
        for kind in [FixtureRecipe.Kind.hlsTS, .hlsFMP4] {
            let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
            let nginx = try await Nginx.static(root: fixture.directory)
            origins.append(nginx)
            let context = CommandContext.capturing()
            let code = await CommandRunner.run(
                StreamKitCommand.self,
                arguments: ["download", nginx.url(fixture.recipe.entry).absoluteString, "--home", home.path],
                context: context)
            #expect(code == .success, "\(context.errorOutput.text)")
        }
        for origin in origins { await origin.stop() }
        let server = try MediaServer.start(
            configuration: MediaServer.Configuration(libraryRoot: home.appendingPathComponent("library").path))
        let directory = try TestRun.makeTemporaryDirectory("chromium")
        let screenshot = directory.appendingPathComponent("page.png")
        let common = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(directory.appendingPathComponent("profile").path)", "--window-size=1000,500",
        ]
        let dom = try await Tool.chromium.run(common + ["--dump-dom", server.baseURL], timeout: .seconds(90))
        try await Tool.chromium.run(
            common + ["--screenshot=\(screenshot.path)", server.baseURL], timeout: .seconds(90),
            workingDirectory: directory)
        await server.shutdown(gracePeriod: .seconds(1))

        // The page's text, as the browser built it: both items, their state, size, duration, links.
        let text = dom.standardOutput
        #expect(text.contains("<h1>StreamKit library</h1>"), "\(text)")
        let rows = text.components(separatedBy: "<tr>").dropFirst(2)  // the header row first
        #expect(rows.count == 2, "\(text)")
        for row in rows {
            #expect(row.contains("127.0.0.1:"), "\(row)")
            #expect(row.contains("<td>downloaded</td>"), "\(row)")
            #expect(row.contains("<td>0:10</td>"), "\(row)")
            #expect(row.contains("/index.m3u8\">index.m3u8</a>"), "\(row)")
        }
        #expect(text.contains("http-equiv=\"refresh\""))
        // The screenshot: a PNG of the window's size, not blank.
        let png = try Data(contentsOf: screenshot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
        #expect(width == 1000 && height == 500, "\(width)x\(height)")
        #expect(png.count > 8_000, "\(png.count) bytes")
    }
}
