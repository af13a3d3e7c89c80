import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTPClient
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

@testable import StreamKitDownloads

/// Runs jobs, serves packages to players, and compares packages with their origin.
enum DownloadTestSupport {
    /// Runs `job` to the end with a fresh client, collecting its events.
    static func run(
        _ job: HLSDownloadJob, rate: Int64? = nil,
        onEvent: @escaping @Sendable (HLSDownloadEvent, HLSDownload) -> Void = { _, _ in }
    ) async throws -> (result: HLSDownloadResult, events: [HLSDownloadEvent]) {
        let client = try HTTPClient(
            configuration: HTTPClientConfiguration(
                maximumConnectionsPerHost: job.options.connections, globalReceiveRate: rate))
        let download = HLSDownloader(client: client).start(job)
        let collector = Task {
            var events: [HLSDownloadEvent] = []
            for await event in download.events {
                onEvent(event, download)
                events.append(event)
            }
            return events
        }
        do {
            let result = try await download.result()
            let events = await collector.value
            await client.shutdown()
            return (result, events)
        } catch {
            _ = await collector.value
            await client.shutdown()
            throw error
        }
    }

    /// A job for `url` into a new folder with fast retries.
    static func job(
        _ url: String, selection: HLSSelection = HLSSelection(), options: HLSDownloadOptions = fastOptions(),
        directory: URL? = nil
    ) throws -> HLSDownloadJob {
        HLSDownloadJob(
            source: url, selection: selection, options: options,
            packageDirectory: try directory ?? TestRun.makeTemporaryDirectory("package").appendingPathComponent("p"))
    }

    static func fastOptions(
        decrypt: Bool = false, skipBroken: Bool = false, connections: Int = 8, liveDuration: Duration? = nil
    ) -> HLSDownloadOptions {
        HLSDownloadOptions(
            connections: connections, decrypt: decrypt, skipBroken: skipBroken, liveDuration: liveDuration,
            retry: HTTPClientRetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(20)),
            progressInterval: .milliseconds(50))
    }

    /// Serves the library `root` on 127.0.0.1 the way `streamkit serve` does, for players.
    static func serve(_ root: URL) async throws -> Player {
        Player(server: try MediaServer.start(configuration: MediaServer.Configuration(libraryRoot: root.path)))
    }

    /// A library served by our own server: packages play at `/library/ID/index.m3u8`.
    struct Player {
        let server: MediaServer

        /// The URL of `path` inside the library (`ID/index.m3u8`).
        func url(_ path: String) -> URL { URL(string: server.baseURL + "library/" + path)! }

        func stop() async { await server.shutdown(gracePeriod: .seconds(2)) }
    }

    /// What ffprobe reports when a request of the player fails (a missing key or segment).
    struct PlayerRequestFailed: Error, CustomStringConvertible {
        let url: String
        let messages: String
        var description: String { "playing \(url): \(messages)" }
    }

    /// Frames ffmpeg decodes per stream of `url`: `["audio:432", "video:250"]`, sorted (the
    /// top-level streams; ffprobe lists HLS streams again under their program).
    static func decodedFrames(_ url: String) async throws -> [String] {
        let output = try await Tool.ffprobe.run(
            [
                "-v", "error", "-protocol_whitelist", "file,http,tcp,crypto,data", "-count_frames", "-show_entries",
                "stream=codec_type,nb_read_frames", "-of", "json", url,
            ], timeout: .seconds(120))
        // A failed request (a 404 for a key or a segment) is an error, not just fewer frames.
        let failures = output.standardError.split(separator: "\n").filter {
            $0.contains("Server returned") || $0.contains("HTTP error")
        }
        if !failures.isEmpty { throw PlayerRequestFailed(url: url, messages: failures.joined(separator: "; ")) }
        let probe = try JSONDecoder().decode(HLSPlayers.FrameReport.self, from: Data(output.standardOutput.utf8))
        return probe.streams.map { "\($0.codecType):\($0.frames ?? "?")" }.sorted()
    }

    /// The segments of a media playlist file, as (absolute file path, byte range) pairs in order.
    static func segmentFiles(ofPlaylist playlist: URL) throws -> [(path: String, range: ByteRange?)] {
        let media = try #require(try Playlist.parse(Data(contentsOf: playlist)).playlist.media)
        let base = playlist.deletingLastPathComponent()
        return media.resolvedSegments().filter { !$0.isGap }.map { segment in
            (base.appendingPathComponent(segment.uri).path, segment.byteRange)
        }
    }

    /// The bytes of a segment on disk.
    static func bytes(_ segment: (path: String, range: ByteRange?)) throws -> Data {
        let data = try Data(contentsOf: URL(fileURLWithPath: segment.path))
        guard let range = segment.range else { return data }
        return data.subdata(in: Int(range.lowerBound)..<Int(range.upperBound))
    }

    /// Every regular file under `directory`, as paths relative to it.
    static func files(under directory: URL) -> [String] {
        var result: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let path = enumerator?.nextObject() as? String {
            if enumerator?.fileAttributes?[.type] as? FileAttributeType == .typeRegular { result.append(path) }
        }
        return result.sorted()
    }

    /// The package's `package.json`.
    static func manifest(_ directory: URL) throws -> PackageManifest {
        try JSONDecoder().decode(
            PackageManifest.self, from: Data(contentsOf: directory.appendingPathComponent("package.json")))
    }
}
