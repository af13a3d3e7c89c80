import Foundation
import StreamKitCore
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// The post-processing step of a queue task: an HLS package exported to one file once it is
/// complete, its progress reported in steps of at most 5% however few the segments.
@Suite(.serialized, .requires(.nginx)) struct PostProcessingTests {
    /// Three segments of random bytes and their playlist, served by nginx.
    static func origin() async throws -> StaticOrigin {
        let origin = try await StaticOrigin.start(files: ["s0.ts": 300_000, "s1.ts": 200_000, "s2.ts": 100_000])
        let playlist = [
            "#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:4", "#EXTINF:4,", "s0.ts", "#EXTINF:4,", "s1.ts",
            "#EXTINF:4,", "s2.ts", "#EXT-X-ENDLIST", "",
        ]
        try origin.write("index.m3u8", Array(playlist.joined(separator: "\n").utf8))
        return origin
    }

    /// Three segments: the export's progress goes 0 → 1 in steps of at most 5% (per segment it
    /// would jump by a third), reaches 1 before `success`, and the file is the segments in order.
    @Test func anExportReportsProgressInSmallSteps() async throws {
        let origin = try await Self.origin()
        let manager = try await ManagerSupport.manager()
        let output = try TestRun.makeTemporaryDirectory("export").appendingPathComponent("show.ts")
        let steps = Mutex<[Double]>([])
        let statesAtOne = Mutex<[DownloadState]>([])
        let info = try await manager.add(
            DownloadRequest(url: origin.url("index.m3u8"), kind: .hls, exportPath: output.path), autoStart: true,
            callbacks: DownloadTaskCallbacks(postProcessingChanged: { info in
                steps.withLock { $0.append(info.postProcessingProgress) }
                if info.postProcessingProgress == 1 { statesAtOne.withLock { $0.append(info.state) } }
            }))
        let deadline = ContinuousClock.now + .seconds(30)
        while await manager.info(info.id)?.state != .success, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let done = try #require(await manager.info(info.id))
        #expect(done.state == .success, "\(done.lastError ?? "")")
        #expect(done.postProcessingProgress == 1)
        let seen = steps.withLock { $0 }
        #expect(seen.count >= 20, "\(seen)")
        for (before, after) in zip([0] + seen, seen) {
            #expect(after >= before && after - before <= 0.05, "\(before) → \(after) in \(seen)")
        }
        #expect(statesAtOne.withLock { $0.first } == .running, "1 is reported while the task still runs")
        let expected = ["s0.ts", "s1.ts", "s2.ts"].flatMap { origin.files[$0]! }
        #expect(try Data(contentsOf: output) == Data(expected))
        await manager.close()
        await origin.stop()
    }

    /// Transport stream segments cannot go to an .mp4 by concatenation: the task fails, saying
    /// what the segments are and where the other container comes from; no file is left.
    @Test func anExportToAnotherContainerFailsTheTaskSayingWhy() async throws {
        let origin = try await Self.origin()
        let manager = try await ManagerSupport.manager()
        let output = try TestRun.makeTemporaryDirectory("export").appendingPathComponent("show.mp4")
        let info = try await manager.add(
            DownloadRequest(url: origin.url("index.m3u8"), kind: .hls, exportPath: output.path), autoStart: true)
        let deadline = ContinuousClock.now + .seconds(30)
        while await manager.info(info.id)?.state != .failed, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let failed = try #require(await manager.info(info.id))
        #expect(failed.state == .failed)
        #expect(failed.lastError?.contains("MPEG-TS") == true, "\(failed.lastError ?? "")")
        #expect(failed.lastError?.contains("streamkit export") == true)
        #expect(!FileManager.default.fileExists(atPath: output.path))
        await manager.close()
        await origin.stop()
    }

    /// An export is an HLS task's .ts or .mp4 file.
    @Test(arguments: [(DownloadKind.file, "a.ts"), (.hls, "a.mkv")])
    func anExportThatCannotBeIsRefusedAtAdd(kind: DownloadKind, name: String) async throws {
        let manager = try await ManagerSupport.manager(runsTasks: false)
        await #expect(throws: DownloadManagerError.self) {
            try await manager.add(
                DownloadRequest(url: "http://127.0.0.1:9/index.m3u8", kind: kind, exportPath: "/tmp/" + name))
        }
        #expect(await manager.allTasks().isEmpty)
        await manager.close()
    }
}
