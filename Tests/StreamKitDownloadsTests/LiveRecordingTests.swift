import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// Live playlists from nginx-rtmp's HLS output, fed by ffmpeg publishing the FLV fixture in real
/// time: recorded to a duration and left as VOD, each media sequence taken once.
@Suite(.serialized, .requires(.nginxRTMP, .ffmpeg, .ffprobe)) struct LiveRecordingTests {
    typealias Support = DownloadTestSupport

    typealias LiveOrigin = LiveHLSOrigin

    /// `liveDuration` 10 s: reloads until 10 s are recorded, then writes VOD with ENDLIST; every
    /// segment equals nginx's fragment, none twice, and the package decodes to the frames of the
    /// same fragments read from the origin. (10 s, not 6: the first load takes the origin's 4 s
    /// window, and on a loaded machine one late reload could bring the last 2 s at once, leaving
    /// too few reloads to show in the origin's log.)
    @Test func recordsToADurationAndLeavesVOD() async throws {
        let origin = try await LiveOrigin.start(seconds: 40)
        let job = try Support.job(
            origin.playlistURL, options: Support.fastOptions(liveDuration: .seconds(10)))
        let started = ContinuousClock.now
        let (result, events) = try await Support.run(job)
        let elapsed = started.duration(to: .now)
        #expect(result.live && result.status == .complete)
        #expect(result.duration >= 10 && result.duration < 13, "\(result.duration) s recorded")
        #expect(elapsed < .seconds(30), "took \(elapsed)")
        #expect(events.contains { if case .recorded = $0 { true } else { false } }, "no reload added segments")
        if case .planned(let summary) = events.first { #expect(summary.live) }

        let package = job.packageDirectory
        let local = try String(contentsOf: package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(local.contains("#EXT-X-PLAYLIST-TYPE:VOD") && local.hasSuffix("#EXT-X-ENDLIST\n"))
        // Each fragment once, byte-identical to the one nginx wrote.
        let recorded = try #require(
            try Playlist.parse(Data(contentsOf: package.appendingPathComponent(".streamkit/video.m3u8"))).playlist.media
        )
        let urls = recorded.segments.map(\.uri)
        #expect(Set(urls).count == urls.count && urls.count >= 5, "\(urls)")
        let mine = try Support.segmentFiles(ofPlaylist: package.appendingPathComponent("video/index.m3u8"))
        #expect(mine.count == urls.count)
        for (url, segment) in zip(urls, mine) {
            let name = try #require(url.split(separator: "/").last)
            let fragment = origin.fragment(String(name))
            #expect(try Data(contentsOf: fragment) == Support.bytes(segment), "\(name)")
        }
        let fetched = try await origin.nginx.settledAccessLog().filter { $0.uri.hasSuffix(".ts") }.map(\.uri)
        #expect(Set(fetched).count == fetched.count, "a fragment was fetched twice: \(fetched)")
        #expect(
            try await origin.nginx.settledAccessLog().filter { $0.uri.hasSuffix(".m3u8") }.count >= 3,
            "the playlist was not reloaded")

        // Decoded over HTTP: the package, and the same fragments from the origin.
        let player = try await Support.serve(package.deletingLastPathComponent())
        let ours = try await Support.decodedFrames(player.url("p/index.m3u8").absoluteString)
        let theirs = try await Support.decodedFrames(package.appendingPathComponent(".streamkit/video.m3u8").path)
        #expect(ours == theirs && ours.contains { $0.hasPrefix("video:") } && ours.contains { $0.hasPrefix("audio:") })
        await player.stop()
        await origin.stop()
    }

    /// While it records, the growing playlist is appended to, not written whole again: the file
    /// keeps its inode, each read of it begins with the read before, and every read lists a head
    /// of the final playlist's segments. Checkpoints are lines of the journal: package.json read
    /// with it lists every file done on disk, more than package.json alone; once the recording
    /// ends, package.json stands alone.
    @Test func whileRecordingThePlaylistAndTheCheckpointsAreAppendedTo() async throws {
        let origin = try await LiveOrigin.start(seconds: 40)
        let job = try Support.job(origin.playlistURL)
        let playlistPath = job.packageDirectory.appendingPathComponent("video/index.m3u8").path
        let reads = Mutex<[(inode: UInt64, text: String)]>([])
        let journaled = Mutex<(reads: Int, ahead: Int, missing: [String])>((0, 0, []))
        let (result, _) = try await Support.run(job) { event, download in
            guard case .progress(let progress) = event else { return }
            if let merged = try? PackageManifest.load(from: job.packageDirectory), merged.journal != nil,
                let data = FileManager.default.contents(
                    atPath: job.packageDirectory.appendingPathComponent("package.json").path),
                let alone = try? JSONDecoder().decode(PackageManifest.self, from: data)
            {
                let done = merged.files.filter { $0.state == "done" }
                let missing = done.map(\.path).filter {
                    !FileManager.default.fileExists(atPath: job.packageDirectory.appendingPathComponent($0).path)
                }
                let ahead = done.count > alone.files.filter { $0.state == "done" }.count
                journaled.withLock { $0 = ($0.reads + 1, $0.ahead + (ahead ? 1 : 0), $0.missing + missing) }
            }
            // The inode and the text of one open file: a rename between the two cannot mix them.
            if let handle = FileHandle(forReadingAtPath: playlistPath) {
                var info = stat()
                if fstat(handle.fileDescriptor, &info) == 0, let data = try? handle.readToEnd() {
                    let text = String(decoding: data, as: UTF8.self)
                    reads.withLock { reads in
                        if reads.last?.text != text { reads.append((UInt64(info.st_ino), text)) }
                    }
                }
                try? handle.close()
            }
            if (progress.recordedSeconds ?? 0) >= 8 { download.finishRecording() }
        }
        #expect(result.live && result.status == .complete && result.duration >= 8)
        let final = try #require(
            try Playlist.parse(Data(contentsOf: URL(fileURLWithPath: playlistPath))).playlist.media)
        let growing = reads.withLock { $0 }.filter { !$0.text.contains("#EXT-X-ENDLIST") }
        var appended = 0
        for (earlier, later) in zip(growing, growing.dropFirst()) where earlier.inode == later.inode {
            #expect(later.text.hasPrefix(earlier.text), "\(earlier.text)\n---\n\(later.text)")
            appended += 1
        }
        #expect(appended >= 2, "\(growing.map(\.text))")
        let checkpoints = journaled.withLock { $0 }
        #expect(checkpoints.reads >= 3 && checkpoints.ahead >= 2, "\(checkpoints)")
        #expect(checkpoints.missing.isEmpty, "\(checkpoints.missing)")
        let journal = job.packageDirectory.appendingPathComponent(".streamkit/package.journal").path
        #expect(!FileManager.default.fileExists(atPath: journal))
        let data = try Data(contentsOf: job.packageDirectory.appendingPathComponent("package.json"))
        let alone = try JSONDecoder().decode(PackageManifest.self, from: data)
        #expect(alone.journal == nil && alone.status == .complete && alone.files.allSatisfy { $0.state == "done" })
        for read in growing {
            let media = try #require(try Playlist.parse(read.text).playlist.media, "\(read.text)")
            #expect(media.playlistType == .event)
            #expect(Array(final.segments.prefix(media.segments.count).map(\.uri)) == media.segments.map(\.uri))
        }
        await origin.stop()
    }

    /// `finishRecording()` (Ctrl-C in the CLI) stops taking segments and still leaves a VOD package.
    @Test func finishingARecordingKeepsWhatWasRecorded() async throws {
        let origin = try await LiveOrigin.start(seconds: 40)
        let job = try Support.job(origin.playlistURL)
        let playlistPath = job.packageDirectory.appendingPathComponent("video/index.m3u8").path
        // While it records, the package is served as a growing EVENT playlist.
        let whileRecording = Mutex<String?>(nil)
        let (result, _) = try await Support.run(job) { event, download in
            if case .progress(let progress) = event, (progress.recordedSeconds ?? 0) >= 5 {
                whileRecording.withLock { seen in
                    if seen == nil { seen = (try? String(contentsOfFile: playlistPath, encoding: .utf8)) ?? "" }
                }
                download.finishRecording()
            }
        }
        #expect(result.live && result.status == .complete && result.duration >= 5)
        let growing = whileRecording.withLock { $0 } ?? ""
        #expect(growing.contains("#EXT-X-PLAYLIST-TYPE:EVENT") && !growing.contains("#EXT-X-ENDLIST"), "\(growing)")
        #expect(growing.contains("#EXTINF:"), "\(growing)")
        let local = try String(
            contentsOf: job.packageDirectory.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(local.hasSuffix("#EXT-X-ENDLIST\n"))
        let segments = try Support.segmentFiles(
            ofPlaylist: job.packageDirectory.appendingPathComponent("video/index.m3u8"))
        #expect(segments.allSatisfy { FileManager.default.fileExists(atPath: $0.path) })
        let manifest = try Support.manifest(job.packageDirectory)
        #expect(manifest.status == .complete && manifest.live && manifest.renditions.allSatisfy(\.ended))
        #expect(manifest.files.allSatisfy { $0.state == "done" })
        // Run again: the package is complete; nothing is fetched.
        let before = try await origin.nginx.settledAccessLog().count
        let (again, _) = try await Support.run(job)
        #expect(again.filesFetched == 0 && again.duration == result.duration)
        #expect(try await origin.nginx.settledAccessLog().count == before)
        await origin.stop()
    }
}
