import Foundation
import StreamKitCore
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// Recording tasks (`DownloadKind.rtmp`) in the manager, with a scripted ``LiveRecorder`` in
/// place of RTMP: the runs it makes, their retries and failures, the seconds saved, and the
/// index columns they live in.
@Suite struct RecordingTaskTests {
    /// What one run of the scripted recorder does.
    enum Step: Sendable {
        case reach(seconds: Double)
        case endEarly(seconds: Double)
        case fail(transient: Bool)
    }

    /// Plays `steps` in order, one per run, reporting the seconds first; records the jobs it got.
    final class ScriptedRecorder: LiveRecorder {
        let steps: Mutex<[Step]>
        let jobs = Mutex<[LiveRecordingJob]>([])

        init(_ steps: [Step]) { self.steps = Mutex(steps) }

        func record(
            _ job: LiveRecordingJob, progress: @escaping @Sendable (LiveRecordingProgress) -> Void
        ) async throws -> LiveRecordingOutcome {
            jobs.withLock { $0.append(job) }
            let step = steps.withLock { $0.isEmpty ? Step.fail(transient: false) : $0.removeFirst() }
            switch step {
            case .reach(let seconds):
                progress(LiveRecordingProgress(seconds: seconds, bytes: Int64(seconds * 1_000)))
                return .durationReached(LiveRecordingProgress(seconds: seconds, bytes: Int64(seconds * 1_000)))
            case .endEarly(let seconds):
                progress(LiveRecordingProgress(seconds: seconds, bytes: Int64(seconds * 1_000)))
                return .endedEarly(
                    LiveRecordingProgress(seconds: seconds, bytes: Int64(seconds * 1_000)), reason: "the stream ended")
            case .fail(let transient):
                throw LiveRecordingError("connection failed: refused", isTransient: transient)
            }
        }
    }

    static func manager(
        directory: URL? = nil, recorder: (any LiveRecorder)?
    ) async throws -> DownloadManager {
        try await DownloadManager(
            configuration: DownloadManagerConfiguration(
                directory: directory ?? TestRun.makeTemporaryDirectory("recording-manager"),
                fileOptions: RangedFileOptions(
                    maximumConsecutiveFailures: 3, initialBackoff: .milliseconds(10),
                    maximumBackoff: .milliseconds(20)),
                persistInterval: .milliseconds(50), liveRecorder: recorder))
    }

    static func request(_ url: String = "rtmp://127.0.0.1/live/show", duration: Double = 8) -> DownloadRequest {
        var request = DownloadRequest(url: url, kind: .rtmp)
        request.recording = LiveRecordingSettings(duration: duration, hls: true)
        return request
    }

    /// Waits until task `id` is in `state`.
    static func settle(_ manager: DownloadManager, _ id: String, in state: DownloadState) async -> DownloadTaskInfo? {
        _ = await eventually(timeout: .seconds(20)) { await manager.info(id)?.state == state }
        return await manager.info(id)
    }

    @Test func runsUntilTheDurationIsReachedThenSucceeds() async throws {
        let directory = try TestRun.makeTemporaryDirectory("recording-manager")
        let recorder = ScriptedRecorder([.endEarly(seconds: 3), .fail(transient: true), .reach(seconds: 8)])
        var manager = try await Self.manager(directory: directory, recorder: recorder)
        let added = try await manager.add(Self.request(), autoStart: true)
        #expect(added.kind == .rtmp && added.recordedSeconds == 0 && added.title == "show")
        let done = try #require(await Self.settle(manager, added.id, in: .success))
        #expect(done.recordedSeconds == 8 && done.progress == 1 && done.bytesDone == 8_000, "\(done)")
        // Every run records into the same file in the task's own folder.
        let jobs = recorder.jobs.withLock { $0 }
        #expect(jobs.count == 3 && Set(jobs.map(\.file)) == [done.location + "/show.flv"], "\(jobs)")
        #expect(jobs.allSatisfy { $0.duration == 8 && $0.hlsPackage && $0.folder == done.location })
        #expect(done.location.hasSuffix("/library/" + done.id))
        await manager.close()

        // The settings and the seconds are in the index.
        manager = try await Self.manager(directory: directory, recorder: nil)
        let reopened = try #require(await manager.info(added.id))
        #expect(reopened.recording == LiveRecordingSettings(duration: 8, hls: true) && reopened.recordedSeconds == 8)
        // Removing it deletes its folder.
        try await manager.remove(added.id)
        #expect(!FileManager.default.fileExists(atPath: done.location))
        await manager.close()
    }

