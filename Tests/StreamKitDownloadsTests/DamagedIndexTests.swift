import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@testable import StreamKitDownloads

#if canImport(Glibc)
import Glibc
#endif

/// A queue whose database is damaged: opening it fails with a message that names the file and the
/// way out, and `repair` rebuilds the queue from the downloads on disk.
@Suite(.serialized, .requires(.nginx, .ffmpeg)) struct DamagedIndexTests {
    /// How the database was damaged.
    enum Damage: String, CaseIterable, Sendable {
        /// Random bytes in place of the file.
        case garbage
        /// One page of the tasks table overwritten.
        case corruptedPage
        /// Cut to nothing.
        case truncated
    }

    /// A queue with a finished package, a finished file and a file stopped halfway is damaged:
    /// opening it, and `queue list`, fail naming the file and `streamkit queue repair`. The repair
    /// keeps the old file aside and brings back the package and the file as `success` and the
    /// stopped file as `stopped` with its bytes: started, it fetches only the rest.
    @Test(arguments: Damage.allCases) func aDamagedQueueIsRefusedAndRebuilt(damage: Damage) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let home = try TestRun.makeTemporaryDirectory("damaged-home")
        let packages = try await Nginx.static(root: fixture.directory)
        let origin = try await StaticOrigin.start(
            files: ["done.mp4": 100_000, "slow.mp4": 1 << 20], limitRate: 64 << 10)
        let manager = try await ManagerSupport.manager(directory: home)
        let recorder = EventRecorder(await manager.events())
        let package = try await manager.add(
            DownloadRequest(url: packages.url(fixture.recipe.entry).absoluteString, kind: .hls), autoStart: true)
        let done = try await manager.add(DownloadRequest(url: origin.url("done.mp4"), kind: .file), autoStart: true)
        try await recorder.wait(for: package.id, .success)
        try await recorder.wait(for: done.id, .success)
        let slow = try await manager.add(DownloadRequest(url: origin.url("slow.mp4"), kind: .file), autoStart: true)
        try await recorder.wait { events in
            events.contains {
                if case .progress(let info) = $0 { info.id == slow.id && info.bytesDone > 300 << 10 } else { false }
            }
        }
        try await manager.stop(slow.id)
        let stoppedAt = try #require(await manager.info(slow.id)).bytesDone
        await manager.close()

        let index = home.appendingPathComponent("queue.sqlite")
        try Self.damage(index, damage)
        await #expect {
            _ = try await ManagerSupport.manager(directory: home)
        } throws: { error in
            guard let error = error as? DownloadManagerError, error.kind == .damagedIndex else { return false }
            return error.detail.contains(index.path) && error.detail.contains("streamkit queue repair")
        }
        #expect {
            _ = try DownloadQueueRemote.tasks(directory: home)
        } throws: { ($0 as? DownloadManagerError)?.kind == .damagedIndex }

        let report = try await DownloadManager.repair(directory: home)
        let aside = try #require(report.keptAside)
        #expect(FileManager.default.fileExists(atPath: aside))
        #expect(Set(report.succeeded) == [package.id, done.id], "\(report)")
        #expect(report.stopped == [slow.id], "\(report)")

        let rebuilt = try await ManagerSupport.manager(directory: home)
        let events = EventRecorder(await rebuilt.events())
        #expect(await rebuilt.info(package.id)?.state == .success)
        #expect(await rebuilt.info(done.id)?.state == .success)
        let resumed = try #require(await rebuilt.info(slow.id))
        #expect(resumed.state == .stopped && resumed.bytesDone > 0 && resumed.bytesDone <= stoppedAt, "\(resumed)")
        #expect(await rebuilt.localItems().count == 2)
        let logged = try await origin.nginx.settledAccessLog().count
        try await rebuilt.start(slow.id)
        try await events.wait(for: slow.id, .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: resumed.location)) == Data(origin.files["slow.mp4"]!))
        let later = try await origin.nginx.settledAccessLog().dropFirst(logged).filter { $0.uri == "/slow.mp4" }
        #expect(!later.isEmpty && later.allSatisfy { $0.range?.hasPrefix("bytes=0-") == false }, "\(later)")
        await rebuilt.close()
        await origin.stop()
        await packages.stop()
    }

    static func damage(_ index: URL, _ damage: Damage) throws {
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index.path + suffix) }
        let size = try #require(
            (try FileManager.default.attributesOfItem(atPath: index.path)[.size] as? NSNumber)?.intValue)
        switch damage {
        case .garbage:
            try Data(randomBytes(size)).write(to: index)
        case .corruptedPage:
            // Page 2 holds the root of the first table made, `tasks`: its header and cells become noise.
            let handle = try FileHandle(forWritingTo: index)
            try handle.seek(toOffset: 4096)
            try handle.write(contentsOf: Data(randomBytes(4096)))
            try handle.close()
        case .truncated:
            #expect(truncate(index.path, 0) == 0)
        }
    }
}
