import Foundation
import StreamKitCLI
import StreamKitCore
import StreamKitDownloads
import StreamKitTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The field all at once: twelve tasks (six HLS streams, six files, about 400 MB) downloaded by
/// `streamkit queue run` through a relay that cuts every connection after a random 0–4 MB and
/// refuses every connection for 5 s every 30 s, the runner killed with SIGKILL once on the way.
/// Every task ends `success` with no manual retry, every byte identical to the origin, and the
/// bytes fetched stay within 1.1× the content.
@Suite(.serialized, .requires(.nginx)) struct QueueChaosTests {
    static let fileSize = 40 << 20
    static let segmentCount = 27

    @Test func twelveTasksSurviveCutsOutagesAndAKill() async throws {
        let started = ContinuousClock.now
        let given = UInt64(ProcessInfo.processInfo.environment["STREAMKIT_CHAOS_SEED"].flatMap(UInt64.init) ?? 0)
        let seed = given == 0 ? UInt64.random(in: 1...UInt64.max) : given
        let root = try TestRun.makeTemporaryDirectory("chaos-origin")
        let content = try await runBlocking { try Self.makeOrigin(root, seed: seed) }
        let nginx = try await Nginx.static(root: root)
        let cuts = Mutex(SeededRandom(seed ^ 0x5EED))
        let relay = try TCPRelay(upstreamPort: nginx.port) { _ in cuts.withLock { $0.next(in: 0...(4 << 20)) } }
        let base = "http://127.0.0.1:\(relay.port)/"
        let home = try TestRun.makeTemporaryDirectory("chaos-home")

        var names: [String: String] = [:]  // task id -> origin name
        for index in 0..<6 {
            for (name, kind) in [("file\(index).bin", "file"), ("hls\(index)/index.m3u8", "hls")] {
                let (code, context) = await QueueCommandTests.run([
                    "queue", "add", base + name, "--kind", kind, "--start", "--home", home.path,
                ])
                #expect(code == .success, "\(context.errorOutput.text)")
                names[context.output.text.trimmingCharacters(in: .whitespacesAndNewlines)] = name
            }
        }
        #expect(names.count == 12)

        // Outages 5 s long, the first once a tenth of the content has come (so that it falls
        // while the tasks run, before the kill, however fast the machine), then every 30 s.
        let outages = Task {
            while Int64(relay.bytesDownstream) < content / 10 { try await Task.sleep(for: .milliseconds(20)) }
            while !Task.isCancelled {
                relay.refuseConnections(for: .seconds(5))
                try await Task.sleep(for: .seconds(30))
            }
        }
        defer { outages.cancel() }

        let streamkit = try DownloadBinaryTests.streamkit()
        let arguments = ["queue", "run", "--max-concurrent", "4", "--exit-when-done", "--home", home.path]
        var random = SeededRandom(seed)
        let killAt = content * Int64(random.next(in: 20...60)) / 100
        let first = try ChildProcess(executable: streamkit, arguments: arguments, logName: "streamkit-chaos")
        while first.isRunning, Int64(relay.bytesDownstream) < killAt { try await Task.sleep(for: .milliseconds(20)) }
        #expect(first.isRunning, "seed \(seed): the first run ended before the kill: \(first.standardError)")
        first.signal(SIGKILL)
        _ = try await first.wait(timeout: .seconds(10))

        let second = try ChildProcess(executable: streamkit, arguments: arguments, logName: "streamkit-chaos")
        let status = try await second.wait(timeout: .seconds(150))
        outages.cancel()
        let elapsed = ContinuousClock.now - started
        #expect(status == 0, "seed \(seed): \(second.standardError)")

        let tasks = try await QueueCrashTests.offPool { try DownloadQueueRemote.tasks(directory: home) }
        #expect(tasks.count == 12)
        for task in tasks {
            let name = try #require(names[task.id])
            #expect(task.state == .success, "seed \(seed): \(name) is \(task.state): \(task.lastError ?? "")")
            guard task.state == .success else { continue }
            let pairs: [(String, String)]
            if task.kind == .file {
                pairs = [(root.appendingPathComponent(name).path, task.location)]
            } else {
                let origin = try DownloadTestFiles.segmentFiles(ofPlaylist: root.appendingPathComponent(name))
                let package = try DownloadTestFiles.segmentFiles(
                    ofPlaylist: URL(fileURLWithPath: task.location).appendingPathComponent("video/index.m3u8"))
                #expect(origin.count == package.count, "seed \(seed): \(name)")
                pairs = Array(zip(origin, package))
            }
            for (theirs, ours) in pairs {
                #expect(try Self.sameFiles(theirs, ours), "seed \(seed): \(ours) differs from \(theirs)")
            }
        }
        let fetched = relay.bytesDownstream
        let ratio = Double(fetched) / Double(content)
        #expect(ratio <= 1.1, "seed \(seed): fetched \(fetched) bytes for \(content) (\(ratio)×)")
        #expect(
            relay.outageCount >= 1 && relay.cutCount > 12,
            "seed \(seed): \(relay.outageCount) outages, \(relay.cutCount) cuts")
        #expect(elapsed < .seconds(90), "seed \(seed): took \(elapsed)")
        print(
            "chaos seed \(seed): \(content) bytes, fetched \(String(format: "%.3f", ratio))×, "
                + "\(relay.cutCount) cuts of \(relay.connectionCount) connections, \(relay.outageCount) outages, \(elapsed)"
        )
        await relay.stop()
        await nginx.stop()
    }

    /// Six random files and six HLS streams (segments of 0.5–1.5 MB) under `root`; returns the
    /// bytes of content in all.
    static func makeOrigin(_ root: URL, seed: UInt64) throws -> Int64 {
        var random = SeededRandom(seed ^ 0x0816)
        var total: Int64 = 0
        for index in 0..<6 {
            total += Int64(try writeRandomFile(root, "file\(index).bin", bytes: fileSize).count)
            let folder = root.appendingPathComponent("hls\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:4", "#EXT-X-PLAYLIST-TYPE:VOD"]
            for segment in 0..<segmentCount {
                let size = random.next(in: (512 << 10)...(1536 << 10))
                total += Int64(try writeRandomFile(folder, "s\(segment).ts", bytes: size).count)
                lines += ["#EXTINF:4,", "s\(segment).ts"]
            }
            try Data((lines + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n").utf8)
                .write(to: folder.appendingPathComponent("index.m3u8"))
        }
        return total
    }

    /// Whether two files hold the same bytes, compared 4 MB at a time.
    static func sameFiles(_ first: String, _ second: String) throws -> Bool {
        let (a, b) = (
            try FileHandle(forReadingFrom: URL(fileURLWithPath: first)),
            try FileHandle(forReadingFrom: URL(fileURLWithPath: second))
        )
        defer {
            try? a.close()
            try? b.close()
        }
        while true {
            let (x, y) = (try a.read(upToCount: 4 << 20) ?? Data(), try b.read(upToCount: 4 << 20) ?? Data())
            guard x == y else { return false }
            if x.isEmpty { return true }
        }
    }
}
