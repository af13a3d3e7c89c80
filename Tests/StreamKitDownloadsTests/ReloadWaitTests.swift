import Foundation
import StreamKitHLS
import StreamKitHTTPClient
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// The recorder's reload wait, injected: a live recording that waits through it instead of the
/// clock, so that a benchmark passes a day in minutes. Here the wait itself advances the origin
/// by one segment, as a live origin does in a target duration.
@Suite(.requires(.nginx)) struct ReloadWaitTests {
    static let segments = 40

    static func playlist(last: Int) -> String {
        let first = max(0, last - 3)
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        for index in first...last { text += "#EXTINF:2.0,\ns\(index).ts\n" }
        return text + (last == segments - 1 ? "#EXT-X-ENDLIST\n" : "")
    }

    @Test func aRecordingWaitsThroughTheInjectedWaitAndTakesEverySegment() async throws {
        let root = try TestRun.makeTemporaryDirectory("reload-origin")
        for index in 0..<Self.segments {
            try Data(repeating: UInt8(index), count: 1_000).write(to: root.appendingPathComponent("s\(index).ts"))
        }
        let playlist = root.appendingPathComponent("live.m3u8")
        try Self.playlist(last: 3).write(to: playlist, atomically: true, encoding: .utf8)
        let nginx = try await Nginx.static(root: root)
        let published = Mutex(3)
        let waits = Mutex<[Duration]>([])
        let inodes = Mutex<[UInt64]>([])
        let client = try HTTPClient()
        let job = try DownloadTestSupport.job(nginx.url("live.m3u8").absoluteString)
        let source = job.packageDirectory.appendingPathComponent(".streamkit/video.m3u8").path
        let downloader = HLSDownloader(client: client) { duration in
            waits.withLock { $0.append(duration) }
            var status = stat()
            if stat(source, &status) == 0 { inodes.withLock { $0.append(UInt64(status.st_ino)) } }
            let last = published.withLock { last in
                last = min(Self.segments - 1, last + 1)
                return last
            }
            try Self.playlist(last: last).write(to: playlist, atomically: true, encoding: .utf8)
        }
        let started = ContinuousClock.now
        let download = downloader.start(job)
        let drain = Task { for await _ in download.events {} }
        let result = try await download.result()
        await drain.value
        await client.shutdown()
        await nginx.stop()
        // Forty reloads two seconds apart would take 80 s on the clock.
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(waits.withLock { $0.count } >= Self.segments - 4)
        #expect(waits.withLock { $0.allSatisfy { $0 == .seconds(2) } }, "\(waits.withLock { $0 })")
        let media = try String(
            contentsOf: result.directory.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        let uris = media.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(media.hasSuffix("#EXT-X-ENDLIST\n"))
        // The recording starts near the live edge of the first window and then takes every segment.
        #expect(uris.count >= Self.segments - 4 && uris.count <= Self.segments, "\(uris.count)")
        // Each reload appended to the recorded source: one file from the first write on (a whole
        // write replaces it with a new one).
        #expect(Set(inodes.withLock { $0 }).count == 1, "the recorded source was written whole again")
        // Once the recording ended, the recorded source is whole again, as VOD, and lists every
        // segment taken once.
        let recorded = try #require(
            try Playlist.parse(Data(contentsOf: URL(fileURLWithPath: source))).playlist.media)
        #expect(recorded.hasEndList && recorded.segments.count == uris.count)
        #expect(Set(recorded.segments.map(\.uri)).count == uris.count)
    }
}

/// The recorded source as read back: its sequence-number lines out, the tail of a cut append out.
struct RecordedSourceReadingTests {
    @Test func theLastSequenceLineEndsWhatIsKept() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:7
            #EXTINF:2.0,
            http://o/7.ts
            #STREAMKIT-LAST-SOURCE-SEQUENCE:7
            #EXTINF:2.0,
            http://o/8.ts
            #STREAMKIT-LAST-SOURCE-SEQUENCE:8
            #EXTINF:2.0,
            http://o/9

            """
        let (data, last) = HLSDownloadEngine.recordedSource(Data(text.utf8))
        #expect(last == 8)
        let media = try #require(try Playlist.parse(data).playlist.media)
        #expect(media.segments.map(\.uri) == ["http://o/7.ts", "http://o/8.ts"])
        #expect(media.segments.allSatisfy { $0.extraLines.isEmpty })
    }

    @Test func aFileWithoutSequenceLinesIsTakenWhole() {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\na.ts\n#EXT-X-ENDLIST\n"
        let (data, last) = HLSDownloadEngine.recordedSource(Data(text.utf8))
        #expect(last == nil && data == Data(text.utf8))
    }
}
