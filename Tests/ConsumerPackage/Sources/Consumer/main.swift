// A few lines of README.md's API, run for real against StreamKit's own server on 127.0.0.1:
// serve a library, keep its stream offline, download a file, queue one. Exit 0 when every
// copy is byte for byte what was served.
import Core
import Foundation
import HTTP
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTPClient
import StreamKitMediaServer

func check(_ condition: Bool, _ what: String) {
    guard !condition else { return }
    FileHandle.standardError.write(Data("consumer: \(what)\n".utf8))
    exit(1)
}

let route = Route(path: "library/show/index.m3u8", greeting: Greeting("app modules Core and HTTP beside StreamKit"))
print(route.greeting.text)

let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("consumer-\(getpid())")
defer { try? FileManager.default.removeItem(at: work) }
let show = work.appendingPathComponent("Library/show")
try FileManager.default.createDirectory(at: show, withIntermediateDirectories: true)
let segments = (0..<3).map { index in [UInt8]((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }) }
for (index, bytes) in segments.enumerated() {
    try Data(bytes).write(to: show.appendingPathComponent("segment\(index).ts"))
}
let playlist = """
    #EXTM3U
    #EXT-X-VERSION:3
    #EXT-X-TARGETDURATION:4
    #EXTINF:4.0,
    segment0.ts
    #EXTINF:4.0,
    segment1.ts
    #EXTINF:4.0,
    segment2.ts
    #EXT-X-ENDLIST

    """
try Data(playlist.utf8).write(to: show.appendingPathComponent("index.m3u8"))

// Parse a playlist.
let parsed = try Playlist.parse(playlist)
check(parsed.playlist.media?.segments.count == 3, "the playlist parsed to \(String(describing: parsed.playlist))")

// Serve the library to any player on 127.0.0.1.
let server = try MediaServer.start(
    configuration: MediaServer.Configuration(libraryRoot: work.appendingPathComponent("Library").path))
let source = server.baseURL + route.path
print("serving", source)

// Keep the HLS stream for offline play.
let client = try HTTPClient()
let job = HLSDownloadJob(
    source: source, selection: HLSSelection(), packageDirectory: work.appendingPathComponent("Offline/show"))
let download = HLSDownloader(client: client).start(job)
for await event in download.events {
    if case .progress(let progress) = event { print("\(progress.filesDone)/\(progress.filesTotal) files") }
}
let result = try await download.result()
check(FileManager.default.fileExists(atPath: result.indexFile.path), "no offline playlist")
let offlineMedia = try FileManager.default.subpathsOfDirectory(
    atPath: result.indexFile.deletingLastPathComponent().path
)
.filter { $0.hasSuffix(".ts") }.sorted()
check(offlineMedia.count == 3, "offline package holds \(offlineMedia)")
for (name, bytes) in zip(offlineMedia, segments) {
    let copy = try Data(contentsOf: result.indexFile.deletingLastPathComponent().appendingPathComponent(name))
    check(copy == Data(bytes), "offline \(name) differs from what was served")
}

// Download a file, resumably.
let file = work.appendingPathComponent("segment1.ts")
let fileDownload = client.download(HTTPClientRequest(url: server.baseURL + "library/show/segment1.ts"), to: file)
let fileResult = try await fileDownload.result()
check(try Data(contentsOf: file) == Data(segments[1]), "downloaded file differs")
print(fileResult.bytesTransferred, "bytes fetched")

// Queue a download that survives the process.
let manager = try await DownloadManager(
    configuration: DownloadManagerConfiguration(directory: work.appendingPathComponent("Downloads")))
let events = await manager.events()
let task = try await manager.add(
    DownloadRequest(url: server.baseURL + "library/show/segment2.ts", kind: .file), autoStart: true)
var location: String?
for await event in events {
    if case .completed(let info) = event, info.id == task.id { location = info.location }
    if case .failed(let info, let error) = event, info.id == task.id {
        check(false, "queued download failed: \(error)")
    }
    if case .allCompleted = event { break }
}
await manager.close()
check(
    location.map { (try? Data(contentsOf: URL(fileURLWithPath: $0))) == Data(segments[2]) } == true,
    "queued download at \(location ?? "nowhere") differs")

await client.shutdown()
await server.shutdown()
print("consumer: every copy matches")
