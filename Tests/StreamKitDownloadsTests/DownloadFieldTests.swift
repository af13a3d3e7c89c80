import Foundation
import StreamKitCore
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// File tasks on a link that breaks: connections reset mid-body by a relay in front of nginx.
@Suite(.serialized, .requires(.nginx)) struct DownloadFieldTests {
    /// The first response, the one that tells the length and whether ranges work, is reset
    /// mid-body, and so is the next connection: both are retried under the failure policy like
    /// any other response, and the task ends `success` with the origin's bytes, on one connection
    /// and on four.
    @Test(arguments: [1, 4]) func aResetFirstResponseIsRetriedAndResumes(connections: Int) async throws {
        let origin = try await StaticOrigin.start(files: ["movie.mp4": 3 << 20], limitRate: 2 << 20)
        let relay = try TCPRelay(upstreamPort: origin.nginx.port) { index in
            index < 2 ? (512 << 10) >> index : nil
        }
        try await Self.fetchSucceeds(through: relay, from: origin, connections: connections)
        #expect(relay.cutCount == 2)
        await relay.stop()
        await origin.stop()
    }

    /// A server that ignores `Range` resets the whole-file answer mid-body: the task asks again
    /// after the policy's wait, takes the new whole answer from byte 0, and ends `success`.
    @Test func aResetWholeFileAnswerIsFetchedAgain() async throws {
        let origin = try await StaticOrigin.start(
            files: ["movie.mp4": 2 << 20], limitRate: 2 << 20, honourRange: false)
        let relay = try TCPRelay(upstreamPort: origin.nginx.port) { $0 == 0 ? 700 << 10 : nil }
        try await Self.fetchSucceeds(through: relay, from: origin, connections: 4)
        #expect(relay.cutCount == 1)
        let requests = try await origin.nginx.settledAccessLog().filter { $0.uri == "/movie.mp4" }
        #expect(requests.count == 2 && requests.allSatisfy { $0.status == 200 }, "\(requests)")
        await relay.stop()
        await origin.stop()
    }

    /// Runs a file task for the origin's `movie.mp4` through `relay` and checks that it ended
    /// `success` with the origin's bytes.
    /// Range connections that split a file and take halves from each other fetch every byte once:
    /// a connection never asks for bytes another may take, so none arrives twice. The relay counts
    /// what the client received; beyond the file, only response heads (under 512 bytes each).
    @Test(arguments: [false, true]) func rangeConnectionsFetchEveryByteOnce(throttled: Bool) async throws {
        let size = 8 << 20
        let origin = try await StaticOrigin.start(files: ["movie.mp4": size], limitRate: throttled ? 4 << 20 : nil)
        let relay = try TCPRelay(upstreamPort: origin.nginx.port)
        try await Self.fetchSucceeds(through: relay, from: origin, connections: 4)
        let responses = try await origin.nginx.settledAccessLog().count
        let extra = relay.bytesDownstream - size
        #expect(extra >= 0 && extra <= responses * 512, "\(extra) bytes beyond the file in \(responses) responses")
        await relay.stop()
        await origin.stop()
    }

    static func fetchSucceeds(through relay: TCPRelay, from origin: StaticOrigin, connections: Int) async throws {
        let manager = try await ManagerSupport.manager(connections: connections, failures: 3)
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(
            DownloadRequest(url: "http://127.0.0.1:\(relay.port)/movie.mp4", kind: .file), autoStart: true)
        try await recorder.wait { events in
            events.contains { event in
                guard case .stateChanged(let changed, _) = event, changed.id == info.id else { return false }
                return changed.state == .success || changed.state == .failed
            }
        }
        let final = try #require(await manager.info(info.id))
        #expect(final.state == .success, "\(final.lastError ?? "no error")")
        if final.state == .success {
            #expect(try Data(contentsOf: URL(fileURLWithPath: final.location)) == Data(origin.files["movie.mp4"]!))
        }
        await manager.close()
    }

    /// The queue's database and its downloads on one 20 MiB file system, and a 30 MiB file to
    /// fetch: the task fails within 5 s of the file system filling up, with a message that names
    /// it (timed from the moment it is full, not from the start: fetching 20 MiB took seconds on
    /// a loaded runner, and CI once saw 5.06 s from the start); the next
    /// task waits for free space, naming it too; once the file system has room again, that task
    /// runs by itself, a retry resumes the first from the bytes on disk, and both files end
    /// byte-identical, the queue database recording it.
    @Test(.requiresSmallFileSystem()) func aFullDiskFailsTheTaskNamingItsFileSystemAndTheQueueGoesOn() async throws {
        let disk = try await SmallFileSystem.mount(megabytes: 20)
        do {
            try await fillAndRecover(disk)
        } catch {
            await disk.unmount()
            throw error
        }
        await disk.unmount()
    }

    private func fillAndRecover(_ disk: SmallFileSystem) async throws {
        let origin = try await StaticOrigin.start(files: ["big.mp4": 30 << 20, "small.mp4": 256 << 10])
        let home = disk.root.appendingPathComponent("home")
        let manager = try await ManagerSupport.manager(directory: home, connections: 4, failures: 3)
        let recorder = EventRecorder(await manager.events())
        // When the file system is first seen full (under 512 KiB left), looked at every 5 ms.
        let full = Mutex<ContinuousClock.Instant?>(nil)
        let root = disk.root.path
        let watch = Task {
            while !Task.isCancelled && full.withLock({ $0 == nil }) {
                if let space = FileSystemSpace.of(root), space.availableBytes < 512 << 10 {
                    full.withLock { $0 = .now }
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        let big = try await manager.add(DownloadRequest(url: origin.url("big.mp4"), kind: .file), autoStart: true)
        let small = try await manager.add(DownloadRequest(url: origin.url("small.mp4"), kind: .file), autoStart: true)
        try await recorder.wait(for: big.id, .failed, timeout: .seconds(30))
        let failedAt = ContinuousClock.now
        watch.cancel()
        let filled = try #require(full.withLock { $0 }, "the file system was never seen full")
        let failedAfter = filled.duration(to: failedAt)
        #expect(failedAfter < .seconds(5), "failed \(failedAfter) after the file system was full")
        let failed = try #require(await manager.info(big.id))
        let failure = failed.lastError ?? ""
        #expect(
            failure.contains("No space left") && failure.contains("the file system at \(disk.root.path)"), "\(failure)")
        // The next task is taken up at once: it waits for free space, naming the file system, as
        // the disk is still full.
        try await recorder.wait(for: small.id, .waiting, timeout: .seconds(5))
        let waiting = try #require(await manager.info(small.id)?.lastError)
        #expect(
            waiting.contains("waiting for free space: the file system at \(disk.root.path)")
                && waiting.contains("below the floor of"), "\(waiting)")
        // Most of the file system holds the task's bytes, recorded as done.
        let done = try await manager.fileState(big.id).done
        #expect(done.byteCount > 10 << 20, "\(done.byteCount) bytes done")
        try await disk.resize(megabytes: 64)
        let retried = Date().timeIntervalSince1970
        try await manager.retry(big.id)
        try await recorder.wait(for: big.id, .success, timeout: .seconds(30))
        try await recorder.wait(for: small.id, .success, timeout: .seconds(30))
        for (task, name) in [(big, "big.mp4"), (small, "small.mp4")] {
            let location = try #require(await manager.info(task.id)?.location)
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == Data(origin.files[name]!))
        }
        // The retry asked only for bytes that were not on disk (nginx logs when a request
        // started, to the millisecond, by the same clock).
        let resumed = try await origin.nginx.settledAccessLog().filter {
            $0.uri == "/big.mp4" && ($0.started ?? 0) >= retried - 0.002
        }
        #expect(!resumed.isEmpty)
        for request in resumed {
            let range = try #require(Self.requestedRange(request.range, length: 30 << 20), "\(request)")
            #expect(done.intersection(range).isEmpty, "\(request.range ?? "") asks again for bytes on disk: \(done)")
        }
        await manager.close()
        // What the index holds once the disk had room again.
        let reopened = try await ManagerSupport.manager(directory: home, runsTasks: false)
        #expect(await reopened.info(big.id)?.state == .success)
        #expect(await reopened.info(small.id)?.state == .success)
        await reopened.close()
        await origin.stop()
    }

    /// A task whose URL answers 404 fails naming the status and leaves no empty partial file.
    @Test func aFailureBeforeAnyByteLeavesNoPartialFile() async throws {
        let origin = try await StaticOrigin.start(files: ["movie.mp4": 100_000])
        let manager = try await ManagerSupport.manager(failures: 2)
        let recorder = EventRecorder(await manager.events())
        let missing = try await manager.add(
            DownloadRequest(url: origin.url("missing.mp4"), kind: .file), autoStart: true)
        try await recorder.wait(for: missing.id, .failed)
        let failed = try #require(await manager.info(missing.id))
        #expect(failed.lastError?.contains("404") == true, "\(failed.lastError ?? "")")
        let directory = URL(fileURLWithPath: failed.location).deletingLastPathComponent()
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(left.allSatisfy { !$0.hasPrefix("missing.mp4") }, "\(left)")
        await manager.close()
        await origin.stop()
    }

    /// The origin is down when four tasks are queued: they find it silent and within 10 s all
    /// four wait for it, saying why, none failed. It comes back on the same port: within 20 s all
    /// four have finished by themselves, byte-identical.
    @Test func tasksWaitForAnOriginThatIsDownAndFinishWhenItReturns() async throws {
        let root = try TestRun.makeTemporaryDirectory("down-origin")
        var files: [String: Data] = [:]
        for index in 0..<4 { files["f\(index).mp4"] = try writeRandomFile(root, "f\(index).mp4", bytes: 300_000) }
        let port = try LocalNetwork.freePort()
        let manager = try await ManagerSupport.manager()
        let recorder = EventRecorder(await manager.events())
        var ids: [String: String] = [:]
        for name in files.keys.sorted() {
            let url = "http://127.0.0.1:\(port)/\(name)"
            ids[name] = try await manager.add(DownloadRequest(url: url, kind: .file), autoStart: true).id
        }
        let queued = ContinuousClock.now
        while await manager.allTasks().contains(where: { $0.state != .waiting }),
            queued.duration(to: .now) < .seconds(10)
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        let tasks = await manager.allTasks()
        #expect(tasks.allSatisfy { $0.state == .waiting }, "\(tasks.map(\.state)) after \(queued.duration(to: .now))")
        #expect(tasks.allSatisfy { $0.lastError?.contains("127.0.0.1:\(port)") == true }, "\(tasks.map(\.lastError))")

        let nginx = try await Nginx.static(root: root, port: port)
        let back = ContinuousClock.now
        while await manager.allTasks().contains(where: { $0.state != .success }), back.duration(to: .now) < .seconds(20)
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        for (name, id) in ids {
            let info = try #require(await manager.info(id))
            #expect(info.state == .success, "\(name): \(info.state) \(info.lastError ?? "")")
            if info.state == .success {
                #expect(try Data(contentsOf: URL(fileURLWithPath: info.location)) == files[name])
            }
        }
        #expect(!recorder.milestones.contains { $0.hasSuffix(">failed") }, "\(recorder.milestones)")
        await manager.close()
        await nginx.stop()
    }

    /// The bytes a `Range: bytes=A-B` or `bytes=A-` header asks for.
    static func requestedRange(_ header: String?, length: Int64) -> ByteRange? {
        guard let header, header.hasPrefix("bytes=") else { return nil }
        let bounds = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]) else { return nil }
        let last = bounds[1].isEmpty ? length - 1 : Int64(bounds[1])
        return last.map { ByteRange(first, $0 + 1) }
    }
}
