import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `streamkit` binary on HLS: SIGKILL at random moments and restarts, Ctrl-C, live.
@Suite(.serialized, .requires(.nginx, .ffmpeg)) struct HLSDownloadBinaryTests {
    static func streamkit() throws -> String { try DownloadBinaryTests.streamkit() }

    /// The local file of origin segment `segNNN.ts` (media sequence NNN).
    static func localName(ofOrigin uri: Substring) -> String? {
        guard uri.hasPrefix("/seg"), uri.hasSuffix(".ts"), let number = Int(uri.dropFirst(4).dropLast(3)) else {
            return nil
        }
        return PackageLayoutNames.segment(number)
    }

    /// The size of the origin's segment whose local file is `name`.
    static func size(ofOrigin name: String, in directory: URL) -> Int64? {
        guard let number = Int(name.prefix { $0.isNumber }) else { return nil }
        let origin = directory.appendingPathComponent(String(format: "seg%03d.ts", number))
        return (try? FileManager.default.attributesOfItem(atPath: origin.path)[.size] as? NSNumber)?.int64Value
    }

    /// Kills a 300-segment download with SIGKILL at 10 random moments, restarting it each time:
    /// the package ends byte-identical to the origin, no file that was in place at a kill is
    /// fetched again (it is only checked against its ETag, a HEAD with no body), and every
    /// segment with bytes on disk at a kill continues from its last byte.
    @Test func killedTenTimesItEndsIdenticalWithoutFetchingCompletedSegmentsAgain() async throws {
        let fixture = try await Fixtures.shared.fixture(
            FixtureRecipe(.hlsTS, seconds: 300, segmentSeconds: 1, videoBitrate: "1200k"))
        // About 75 KB segments at 50 KB/s a connection: each takes about half a second (nginx sends the
        // first second's worth at once), the whole download about 20 s on 8 connections.
        let nginx = try await Nginx.static(
            root: fixture.directory, limitRatePerConnection: 50_000, unthrottledHeader: "X-Unthrottled")
        let url = nginx.url("index.m3u8").absoluteString
        let home = try TestRun.makeTemporaryDirectory("kill-home")
        let id = HLSDownloadJob.packageID(
            source: url, selection: HLSSelection(), decrypt: false, salt: try DownloadManager.idSalt(directory: home))
        let video = home.appendingPathComponent("library/\(id)/video")
        var generator = SplitMix64(seed: UInt64(UInt32(truncatingIfNeeded: getpid())))
        var kills: [(logCount: Int, killedAt: Double, done: Set<String>, partial: [String: Int64])] = []
        for round in 0..<10 {
            let before = Set((try? FileManager.default.contentsOfDirectory(atPath: video.path)) ?? [])
            let process = try ChildProcess(
                executable: Self.streamkit(), arguments: ["download", url, "--home", home.path, "--json"],
                logName: "streamkit-kill-\(round)")
            // The random moment counts from the first bytes this run writes, not from the spawn: on a
            // loaded machine starting the process alone can take longer than the whole window.
            let writing = ContinuousClock.now + .seconds(20)
            while Set((try? FileManager.default.contentsOfDirectory(atPath: video.path)) ?? []) == before,
                ContinuousClock.now < writing
            {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(Int64.random(in: 100...1_000, using: &generator)))
            process.signal(SIGKILL)
            #expect(try await process.wait(timeout: .seconds(20)) == 128 + SIGKILL, "round \(round) ended by itself")
            let killedAt = Date().timeIntervalSince1970
            let names = (try? FileManager.default.contentsOfDirectory(atPath: video.path)) ?? []
            let done = Set(names.filter { $0.hasSuffix(".ts") && !$0.contains("streamkit") })
            // Segments with bytes on disk under their partial name: the next run must resume them.
            var partial: [String: Int64] = [:]
            for name in names where name.hasSuffix(".streamkit-partial") {
                let size =
                    (try? FileManager.default.attributesOfItem(
                        atPath: video.appendingPathComponent(name).path)[.size] as? NSNumber)?.int64Value ?? 0
                if size > 0 { partial[String(name.dropLast(".streamkit-partial".count))] = size }
            }
            kills.append((nginx.accessLog.count, killedAt, done, partial))
        }
        let doneAtLastKill = kills.last?.done.count ?? 0
        #expect(doneAtLastKill > 20 && doneAtLastKill < 300, "\(doneAtLastKill) segments in place after 10 kills")
        // The last run, unthrottled (a header does not change the package): it finishes the rest.
        let last = try ChildProcess(
            executable: Self.streamkit(),
            arguments: ["download", url, "--home", home.path, "--json", "-H", "X-Unthrottled: 1"],
            logName: "streamkit-kill-final")
        #expect(try await last.wait(timeout: .seconds(180)) == 0, "\(last.standardError)")
        await nginx.stop()

        for index in 0..<300 {
            let origin = fixture.directory.appendingPathComponent(String(format: "seg%03d.ts", index))
            let local = video.appendingPathComponent(PackageLayoutNames.segment(index))
            #expect(try Data(contentsOf: local) == Data(contentsOf: origin), "segment \(index)")
        }
        let log = try await nginx.settledAccessLog()
        var refetched: [String] = []
        var checked = 0
        for kill in kills {
            for entry in log.dropFirst(kill.logCount) {
                if let name = Self.localName(ofOrigin: Substring(entry.uri)), kill.done.contains(name) {
                    if entry.method == "HEAD" && entry.bytesSent == 0 {
                        checked += 1
                    } else {
                        refetched.append("\(entry.method) \(entry.uri)")
                    }
                }
            }
        }
        #expect(refetched.isEmpty, "requested again after they were in place: \(refetched)")
        #expect(checked > 0, "no completed file was checked against its ETag")
        // A segment with bytes on disk at a kill is resumed (206 from a Range) by the next run,
        // never asked whole again. (One whose bytes nginx had sent but the killed process had not
        // written yet is rightly asked again whole: nothing of it was on disk.)
        var restarted: [String] = []
        for kill in kills {
            for (name, size) in kill.partial {
                // nginx logs a request the killed process had in flight only once it notices the
                // closed connection, which may be after the kill: the next run's requests started
                // after the kill.
                let next = log.dropFirst(kill.logCount).first {
                    $0.method == "GET" && Self.localName(ofOrigin: Substring($0.uri)) == name
                        && ($0.started ?? 0) > kill.killedAt
                }
                // All of it on disk, not yet renamed: the server says so with a 416 at its length.
                let whole = Self.size(ofOrigin: name, in: fixture.directory) == size
                if let next, next.status != (whole ? 416 : 206) || next.range != "bytes=\(size)-" {
                    restarted.append("\(name) (\(size) bytes on disk): \(next.status) \(next.range ?? "-")")
                }
            }
        }
        #expect(restarted.isEmpty, "not resumed from the bytes on disk: \(restarted)")
        #expect(kills.contains { !$0.partial.isEmpty }, "no kill left a partial segment to resume")
        let segments = log.filter { $0.uri.hasPrefix("/seg") && $0.method == "GET" }
        let resumed = segments.filter { $0.status == 206 }
        #expect(!resumed.isEmpty && resumed.allSatisfy { $0.range?.hasPrefix("bytes=") == true })
        print(
            "kill test: \(doneAtLastKill) of 300 in place after 10 kills; \(resumed.count) segments resumed with Range; "
                + "\(checked) checks of completed files")
    }

    /// A byte-range file (three 2 MiB ranges of one resource) killed with SIGKILL half-way
    /// through its requests: the restart asks only for the bytes not on disk (a request's
    /// progress is recorded once a second, not only when it ends).
    @Test func aByteRangeFileKilledHalfWayContinuesFromItsLastByte() async throws {
        let root = try TestRun.makeTemporaryDirectory("ranged-kill")
        let piece = 2 << 20
        var generator = SplitMix64(seed: 7)
        let media = Data((0..<(3 * piece / 8)).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } })
        try media.write(to: root.appendingPathComponent("big.ts"))
        var lines = ["#EXTM3U", "#EXT-X-VERSION:4", "#EXT-X-TARGETDURATION:2", "#EXT-X-PLAYLIST-TYPE:VOD"]
        for index in 0..<3 { lines += ["#EXTINF:2,", "#EXT-X-BYTERANGE:\(piece)@\(index * piece)", "big.ts"] }
        try (lines + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n").write(
            to: root.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let nginx = try await Nginx.static(
            root: root, limitRatePerConnection: 150_000, unthrottledHeader: "X-Unthrottled")
        let url = nginx.url("index.m3u8").absoluteString
        let home = try TestRun.makeTemporaryDirectory("ranged-kill-home")
        let id = HLSDownloadJob.packageID(
            source: url, selection: HLSSelection(), decrypt: false, salt: try DownloadManager.idSalt(directory: home))
        let first = try ChildProcess(
            executable: Self.streamkit(), arguments: ["download", url, "--home", home.path, "--json"],
            logName: "streamkit-ranged-kill")
        try await Task.sleep(for: .seconds(3))
        first.signal(SIGKILL)
        #expect(try await first.wait(timeout: .seconds(20)) == 128 + SIGKILL, "it ended by itself")
        let before = try await nginx.settledAccessLogCount()
        let second = try ChildProcess(
            executable: Self.streamkit(),
            arguments: ["download", url, "--home", home.path, "--json", "-H", "X-Unthrottled: 1"],
            logName: "streamkit-ranged-restart")
        #expect(try await second.wait(timeout: .seconds(60)) == 0, "\(second.standardError)")
        await nginx.stop()
        let local = home.appendingPathComponent("library/\(id)/video/media-0.ts")
        #expect(try Data(contentsOf: local) == media)
        let log = try await nginx.settledAccessLog()
        func sent(_ entries: ArraySlice<AccessLogEntry>) -> Int64 {
            entries.filter { $0.uri == "/big.ts" && $0.method == "GET" }.reduce(Int64(0)) { $0 + $1.bytesSent }
        }
        let sentBefore = sent(log.prefix(before))
        let sentAgain = sent(log.dropFirst(before))
        #expect(sentBefore > 500_000, "the first run fetched too little to tell: \(sentBefore)")
        // Bytes on disk at the kill, less at most a second of each request, are not asked again.
        #expect(
            sentAgain < Int64(3 * piece) - sentBefore / 2,
            "the restart fetched \(sentAgain) of \(3 * piece) bytes, though \(sentBefore) were sent before the kill")
    }

    /// Ctrl-C stops a VOD download with 130 and keeps its state; the same command resumes it.
    @Test func ctrlCExits130AndTheSameCommandResumes() async throws {
        let fixture = try await Fixtures.shared.fixture(
            FixtureRecipe(.hlsTS, seconds: 20, segmentSeconds: 1, videoBitrate: "600k"))
        let nginx = try await Nginx.static(
            root: fixture.directory, limitRatePerConnection: 30_000, unthrottledHeader: "X-Unthrottled")
        let home = try TestRun.makeTemporaryDirectory("ctrl-c-home")
        let arguments = ["download", nginx.url("index.m3u8").absoluteString, "--home", home.path, "-j", "2"]
        let first = try ChildProcess(executable: Self.streamkit(), arguments: arguments, logName: "streamkit-ctrl-c")
        let library = home.appendingPathComponent("library")
        let deadline = ContinuousClock.now + .seconds(30)
        while first.isRunning && ContinuousClock.now < deadline {
            let folders = (try? FileManager.default.contentsOfDirectory(atPath: library.path)) ?? []
            let files = folders.first.flatMap {
                try? FileManager.default.contentsOfDirectory(atPath: library.appendingPathComponent("\($0)/video").path)
            }
            if (files ?? []).filter({ $0.hasSuffix(".ts") }).count >= 3 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        first.signal(SIGINT)
        #expect(try await first.wait(timeout: .seconds(20)) == 130, "\(first.standardError)")
        #expect(first.standardError.contains("Interrupted; everything fetched is kept in"), "\(first.standardError)")
        // Not a terminal: plain progress lines with files, bytes and speed.
        #expect(
            first.standardError.split(separator: "\n").contains { $0.contains("/20 files") }, "\(first.standardError)")
        let id = try #require(try FileManager.default.contentsOfDirectory(atPath: library.path).first)
        let manifest = try JSONDecoder().decode(
            PackageManifest.self, from: Data(contentsOf: library.appendingPathComponent("\(id)/package.json")))
        #expect(manifest.status == .interrupted)
        let done = manifest.files.filter { $0.state == "done" }.count
        #expect(done > 0 && done < 20)
        let second = try ChildProcess(
            executable: Self.streamkit(), arguments: arguments + ["-H", "X-Unthrottled: 1"], logName: "streamkit-ctrl-c"
        )
        #expect(try await second.wait(timeout: .seconds(60)) == 0, "\(second.standardError)")
        #expect(second.standardOutput.contains("\(done) already in place"), "\(second.standardOutput)")
        await nginx.stop()
    }

    /// A live recording killed with SIGKILL twice while it records, and run again each time,
    /// ends by itself at its duration with a VOD package. At each kill, what package.json and
    /// its journal say is done is on disk with the recorded length, and the growing playlist
    /// (appended to) reads as a playlist; at the end the journal is gone, each segment is
    /// listed once, and each is byte for byte the origin's fragment.
    @Test(.requires(.nginxRTMP)) func aLiveRecordingKilledTwiceResumesToItsDuration() async throws {
        let origin = try await LiveHLSOrigin.start(seconds: 60, stream: "cam")
        let out = try TestRun.makeTemporaryDirectory("live-kill").appendingPathComponent("cam")
        let journal = out.appendingPathComponent(".streamkit/package.journal")
        let arguments = [
            "download", origin.playlistURL, "-o", out.path, "--live-duration", "14",
            "--json",
        ]
        var generator = SplitMix64(seed: UInt64(UInt32(truncatingIfNeeded: getpid())))
        func journalWritten(since start: Date) -> Bool {
            let modified = try? FileManager.default.attributesOfItem(atPath: journal.path)[.modificationDate] as? Date
            return modified.map { $0 > start } ?? false
        }
        for round in 0..<2 {
            let start = Date()
            let recorder = try ChildProcess(
                executable: Self.streamkit(), arguments: arguments, logName: "streamkit-live-kill-\(round)")
            // Killed once this run has checkpointed into the journal, at a random moment after.
            let until = ContinuousClock.now + .seconds(30)
            while !journalWritten(since: start) && recorder.isRunning && ContinuousClock.now < until {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(journalWritten(since: start), "round \(round) wrote no journal")
            try await Task.sleep(for: .milliseconds(Int64.random(in: 200...1_500, using: &generator)))
            recorder.signal(SIGKILL)
            #expect(try await recorder.wait(timeout: .seconds(20)) == 128 + SIGKILL, "round \(round) ended by itself")
            let manifest = try #require(try PackageManifest.load(from: out))
            #expect(manifest.status == .recording)
            let done = manifest.files.filter { $0.state == "done" }
            #expect(!done.isEmpty, "round \(round): nothing recorded as done")
            for file in done {
                let size =
                    (try? FileManager.default.attributesOfItem(
                        atPath: out.appendingPathComponent(file.path).path)[.size] as? NSNumber)?.int64Value
                #expect(size != nil && size == file.length, "round \(round): \(file.path) \(String(describing: size))")
            }
            let growing = try String(contentsOf: out.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
            let media = try #require(try Playlist.parse(growing).playlist.media, "round \(round): \(growing)")
            #expect(media.playlistType == .event && !media.segments.isEmpty)
        }
        let last = try ChildProcess(executable: Self.streamkit(), arguments: arguments, logName: "streamkit-live-last")
        #expect(try await last.wait(timeout: .seconds(60)) == 0, "\(last.standardError)")
        let result = try #require(
            try JSONSerialization.jsonObject(with: Data(last.standardOutput.split(separator: "\n").last!.utf8))
                as? [String: Any])
        #expect(result["status"] as? String == "completed" && result["live"] as? Bool == true)
        #expect(((result["duration"] as? NSNumber)?.doubleValue ?? 0) >= 14)
        #expect(!FileManager.default.fileExists(atPath: journal.path))
        let manifest = try #require(try PackageManifest.load(from: out))
        #expect(manifest.journal == nil && manifest.status == .complete)
        let local = try #require(
            try Playlist.parse(Data(contentsOf: out.appendingPathComponent("video/index.m3u8"))).playlist.media)
        #expect(local.playlistType == .vod && local.hasEndList)
        // The source as recorded names each origin fragment; each is listed once and stored whole.
        let source = try #require(
            try Playlist.parse(Data(contentsOf: out.appendingPathComponent(".streamkit/video.m3u8"))).playlist.media)
        let fragments = source.segments.compactMap { $0.uri.split(separator: "/").last.map(String.init) }
        #expect(Set(fragments).count == fragments.count && fragments.count == local.segments.count, "\(fragments)")
        for (fragment, segment) in zip(fragments, local.segments) {
            let ours = out.appendingPathComponent("video/" + segment.uri)
            #expect(
                try Data(contentsOf: ours) == Data(contentsOf: origin.fragment(fragment)),
                "\(fragment) as \(segment.uri)")
        }
        await origin.stop()
    }

    /// Ctrl-C ends a live recording with 0 and a VOD package.
    @Test(.requires(.nginxRTMP)) func ctrlCFinishesALiveRecording() async throws {
        let origin = try await LiveHLSOrigin.start(seconds: 40, stream: "cam")
        let out = try TestRun.makeTemporaryDirectory("live-cli").appendingPathComponent("cam")
        let recorder = try ChildProcess(
            executable: Self.streamkit(),
            arguments: ["download", origin.playlistURL, "-o", out.path, "--json"],
            logName: "streamkit-live")
        var recorded = 0.0
        let until = ContinuousClock.now + .seconds(30)
        while recorded < 4 && recorder.isRunning && ContinuousClock.now < until {
            try await Task.sleep(for: .milliseconds(100))
            for line in recorder.standardOutput.split(separator: "\n") {
                if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let seconds = (object["recordedSeconds"] as? NSNumber)?.doubleValue
                {
                    recorded = max(recorded, seconds)
                }
            }
        }
        recorder.signal(SIGINT)
        #expect(try await recorder.wait(timeout: .seconds(30)) == 0, "\(recorder.standardError)")
        let result = try #require(
            try JSONSerialization.jsonObject(with: Data(recorder.standardOutput.split(separator: "\n").last!.utf8))
                as? [String: Any])
        #expect(result["status"] as? String == "completed" && result["live"] as? Bool == true)
        #expect(((result["duration"] as? NSNumber)?.doubleValue ?? 0) >= 4)
        let local = try String(contentsOf: out.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(local.contains("#EXT-X-PLAYLIST-TYPE:VOD") && local.hasSuffix("#EXT-X-ENDLIST\n"))
        await origin.stop()
    }
}

/// Segment names as the package layout makes them (`00042.ts`).
enum PackageLayoutNames {
    static func segment(_ number: Int) -> String { String(format: "%05d.ts", number) }
}
