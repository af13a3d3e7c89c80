// The Swift examples of README.md, compiled with the tests so that they stay true to the API.
// They are never run (they would reach example.com); the same calls are exercised against real
// servers by the suites of each module.
import Foundation
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMediaCache
import StreamKitMediaServer
import StreamKitRTMP

func exampleHLS() async throws {
    let client = try HTTPClient()
    let job = HLSDownloadJob(
        source: "https://example.com/show/master.m3u8",
        selection: HLSSelection(
            variant: .maximumResolution(Resolution(width: 1280, height: 720)), audio: .language("en")),
        packageDirectory: URL(fileURLWithPath: "Library/show"))
    let download = HLSDownloader(client: client).start(job)
    for await event in download.events {
        if case .progress(let progress) = event { print("\(progress.filesDone)/\(progress.filesTotal) files") }
    }
    let result = try await download.result()  // running the same job again resumes it
    print("play offline:", result.indexFile.path)
    await client.shutdown()
}

func exampleServe() async throws {
    let server = try MediaServer.start(configuration: MediaServer.Configuration(libraryRoot: "Library"))
    print(server.baseURL + "library/show/index.m3u8")  // any player, no network
    await server.waitUntilStopped()
}

func exampleFile() async throws {
    let client = try HTTPClient()
    let download = client.download(
        HTTPClientRequest(url: "https://example.com/talk.mp4"), to: URL(fileURLWithPath: "talk.mp4"))
    for await progress in download.progress { print(progress.bytesReceived, "of", progress.expectedLength ?? -1) }
    let result = try await download.result()  // resumes with Range + If-Range when run again
    print(result.bytesTransferred, "bytes fetched")
    await client.shutdown()
}

func examplePlaylist(text: String) throws {
    let parsed = try Playlist.parse(text)
    if let master = parsed.playlist.multivariant, let best = master.selectVariant(.best) {
        print("best variant:", best.uri, best.bandwidth)
    } else if let media = parsed.playlist.media {
        for segment in media.resolvedSegments(baseURL: "https://example.com/show/") {
            print(segment.mediaSequence, segment.uri, segment.duration)
        }
    }
}

func exampleRTMP() async throws {
    let recorder = RTMPRecorder(
        url: try RTMPURL("rtmp://example.com/live/show"), options: RTMPRecorder.Options(duration: .seconds(60)))
    let summary = try await recorder.record(to: "show.flv") { progress in
        print(progress.duration, "s,", progress.bytes, "bytes")
    }
    print("ended:", summary.endReason)
    let publisher = RTMPPublisher(url: try RTMPURL("rtmp://example.com/live/again"))
    _ = try await publisher.publish(file: "show.flv")
}

func exampleQueue() async throws {
    let manager = try await DownloadManager(
        configuration: DownloadManagerConfiguration(directory: URL(fileURLWithPath: "Downloads")))
    let events = await manager.events()
    let task = try await manager.add(
        DownloadRequest(url: "https://example.com/show/master.m3u8", kind: .hls), autoStart: true)
    for await event in events {  // the task survives a killed process: open the manager again to resume
        if case .completed(let info) = event, info.id == task.id { print("done:", info.location) }
        if case .failed(let info, let error) = event, info.id == task.id { print("failed:", error) }
        if case .allCompleted = event { break }
    }
    await manager.close()
}

func exampleCache() async throws {
    let cache = try MediaCache(configuration: MediaCacheConfiguration(directory: "Cache", byteLimit: 2 << 30))
    // Any range: disk where cached, Range requests to the origin where not (and kept).
    let read = try await cache.read("https://example.com/talk.mp4", range: .closed(first: 0, last: 1_048_575))
    for try await chunk in read.body { print(chunk.count, "bytes from", read.source) }
    // Or let a player do the reading, through /proxy/file?url= and /proxy/hls?url=.
    let server = try MediaServer.start(
        configuration: MediaServer.Configuration(libraryRoot: "Library", cache: cache))
    print(server.baseURL + "proxy/file?url=https%3A%2F%2Fexample.com%2Ftalk.mp4")
    await server.waitUntilStopped()
    await cache.shutdown()
}
