import Foundation
import StreamKitCLI
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTPClient
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `streamkit download` runs as a task of the home's download queue: `queue list`, the served
/// page and `/api/tasks` see it while it runs and after; Ctrl-C stops it and the same command
/// resumes the same task; a queue held by another process is refused.
@Suite(.serialized, .requires(.nginx)) struct DownloadQueueTaskTests {
    static func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        await CommandRunner.runCapturing(arguments: arguments)
    }

    static func tasks(_ home: URL) throws -> [DownloadTaskInfo] { try DownloadQueueRemote.tasks(directory: home) }

    /// The JSON lines of `streamkit queue list --json`, run as a process of its own.
    static func listedByAnotherProcess(_ home: URL) async throws -> [[String: Any]] {
        let list = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: ["queue", "list", "--json", "--home", home.path],
            logName: "streamkit-queue-list")
        #expect(try await list.wait(timeout: .seconds(30)) == 0, "\(list.standardError)")
        return try list.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func aFileDownloadIsATaskThatSucceedsOnceEvenWhenRunAgain() async throws {
        let fixture = try await DownloadFixture.make(size: 300_000)
        let home = fixture.directory.appendingPathComponent("home")
        let target = fixture.directory.appendingPathComponent("talk.mp4")
        let url = fixture.nginx.url("file.bin").absoluteString
        let (code, output, error) = await Self.run(["download", url, "-o", target.path, "--home", home.path])
        #expect(code == .success, "\(error)")
        #expect(output.hasPrefix("Saved \(target.path) ("))
        let tasks = try Self.tasks(home)
        #expect(tasks.count == 1)
        let task = try #require(tasks.first)
        #expect(task.state == .success && task.kind == .file && task.url == url && task.title == "talk.mp4")
        #expect(task.location == target.path && task.bytesDone == 300_000 && task.progress == 1)
        #expect(task.lastError == nil)
        // The page and /api/tasks read the same index.
        let summaries = try QueueSummaries.read(home: home, libraryRoot: home.appendingPathComponent("library").path)
            .tasks
        #expect(summaries.map(\.id) == [task.id] && summaries.first?.state == "success")
        // Again: fetched again as before (a file), still one task, still success.
        let (again, againOutput, _) = await Self.run(["download", url, "-o", target.path, "--home", home.path])
        #expect(again == .success && againOutput.hasPrefix("Saved \(target.path) ("))
        #expect(try Self.tasks(home).map(\.id) == [task.id] && (try Self.tasks(home)).first?.state == .success)
        // Another destination is another task.
        let other = fixture.directory.appendingPathComponent("copy.mp4")
        #expect(await Self.run(["download", url, "-o", other.path, "--home", home.path, "-j", "2"]).code == .success)
        let both = try Self.tasks(home)
        #expect(both.count == 2 && both.allSatisfy { $0.state == .success })
        #expect(both.last?.location == other.path && both.last?.connections == 2)
        await fixture.nginx.stop()
    }

    @Test func aFailedDownloadIsAFailedTaskWithItsError() async throws {
        let fixture = try await DownloadFixture.make(size: 10)
        let home = fixture.directory.appendingPathComponent("home")
        let url = fixture.nginx.url("missing.bin").absoluteString
        let target = fixture.directory.appendingPathComponent("m.bin")
        let (code, _, error) = await Self.run(["download", url, "-o", target.path, "--home", home.path])
        #expect(code == .failure && error.contains("HTTP 404 Not Found"))
        let task = try #require(try Self.tasks(home).first)
        #expect(task.state == .failed && task.lastError?.contains("HTTP 404 Not Found") == true, "\(task)")
        await fixture.nginx.stop()
    }

    @Test(.requires(.ffmpeg)) func anHLSDownloadIsTheLibraryTaskThePageCanPlay() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS, seconds: 4, segmentSeconds: 1))
        let nginx = try await Nginx.static(root: fixture.directory)
        let home = try TestRun.makeTemporaryDirectory("hls-task-home")
        let url = nginx.url("index.m3u8").absoluteString
        let (code, _, error) = await Self.run(["download", url, "--home", home.path])
        #expect(code == .success, "\(error)")
        let task = try #require(try Self.tasks(home).first)
        #expect(
            task.id
                == HLSDownloadJob.packageID(
                    source: url, selection: HLSSelection(), decrypt: false,
                    salt: try DownloadManager.idSalt(directory: home)))
        #expect(task.state == .success && task.kind == .hls)
        #expect(task.location == home.appendingPathComponent("library/\(task.id)").path)
        let summaries = try QueueSummaries.read(home: home, libraryRoot: home.appendingPathComponent("library").path)
            .tasks
        #expect(summaries.first?.playPath == "/library/\(task.id)/index.m3u8")
        await nginx.stop()
    }

    /// Another process sees the download running with progress; Ctrl-C leaves it stopped and the
    /// same command resumes the same task, fetching only the missing bytes.
    @Test func runningIsSeenElsewhereAndCtrlCThenTheSameCommandResumesTheSameTask() async throws {
        let fixture = try await DownloadFixture.make(size: 3_000_000)
        let home = fixture.directory.appendingPathComponent("home")
        let url = fixture.nginx.url("file.bin").absoluteString
        let target = fixture.directory.appendingPathComponent("movie.bin")
        let arguments = ["download", url, "-o", target.path, "--home", home.path]
        let first = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: arguments + ["--limit-rate", "500k"],
            logName: "streamkit-download-task")
        // Saved progress reaches the index at most every second.
        var running: [String: Any]?
        let deadline = ContinuousClock.now + .seconds(30)
        while running == nil && first.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(300))
            running = try await Self.listedByAnotherProcess(home).first {
                $0["state"] as? String == "running" && (($0["bytesDone"] as? NSNumber)?.int64Value ?? 0) > 0
            }
        }
        let seen = try #require(running, "never listed as running: \(first.standardError)")
        #expect((seen["bytesExpected"] as? NSNumber)?.int64Value == 3_000_000)
        #expect(((seen["bytesPerSecond"] as? NSNumber)?.doubleValue ?? 0) > 0)
        let id = try #require(seen["id"] as? String)
        first.signal(SIGINT)
        #expect(try await first.wait(timeout: .seconds(20)) == 130, "\(first.standardError)")
        #expect(first.standardError.contains("Run the same command to resume."))
        let stopped = try #require(try Self.tasks(home).first)
        #expect(stopped.id == id && stopped.state == .stopped && stopped.bytesDone > 0, "\(stopped)")
        let kept = DownloadBinaryTests.size(HTTPFileDownloadPaths.partial(for: target))
        #expect(kept > 0 && kept < 3_000_000)

        let second = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: arguments, logName: "streamkit-download-task")
        #expect(try await second.wait(timeout: .seconds(60)) == 0, "\(second.standardError)")
        #expect(second.standardOutput.contains("resumed at"))
        #expect(try Data(contentsOf: target) == fixture.bytes)
        let done = try Self.tasks(home)
        #expect(done.map(\.id) == [id] && done.first?.state == .success && done.first?.bytesDone == 3_000_000)
        let listed = try await Self.listedByAnotherProcess(home)
        #expect(listed.count == 1 && listed.first?["state"] as? String == "success")
        await fixture.nginx.stop()
        let resumed = try #require(try await fixture.nginx.settledAccessLog().last)
        #expect(resumed.status == 206 && resumed.range == "bytes=\(kept)-")
    }

    /// HLS: Ctrl-C, then the same command resumes the same task without requesting any segment
    /// that was in place.
    @Test(.requires(.ffmpeg)) func hlsCtrlCThenTheSameCommandResumesTheSameTaskWithoutRefetching() async throws {
        let fixture = try await Fixtures.shared.fixture(
            FixtureRecipe(.hlsTS, seconds: 20, segmentSeconds: 1, videoBitrate: "600k"))
        let nginx = try await Nginx.static(
            root: fixture.directory, limitRatePerConnection: 30_000, unthrottledHeader: "X-Unthrottled")
        let home = try TestRun.makeTemporaryDirectory("hls-ctrl-c-task")
        let url = nginx.url("index.m3u8").absoluteString
        let id = HLSDownloadJob.packageID(
            source: url, selection: HLSSelection(), decrypt: false, salt: try DownloadManager.idSalt(directory: home))
        let video = home.appendingPathComponent("library/\(id)/video")
        let arguments = ["download", url, "--home", home.path, "-j", "2"]
        let first = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: arguments, logName: "streamkit-hls-task")
        func inPlace() -> Set<String> {
            Set(
                ((try? FileManager.default.contentsOfDirectory(atPath: video.path)) ?? []).filter {
                    $0.hasSuffix(".ts") && !$0.contains("streamkit")
                })
        }
        var running: DownloadTaskInfo?
        let deadline = ContinuousClock.now + .seconds(30)
        while first.isRunning && ContinuousClock.now < deadline {
            if running == nil { running = try Self.tasks(home).first { $0.state == .running && $0.bytesDone > 0 } }
            if running != nil && inPlace().count >= 3 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(running?.id == id, "\(first.standardError)")
        first.signal(SIGINT)
        #expect(try await first.wait(timeout: .seconds(20)) == 130, "\(first.standardError)")
        let done = inPlace()
        let cut = try await nginx.settledAccessLogCount()
        let stopped = try #require(try Self.tasks(home).first)
        #expect(stopped.id == id && stopped.state == .stopped)
        #expect(done.count >= 3 && done.count < 20, "\(done.count) segments in place")

        let second = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: arguments + ["-H", "X-Unthrottled: 1"],
            logName: "streamkit-hls-task")
        #expect(try await second.wait(timeout: .seconds(60)) == 0, "\(second.standardError)")
        let after = try Self.tasks(home)
        #expect(after.map(\.id) == [id] && after.first?.state == .success)
        await nginx.stop()
        // A HEAD is the check of a completed file against its ETag, not a fetch.
        let refetched = try await nginx.settledAccessLog().dropFirst(cut).filter { entry in
            entry.method != "HEAD"
                && HLSDownloadBinaryTests.localName(ofOrigin: Substring(entry.uri)).map(done.contains) ?? false
        }
        #expect(refetched.isEmpty, "requested again after they were in place: \(refetched.map(\.uri))")
    }

    /// A queue held by another manager (`queue run`): exit 1 naming the holder, nothing fetched,
    /// nothing written to the queue.
    @Test func aQueueHeldElsewhereIsRefusedNamingTheHolder() async throws {
        let fixture = try await DownloadFixture.make(size: 10_000)
        let home = fixture.directory.appendingPathComponent("home")
        let runner = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: ["queue", "run", "--home", home.path],
            logName: "streamkit-queue-holder")
        let deadline = ContinuousClock.now + .seconds(20)
        while !DownloadQueueRemote.isRunning(directory: home), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let target = fixture.directory.appendingPathComponent("x.bin")
        let url = fixture.nginx.url("file.bin").absoluteString
        let (code, output, error) = await Self.run(["download", url, "-o", target.path, "--home", home.path])
        #expect(code == .failure && output.isEmpty)
        #expect(
            error.contains("error: cannot use the download queue: directory locked: another download manager (process ")
                && error.contains("uses \(home.path); stop that process, or let it run the download"), "\(error)")
        let (jsonCode, json, _) = await Self.run(["download", url, "-o", target.path, "--home", home.path, "--json"])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(jsonCode == .failure && result["status"] as? String == "failed")
        #expect(result["kind"] as? String == "directory locked")
        #expect(!FileManager.default.fileExists(atPath: target.path))
        #expect(try Self.tasks(home).isEmpty)
        runner.signal(SIGINT)
        #expect(try await runner.wait(timeout: .seconds(20)) == 130)
        await fixture.nginx.stop()
        #expect(try await fixture.nginx.settledAccessLog().isEmpty)
    }
}
