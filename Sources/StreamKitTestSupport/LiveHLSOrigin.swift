import Foundation

/// A live HLS origin: nginx-rtmp cutting 1-second fragments (kept on disk, so that a test can
/// compare what it recorded with them) from ffmpeg publishing the FLV fixture in real time.
public struct LiveHLSOrigin: Sendable {
    public let nginx: Nginx
    public let publisher: ChildProcess
    /// The stream's name: its playlist is `hls/live/STREAM.m3u8`, its fragments beside it.
    public let stream: String

    public var playlistURL: String { nginx.url("hls/live/\(stream).m3u8").absoluteString }

    /// The origin's copy of fragment `name`.
    public func fragment(_ name: String) -> URL {
        nginx.directory.appendingPathComponent("hls/live/" + name)
    }

    /// Starts the origin on a fixture of `seconds`, and returns once its playlist lists two
    /// fragments.
    public static func start(seconds: Int, stream: String = "show") async throws -> LiveHLSOrigin {
        let flv = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: seconds, segmentSeconds: 1))
        let nginx = try await Nginx.rtmp(applications: [
            RTMPApplication(name: "live", hls: true, hlsFragmentSeconds: 1, hlsPlaylistSeconds: 4, hlsCleanup: false)
        ])
        let publisher = try ChildProcess(
            executable: try Tool.ffmpeg.requirePath(),
            arguments: [
                "-nostdin", "-loglevel", "error", "-re", "-i", flv.entryFile.path, "-c", "copy", "-f", "flv",
                nginx.rtmpURL(application: "live", stream: stream),
            ],
            logName: "ffmpeg-publish")
        let origin = LiveHLSOrigin(nginx: nginx, publisher: publisher, stream: stream)
        let playlist = nginx.directory.appendingPathComponent("hls/live/\(stream).m3u8")
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: playlist, encoding: .utf8),
                text.components(separatedBy: "#EXTINF").count >= 3
            {
                return origin
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await origin.stop()
        throw TestSupportError("nginx-rtmp wrote no HLS playlist:\n\(nginx.errorLog.suffix(2_000))")
    }

    public func stop() async {
        await publisher.stop()
        await nginx.stop()
    }
}
