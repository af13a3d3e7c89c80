import Foundation
import StreamKitDownloads
import StreamKitHTTPClient
import StreamKitTestSupport
import Testing

@Suite(.requires(.ffmpeg, .nginx)) struct HLSDownloadSetUpTests {
    /// A download killed while its first playlist was on the way left a folder holding only
    /// StreamKit's own folder and no manifest, which every later run refused ("not empty and holds
    /// no package.json"). The folder is claimed with a manifest before the playlist is asked for;
    /// a copy of it taken then, the state a kill -9 leaves, is resumed to the end.
    @Test func aPackageKilledBeforeItsPlaylistArrivedIsResumed() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let segments = try await Nginx.static(root: fixture.directory)
        let text = try String(contentsOf: fixture.directory.appendingPathComponent("index.m3u8"), encoding: .utf8)
        let playlist = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasSuffix(".ts") ? segments.url(String(line)).absoluteString : String(line)
        }.joined(separator: "\n")
        // The first request for the playlist is never answered; later ones are.
        let origin = try ScriptedTCPResponder { connection in
            connection == 0
                ? [.readRequestHead, .stall]
                : [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 200,
                            headers: [
                                ("Content-Type", "application/vnd.apple.mpegurl"),
                                ("Content-Length", "\(playlist.utf8.count)"), ("Connection", "close"),
                            ],
                            body: Array(playlist.utf8))),
                    .close,
                ]
        }
        let job = try DownloadTestSupport.job(origin.url("index.m3u8").absoluteString)
        let manifest = job.packageDirectory.appendingPathComponent(PackageLayout.manifestName).path
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        let first = HLSDownloader(client: client).start(job)
        let claimed = await eventually(timeout: .seconds(20)) {
            FileManager.default.fileExists(atPath: manifest) && origin.connectionCount >= 1
        }
        #expect(claimed, "no \(PackageLayout.manifestName) while the playlist was awaited")
        let killed = try TestRun.makeTemporaryDirectory("killed-package").appendingPathComponent("p")
        try FileManager.default.copyItem(at: job.packageDirectory, to: killed)
        first.cancel()
        _ = try? await first.result()
        await client.shutdown()

        var again = job
        again.packageDirectory = killed
        let (result, _) = try await DownloadTestSupport.run(again)
        #expect(result.status == .complete)
        let names = try FileManager.default.contentsOfDirectory(atPath: killed.appendingPathComponent("video").path)
        #expect(
            names.filter { $0.hasSuffix(".ts") }.count
                == text.split(separator: "\n").filter { $0.hasSuffix(".ts") }.count)
        await origin.stop()
        await segments.stop()
    }
}