    @Test func earlyEndsWithNoNewMediaFailTheTaskAfterThePolicy() async throws {
        let recorder = ScriptedRecorder([.endEarly(seconds: 2), .endEarly(seconds: 2), .endEarly(seconds: 2)])
        let manager = try await Self.manager(recorder: recorder)
        let id = try await manager.add(Self.request(), autoStart: true).id
        let failed = try #require(await Self.settle(manager, id, in: .failed))
        let error = failed.lastError ?? ""
        #expect(error.contains("recording rtmp://127.0.0.1/live/show: the stream ended after 0:02 of 0:08"), "\(error)")
        #expect(error.contains("errors in a row"), "\(error)")
        // The first early end made progress; the two after it did not, and the third in a row fails.
        #expect(recorder.jobs.withLock { $0.count } == 3)
        await manager.close()
    }

    @Test func aPermanentErrorFailsAtOnceAndNoRecorderFailsToo() async throws {
        let recorder = ScriptedRecorder([.fail(transient: false)])
        let manager = try await Self.manager(recorder: recorder)
        let id = try await manager.add(Self.request(), autoStart: true).id
        let failed = try #require(await Self.settle(manager, id, in: .failed))
        #expect(
            failed.lastError?.contains("connection failed: refused") == true && recorder.jobs.withLock(\.count) == 1)
        await manager.close()

        let without = try await Self.manager(recorder: nil)
        let other = try await without.add(Self.request(), autoStart: true).id
        let refused = try #require(await Self.settle(without, other, in: .failed))
        #expect(refused.lastError?.contains("it has no live recorder") == true, "\(refused)")
        await without.close()
    }

    @Test func refusesRequestsThatDoNotFitTheKind() async throws {
        let manager = try await Self.manager(recorder: nil)
        var noDuration = DownloadRequest(url: "rtmp://127.0.0.1/live/show", kind: .rtmp)
        let cases: [(DownloadRequest, String)] = [
            (noDuration, "a recording needs a positive duration"),
            (Self.request(duration: 0), "a recording needs a positive duration"),
            (Self.request("http://127.0.0.1/live.m3u8"), "a recording needs an rtmp or rtmps URL"),
            (DownloadRequest(url: "rtmp://127.0.0.1/live/show", kind: .hls), "(an RTMP stream is recorded by a task"),
        ]
        for (request, message) in cases {
            await #expect {
                try await manager.add(request)
            } throws: { error in
                (error as? DownloadManagerError)?.kind == .invalidArgument
                    && (error as? DownloadManagerError)?.detail.contains(message) == true
            }
        }
        noDuration.recording = LiveRecordingSettings(duration: 60)
        noDuration.exportPath = "/tmp/a.ts"
        await #expect(throws: DownloadManagerError.self) { try await manager.add(noDuration) }
        // Each add of the same stream is a recording of its own.
        let first = try await manager.add(Self.request())
        try await Task.sleep(for: .milliseconds(5))
        let second = try await manager.add(Self.request())
        #expect(first.id != second.id)
        #expect(await manager.allTasks().count == 2)
        await manager.close()
    }

    /// A queue made before recordings has no `recording` or `recorded_seconds` column: opening adds
    /// them, and its tasks read as before.
    @Test func anIndexFromBeforeRecordingsGainsTheirColumns() async throws {
        let directory = try TestRun.makeTemporaryDirectory("recording-old-index")
        let manager = try await Self.manager(directory: directory, recorder: nil)
        let file = try await manager.add(DownloadRequest(url: "http://127.0.0.1/a.mp4", kind: .file))
        await manager.close()
        let path = directory.appendingPathComponent("queue.sqlite").path
        let database = try SQLiteDatabase(path: path)
        try database.execute("ALTER TABLE tasks DROP COLUMN recording; ALTER TABLE tasks DROP COLUMN recorded_seconds")
        let columns = {
            try SQLiteDatabase(path: path).query("PRAGMA table_info(tasks)").compactMap { $0.text("name") }
        }
        #expect(try !columns().contains("recording"))

        let reopened = try await Self.manager(directory: directory, recorder: nil)
        #expect(try columns().contains("recording") && columns().contains("recorded_seconds"))
        let reread = await reopened.info(file.id)
        #expect(reread?.url == file.url && reread?.recording == nil)
        let recording = try await reopened.add(Self.request())
        #expect(await reopened.info(recording.id)?.recording?.duration == 8)
        await reopened.close()
    }
}
