import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// The download manager against nginx: every API call, the events each emits in order, the
/// lock, recovery, range connections, failures and a full disk.
@Suite(.serialized, .requires(.nginx)) struct DownloadManagerTests {
    typealias Support = ManagerSupport

    /// A served random file and its bytes.
    struct Origin {
        let nginx: Nginx
        let data: Data
        let url: String
        let root: URL
    }

    static func origin(
        bytes: Int = 2 << 20, name: String = "movie.mp4", rate: Int? = nil, honourRange: Bool = true
    ) async throws -> Origin {
        let origin = try await StaticOrigin.start(files: [name: bytes], limitRate: rate, honourRange: honourRange)
        return Origin(nginx: origin.nginx, data: Data(origin.files[name]!), url: origin.url(name), root: origin.root)
    }

    // MARK: Lock

    /// A second manager on the same directory, in the same process, gets `directoryLocked`
    /// naming the directory and this process; once the first closes and is gone, it opens.
    @Test func secondManagerOnADirectoryIsRefused() async throws {
        let directory = try TestRun.makeTemporaryDirectory("manager")
        var first: DownloadManager? = try await Support.manager(directory: directory)
        await #expect {
            _ = try await Support.manager(directory: directory)
        } throws: { error in
            let error = error as? DownloadManagerError
            return error?.kind == .directoryLocked && error?.detail.contains(directory.path) == true
                && error?.detail.contains("\(getpid())") == true
        }
        await first?.close()
        first = nil
        let second = try await Support.manager(directory: directory)
        #expect(await second.allTasks().isEmpty)
        await second.close()
    }

    // MARK: API and events

    /// add (autoStart off) → stopped; start → ready, running, progress, post-processing, success,
    /// completed, allCompleted; the file is byte-identical; info, completed list, local items.
    @Test func addStartCompleteEmitsEventsInOrder() async throws {
        let origin = try await Self.origin()
        let manager = try await Support.manager()
        let recorder = EventRecorder(await manager.events())
        let completed = Mutex<[String]>([])
        let allDone = Mutex(0)
        await manager.setCallbacks(
            DownloadCallbacks(
                allCompleted: { allDone.withLock { $0 += 1 } },
                taskCompleted: { info in completed.withLock { $0.append(info.id) } }))
        let info = try await manager.add(DownloadRequest(url: origin.url, kind: .file, title: "Movie"))
        #expect(info.state == .stopped && info.title == "Movie" && info.kind == .file && info.queueID == 1)
        let taskStates = Mutex<[DownloadState]>([])
        await manager.setCallbacks(
            DownloadTaskCallbacks(stateChanged: { info in taskStates.withLock { $0.append(info.state) } }),
            for: info.id)
        let perTask = EventRecorder(await manager.updates(for: info.id))
        try await recorder.wait { $0.count >= 2 }
        #expect(recorder.milestones == ["added", "preparing>stopped"])
        try await manager.start(info.id)
        try await recorder.wait { $0.contains(.allCompleted) }
        #expect(
            recorder.milestones == [
                "added", "preparing>stopped", "stopped>ready", "ready>running", "post:1.0", "running>success",
                "completed", "allCompleted",
            ])
        #expect(recorder.all.contains { if case .progress = $0 { true } else { false } })
        #expect(recorder.all.contains { if case .speed = $0 { true } else { false } })
        #expect(perTask.milestones == ["stopped>ready", "ready>running", "post:1.0", "running>success", "completed"])
        #expect(taskStates.withLock { $0 } == [.ready, .running, .success])
        #expect(completed.withLock { $0 } == [info.id] && allDone.withLock { $0 } == 1)

        let done = try #require(await manager.info(info.id))
        #expect(done.state == .success && done.progress == 1 && done.bytesDone == Int64(origin.data.count))
        #expect(done.finishedAt != nil && done.lastError == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: done.location)) == origin.data)
        #expect(await manager.completedTasks().map(\.id) == [info.id])
        let items = await manager.localItems()
        #expect(items.map(\.id) == [info.id] && items.first?.byteCount == Int64(origin.data.count))
        #expect(items.first?.playableFile.path == done.location)
        #expect(await manager.info("0000000000000000") == nil)
        await manager.close()
    }

    /// Progress events are throttled to ten a second a task.
    @Test func progressIsThrottled() async throws {
        let origin = try await Self.origin(bytes: 3 << 20, rate: 256 << 10)
        let manager = try await Support.manager()
        let recorder = EventRecorder(await manager.events())
        let started = ContinuousClock.now
        let info = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        try await recorder.wait { $0.contains(.allCompleted) }
        let seconds = Double(started.duration(to: .now).components.seconds) + 1
        let progress = recorder.all.filter { if case .progress = $0 { true } else { false } }.count
        #expect(progress >= 3 && Double(progress) <= seconds * 10 + 1, "\(progress) in \(seconds) s")
        #expect(await manager.info(info.id)?.state == .success)
        await manager.close()
    }

    /// autoStart (the property and the argument), a duplicate refused, a bad URL refused.
    @Test func autoStartDuplicatesAndBadURLs() async throws {
        let origin = try await Self.origin(bytes: 64 << 10)
        let manager = try await Support.manager()
        #expect(await manager.autoStart == false)
        try await manager.setAutoStart(true)
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(DownloadRequest(url: origin.url, kind: .file))
        try await recorder.wait { $0.contains(.allCompleted) }
        #expect(Array(recorder.milestones.prefix(3)) == ["added", "preparing>ready", "ready>running"])
        await #expect {
            try await manager.add(DownloadRequest(url: origin.url, kind: .file))
        } throws: { ($0 as? DownloadManagerError)?.kind == .duplicateTask }
        await #expect {
            try await manager.add(DownloadRequest(url: "ftp://example.com/a.mp4", kind: .file))
        } throws: { ($0 as? DownloadManagerError)?.kind == .invalidArgument }
        #expect(await manager.info(info.id)?.state == .success)
        await manager.close()
        // The setting is saved for the next manager.
        let again = try await Support.manager(directory: manager.directory)
        #expect(await again.autoStart == true)
        await again.close()
    }

    /// stop a running task (running → stopping → stopped, bytes kept), start it again (resumes
    /// without fetching the kept bytes again), stop a queued one (ready → stopped), stopAll and
    /// startAll, and calls on unknown ids.
    @Test func stopAndStartResumeWithoutRefetching() async throws {
        let origin = try await Self.origin(bytes: 2 << 20, rate: 256 << 10)
        let manager = try await Support.manager()
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        try await recorder.wait { events in
            events.contains { if case .progress(let p) = $0 { p.bytesDone > 300 << 10 } else { false } }
        }
        try await manager.stop(info.id)
        let stopped = try #require(await manager.info(info.id))
        #expect(stopped.state == .stopped && stopped.bytesDone > 0)
        try await recorder.waitMilestones(endingWith: ["running>stopping", "stopping>stopped"])
        let kept = try await manager.fileState(info.id).done
        #expect(kept.byteCount > 0)
        let before = try await origin.nginx.settledAccessLogCount()
        recorder.clear()
        try await manager.start(info.id)
        try await recorder.wait { $0.contains(.allCompleted) }
        #expect(recorder.milestones.first == "stopped>ready")
        #expect(try Data(contentsOf: URL(fileURLWithPath: info.location)) == origin.data)
        // No range asked after the restart overlaps the bytes kept.
        let later = try await Support.requestedRanges(origin.nginx, uri: "/movie.mp4", length: Int64(origin.data.count))
            .dropFirst(before)
        for range in later {
            let range = try #require(range)
            #expect(kept.intersection(range).isEmpty, "\(range) refetches kept bytes \(kept)")
        }

        // Two more tasks with one slot: the second waits ready; stop it while queued.
        let second = try writeRandomFile(origin.root, "b.mp4", bytes: 1 << 20)
        _ = try writeRandomFile(origin.root, "c.mp4", bytes: 1 << 20)
        let b = try await manager.add(
            DownloadRequest(url: origin.nginx.url("b.mp4").absoluteString, kind: .file), autoStart: true)
        let c = try await manager.add(
            DownloadRequest(url: origin.nginx.url("c.mp4").absoluteString, kind: .file), autoStart: true)
        #expect(await manager.info(b.id)?.state == .running)
        #expect(await manager.info(c.id)?.state == .ready)
        try await recorder.wait(for: c.id, .ready)
        recorder.clear()
        try await manager.stop(c.id)
        #expect(try await recorder.waitMilestones(endingWith: ["ready>stopped"]) == ["ready>stopped"])
        try await manager.stopAll()
        #expect(await manager.info(b.id)?.state == .stopped)
        try await manager.startAll()
        try await recorder.wait { $0.contains(.allCompleted) }
        #expect(await manager.completedTasks().count == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: b.location)) == second)
        // Stopping a finished task does nothing; starting it is illegal; unknown ids are refused.
        try await manager.stop(b.id)
        await #expect {
            try await manager.start(b.id)
        } throws: { ($0 as? DownloadManagerError)?.kind == .illegalTransition }
        await #expect {
            try await manager.stop("nope")
        } throws: { ($0 as? DownloadManagerError)?.kind == .unknownTask }
        await manager.close()
    }

    /// remove deletes the files (running or finished) and emits removing, removed; removeUnfinished
    /// keeps the finished ones.
    @Test func removeAndRemoveUnfinished() async throws {
        let origin = try await Self.origin(bytes: 1 << 20, rate: 128 << 10)
        _ = try writeRandomFile(origin.root, "small.mp3", bytes: 10_000)
        let manager = try await Support.manager()
        try await manager.setMaximumConcurrentDownloads(2)
        let recorder = EventRecorder(await manager.events())
        let small = try await manager.add(
            DownloadRequest(url: origin.nginx.url("small.mp3").absoluteString, kind: .file, fileType: .audio),
            autoStart: true)
        try await recorder.wait(for: small.id, .success)
        let big = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        try await recorder.wait(for: big.id, .running)
        let queued = try await manager.add(
            DownloadRequest(url: origin.nginx.url("none.mp4").absoluteString, kind: .file))
        try await recorder.wait(for: queued.id, .stopped)
        recorder.clear()
        try await manager.remove(big.id)
        #expect(try await recorder.waitMilestones(endingWith: ["removed"]) == ["running>removing", "removed"])
        #expect(
            !FileManager.default.fileExists(atPath: URL(fileURLWithPath: big.location).deletingLastPathComponent().path)
        )
        #expect(await manager.info(big.id) == nil)
        recorder.clear()
        let removed = try await manager.removeUnfinished()
        #expect(removed == [queued.id])
        #expect(try await recorder.waitMilestones(endingWith: ["removed"]) == ["stopped>removing", "removed"])
        #expect(await manager.allTasks().map(\.id) == [small.id])
        #expect(FileManager.default.fileExists(atPath: small.location))
        #expect(await manager.localItems().first?.fileType == .audio)
        recorder.clear()
        try await manager.remove(small.id)
        #expect(try await recorder.waitMilestones(endingWith: ["removed"]) == ["success>removing", "removed"])
        #expect(!FileManager.default.fileExists(atPath: small.location))
        await manager.close()
    }

    /// maximumConcurrentDownloads: 1 by default, 1...16 accepted, saved; more than 16 refused;
    /// lowering it sends the latest running task back to ready.
    @Test func maximumConcurrentDownloads() async throws {
        let origin = try await Self.origin(bytes: 1 << 20, rate: 64 << 10)
        _ = try writeRandomFile(origin.root, "two.mp4", bytes: 1 << 20)
        let manager = try await Support.manager()
        #expect(await manager.maximumConcurrentDownloads == 1)
        for bad in [0, 17] {
            await #expect {
                try await manager.setMaximumConcurrentDownloads(bad)
            } throws: { ($0 as? DownloadManagerError)?.kind == .invalidArgument }
        }
        try await manager.setMaximumConcurrentDownloads(16)
        let one = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        let two = try await manager.add(
            DownloadRequest(url: origin.nginx.url("two.mp4").absoluteString, kind: .file), autoStart: true)
        #expect(await manager.info(two.id)?.state == .running)
        let recorder = EventRecorder(await manager.updates(for: two.id))
        try await manager.setMaximumConcurrentDownloads(1)
        try await recorder.wait { _ in true }
        #expect(await manager.info(one.id)?.state == .running)
        #expect(await manager.info(two.id)?.state == .ready)
        // The stream opens with the task as it is (`current`, not a milestone); then the change.
        try await recorder.wait { !$0.compactMap(EventRecorder.describe).isEmpty }
        #expect(recorder.milestones.first == "running>ready")
        await manager.close()
        let again = try await Support.manager(directory: manager.directory, runsTasks: false)
        #expect(await again.maximumConcurrentDownloads == 1)
        // Closing put the running task back to ready, to resume next time.
        #expect(await again.info(one.id)?.state == .ready)
        await again.close()
    }

    /// Changing the download directory: new tasks go there, existing ones stay where they are and
    /// stay indexed. The bandwidth limit holds all tasks to it.
    @Test func downloadDirectoryAndBandwidthLimit() async throws {
        let origin = try await Self.origin(bytes: 600 << 10)
        _ = try writeRandomFile(origin.root, "later.mp4", bytes: 600 << 10)
        let manager = try await Support.manager()
        #expect(await manager.downloadDirectory.path == manager.directory.appendingPathComponent("library").path)
        let recorder = EventRecorder(await manager.events())
        let first = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        try await recorder.wait(for: first.id, .success)
        let elsewhere = try TestRun.makeTemporaryDirectory("elsewhere")
        try await manager.setDownloadDirectory(elsewhere)
        try await manager.setBandwidthLimit(256 << 10)
        #expect(await manager.bandwidthLimit == 256 << 10)
        let started = ContinuousClock.now
        let second = try await manager.add(
            DownloadRequest(url: origin.nginx.url("later.mp4").absoluteString, kind: .file), autoStart: true)
        try await recorder.wait(for: second.id, .success)
        let elapsed = started.duration(to: .now)
        #expect(elapsed >= .milliseconds(1500), "600 KiB at 256 KiB/s took \(elapsed)")
        #expect(second.location.hasPrefix(elsewhere.path))
        #expect(first.location.hasPrefix(manager.directory.path))
        #expect(Set(await manager.localItems().map(\.id)) == [first.id, second.id])
        await manager.close()
        let again = try await Support.manager(directory: manager.directory, runsTasks: false)
        #expect(await again.downloadDirectory.path == elsewhere.path)
        #expect(await again.bandwidthLimit == 256 << 10)
        await again.close()
    }

    /// The transitions the other tests do not reach through the API: preparing → failed (the
    /// task's folder cannot be made), failed → removing, ready → removing; and the failure,
    /// progress and speed callbacks.
    @Test func remainingTransitionsAndCallbacks() async throws {
        let origin = try await Self.origin(bytes: 300_000, rate: 100_000)
        _ = try writeRandomFile(origin.root, "two.mp4", bytes: 1000)
        let manager = try await Support.manager()
        let recorder = EventRecorder(await manager.events())
        let failures = Mutex<[String]>([])
        await manager.setCallbacks(
            DownloadCallbacks(taskFailed: { info, error in
                failures.withLock { $0.append("\(info.id) \(error.kind)") }
            }))
        // A download directory whose path is taken by a file: the task's folder cannot be made.
        let blocked = try TestRun.makeTemporaryDirectory("blocked").appendingPathComponent("library")
        try await manager.setDownloadDirectory(blocked)
        try FileManager.default.removeItem(at: blocked)
        try Data("x".utf8).write(to: blocked)
        let doomed = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        #expect(doomed.state == .failed && doomed.lastError?.contains(blocked.path) == true)
        #expect(
            try await recorder.waitMilestones(endingWith: ["failed:file system"]) == [
                "added", "preparing>failed", "failed:file system",
            ])
        #expect(failures.withLock { $0 } == ["\(doomed.id) file system"])
        recorder.clear()
        try await manager.remove(doomed.id)
        #expect(try await recorder.waitMilestones(endingWith: ["removed"]) == ["failed>removing", "removed"])

        try await manager.setDownloadDirectory(manager.directory.appendingPathComponent("library2"))
        let progress = Mutex(0)
        let speeds = Mutex(0)
        let first = try await manager.add(DownloadRequest(url: origin.url, kind: .file))
        await manager.setCallbacks(
            DownloadTaskCallbacks(
                speedChanged: { _ in speeds.withLock { $0 += 1 } },
                progressChanged: { _ in progress.withLock { $0 += 1 } }), for: first.id)
        try await manager.start(first.id)
        let queued = try await manager.add(
            DownloadRequest(url: origin.nginx.url("two.mp4").absoluteString, kind: .file), autoStart: true)
        try await recorder.wait(for: queued.id, .ready)
        recorder.clear()
        try await manager.remove(queued.id)
        #expect(try await recorder.waitMilestones(endingWith: ["removed"]) == ["ready>removing", "removed"])
        try await recorder.wait(for: first.id, .success)
        #expect(progress.withLock { $0 } > 0 && speeds.withLock { $0 } == progress.withLock { $0 })
        await manager.close()
    }

    // MARK: Range connections

    /// Four range connections: four requests whose ranges do not overlap, the file byte-identical;
    /// a server that ignores Range gets one connection and one request.
    @Test func rangeConnectionsAndServersThatIgnoreRange() async throws {
        let origin = try await Self.origin(bytes: 4 << 20, rate: 1 << 20)
        let manager = try await Support.manager()
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        try await recorder.wait(for: info.id, .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: info.location)) == origin.data)
        let entries = try await origin.nginx.settledAccessLog().filter { $0.uri == "/movie.mp4" }
        #expect(entries.count >= 4 && entries.allSatisfy { $0.status == 206 }, "\(entries)")
        // Bytes nginx sent: the file once, plus what it had pushed into a socket past a boundary
        // that another connection took over (the reader stops there and closes the connection; on
        // a loaded machine the socket buffers hold up to megabytes). Never the file twice.
        let sent = entries.reduce(Int64(0)) { $0 + $1.bytesSent }
        #expect(sent >= Int64(origin.data.count) && sent < 2 * Int64(origin.data.count), "\(sent)")
        await manager.close()

        let plain = try await Self.origin(bytes: 1 << 20, honourRange: false)
        let second = try await Support.manager()
        let events = EventRecorder(await second.events())
        let task = try await second.add(DownloadRequest(url: plain.url, kind: .file), autoStart: true)
        try await events.wait(for: task.id, .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: task.location)) == plain.data)
        let requests = try await plain.nginx.settledAccessLog().filter { $0.uri == "/movie.mp4" }
        #expect(requests.count == 1 && requests.first?.status == 200, "\(requests)")
        await second.close()
    }

    /// If-Range: the origin file changes while the task is stopped; the resumed task notices (200
    /// instead of 206), starts over and ends with the new bytes, not a mix.
    @Test func changedFileIsFetchedAgainWhole() async throws {
        let origin = try await Self.origin(bytes: 2 << 20, rate: 256 << 10)
        let manager = try await Support.manager()
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        try await recorder.wait { events in
            events.contains { if case .progress(let p) = $0 { p.bytesDone > 200 << 10 } else { false } }
        }
        try await manager.stop(info.id)
        try await Task.sleep(for: .milliseconds(1100))  // a new Last-Modified second
        let changed = try writeRandomFile(origin.root, "movie.mp4", bytes: 2 << 20)
        try await manager.start(info.id)
        try await recorder.wait(for: info.id, .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: info.location)) == changed)
        #expect(try await origin.nginx.settledAccessLog().contains { $0.uri == "/movie.mp4" && $0.status == 200 })
        await manager.close()
    }

    // MARK: Failures

    /// A 404 fails at once, naming the URL and status; retry puts the task back (failed → ready)
    /// and it succeeds once the file exists. Connections refused make a task wait for its host
    /// after three errors in a row, saying so, rather than fail.
    @Test func failuresAndRetry() async throws {
        let origin = try await Self.origin(bytes: 100_000)
        let manager = try await Support.manager(failures: 3)
        let recorder = EventRecorder(await manager.events())
        let missing = try await manager.add(
            DownloadRequest(url: origin.nginx.url("later.mp4").absoluteString, kind: .file), autoStart: true)
        try await recorder.wait(for: missing.id, .failed)
        let failed = try #require(await manager.info(missing.id))
        #expect(failed.lastError?.contains("404") == true && failed.lastError?.contains("later.mp4") == true)
        #expect(recorder.milestones.contains("failed:transfer"))
        _ = try writeRandomFile(origin.root, "later.mp4", bytes: 100_000)
        recorder.clear()
        try await manager.retry(missing.id)
        try await recorder.wait(for: missing.id, .success)
        #expect(recorder.milestones.prefix(2) == ["failed>ready", "ready>running"])
        #expect(await manager.info(missing.id)?.lastError == nil)
        await #expect {
            try await manager.retry(missing.id)
        } throws: { ($0 as? DownloadManagerError)?.kind == .illegalTransition }

        let refusing = try LocalNetwork.refusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let refused = try await manager.add(
            DownloadRequest(url: "http://127.0.0.1:\(port)/x.mp4", kind: .file), autoStart: true)
        try await recorder.wait(for: refused.id, .waiting)
        let error = try #require(await manager.info(refused.id)?.lastError)
        #expect(error.contains("3 errors in a row") && error.contains("127.0.0.1:\(port)"), "\(error)")
        // The same for an HLS task whose playlist cannot be fetched, on another silent host.
        let silent = try LocalNetwork.refusingPort()
        defer { withExtendedLifetime(silent) {} }
        let hls = try await manager.add(
            DownloadRequest(url: "http://127.0.0.1:\(silent.port)/show.m3u8", kind: .hls), autoStart: true)
        try await recorder.wait(for: hls.id, .waiting)
        let hlsError = try #require(await manager.info(hls.id)?.lastError)
        #expect(hlsError.contains("3 errors in a row") && hlsError.contains("show.m3u8"), "\(hlsError)")
        #expect(!recorder.milestones.contains("running>failed"), "\(recorder.milestones)")
        await manager.close()
    }

    /// A full disk (writes fail with ENOSPC): the task fails with a clear error, the other task
    /// finishes untouched, the index stays readable, and once space is back a retry resumes to a
    /// byte-identical file.
    @Test func diskFullFailsClearlyAndResumes() async throws {
        let origin = try await Self.origin(bytes: 2 << 20, rate: 128 << 10)
        let other = try writeRandomFile(origin.root, "other.mp3", bytes: 300_000)
        let faults = WriteFaultInjector()
        let manager = try await Support.manager(faults: faults)
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(DownloadRequest(url: origin.url, kind: .file), autoStart: true)
        try await recorder.wait { events in
            events.contains { if case .progress(let p) = $0 { p.bytesDone > 300 << 10 } else { false } }
        }
        faults.errorCode = ENOSPC
        try await recorder.wait(for: info.id, .failed)
        let failed = try #require(await manager.info(info.id))
        #expect(failed.lastError?.contains("No space left on device") == true, "\(failed.lastError ?? "")")
        #expect(failed.lastError?.contains(".streamkit-partial") == true)
        #expect(recorder.all.contains { if case .failed(_, let e) = $0 { e.kind == .diskFull } else { false } })
        let kept = try await manager.fileState(info.id).done
        #expect(kept.byteCount > 0)
        faults.errorCode = nil
        // Another task runs meanwhile, untouched.
        let second = try await manager.add(
            DownloadRequest(url: origin.nginx.url("other.mp3").absoluteString, kind: .file), autoStart: true)
        try await recorder.wait(for: second.id, .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: second.location)) == other)
        let before = try await origin.nginx.settledAccessLogCount()
        try await manager.retry(info.id)
        try await recorder.wait(for: info.id, .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: info.location)) == origin.data)
        for range in try await Support.requestedRanges(origin.nginx, uri: "/movie.mp4", length: 2 << 20).dropFirst(
            before)
        {
            #expect(kept.intersection(try #require(range)).isEmpty)
        }
        await manager.close()
    }

    // MARK: HLS

    /// An HLS task makes a package that lists as a local item with its index.m3u8.
    @Test(.requires(.ffmpeg)) func hlsTaskMakesAPackage() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let nginx = try await Nginx.static(root: fixture.directory)
        let manager = try await Support.manager()
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(
            DownloadRequest(url: nginx.url(fixture.recipe.entry).absoluteString, kind: .hls, title: "Show"),
            autoStart: true)
        try await recorder.wait(for: info.id, .success)
        #expect(
            info.id
                == HLSDownloadJob.packageID(
                    source: info.url, selection: HLSSelection(), decrypt: false, salt: manager.idSalt))
        let item = try #require(await manager.localItems().first)
        #expect(item.playableFile.lastPathComponent == "index.m3u8" && item.title == "Show")
        #expect(FileManager.default.fileExists(atPath: item.playableFile.path))
        #expect(await manager.info(info.id)?.progress == 1)
        await manager.close()
    }
}
