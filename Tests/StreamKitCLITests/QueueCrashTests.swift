import Dispatch
import Foundation
import StreamKitCLI
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `streamkit queue run` in a child process with five tasks (two HLS, three files), killed with
/// SIGKILL at ten random moments and restarted: every file ends byte-identical to the origin, no
/// range or segment saved as complete is fetched again (nginx's access log), and the queue
/// database is consistent.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .openssl)) struct QueueCrashTests {
    struct Snapshot {
        /// Per file task: the bytes saved as done.
        var ranges: [String: ByteRangeSet] = [:]
        /// Per HLS task: origin segment URIs whose package file is complete.
        var segments: [String: Set<String>] = [:]
    }

    @Test func sigkillTenTimesThenEverythingIsIdentical() async throws {
        let root = try TestRun.makeTemporaryDirectory("crash-origin")
        var files: [String: Data] = [:]
        for (name, size) in [("a.bin", 3_000_000), ("b.mp4", 2_500_000), ("c.mp3", 2_000_000)] {
            files[name] = try writeRandomFile(root, name, bytes: size)
        }
        let fixtures = [
            try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS)),
            try await Fixtures.shared.fixture(FixtureRecipe(.hlsAES128ExplicitIV)),
        ]
        for (index, fixture) in fixtures.enumerated() {
            try FileManager.default.createSymbolicLink(
                at: root.appendingPathComponent("hls\(index)"), withDestinationURL: fixture.directory)
        }
        let nginx = try await Nginx.static(root: root, limitRatePerConnection: 48 << 10)
        let home = try TestRun.makeTemporaryDirectory("crash-home")
        let streamkit = try DownloadBinaryTests.streamkit()

        var fileTasks: [String: String] = [:]  // id -> origin name
        var hlsTasks: [String: Int] = [:]  // id -> fixture index
        for name in files.keys.sorted() {
            let (code, context) = await QueueCommandTests.run([
                "queue", "add", nginx.url(name).absoluteString, "--kind", "file", "--start", "--home", home.path,
            ])
            #expect(code == .success, "\(context.errorOutput.text)")
            fileTasks[context.output.text.trimmingCharacters(in: .whitespacesAndNewlines)] = name
        }
        for index in fixtures.indices {
            let (code, context) = await QueueCommandTests.run([
                "queue", "add", nginx.url("hls\(index)/index.m3u8").absoluteString, "-j", "2", "--start", "--home",
                home.path,
            ])
            #expect(code == .success, "\(context.errorOutput.text)")
            hlsTasks[context.output.text.trimmingCharacters(in: .whitespacesAndNewlines)] = index
        }
        #expect(fileTasks.count == 3 && hlsTasks.count == 2)
        // Origin segment URIs by media sequence (the package names segments by it).
        let originSegments = try fixtures.map { fixture in
            try #require(try Playlist.parse(Data(contentsOf: fixture.entryFile)).playlist.media).segments.map(\.uri)
        }

        var seed = UInt64(ProcessInfo.processInfo.environment["STREAMKIT_CRASH_SEED"].flatMap(UInt64.init) ?? 0)
        if seed == 0 { seed = UInt64.random(in: 1...UInt64.max) }
        var random = SeededRandom(seed)
        var kills = 0
        var previous: Snapshot? = nil
        var logStart = 0
        let arguments = ["queue", "run", "--max-concurrent", "5", "--exit-when-done", "--home", home.path]
        var finished = false
        var savedBytes: Int64 = 0
        var savedSegments = 0
        while !finished {
            let process = try ChildProcess(executable: streamkit, arguments: arguments, logName: "streamkit-crash")
            if kills == 0 {
                // The first run is killed once it has saved file ranges and finished segments, so
                // that the later runs are checked against saved work whatever the random delays
                // (file ranges were once saved only once a second: with ten short runs on a loaded machine,
                // none saved any once).
                let (files, hls) = (fileTasks, hlsTasks)
                let deadline = ContinuousClock.now + .seconds(60)
                while process.isRunning, ContinuousClock.now < deadline {
                    let saved = try await Self.offPool {
                        try Self.snapshot(home: home, fileTasks: files, hlsTasks: hls, originSegments: originSegments)
                    }
                    if saved.ranges.values.contains(where: { $0.byteCount > 0 })
                        && saved.segments.values.contains(where: { !$0.isEmpty })
                    {
                        break
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
            } else if kills < 10 {
                let delay = Duration.milliseconds(Int64(random.next(in: 400...1600)))
                let deadline = ContinuousClock.now + delay
                while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            }
            if kills < 10, process.isRunning {
                process.signal(SIGKILL)
                _ = try await process.wait(timeout: .seconds(10))
                kills += 1
            } else {
                let status = try await process.wait(timeout: .seconds(180))
                #expect(status == 0, "seed \(seed): \(process.standardError)")
                finished = true
            }
            let logEnd = try await nginx.settledAccessLogCount()
            if let previous {
                try Self.checkNoRefetch(
                    Array(nginx.accessLog[logStart..<logEnd]), since: previous, fileTasks: fileTasks,
                    hlsTasks: hlsTasks, originSegments: originSegments, seed: seed)
            }
            logStart = logEnd
            let (files, hls) = (fileTasks, hlsTasks)
            let snapshot = try await Self.offPool {
                try Self.snapshot(home: home, fileTasks: files, hlsTasks: hls, originSegments: originSegments)
            }
            if !finished {
                savedBytes = max(savedBytes, snapshot.ranges.values.reduce(0) { $0 + $1.byteCount })
                savedSegments = max(savedSegments, snapshot.segments.values.reduce(0) { $0 + $1.count })
            }
            previous = snapshot
        }
        // The kills left work saved to resume from: the check above had something to check.
        #expect(savedBytes > 0 && savedSegments > 0, "seed \(seed): \(savedBytes) bytes, \(savedSegments) segments")
        #expect(kills == 10, "seed \(seed): the queue finished after \(kills) kills")

        // Every file byte-identical.
        let tasks = try await Self.offPool { try DownloadQueueRemote.tasks(directory: home) }
        #expect(tasks.count == 5 && tasks.allSatisfy { $0.state == .success }, "\(tasks.map(\.state))")
        for task in tasks {
            if let name = fileTasks[task.id] {
                #expect(
                    try Data(contentsOf: URL(fileURLWithPath: task.location)) == files[name], "seed \(seed): \(name)")
                #expect(task.bytesDone == Int64(files[name]!.count))
            } else if let index = hlsTasks[task.id] {
                let origin = try DownloadTestFiles.segmentFiles(ofPlaylist: fixtures[index].entryFile)
                let package = try DownloadTestFiles.segmentFiles(
                    ofPlaylist: URL(fileURLWithPath: task.location).appendingPathComponent("video/index.m3u8"))
                #expect(origin.count == package.count && !package.isEmpty)
                for (theirs, ours) in zip(origin, package) {
                    #expect(
                        try Data(contentsOf: URL(fileURLWithPath: theirs))
                            == Data(contentsOf: URL(fileURLWithPath: ours)),
                        "seed \(seed): \(ours)")
                }
            }
        }
        // The database: intact, every file's range set whole, no request left, no leftover partial file.
        let (integrity, pending, rows) = try await Self.offPool {
            let database = try SQLiteDatabase(path: home.appendingPathComponent("queue.sqlite").path)
            return (
                try database.query("PRAGMA integrity_check").first?.text("integrity_check"),
                try database.query("SELECT COUNT(*) AS n FROM requests WHERE done = 0").first?.integer("n"),
                try database.query("SELECT id, file_length, file_ranges FROM tasks WHERE kind = 'file'")
            )
        }
        #expect(integrity == "ok")
        #expect(pending == 0)
        for row in rows {
            let ranges = try JSONDecoder().decode(ByteRangeSet.self, from: Data((row.text("file_ranges") ?? "").utf8))
            let length = try #require(row.integer("file_length"))
            #expect(ranges == ByteRangeSet([ByteRange(0, length)]))
        }
        let leftovers =
            FileManager.default.enumerator(atPath: home.path)?.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".streamkit-partial") || $0.hasSuffix(".streamkit-tmp") } ?? []
        #expect(leftovers.isEmpty, "\(leftovers)")
        await nginx.stop()
    }

    /// Runs blocking SQLite work (opening after a kill recovers the WAL, closing checkpoints it
    /// with fsyncs) on a Dispatch queue, not on a thread of the cooperative pool.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// What the index and the disk say is complete right after a kill.
    static func snapshot(
        home: URL, fileTasks: [String: String], hlsTasks: [String: Int], originSegments: [[String]]
    ) throws -> Snapshot {
        var snapshot = Snapshot()
        let database = try SQLiteDatabase(path: home.appendingPathComponent("queue.sqlite").path)
        for row in try database.query("SELECT id, file_ranges, location FROM tasks") {
            let id = row.text("id") ?? ""
            if fileTasks[id] != nil {
                snapshot.ranges[id] = try JSONDecoder().decode(
                    ByteRangeSet.self, from: Data((row.text("file_ranges") ?? "[]").utf8))
            } else if let index = hlsTasks[id] {
                let folder = URL(fileURLWithPath: row.text("location") ?? "").appendingPathComponent("video")
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                var done: Set<String> = []
                for name in names where name.hasSuffix(".ts") {
                    if let number = Int(name.dropLast(3)), number < originSegments[index].count {
                        done.insert(originSegments[index][number])
                    }
                }
                snapshot.segments[id] = done
            }
        }
        return snapshot
    }

    /// No request of a run asks for bytes or segments that were complete when it started.
    static func checkNoRefetch(
        _ entries: [AccessLogEntry], since snapshot: Snapshot, fileTasks: [String: String], hlsTasks: [String: Int],
        originSegments: [[String]], seed: UInt64
    ) throws {
        for (id, name) in fileTasks {
            let done = snapshot.ranges[id] ?? ByteRangeSet()
            for entry in entries where entry.uri == "/" + name {
                guard let header = entry.range, header.hasPrefix("bytes=") else {
                    #expect(done.isEmpty, "seed \(seed): \(name) fetched whole with \(done) done")
                    continue
                }
                let parts = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
                let first = try #require(Int64(parts[0]))
                let last = Int64(parts[1]).map { $0 + 1 } ?? Int64.max / 4
                #expect(
                    done.intersection(ByteRange(first, last)).isEmpty,
                    "seed \(seed): \(name) \(header) asks again for bytes saved as done \(done)")
            }
        }
        for (id, index) in hlsTasks {
            let done = snapshot.segments[id] ?? []
            // A HEAD is the check of a completed file against its ETag, not a fetch.
            for entry in entries where entry.uri.hasPrefix("/hls\(index)/") && entry.method != "HEAD" {
                let name = String(entry.uri.dropFirst("/hls\(index)/".count))
                #expect(!done.contains(name), "seed \(seed): segment \(entry.uri) fetched again")
            }
        }
    }

}

/// The segments of a media playlist on disk, as absolute paths in order.
enum DownloadTestFiles {
    static func segmentFiles(ofPlaylist playlist: URL) throws -> [String] {
        let media = try #require(try Playlist.parse(Data(contentsOf: playlist)).playlist.media)
        let base = playlist.deletingLastPathComponent()
        return media.segments.map { base.appendingPathComponent($0.uri).path }
    }
}

/// A seeded generator, so that a failing run can be repeated with STREAMKIT_CRASH_SEED.
struct SeededRandom {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next(in range: ClosedRange<Int>) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return range.lowerBound + Int(z % UInt64(range.count))
    }
}
