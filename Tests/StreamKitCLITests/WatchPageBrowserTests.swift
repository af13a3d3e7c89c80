import Foundation
import StreamKitCLI
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

/// The player page of a package (`/watch/ID`), played by headless Chromium through Selenium
/// with the origin stopped.
@Suite(.requires(.chromium, .selenium, .nginx, .ffmpeg)) struct WatchPageBrowserTests {
    @Test func aDownloadedPackagePlaysInItsPageWithTheOriginStopped() async throws {
        let home = try TestRun.makeTemporaryDirectory("watch-home")
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsMaster))
        let origin = try await Nginx.static(root: fixture.directory)
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(
            StreamKitCommand.self,
            arguments: ["download", origin.url(fixture.recipe.entry).absoluteString, "--home", home.path],
            context: context)
        #expect(code == .success, "\(context.errorOutput.text)")
        await origin.stop()

        let libraryRoot = home.appendingPathComponent("library").path
        let id = try #require(try FileManager.default.contentsOfDirectory(atPath: libraryRoot).first)
        var configuration = MediaServer.Configuration(libraryRoot: libraryRoot)
        let exports = home.appendingPathComponent("exports").path
        configuration.exportMP4 = PackageExport.mp4Exporter(
            exports: exports, environment: ProcessInfo.processInfo.environment)
        let server = try MediaServer.start(configuration: configuration)
        let client = try HTTPClient()
        let (head, body) = try await client.data(for: HTTPClientRequest(url: server.baseURL + "watch/" + id))
        let (missing, _) = try await client.data(for: HTTPClientRequest(url: server.baseURL + "watch/none"))
        let (script, _) = try await client.data(for: HTTPClientRequest(url: server.baseURL + "static/watch.js"))
        let (_, library) = try await client.data(for: HTTPClientRequest(url: server.baseURL))
        // "Download as MP4": written on the first request (remuxed by ffmpeg), then kept.
        let (mp4Head, mp4) = try await client.data(
            for: HTTPClientRequest(url: server.baseURL + "watch/\(id)/video.mp4"))
        let (againHead, again) = try await client.data(
            for: HTTPClientRequest(url: server.baseURL + "watch/\(id)/video.mp4"))
        await client.shutdown()
        #expect(mp4Head.status.rawValue == 200 && mp4Head.headers["Content-Type"] == "video/mp4")
        #expect(mp4Head.headers["Content-Disposition"]?.hasPrefix("attachment; filename=\"") == true)
        #expect(mp4.count > 10_000 && String(decoding: mp4[4..<8], as: UTF8.self) == "ftyp")
        #expect(againHead.status.rawValue == 200 && again == mp4)
        #expect(try FileManager.default.contentsOfDirectory(atPath: exports) == ["\(id).mp4"])
        let probe = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", exports + "/\(id).mp4",
        ])
        let seconds = Double(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(seconds > 9 && seconds < 11, "the MP4 lasts \(seconds) s")
        #expect(head.status.rawValue == 200)
        #expect(head.headers["Content-Security-Policy"] == "default-src 'self'")
        #expect(script.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(missing.status.rawValue == 404)
        let page = String(decoding: body, as: UTF8.self)
        #expect(page.contains("<video id=\"player\""), "\(page)")
        #expect(!page.contains("<script>") && !page.contains("style="), "nothing inline: \(page)")
        // The fixture's variants, listed with their resolutions.
        #expect(page.contains("<h2>Variants</h2>"), "\(page)")
        #expect(page.contains("x"), "\(page)")
        #expect(String(decoding: library, as: UTF8.self).contains("href=\"/watch/\(id)\">watch</a>"))
        #expect(page.contains("href=\"/watch/\(id)/video.mp4\" download>Download as MP4</a>"), "\(page)")

        // Chromium plays the package from the page: the position passes 3 s, with no error and no
        // note that the browser cannot play HLS.
        let directory = try TestRun.makeTemporaryDirectory("watch-browser")
        let visits = try await Selenium.visit(
            [server.baseURL + "watch/" + id], settle: .seconds(7), directory: directory,
            prepare: "const v = document.getElementById('player'); v.muted = true; v.play();",
            probe: """
                const v = document.getElementById('player');
                return {time: v.currentTime, error: v.error ? v.error.code : 0,
                        noted: !document.getElementById('support').hidden || !document.getElementById('failed').hidden};
                """)
        await server.shutdown(gracePeriod: .seconds(1))
        struct Playback: Decodable {
            var time: Double
            var error: Int
            var noted: Bool
        }
        let playback = try JSONDecoder().decode(
            Playback.self, from: Data(try #require(visits.first?.probe).utf8))
        #expect(playback.time > 3, "currentTime \(playback.time)")
        #expect(playback.error == 0)
        #expect(!playback.noted)
    }

    /// A package's poster: the cover its task named (`queue add --thumbnail`), fetched with the
    /// download and kept in the package; else a frame ffmpeg takes, kept in the home's exports.
    @Test func postersComeFromTheCoverElseFromAFrame() async throws {
        let home = try TestRun.makeTemporaryDirectory("poster-home")
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        // The origin serves the stream and a cover picture beside it.
        let www = try TestRun.makeTemporaryDirectory("poster-www")
        try FileManager.default.createSymbolicLink(
            atPath: www.appendingPathComponent("stream").path, withDestinationPath: fixture.directory.path)
        try await Tool.ffmpeg.run([
            "-v", "error", "-f", "lavfi", "-i", "color=c=red:s=64x48", "-frames:v", "1",
            www.appendingPathComponent("cover.png").path,
        ])
        let cover = try Data(contentsOf: www.appendingPathComponent("cover.png"))
        let origin = try await Nginx.static(root: www)
        let stream = origin.url("stream/" + fixture.recipe.entry).absoluteString
        func streamkit(_ arguments: [String]) async -> (ExitCode, String, String) {
            let context = CommandContext.capturing()
            let code = await CommandRunner.run(
                StreamKitCommand.self, arguments: arguments + ["--home", home.path], context: context)
            return (code, context.output.text, context.errorOutput.text)
        }
        let (added, withCover, addError) = await streamkit([
            "queue", "add", stream, "--title", "With cover", "--thumbnail", origin.url("cover.png").absoluteString,
            "--start",
        ])
        #expect(added == .success, "\(addError)")
        let (ran, _, runError) = await streamkit(["queue", "run", "--exit-when-done"])
        #expect(ran == .success, "\(runError)")
        let (downloaded, _, downloadError) = await streamkit(["download", stream, "--variant", "worst"])
        #expect(downloaded == .success, "\(downloadError)")
        await origin.stop()

        let libraryRoot = home.appendingPathComponent("library").path
        let ids = try FileManager.default.contentsOfDirectory(atPath: libraryRoot)
        let coverID = withCover.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(ids.count == 2 && ids.contains(coverID), "\(ids)")
        let frameID = try #require(ids.first { $0 != coverID })
        #expect(try Data(contentsOf: URL(fileURLWithPath: libraryRoot + "/\(coverID)/poster.png")) == cover)

        var configuration = MediaServer.Configuration(libraryRoot: libraryRoot)
        let exports = home.appendingPathComponent("exports").path
        configuration.makePoster = PackageExport.posterMaker(exports: exports, ffmpeg: try Tool.ffmpeg.requirePath())
        let server = try MediaServer.start(configuration: configuration)
        let client = try HTTPClient()
        let (coverHead, coverBody) = try await client.data(
            for: HTTPClientRequest(url: server.baseURL + "watch/\(coverID)/poster"))
        let (frameHead, frameBody) = try await client.data(
            for: HTTPClientRequest(url: server.baseURL + "watch/\(frameID)/poster"))
        let (_, page) = try await client.data(for: HTTPClientRequest(url: server.baseURL + "watch/\(frameID)"))
        await client.shutdown()
        await server.shutdown(gracePeriod: .seconds(1))
        #expect(coverHead.status.rawValue == 200 && coverHead.headers["Content-Type"] == "image/png")
        #expect(Data(coverBody) == cover)
        #expect(frameHead.status.rawValue == 200 && frameHead.headers["Content-Type"] == "image/jpeg")
        #expect(Array(frameBody.prefix(3)) == [0xFF, 0xD8, 0xFF], "a JPEG")
        #expect(FileManager.default.fileExists(atPath: exports + "/\(frameID).jpg"))
        #expect(String(decoding: page, as: UTF8.self).contains("poster=\"/watch/\(frameID)/poster\""))
    }
}
