import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// What a run killed at an awkward moment leaves, and how the next run takes it up: the state is
/// made by hand, as such a kill leaves it (the kill tests of HLSDownloadBinaryTests hit these
/// moments only by chance).
@Suite(.serialized, .requires(.nginx)) struct HLSResumeTests {
    typealias Setup = HostilePlaylistTests.Setup
    typealias Support = DownloadTestSupport

    /// A byte-range file whose every range arrived, left under its partial name by a run killed
    /// before moving it into place (during a long decryption, say), is moved into place by the
    /// next run, not marked as a gap.
    @Test func aRangedFileFinishedButNotMovedIsCompletedOnResume() async throws {
        let content = Data((0..<12000).map { UInt8($0 % 251) })
        let setup = try await Setup.make(files: [
            "media.ts": content,
            "index.m3u8": HostilePlaylistTests.playlist([
                "#EXTINF:2,", "#EXT-X-BYTERANGE:4000@0", "media.ts",
                "#EXTINF:2,", "#EXT-X-BYTERANGE:8000@4000", "media.ts",
            ]),
        ])
        let job = setup.job("index.m3u8")
        #expect(try await Support.run(job).0.status == .complete)
        // The state such a kill leaves: the bytes under the partial name, the ranges record
        // complete, the manifest not yet told.
        let final = setup.package.appendingPathComponent("video/media-0.ts").path
        #expect(rename(final, final + PackageLayout.rangedPartialSuffix) == 0)
        try RangesRecord(
            url: setup.origin.url("media.ts").absoluteString, validator: nil, done: ByteRangeSet([ByteRange(0, 12000)])
        ).save(final + PackageLayout.rangesRecordSuffix)
        try Self.forgetCompletion(of: "video/media-0.ts", in: setup.package)
        let requestsBefore = try await setup.origin.settledAccessLogCount()
        let (second, _) = try await Support.run(job)
        #expect(second.status == .complete)
        #expect(try Data(contentsOf: URL(fileURLWithPath: final)) == content)
        let ranges = try await setup.origin.settledAccessLog().dropFirst(requestsBefore).filter {
            $0.uri == "/media.ts"
        }
        #expect(ranges.isEmpty, "no range fetched again")
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }

    /// A run killed inside an atomic write (package.json, a recorded source playlist, a
    /// rendition's media playlist) leaves the temporary file; the next run removes it.
    @Test func temporaryFilesOfAKilledWriteAreRemovedOnResume() async throws {
        let setup = try await Setup.make(files: [
            "a.ts": Data(repeating: 1, count: 1000),
            "index.m3u8": HostilePlaylistTests.playlist(["#EXTINF:2,", "a.ts"]),
        ])
        let job = setup.job("index.m3u8")
        #expect(try await Support.run(job).0.status == .complete)
        let stale = [
            setup.package.appendingPathComponent("package.json.1a2b3c" + PackageLayout.temporarySuffix),
            setup.package.appendingPathComponent(
                PackageLayout.internalFolder + "/video.m3u8.4d5e6f" + PackageLayout.temporarySuffix),
            setup.package.appendingPathComponent("video/index.m3u8.7a8b9c" + PackageLayout.temporarySuffix),
        ]
        for file in stale { try Data("half".utf8).write(to: file) }
        #expect(try await Support.run(job).0.status == .complete)
        for file in stale { #expect(!FileManager.default.fileExists(atPath: file.path), "\(file.lastPathComponent)") }
        await setup.origin.stop()
    }

    /// --decrypt --skip-broken, an own-file byte-range segment whose body is cut: a gap (exit 2),
    /// its partial bytes kept for a later run, not a failed download.
    @Test func aCutSegmentToDecryptIsAGapUnderSkipBroken() async throws {
        let playlist = [
            "#EXTM3U", "#EXT-X-VERSION:4", "#EXT-X-TARGETDURATION:2",
            "#EXT-X-KEY:METHOD=AES-128,URI=\"k.key\",IV=0x00000000000000000000000000000001",
            "#EXTINF:2,", "#EXT-X-BYTERANGE:100@0", "seg.ts",
            "#EXTINF:2,", "#EXT-X-BYTERANGE:100@100", "seg.ts", "#EXT-X-ENDLIST", "",
        ].joined(separator: "\n")
        let responder = try ScriptedTCPResponder { index in
            let close: [(String, String)] = [("Connection", "close")]
            switch index {
            case 0:
                return [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 200, headers: close + [("Content-Length", "\(playlist.utf8.count)")],
                            body: Array(playlist.utf8))), .close,
                ]
            case 1:
                return [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 200, headers: close + [("Content-Length", "16")],
                            body: Array(repeating: 1, count: 16))),
                    .close,
                ]
            default:
                // Every byte range is cut after 40 of its 100 bytes.
                return [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 206,
                            headers: close + [("Content-Range", "bytes 0-99/1000"), ("Content-Length", "100")],
                            body: Array(repeating: 9, count: 40))), .sleep(.milliseconds(50)), .reset,
                ]
            }
        }
        let sandbox = try TestRun.makeTemporaryDirectory("resume-decrypt")
        var options = Support.fastOptions(decrypt: true, skipBroken: true, connections: 1)
        options.maximumSegments = 100
        let job = HLSDownloadJob(
            source: responder.url("p.m3u8").absoluteString, options: options,
            packageDirectory: sandbox.appendingPathComponent("pkg"))
        let (result, _) = try await Support.run(job)
        #expect(result.status == .completeWithGaps)
        await responder.stop()
    }

    /// A byte-range file shared by two segments, finished with a gap and moved into place, then
    /// killed before package.json recorded the gap: the next run still knows the gap (it fetches
    /// what failed again, and marks it), rather than taking the file as complete.
    @Test func aRangedFileWithAGapIsResumedThoughPackageJSONMissedIt() async throws {
        let media = Data((0..<12_000).map { UInt8($0 % 251) })
        let setup = try await Setup.make(files: [
            "media.ts": Data(media.prefix(10_000)),  // the second range cannot be served
            "short.m3u8": HostilePlaylistTests.playlist(
                [
                    "#EXTINF:2,", "#EXT-X-BYTERANGE:4000@0", "media.ts",
                    "#EXTINF:2,", "#EXT-X-BYTERANGE:8000@4000", "media.ts",
                ], version: 4),
        ])
        let job = setup.job("short.m3u8", skipBroken: true)
        #expect(try await Support.run(job).0.status == .completeWithGaps)
        try Self.forgetCompletion(of: "video/media-0.ts", in: setup.package)
        let requestsBefore = try await setup.origin.settledAccessLogCount()
        let (second, _) = try await Support.run(job)
        // The gap is still known: asked for again, marked again; the range that arrived is not.
        #expect(second.status == .completeWithGaps)
        let local = try String(contentsOf: setup.package.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(local.contains("media-0.ts\n#EXT-X-ENDLIST") && !local.contains("8000@4000"), "\(local)")
        let asked = try await setup.origin.settledAccessLog().dropFirst(requestsBefore).compactMap(\.range)
        #expect(asked.allSatisfy { !$0.hasPrefix("bytes=0-") }, "\(asked)")
        #expect(
            try Data(contentsOf: setup.package.appendingPathComponent("video/media-0.ts")).prefix(4000)
                == media.prefix(4000))
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }

    /// Files an earlier run completed are checked against their recorded ETag before they count:
    /// one HEAD each, no body, also for a file put in place after package.json's last checkpoint
    /// (its ETag is on the file). The one whose resource changed on the server (same length, new
    /// bytes) is fetched again and replaced; the others are not fetched. Without the check, the
    /// server is not asked at all.
    @Test func completedFilesAreCheckedAgainstTheirETag() async throws {
        var files: [String: Data] = [
            "index.m3u8": HostilePlaylistTests.playlist((0..<4).flatMap { ["#EXTINF:2,", "s\($0).ts"] })
        ]
        for index in 0..<4 { files["s\(index).ts"] = Data(repeating: UInt8(index), count: 5000) }
        let setup = try await Setup.make(files: files)
        let job = setup.job("index.m3u8")
        #expect(try await Support.run(job).0.status == .complete)
        try Self.forgetCompletion(of: "video/00001.ts", in: setup.package)
        // The same length, other bytes, another date: nginx's ETag (date and length) changes.
        let changed = setup.originRoot.appendingPathComponent("s2.ts")
        try Data(repeating: 9, count: 5000).write(to: changed)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: changed.path)
        let before = try await setup.origin.settledAccessLogCount()
        let (second, events) = try await Support.run(job)
        #expect(second.status == .complete && second.filesFetched == 1)
        let summary = try #require(Self.summary(in: events))
        #expect(summary.filesAlreadyDone == 3 && summary.filesVerified == 3 && summary.filesChanged == 1)
        let asked = try await setup.origin.settledAccessLog().dropFirst(before)
        #expect(Set(asked.filter { $0.method == "HEAD" }.map(\.uri)) == ["/s0.ts", "/s1.ts", "/s2.ts", "/s3.ts"])
        #expect(asked.filter { $0.method == "HEAD" }.allSatisfy { $0.bytesSent == 0 })
        #expect(asked.filter { $0.method == "GET" && $0.uri.hasSuffix(".ts") }.map(\.uri) == ["/s2.ts"])
        #expect(
            try Data(contentsOf: setup.package.appendingPathComponent("video/00002.ts")) == Data(contentsOf: changed))

        var unchecked = job
        unchecked.options.verifiesCompletedFiles = false
        try Self.markUnfinished(setup.package)
        let beforeThird = try await setup.origin.settledAccessLogCount()
        let (third, _) = try await Support.run(unchecked)
        #expect(third.status == .complete && third.filesFetched == 0)
        let askedThird = try await setup.origin.settledAccessLog().dropFirst(beforeThird)
        #expect(askedThird.allSatisfy { !$0.uri.hasSuffix(".ts") }, "\(askedThird)")
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }

    /// A byte-range file in place carries the ETag its ranges were fetched with, the one
    /// package.json records.
    @Test func aRangedFileInPlaceCarriesItsETag() async throws {
        let setup = try await Setup.make(files: [
            "media.ts": Data((0..<12_000).map { UInt8($0 % 251) }),
            "index.m3u8": HostilePlaylistTests.playlist(
                [
                    "#EXTINF:2,", "#EXT-X-BYTERANGE:4000@0", "media.ts", "#EXTINF:2,", "#EXT-X-BYTERANGE:8000@4000",
                    "media.ts",
                ],
                version: 4),
        ])
        #expect(try await Support.run(setup.job("index.m3u8")).0.status == .complete)
        let recorded = try #require(try PackageManifest.load(from: setup.package)).files.first {
            $0.path == "video/media-0.ts"
        }?.etag
        let onFile = FileEntityTagAttribute.read(path: setup.package.appendingPathComponent("video/media-0.ts").path)
        #expect(recorded != nil && onFile?.headerValue == recorded)
        await setup.origin.stop()
    }

    /// With the origin gone, a completed package is kept as it is: the first check that finds no
    /// server ends the checking (no retries file after file), and the run completes.
    @Test func completedFilesAreKeptWhenTheServerCannotBeReached() async throws {
        var files: [String: Data] = [
            "index.m3u8": HostilePlaylistTests.playlist((0..<40).flatMap { ["#EXTINF:2,", "s\($0).ts"] })
        ]
        for index in 0..<40 { files["s\(index).ts"] = Data(repeating: UInt8(index), count: 1000) }
        let setup = try await Setup.make(files: files)
        var job = setup.job("index.m3u8")
        job.options.connections = 2
        job.options.retry = HTTPClientRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(200))
        #expect(try await Support.run(job).0.status == .complete)
        try Self.markUnfinished(setup.package)
        await setup.origin.stop()
        let started = ContinuousClock.now
        let (second, events) = try await Support.run(job)
        let elapsed = ContinuousClock.now - started
        #expect(second.status == .complete && second.filesFetched == 0)
        let summary = try #require(Self.summary(in: events))
        #expect(summary.filesAlreadyDone == 40 && summary.filesVerified == 0 && summary.filesChanged == 0)
        #expect(elapsed < .seconds(5), "\(elapsed)")
    }

    /// A server that answers the checks with 503 (an origin down behind a proxy or a CDN) ends
    /// the checking at its first answer: no retries, no check per file; the files are kept.
    @Test func aServerAnswering503EndsTheChecks() async throws {
        let count = 40
        let playlist = Array(HostilePlaylistTests.playlist((0..<count).flatMap { ["#EXTINF:2,", "s\($0).ts"] }))
        let responder = try ScriptedTCPResponder { index in
            let close: [(String, String)] = [("Connection", "close")]
            let response: [UInt8]
            if index == 0 {
                response = ScriptedTCPResponder.httpResponse(
                    status: 200, headers: close + [("Content-Length", "\(playlist.count)")], body: playlist)
            } else if index <= count {
                response = ScriptedTCPResponder.httpResponse(
                    status: 200, headers: close + [("Content-Length", "100"), ("ETag", "\"v1\"")],
                    body: Array(repeating: 7, count: 100))
            } else {
                response = ScriptedTCPResponder.httpResponse(
                    status: 503, reason: "Service Unavailable", headers: close + [("Content-Length", "0")])
            }
            return [.readRequestHead, .send(response), .close]
        }
        let sandbox = try TestRun.makeTemporaryDirectory("checks-503")
        var options = Support.fastOptions(connections: 1)
        options.retry = HTTPClientRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(200))
        var job = HLSDownloadJob(
            source: responder.url("p.m3u8").absoluteString, options: options,
            packageDirectory: sandbox.appendingPathComponent("pkg"))
        #expect(try await Support.run(job).0.status == .complete)
        try Self.markUnfinished(job.packageDirectory)
        job.options.connections = 2
        let (second, events) = try await Support.run(job)
        #expect(second.status == .complete && second.filesFetched == 0)
        let summary = try #require(Self.summary(in: events))
        #expect(summary.filesAlreadyDone == count && summary.filesVerified == 0)
        // The two checks that were in flight at once, and no more.
        let checks = responder.connectionCount - count - 1
        #expect(checks >= 1 && checks <= 2, "\(checks) checks")
        await responder.stop()
    }

    /// A byte-range file whose resource changed is fetched again; that fetch is interrupted
    /// part-way. The next run ends with the new bytes only, not the old file's taken for the new
    /// version's.
    @Test func anInterruptedRefetchOfAChangedRangedFileEndsWithTheNewBytes() async throws {
        let length = 120_000
        let old = Data((0..<length).map { UInt8($0 % 251) })
        let setup = try await Setup.make(files: [
            "media.ts": old,
            "index.m3u8": HostilePlaylistTests.playlist(
                [
                    "#EXTINF:2,", "#EXT-X-BYTERANGE:40000@0", "media.ts",
                    "#EXTINF:2,", "#EXT-X-BYTERANGE:80000@40000", "media.ts",
                ], version: 4),
        ])
        var job = setup.job("index.m3u8")
        job.options.connections = 1
        job.options.minimumRangePieceBytes = 10_000
        #expect(try await Support.run(job).0.status == .complete)
        try Self.markUnfinished(setup.package)
        let new = Data((0..<length).map { UInt8(($0 * 7 + 3) % 253) })
        let origin = setup.originRoot.appendingPathComponent("media.ts")
        try new.write(to: origin)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: origin.path)
        _ = try? await Support.run(job, rate: 40_000) { event, download in
            if case .progress(let progress) = event, progress.bytesDone >= 30_000 { download.cancel() }
        }
        let final = setup.package.appendingPathComponent("video/media-0.ts").path
        #expect(
            FileManager.default.fileExists(atPath: final + PackageLayout.rangedPartialSuffix), "interrupted too late")
        let (third, _) = try await Support.run(job)
        #expect(third.status == .complete)
        #expect(try Data(contentsOf: URL(fileURLWithPath: final)) == new)
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }

    /// A playlist rotating its key every segment: the keys are fetched several at once, not one
    /// after the other (16 keys answered after 300 ms each: 4.8 s one by one, 0.6 s eight at once).
    @Test func rotatingKeysAreFetchedSeveralAtOnce() async throws {
        let count = 16
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:2"]
        for index in 0..<count {
            lines += [
                "#EXT-X-KEY:METHOD=AES-128,URI=\"k\(index).key\",IV=0x\(String(repeating: "0", count: 31))1",
                "#EXTINF:2,", "s\(index).ts",
            ]
        }
        let playlist = Array((lines + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n").utf8)
        // When each key's connection came: one after another, they would be 300 ms apart at least.
        let keyConnections = Mutex<[ContinuousClock.Instant]>([])
        let responder = try ScriptedTCPResponder { index in
            if index >= 1 && index <= count { keyConnections.withLock { $0.append(.now) } }
            let close: [(String, String)] = [("Connection", "close")]
            func answer(_ body: [UInt8]) -> [UInt8] {
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: close + [("Content-Length", "\(body.count)")], body: body)
            }
            if index == 0 { return [.readRequestHead, .send(answer(playlist)), .close] }
            if index <= count {
                return [
                    .readRequestHead, .sleep(.milliseconds(300)), .send(answer(Array(repeating: 1, count: 16))), .close,
                ]
            }
            return [.readRequestHead, .send(answer(Array(repeating: 2, count: 32))), .close]
        }
        let sandbox = try TestRun.makeTemporaryDirectory("rotating-keys")
        let job = HLSDownloadJob(
            source: responder.url("p.m3u8").absoluteString, options: Support.fastOptions(connections: 8),
            packageDirectory: sandbox.appendingPathComponent("pkg"))
        #expect(try await Support.run(job).result.status == .complete)
        // Each key asked once, and each stored under a name of its own (the scripted server cannot
        // tell requests apart, so every key has the same bytes; the names are what is checked).
        let asked = responder.requests.compactMap { head in (0..<count).first { head.contains("GET /k\($0).key ") } }
        #expect(asked.sorted() == Array(0..<count), "\(asked)")
        let local = try String(
            contentsOf: job.packageDirectory.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        let keyFiles = Set(local.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-KEY") })
        #expect(keyFiles.count == count, "\(keyFiles)")
        // The most key requests begun within 250 ms of one another: 1 if they were fetched one by one. (Measured
        // so rather than by the whole run's time, which a loaded machine stretches.)
        let times = keyConnections.withLock { $0 }.sorted()
        let mostAtOnce =
            times.indices.map { start in
                times[start...].prefix { $0 - times[start] < .milliseconds(250) }.count
            }.max() ?? 0
        #expect(times.count == count && mostAtOnce >= 4, "\(mostAtOnce) key requests at once")
        await responder.stop()
    }

    /// Sets package.json's status as a run that did not finish leaves it.
    static func markUnfinished(_ package: URL) throws {
        var manifest = try #require(try PackageManifest.load(from: package))
        manifest.status = .interrupted
        try PackageStore.save(manifest, in: package)
    }

    static func summary(in events: [HLSDownloadEvent]) -> HLSPackageSummary? {
        for event in events { if case .planned(let summary) = event { return summary } }
        return nil
    }

    @Test func aCheckJudgesStatusAndETag() {
        let recorded = EntityTag(headerValue: "\"abc\"")!
        #expect(CompletedFileCheck.judging(status: .ok, current: recorded, recorded: recorded) == .unchanged)
        #expect(
            CompletedFileCheck.judging(status: .partialContent, current: recorded, recorded: recorded) == .unchanged)
        #expect(
            CompletedFileCheck.judging(status: .ok, current: EntityTag(headerValue: "\"abd\""), recorded: recorded)
                == .changed)
        // The same tag made weak: equal content, maybe not equal bytes; another weak tag: changed.
        #expect(
            CompletedFileCheck.judging(status: .ok, current: EntityTag(headerValue: "W/\"abc\""), recorded: recorded)
                == .unverified(reason: "a weak ETag"))
        #expect(
            CompletedFileCheck.judging(status: .ok, current: EntityTag(headerValue: "W/\"abd\""), recorded: recorded)
                == .changed)
        #expect(
            CompletedFileCheck.judging(status: .ok, current: nil, recorded: recorded)
                == .unverified(reason: "no ETag in the answer"))
        #expect(
            CompletedFileCheck.judging(status: .notFound, current: recorded, recorded: recorded)
                == .unverified(reason: "HTTP 404"))
        // Statuses worth retrying say the server is not answering now: the checking stops.
        #expect(
            CompletedFileCheck.judging(status: HTTPStatus(503), current: nil, recorded: recorded)
                == .unreachable(reason: "HTTP 503"))
        #expect(
            CompletedFileCheck.judging(status: HTTPStatus(429), current: nil, recorded: recorded)
                == .unreachable(reason: "HTTP 429"))
    }

    /// Rewrites package.json as a kill before its next checkpoint leaves it: `path` still pending.
    static func forgetCompletion(of path: String, in package: URL) throws {
        var manifest = try #require(try PackageManifest.load(from: package))
        for index in manifest.files.indices where manifest.files[index].path == path {
            manifest.files[index].state = "pending"
            manifest.files[index].length = nil
            manifest.files[index].etag = nil
            manifest.files[index].error = nil
        }
        manifest.status = .downloading
        try PackageStore.save(manifest, in: package)
    }

    static func live(_ first: Int, _ count: Int, end: Bool) -> Data {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:\(first)"]
        for sequence in first..<(first + count) { lines += ["#EXTINF:1,", "s\(sequence).ts"] }
        if end { lines.append("#EXT-X-ENDLIST") }
        return Data((lines + [""]).joined(separator: "\n").utf8)
    }

    /// A recording killed after a reload's segments were written to the recorded source but
    /// before package.json caught up: the resumed recording takes each segment once.
    @Test func aResumedRecordingTakesNoSegmentTwice() async throws {
        var files: [String: Data] = ["live.m3u8": Self.live(0, 4, end: false)]
        for sequence in 0..<6 { files["s\(sequence).ts"] = Data(repeating: UInt8(sequence), count: 1000) }
        let setup = try await Setup.make(files: files)
        let job = setup.job("live.m3u8")
        _ = try? await Support.run(job) { event, download in
            if case .planned = event { download.cancel() }
        }
        var manifest = try #require(try PackageManifest.load(from: setup.package))
        #expect(manifest.renditions.first?.lastSourceSequence == 3)
        manifest.renditions[0].lastSourceSequence = 1  // package.json one reload behind
        try PackageStore.save(manifest, in: setup.package)
        try Self.live(0, 6, end: true).write(to: setup.originRoot.appendingPathComponent("live.m3u8"))
        let (second, _) = try await Support.run(job)
        #expect(second.status == .complete)
        let local = try Support.segmentFiles(ofPlaylist: setup.package.appendingPathComponent("video/index.m3u8"))
        #expect(local.count == 6, "\(local.map(\.path))")
        setup.expectNothingOutsideThePackage()
        await setup.origin.stop()
    }
}
