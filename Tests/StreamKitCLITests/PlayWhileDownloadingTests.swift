import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A package plays while it downloads: `streamkit download` from a throttled nginx, `streamkit
/// serve` of the same home, and players that open the package after its first segments.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .gstLaunch)) struct PlayWhileDownloadingTests {
    /// One sample of the package's media playlist as served.
    struct Sample: CustomStringConvertible {
        let segments: Int
        let event: Bool
        let ended: Bool
        var description: String { "\(segments)\(event ? " EVENT" : "")\(ended ? " ENDLIST" : "")" }
    }

    static let segmentCount = 20

    /// The throttled origin: 20 one-second TS segments of about 80 kB, 40 kB/s a connection.
    private func origin() async throws -> (Fixture, Nginx) {
        let fixture = try await Fixtures.shared.fixture(
            FixtureRecipe(.hlsTS, seconds: Self.segmentCount, segmentSeconds: 1, videoBitrate: "600k"))
        let nginx = try await Nginx.static(
            root: fixture.directory, limitRatePerConnection: 40_000, unthrottledHeader: "X-Unthrottled")
        return (fixture, nginx)
    }

    private func get(_ port: UInt16, _ target: String) async throws -> RawHTTPResponse {
        try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            return try connection.readResponse()
        }
    }

    private func sample(_ port: UInt16, _ path: String) async throws -> Sample? {
        let response = try await get(port, path)
        guard response.status == 200 else { return nil }
        let media = try #require(try Playlist.parse(response.text, options: .strict).playlist.media, "\(response)")
        return Sample(segments: media.segments.count, event: media.playlistType == .event, ended: media.hasEndList)
    }

    /// Every file of a package but its state (`package.json`, `.streamkit/`), by relative path.
    static func contents(of package: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: package.path)
        while let path = enumerator?.nextObject() as? String {
            guard path != PackageLayout.manifestName, !path.hasPrefix(PackageLayout.internalFolder) else { continue }
            var isDirectory: ObjCBool = false
            let full = package.appendingPathComponent(path).path
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                result[path] = try Data(contentsOf: URL(fileURLWithPath: full))
            }
        }
        return result
    }

    @Test func playersReadTheGrowingPackageAndGetTheCompleteVODAtTheSameURL() async throws {
        let (fixture, nginx) = try await origin()
        let whole = try await HLSPlayers.ffmpeg(fixture.entryFile.path)
        let home = try TestRun.makeTemporaryDirectory("play-while-home")
        let url = nginx.url("index.m3u8").absoluteString
        let id = HLSDownloadJob.packageID(
            source: url, selection: HLSSelection(), decrypt: false, salt: try DownloadManager.idSalt(directory: home))
        let package = home.appendingPathComponent("library/\(id)")
        let download = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: ["download", url, "--home", home.path, "-j", "3"],
            logName: "streamkit-play-while")
        let server = try await ServeProcess.start(arguments: ["--port", "0", "--home", home.path])
        let port = server.port
        let playlistPath = "/library/\(id)/video/index.m3u8"

        // The first segments in place: the package is served, as an EVENT playlist without ENDLIST
        // listing a head of the stream, and the queue's task has its play link.
        var first: Sample?
        let deadline = ContinuousClock.now + .seconds(30)
        while download.isRunning, ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: package.appendingPathComponent("index.m3u8").path),
                let sample = try await sample(port, playlistPath)
            {
                first = sample
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let head = try #require(first, "no playlist while downloading: \(download.standardError)")
        #expect(head.event && !head.ended && head.segments >= 1 && head.segments < Self.segmentCount, "\(head)")
        let master = try await get(port, "/library/\(id)/index.m3u8")
        #expect(master.status == 200 && master.text.contains("video/index.m3u8"), "\(master)")
        struct API: Decodable { let tasks: [QueueTaskSummary] }
        let api = try JSONDecoder().decode(API.self, from: Data(try await get(port, "/api/tasks").body))
        #expect(api.tasks.first?.state == "running", "\(api.tasks)")
        #expect(api.tasks.first?.playPath == "/library/\(id)/index.m3u8", "\(api.tasks)")
        let page = try await get(port, "/")
        #expect(page.text.contains("href=\"/library/\(id)/index.m3u8\">play</a>"), "\(page.text)")

        // Players open it now and follow it as it grows, to the ENDLIST the end of the download writes.
        let playURL = "http://127.0.0.1:\(port)/library/\(id)/index.m3u8"
        async let ffmpeg = HLSPlayers.ffmpeg(playURL, fromTheStart: true)
        async let legacy = HLSPlayers.gstreamer(playURL, demuxer: .hlsdemux)
        async let newer = HLSPlayers.gstreamer(playURL, demuxer: .hlsdemux2)
        var samples = [head]
        while download.isRunning {
            if let sample = try await sample(port, playlistPath) { samples.append(sample) }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(try await download.wait(timeout: .seconds(60)) == 0, "\(download.standardError)")
        // It grew, never shrank, and had no ENDLIST until it listed every segment.
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0.segments <= $1.segments }, "\(samples)")
        #expect(samples.allSatisfy { !$0.ended || $0.segments == Self.segmentCount }, "\(samples)")
        #expect(Set(samples.map(\.segments)).count > 2, "\(samples)")
        let final = try #require(try await sample(port, playlistPath))
        #expect(final.segments == Self.segmentCount && final.ended && !final.event, "\(final)")

        let ffmpegPlayback = try await ffmpeg
        #expect(ffmpegPlayback.failedRequests.isEmpty, "\(ffmpegPlayback)")
        #expect(
            ffmpegPlayback.videoFrames == whole.videoFrames && ffmpegPlayback.audioFrames == whole.audioFrames,
            "\(ffmpegPlayback) of \(whole)")
        // GStreamer 1.22 starts a playlist without ENDLIST near its end (it ignores EXT-X-START):
        // it decodes at least as many frames as the head held, and plays on to the end.
        for playback in [try await legacy, try await newer] {
            #expect(playback.playedToTheEnd, "\(playback)")
            #expect(playback.videoFrames >= head.segments * 25, "\(playback), head \(head)")
        }

        // The same package as a download with nothing watching it, byte for byte.
        let reference = try TestRun.makeTemporaryDirectory("play-while-reference").appendingPathComponent("package")
        let otherHome = try TestRun.makeTemporaryDirectory("play-while-reference-home")
        let normal = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(),
            arguments: ["download", url, "-o", reference.path, "-H", "X-Unthrottled: 1", "--home", otherHome.path],
            logName: "streamkit-play-while-reference")
        #expect(try await normal.wait(timeout: .seconds(60)) == 0, "\(normal.standardError)")
        let served = try Self.contents(of: package)
        let expected = try Self.contents(of: reference)
        #expect(served.keys.sorted() == expected.keys.sorted())
        #expect(served == expected, "files differ: \(served.keys.filter { served[$0] != expected[$0] }.sorted())")
        server.process.signal(SIGTERM)
        #expect(try await server.process.wait(timeout: .seconds(10)) == 0)
        await nginx.stop()
    }

    /// Ctrl-C: the head stays as it was, served and listed as stopped (an EVENT playlist, the
    /// download resumes it), and `export` refuses it. A resumed download writes the head it has
    /// before any new segment arrives.
    @Test func aStoppedDownloadKeepsItsHeadAndItsResumeServesTheHeadAtOnce() async throws {
        let (_, nginx) = try await origin()
        let home = try TestRun.makeTemporaryDirectory("play-while-stopped-home")
        let library = try TestRun.makeTemporaryDirectory("play-while-stopped")
        let package = library.appendingPathComponent("stopped")
        let playlist = package.appendingPathComponent("video/index.m3u8")
        let arguments = [
            "download", nginx.url("index.m3u8").absoluteString, "-o", package.path, "--home", home.path, "-j", "2",
        ]
        func listed() -> Int? {
            guard let text = try? String(contentsOf: playlist, encoding: .utf8),
                let media = try? Playlist.parse(text).playlist.media
            else { return nil }
            return media.segments.count
        }
        let first = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: arguments, logName: "streamkit-play-while-stopped")
        let deadline = ContinuousClock.now + .seconds(30)
        while first.isRunning, ContinuousClock.now < deadline, (listed() ?? 0) < 2 {
            try await Task.sleep(for: .milliseconds(50))
        }
        first.signal(SIGINT)
        #expect(try await first.wait(timeout: .seconds(20)) == 130, "\(first.standardError)")
        let text = try String(contentsOf: playlist, encoding: .utf8)
        let head = try #require(try Playlist.parse(text, options: .strict).playlist.media)
        #expect(head.playlistType == .event && !head.hasEndList, "\(text)")
        #expect(head.segments.count >= 2 && head.segments.count < Self.segmentCount, "\(text)")
        // The segments in place from the first: the head, or more when the run stopped before
        // its next write of the playlist.
        var inPlace = 0
        while FileManager.default.fileExists(
            atPath: package.appendingPathComponent(String(format: "video/%05d.ts", inPlace)).path)
        {
            inPlace += 1
        }
        #expect(inPlace >= head.segments.count && inPlace < Self.segmentCount)

        let server = try await ServeProcess.start(arguments: ["--root", library.path, "--port", "0"])
        let page = try await get(server.port, "/")
        #expect(page.text.contains("<td>interrupted</td>"), "\(page.text)")
        #expect(page.text.contains("href=\"/library/stopped/index.m3u8\""), "\(page.text)")
        server.process.signal(SIGTERM)
        #expect(try await server.process.wait(timeout: .seconds(10)) == 0)
        let context = CommandContext.capturing()
        let out = library.appendingPathComponent("stopped.ts").path
        let exported = await CommandRunner.run(
            StreamKitCommand.self, arguments: ["export", package.path, out], context: context)
        #expect(exported == .failure, "\(context.errorOutput.text)")
        #expect(
            context.errorOutput.text.contains(
                "video/index.m3u8 has no EXT-X-ENDLIST: the download is not complete (resume it, then export)"),
            "\(context.errorOutput.text)")
        #expect(!FileManager.default.fileExists(atPath: out))

        // Without its playlists (as a package an earlier version stopped), the resumed download
        // writes the same head before a new segment (two seconds each at this rate) arrives.
        try FileManager.default.removeItem(at: playlist)
        try FileManager.default.removeItem(at: package.appendingPathComponent("index.m3u8"))
        // Nor the segments stopped half-way: resumed from their last byte, they came in a moment
        // after the head was written, and on a loaded machine the next write, a second later,
        // listed them before this test had read the first.
        let video = package.appendingPathComponent("video")
        for name in try FileManager.default.contentsOfDirectory(atPath: video.path) where name.contains(".streamkit") {
            try FileManager.default.removeItem(at: video.appendingPathComponent(name))
        }
        let started = ContinuousClock.now
        let second = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: arguments, logName: "streamkit-play-while-resumed")
        var resumed: Int?
        while second.isRunning, started.duration(to: .now) < .seconds(10), resumed == nil {
            resumed = listed()
            try await Task.sleep(for: .milliseconds(20))
        }
        let waited = started.duration(to: .now)
        second.signal(SIGINT)
        #expect(try await second.wait(timeout: .seconds(20)) == 130, "\(second.standardError)")
        #expect(resumed == inPlace, "resumed head \(String(describing: resumed)) after \(waited)")
        #expect(FileManager.default.fileExists(atPath: package.appendingPathComponent("index.m3u8").path))
        await nginx.stop()
    }
}
