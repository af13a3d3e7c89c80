import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// Packages from every fixture kind against nginx: byte-identical segments, the same decoded frames
/// as the origin when played over HTTP, decryption, selection, resume and failures.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .ffprobe, .openssl)) struct HLSDownloadTests {
    typealias Support = DownloadTestSupport

    /// Every segment of the package equals the origin's, pairwise, and a player decodes as many
    /// video and audio frames from the package (served over HTTP) as from the origin.
    @Test(arguments: [
        FixtureRecipe.Kind.hlsTS, .hlsFMP4, .hlsAES128ExplicitIV, .hlsAES128SequenceIV, .hlsByteRange,
        .hlsDiscontinuity,
    ])
    func packagePlaysLikeTheOrigin(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let origin = try await Nginx.static(root: fixture.directory)
        let job = try Support.job(origin.url(fixture.recipe.entry).absoluteString)
        let (result, events) = try await Support.run(job)
        #expect(result.status == .complete && result.gaps.isEmpty)
        #expect(result.filesFetched == result.files)
        #expect(abs(result.duration - 10) < 0.5, "\(result.duration)")

        let package = job.packageDirectory
        let originSegments = try Support.segmentFiles(ofPlaylist: fixture.entryFile)
        let packageSegments = try Support.segmentFiles(ofPlaylist: package.appendingPathComponent("video/index.m3u8"))
        #expect(originSegments.count == packageSegments.count && !packageSegments.isEmpty)
        for (theirs, ours) in zip(originSegments, packageSegments) {
            #expect(try Support.bytes(theirs) == Support.bytes(ours), "\(ours.path) differs from \(theirs.path)")
        }
        if kind == .hlsByteRange {
            // One local file, byte-identical to the origin's single file.
            #expect(Set(packageSegments.map(\.path)).count == 1)
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: packageSegments[0].path))
                    == Data(contentsOf: fixture.directory.appendingPathComponent("media.ts")))
        }
        if kind == .hlsFMP4 {
            let local = try String(contentsOf: package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
            #expect(local.contains("#EXT-X-MAP:URI=\"init-0.mp4\""))
            #expect(
                try Data(contentsOf: package.appendingPathComponent("video/init-0.mp4"))
                    == Data(contentsOf: fixture.directory.appendingPathComponent("init.mp4")))
        }
        if kind == .hlsAES128ExplicitIV || kind == .hlsAES128SequenceIV {
            #expect(try Data(contentsOf: package.appendingPathComponent("video/key-0.key")) == Data(Fixtures.key))
            let local = try String(contentsOf: package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
            #expect(local.contains("#EXT-X-KEY:METHOD=AES-128,URI=\"key-0.key\""))
        }
        if kind == .hlsDiscontinuity {
            let local = try String(contentsOf: package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
            #expect(local.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count == 2)
        }
        // Progress reached the end, with an estimate that became exact.
        guard case .progress(let last) = events.last(where: { if case .progress = $0 { true } else { false } }) else {
            Issue.record("no progress event")
            return
        }
        #expect(last.filesDone == last.filesTotal && last.bytesDone == result.bytes)
        #expect(last.estimatedTotalBytes == result.bytes)
        // Nothing the downloader fetched failed, and no segment was fetched twice.
        let fetched = try await origin.settledAccessLog().filter { !$0.uri.hasSuffix(".m3u8") }
        #expect(fetched.allSatisfy { [200, 206].contains($0.status) && $0.completed }, "\(fetched)")
        if kind != .hlsByteRange { #expect(Set(fetched.map(\.uri)).count == fetched.count, "\(fetched)") }

        // Played over HTTP, the package decodes to the origin's frames.
        let player = try await Support.serve(package.deletingLastPathComponent())
        let theirs = try await Support.decodedFrames(origin.url(fixture.recipe.entry).absoluteString)
        let ours = try await Support.decodedFrames(player.url("p/index.m3u8").absoluteString)
        #expect(
            ours == theirs && theirs.contains { $0.hasPrefix("video:") } && theirs.contains { $0.hasPrefix("audio:") })
        await player.stop()
        await origin.stop()
    }

    /// `--decrypt` stores what `openssl enc -d` makes of each origin segment, and no key tag.
    @Test(arguments: [FixtureRecipe.Kind.hlsAES128ExplicitIV, .hlsAES128SequenceIV])
    func decryptStoresClearSegments(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let origin = try await Nginx.static(root: fixture.directory)
        let job = try Support.job(
            origin.url(fixture.recipe.entry).absoluteString, options: Support.fastOptions(decrypt: true))
        let (result, _) = try await Support.run(job)
        #expect(result.status == .complete)
        let package = job.packageDirectory
        let local = try String(contentsOf: package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(!local.contains("#EXT-X-KEY"))
        let originPlaylist = try #require(try Playlist.parse(Data(contentsOf: fixture.entryFile)).playlist.media)
        let packageSegments = try Support.segmentFiles(ofPlaylist: package.appendingPathComponent("video/index.m3u8"))
        let resolved = originPlaylist.resolvedSegments()
        #expect(resolved.count == packageSegments.count)
        for (segment, ours) in zip(resolved, packageSegments) {
            let key = try #require(segment.identityKey)
            let clear = try await Tool.openssl.run([
                "enc", "-d", "-aes-128-cbc", "-K", Hex.encode(Fixtures.key), "-iv", Hex.encode(key.iv), "-in",
                fixture.directory.appendingPathComponent(segment.uri).path, "-out", ours.path + ".openssl",
            ])
            #expect(clear.status == 0)
            #expect(try Data(contentsOf: URL(fileURLWithPath: ours.path + ".openssl")) == Support.bytes(ours))
            // The clear file carries the ETag of the encrypted one, for a later check.
            #expect(FileEntityTagAttribute.read(path: ours.path) != nil, "\(ours.path)")
            try FileManager.default.removeItem(atPath: ours.path + ".openssl")
        }
        // No key is left in the package: none on disk (so none served) and none in package.json,
        // after the download and after a second run over the finished package.
        func expectNoKey() throws {
            let files = Support.files(under: package)
            #expect(!files.contains { $0.hasSuffix(".key") }, "\(files)")
            #expect(try !Support.manifest(package).files.contains { $0.kind == "key" })
        }
        try expectNoKey()
        let player = try await Support.serve(package.deletingLastPathComponent())
        #expect(
            try await Support.decodedFrames(player.url("p/index.m3u8").absoluteString)
                == Support.decodedFrames(origin.url(fixture.recipe.entry).absoluteString))
        await player.stop()
        #expect(try await Support.run(job).result.status == .complete)
        try expectNoKey()
        await origin.stop()
    }

    /// An origin of the fMP4 fixture's fragments encrypted with `Fixtures.key` (explicit IV), under
    /// `tags` (written before the first fragment, `init.mp4` and the key files ready in `root`).
    /// Returns the origin's URL, what ffmpeg decodes from it, and the fragments in the clear.
    private func encryptedFragmentsOrigin(
        _ fixture: Fixture, root: URL, tags: [String]
    ) async throws -> (origin: Nginx, url: String, frames: [String], clear: [Data]) {
        let original = try #require(try Playlist.parse(Data(contentsOf: fixture.entryFile)).playlist.media)
        var lines =
            [
                "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(original.targetDuration ?? 2)",
                "#EXT-X-PLAYLIST-TYPE:VOD",
            ]
            + tags
        var clear: [Data] = []
        for segment in original.segments {
            let plain = try Data(contentsOf: fixture.directory.appendingPathComponent(segment.uri))
            clear.append(plain)
            let encrypted = try AES128CBC.encrypt(Array(plain), key: Fixtures.key, iv: Fixtures.explicitIV)
            try Data(encrypted).write(to: root.appendingPathComponent(segment.uri))
            lines += ["#EXTINF:\(segment.duration),", segment.uri]
        }
        try (lines + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n").write(
            to: root.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let origin = try await Nginx.static(root: root)
        let url = origin.url("index.m3u8").absoluteString
        let frames = try await Support.decodedFrames(url)
        #expect(frames.contains { $0.hasPrefix("video:") }, "the origin itself does not play: \(frames)")
        return (origin, url, frames, clear)
    }

    /// RFC 8216bis §4.4.4.4: a key applies to the maps written after it. A map written before the
    /// key is clear, only the fragments are encrypted: the package plays like the origin (its
    /// playlist keeps the map out from under the key), and `--decrypt` keeps the clear map as it is.
    @Test func aMapWrittenBeforeItsKeyStaysClear() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsFMP4))
        let root = try TestRun.makeTemporaryDirectory("map-before-key")
        try FileManager.default.copyItem(
            at: fixture.directory.appendingPathComponent("init.mp4"), to: root.appendingPathComponent("init.mp4"))
        try Data(Fixtures.key).write(to: root.appendingPathComponent("k.bin"))
        let (origin, url, theirs, clear) = try await encryptedFragmentsOrigin(
            fixture, root: root,
            tags: [
                "#EXT-X-MAP:URI=\"init.mp4\"",
                "#EXT-X-KEY:METHOD=AES-128,URI=\"k.bin\",IV=0x\(Hex.encode(Fixtures.explicitIV))",
            ])

        let job = try Support.job(url)
        #expect(try await Support.run(job).result.status == .complete)
        let local = try String(
            contentsOf: job.packageDirectory.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        let mapLine = try #require(local.range(of: "#EXT-X-MAP"))
        let keyLine = try #require(local.range(of: "#EXT-X-KEY"))
        #expect(mapLine.lowerBound < keyLine.lowerBound, "\(local)")
        let player = try await Support.serve(job.packageDirectory.deletingLastPathComponent())
        #expect(try await Support.decodedFrames(player.url("p/index.m3u8").absoluteString) == theirs)
        await player.stop()

        let decrypting = try Support.job(url, options: Support.fastOptions(decrypt: true))
        #expect(try await Support.run(decrypting).result.status == .complete)
        #expect(
            try Data(contentsOf: decrypting.packageDirectory.appendingPathComponent("video/init-0.mp4"))
                == Data(contentsOf: root.appendingPathComponent("init.mp4")))
        let mine = try Support.segmentFiles(
            ofPlaylist: decrypting.packageDirectory.appendingPathComponent("video/index.m3u8"))
        #expect(try mine.map { try Support.bytes($0) } == clear)
        await origin.stop()
    }

    /// A map encrypted with a key other than its segments' (KEY A, MAP, KEY B, segments: the map is
    /// under A, the segments under B; RFC 8216bis §4.4.4.4). The package keeps that (both keys
    /// stored, the map written between them) and plays like the origin; `--decrypt` decrypts the
    /// map with A and the segments with B. A second run over the finished package plans the same.
    @Test func aMapUnderAnotherKeyThanItsSegmentsKeepsItsOwnKey() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsFMP4))
        let root = try TestRun.makeTemporaryDirectory("map-own-key")
        let mapKey: [UInt8] = Array(0..<16)
        let mapIV: [UInt8] = Array(repeating: 7, count: 16)
        let initSection = try Data(contentsOf: fixture.directory.appendingPathComponent("init.mp4"))
        try Data(try AES128CBC.encrypt(Array(initSection), key: mapKey, iv: mapIV)).write(
            to: root.appendingPathComponent("init.mp4"))
        try Data(mapKey).write(to: root.appendingPathComponent("a.bin"))
        try Data(Fixtures.key).write(to: root.appendingPathComponent("b.bin"))
        let (origin, url, theirs, clear) = try await encryptedFragmentsOrigin(
            fixture, root: root,
            tags: [
                "#EXT-X-KEY:METHOD=AES-128,URI=\"a.bin\",IV=0x\(Hex.encode(mapIV))", "#EXT-X-MAP:URI=\"init.mp4\"",
                "#EXT-X-KEY:METHOD=AES-128,URI=\"b.bin\",IV=0x\(Hex.encode(Fixtures.explicitIV))",
            ])

        let job = try Support.job(url)
        #expect(try await Support.run(job).result.status == .complete)
        let local = try String(
            contentsOf: job.packageDirectory.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        let order = local.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-KEY") || $0.hasPrefix("#EXT-X-MAP") }
        #expect(order.count == 3 && order[1].hasPrefix("#EXT-X-MAP") && order[0] != order[2], "\(local)")
        let player = try await Support.serve(job.packageDirectory.deletingLastPathComponent())
        #expect(try await Support.decodedFrames(player.url("p/index.m3u8").absoluteString) == theirs)
        await player.stop()
        let before = try await origin.settledAccessLogCount()
        #expect(try await Support.run(job).result.filesFetched == 0)
        #expect(try await origin.settledAccessLog().dropFirst(before).allSatisfy { !$0.uri.hasSuffix(".bin") })

        let decrypting = try Support.job(url, options: Support.fastOptions(decrypt: true))
        #expect(try await Support.run(decrypting).result.status == .complete)
        // Both keys served only to decrypt: neither is left.
        #expect(!Support.files(under: decrypting.packageDirectory).contains { $0.hasSuffix(".key") })
        #expect(
            try Data(contentsOf: decrypting.packageDirectory.appendingPathComponent("video/init-0.mp4")) == initSection)
        let mine = try Support.segmentFiles(
            ofPlaylist: decrypting.packageDirectory.appendingPathComponent("video/index.m3u8"))
        #expect(try mine.map { try Support.bytes($0) } == clear)
        await origin.stop()
    }

    /// The master fixture: the best variant, both audio languages with `--audio all`, the English
    /// subtitles; each rendition byte-identical to the origin's, and the package master decodes to
    /// the origin variant's frames plus each audio rendition's.
    @Test func masterWithAudioRenditionsAndSubtitles() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsMaster))
        let origin = try await Nginx.static(root: fixture.directory)
        let job = try Support.job(
            origin.url("master.m3u8").absoluteString, selection: HLSSelection(audio: .all))
        let (result, _) = try await Support.run(job)
        #expect(result.status == .complete)
        let package = job.packageDirectory
        let master = try String(contentsOf: package.appendingPathComponent("index.m3u8"), encoding: .utf8)
        #expect(master.contains("URI=\"audio-eng/index.m3u8\"") && master.contains("URI=\"audio-fra/index.m3u8\""))
        #expect(master.contains("URI=\"subtitles-eng/index.m3u8\"") && master.contains("SUBTITLES=\"subs\""))
        #expect(master.components(separatedBy: "#EXT-X-STREAM-INF").count == 2 && !master.contains("http"))
        let pairs = [
            ("video", "video_360p"), ("audio-eng", "audio_eng"), ("audio-fra", "audio_fra"),
            ("subtitles-eng", "subs_eng"),
        ]
        for (ours, theirs) in pairs {
            let mine = try Support.segmentFiles(ofPlaylist: package.appendingPathComponent("\(ours)/index.m3u8"))
            let original = try Support.segmentFiles(
                ofPlaylist: fixture.directory.appendingPathComponent("\(theirs)/index.m3u8"))
            #expect(mine.count == original.count && !mine.isEmpty, "\(ours)")
            for (a, b) in zip(mine, original) { #expect(try Support.bytes(a) == Support.bytes(b), "\(a.path)") }
        }
        let player = try await Support.serve(package.deletingLastPathComponent())
        let ours = try await Support.decodedFrames(player.url("p/index.m3u8").absoluteString)
        var theirs = try await Support.decodedFrames(origin.url("video_360p/index.m3u8").absoluteString)
        theirs += try await Support.decodedFrames(origin.url("audio_eng/index.m3u8").absoluteString)
        theirs += try await Support.decodedFrames(origin.url("audio_fra/index.m3u8").absoluteString)
        #expect(ours == theirs.sorted(), "package \(ours), origin \(theirs)")
        await player.stop()

        // Defaults: the DEFAULT=YES audio only.
        let defaults = try Support.job(origin.url("master.m3u8").absoluteString)
        _ = try await Support.run(defaults)
        let folders = try FileManager.default.contentsOfDirectory(atPath: defaults.packageDirectory.path).sorted()
        #expect(folders == [".streamkit", "audio-eng", "index.m3u8", "package.json", "subtitles-eng", "video"])
        await origin.stop()
    }

    /// Cancelled half-way, then run again: the result is identical, files in place were not fetched
    /// again, and the one cut short continued with a range request.
    /// The bytes in the package's partial segment files.
    static func partialBytes(in directory: URL) -> Int {
        Support.files(under: directory).filter { $0.hasSuffix(".streamkit-partial") }.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent(name).path)
            return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    @Test func cancelledDownloadResumesWithoutFetchingAgain() async throws {
        let fixture = try await Fixtures.shared.fixture(
            FixtureRecipe(.hlsTS, seconds: 20, segmentSeconds: 1, videoBitrate: "600k"))
        // 75 KB segments at 20 KB/s a connection: each in flight for about 4 s, longer than a
        // cancellation takes to land on a loaded runner, so that one is still partial when it
        // does (at 40 KB/s, a CI run saw every partial segment complete first). The resume runs
        // unthrottled.
        let origin = try await Nginx.static(
            root: fixture.directory, limitRatePerConnection: 20_000, unthrottledHeader: "X-Unthrottled")
        let job = try Support.job(
            origin.url("index.m3u8").absoluteString, options: Support.fastOptions(connections: 4))
        let cancelling = Mutex(false)
        do {
            // Once six segments are in, wait until a next one has bytes on disk, then cancel.
            let directory = job.packageDirectory
            _ = try await Support.run(job) { event, download in
                guard case .progress(let progress) = event, progress.filesDone >= 6 else { return }
                let first = cancelling.withLock { fired in
                    defer { fired = true }
                    return !fired
                }
                guard first else { return }
                // A thread, not a task: on a loaded cooperative pool a task's next poll can come
                // seconds late, by which time the partial segment it saw may be complete.
                Thread {
                    let deadline = ContinuousClock.now + .seconds(20)
                    while Self.partialBytes(in: directory) == 0 && ContinuousClock.now < deadline {
                        usleep(5_000)
                    }
                    download.cancel()
                }.start()
            }
            Issue.record("the download was not cancelled")
        } catch let error as HLSDownloadError {
            #expect(error.kind == .cancelled)
        }
        let manifest = try Support.manifest(job.packageDirectory)
        #expect(manifest.status == .interrupted)
        let done = Set(manifest.files.filter { $0.state == "done" }.map(\.url))
        #expect(done.count >= 6 && done.count < 20, "\(done.count)")
        // The head it had is left playable as a growing playlist, never as a complete one.
        let head = try String(
            contentsOf: job.packageDirectory.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(head.contains("#EXT-X-PLAYLIST-TYPE:EVENT") && !head.contains("#EXT-X-ENDLIST"), "\(head)")
        #expect(FileManager.default.fileExists(atPath: job.packageDirectory.appendingPathComponent("index.m3u8").path))
        #expect(
            Self.partialBytes(in: job.packageDirectory) > 0,
            "\(Support.files(under: job.packageDirectory).filter { $0.hasSuffix(".streamkit-partial") })")
        let firstRun = try await origin.settledAccessLog().count

        var resumed = job
        resumed.options.headers.add("X-Unthrottled", "1")
        let (result, events) = try await Support.run(resumed)
        #expect(result.status == .complete && result.filesFetched == 20 - done.count)
        if case .planned(let summary) = events.first { #expect(summary.filesAlreadyDone == done.count) }
        let log = try await origin.settledAccessLog().dropFirst(firstRun)
        // Completed files are checked (HEAD, no body), never fetched.
        let later = log.filter { $0.method != "HEAD" }
        #expect(later.allSatisfy { !done.contains(origin.url(String($0.uri.dropFirst())).absoluteString) }, "\(later)")
        #expect(
            Set(
                log.filter { $0.method == "HEAD" && $0.bytesSent == 0 }.map {
                    origin.url(String($0.uri.dropFirst())).absoluteString
                })
                == done)
        #expect(later.contains { $0.status == 206 && $0.range != nil }, "no partial segment resumed: \(later)")
        for (theirs, ours) in zip(
            try Support.segmentFiles(ofPlaylist: fixture.entryFile),
            try Support.segmentFiles(ofPlaylist: job.packageDirectory.appendingPathComponent("video/index.m3u8")))
        {
            #expect(try Support.bytes(theirs) == Support.bytes(ours))
        }
        // Nothing half-written is left behind.
        #expect(Support.files(under: job.packageDirectory).allSatisfy { !$0.contains(".streamkit-") })
        await origin.stop()
    }

    /// A segment that keeps failing fails the download with its URL and status, keeping the rest;
    /// with `skipBroken` it becomes a gap; once it is back, a new run fills the gap.
    @Test func brokenSegmentFailsWithItsURLOrBecomesAGap() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let root = try TestRun.makeTemporaryDirectory("broken")
        for file in try fixture.files() {
            try FileManager.default.copyItem(
                at: fixture.directory.appendingPathComponent(file), to: root.appendingPathComponent(file))
        }
        let missing = root.appendingPathComponent("seg002.ts")
        let kept = try Data(contentsOf: missing)
        try FileManager.default.removeItem(at: missing)
        let origin = try await Nginx.static(root: root)
        let url = origin.url("index.m3u8").absoluteString
        let job = try Support.job(url)
        do {
            _ = try await Support.run(job)
            Issue.record("the download did not fail")
        } catch let error as HLSDownloadError {
            #expect(error.kind == .fileFailed && error.status == .notFound)
            #expect(error.url == origin.url("seg002.ts").absoluteString && error.path == "video/00002.ts")
            #expect(error.description.contains("seg002.ts") && error.description.contains("404"))
        }
        var manifest = try Support.manifest(job.packageDirectory)
        #expect(manifest.status == .failed && manifest.error?.contains("seg002.ts") == true)
        #expect(manifest.files.filter { $0.state == "done" }.count == 4)

        var skipping = job
        skipping.options.skipBroken = true
        let (result, events) = try await Support.run(skipping)
        #expect(result.status == .completeWithGaps && result.gaps.map(\.path) == ["video/00002.ts"])
        #expect(result.gaps.first?.status == .notFound)
        #expect(events.contains { if case .skipped(let path, _, _) = $0 { path == "video/00002.ts" } else { false } })
        let local = try String(
            contentsOf: job.packageDirectory.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        // Left out, with a discontinuity on the segment after it (the gap form every player plays).
        #expect(local.contains("00001.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:2,\n00003.ts"), "\(local)")
        #expect(!local.contains("00002.ts") && !local.contains("GAP"))
        manifest = try Support.manifest(job.packageDirectory)
        #expect(
            manifest.status == .completeWithGaps && manifest.files.first { $0.state == "gap" }?.path == "video/00002.ts"
        )

        try kept.write(to: missing)
        let before = try await origin.settledAccessLog().count
        let (healed, _) = try await Support.run(skipping)
        #expect(healed.status == .complete && healed.filesFetched == 1)
        #expect(
            try await origin.settledAccessLog().dropFirst(before).filter {
                $0.uri.hasSuffix(".ts") && $0.method == "GET"
            }
            .map(\.uri) == ["/seg002.ts"])
        let healedPlaylist = try String(
            contentsOf: job.packageDirectory.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(!healedPlaylist.contains("GAP") && !healedPlaylist.contains("DISCONTINUITY"))
        #expect(healedPlaylist.contains("00001.ts\n#EXTINF:2,\n00002.ts\n#EXTINF:2,\n00003.ts"))
        await origin.stop()
    }

    /// A file damaged on disk after the download (its length no longer the recorded one) is fetched
    /// again, and only it.
    @Test func resumeChecksRecordedLengths() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let origin = try await Nginx.static(root: fixture.directory)
        let job = try Support.job(origin.url("index.m3u8").absoluteString)
        _ = try await Support.run(job)
        let damaged = job.packageDirectory.appendingPathComponent("video/00003.ts")
        let handle = try FileHandle(forWritingTo: damaged)
        try handle.truncate(atOffset: 100)
        try handle.close()
        let before = try await origin.settledAccessLog().count
        let (result, _) = try await Support.run(job)
        #expect(result.filesFetched == 1)
        // The package was complete: the four others are not even checked with the server.
        #expect(try await origin.settledAccessLog().dropFirst(before).map(\.uri) == ["/seg003.ts"])
        #expect(
            try Data(contentsOf: damaged) == Data(contentsOf: fixture.directory.appendingPathComponent("seg003.ts")))
        await origin.stop()
    }

    /// Another download's folder is refused rather than mixed.
    @Test func aFolderHoldingAnotherPackageIsRefused() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let origin = try await Nginx.static(root: fixture.directory)
        let job = try Support.job(origin.url("index.m3u8").absoluteString)
        _ = try await Support.run(job)
        var other = job
        other.options.decrypt = true
        await #expect(throws: HLSDownloadError(.packageConflict)) { try await Support.run(other) }
        let stranger = try TestRun.makeTemporaryDirectory("stranger")
        try Data("mine".utf8).write(to: stranger.appendingPathComponent("notes.txt"))
        await #expect(throws: HLSDownloadError(.packageConflict)) {
            try await Support.run(try Support.job(origin.url("index.m3u8").absoluteString, directory: stranger))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: stranger.path) == ["notes.txt"])
        await origin.stop()
    }
}
