import Foundation
import StreamKitCLI
import StreamKitCore
import StreamKitDownloads
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `queue add -H` with credentials, posted to a running `queue run`: the queue database never
/// holds them, `queue list --json` shows `<hidden>`, and after SIGKILL a new run resumes the task
/// with the credentials the origin requires.
@Suite(.serialized, .requires(.nginx)) struct QueueHeaderSecretTests {
    static let token = "s3cr3t-value"

    static func databaseBytes(_ home: String) -> String {
        ["", "-wal", "-shm"].compactMap { FileManager.default.contents(atPath: home + "/queue.sqlite" + $0) }
            .map { String(decoding: $0, as: UTF8.self) }.joined()
    }

    @Test func credentialsSurviveAKilledRunAndNeverReachTheDatabase() async throws {
        let root = try TestRun.makeTemporaryDirectory("secret-queue-origin")
        let data = try writeRandomFile(root, "slow.mp4", bytes: 2_000_000)
        let nginx = try await Nginx.static(
            root: root, limitRatePerConnection: 100_000,
            requiredHeaders: ["authorization": "Bearer \(Self.token)", "cookie": "a=b"])
        let home = try TestRun.makeTemporaryDirectory("secret-queue-home").path
        let directory = URL(fileURLWithPath: home)
        let runner = try ChildProcess(
            executable: DownloadBinaryTests.streamkit(), arguments: ["queue", "run", "--home", home],
            logName: "streamkit-queue")
        defer { Task { await runner.stop() } }
        let deadline = ContinuousClock.now + .seconds(20)
        while !DownloadQueueRemote.isRunning(directory: directory), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let (added, addOutput) = await QueueCommandTests.run([
            "queue", "add", nginx.url("slow.mp4").absoluteString, "--kind", "file", "-H",
            "Authorization: Bearer \(Self.token)", "-H", "Cookie: a=b", "--start", "--home", home,
        ])
        #expect(added == .success, "\(addOutput.errorOutput.text)")
        let id = addOutput.output.text.trimmingCharacters(in: .whitespacesAndNewlines)
        var task: DownloadTaskInfo?
        while ContinuousClock.now < deadline + .seconds(20) {
            task = try DownloadQueueRemote.tasks(directory: directory).first { $0.id == id }
            if let task, task.bytesDone > 200_000 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect((task?.bytesDone ?? 0) > 200_000, "\(runner.standardError)")
        runner.signal(SIGKILL)
        _ = try await runner.wait(timeout: .seconds(20))
        let bytes = Self.databaseBytes(home)
        #expect(!bytes.isEmpty && !bytes.contains(Self.token) && !bytes.contains("Cookie: a=b"))

        let (listed, listOutput) = await QueueCommandTests.run(["queue", "list", "--json", "--home", home])
        #expect(listed == .success)
        #expect(listOutput.output.text.contains("Authorization: <hidden>"), "\(listOutput.output.text)")
        #expect(!listOutput.output.text.contains(Self.token))

        // A new run resumes the task; the origin answers 401 to any request without both headers.
        let (rerun, rerunOutput) = await QueueCommandTests.run(["queue", "run", "--exit-when-done", "--home", home])
        #expect(rerun == .success, "\(rerunOutput.errorOutput.text)")
        let done = try #require(try DownloadQueueRemote.tasks(directory: directory).first { $0.id == id })
        #expect(done.state == .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: done.location)) == data)
        let log = try await nginx.settledAccessLog()
        #expect(log.count > 1 && log.allSatisfy { $0.status != 401 }, "\(log.map(\.status))")
        #expect(!Self.databaseBytes(home).contains(Self.token))

        let secrets = home + "/secrets/\(id).json"
        #expect(FileManager.default.fileExists(atPath: secrets))
        let (removed, _) = await QueueCommandTests.run(["queue", "remove", id, "--home", home])
        #expect(removed == .success)
        #expect(!FileManager.default.fileExists(atPath: secrets))
        await nginx.stop()
    }
}
