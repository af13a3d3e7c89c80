import Foundation
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitMediaServer
import StreamKitTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Slow, idle and rude clients must not hurt the server or a normal client.
@Suite(.serialized) struct ResilienceTests {
    /// Makes sure this process may open `count` descriptors, raising the soft limit toward the
    /// hard one if needed (the default soft limit is often 1024).
    private func ensureDescriptorLimit(_ count: Int) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur < rlim_t(count) else { return }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(count))
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur >= rlim_t(count) else {
            throw TestSupportError("cannot raise RLIMIT_NOFILE to \(count) (hard limit \(limit.rlim_max))")
        }
    }

    @Test func idleAndSlowClientsDoNotStopANormalOne() async throws {
        try ensureDescriptorLimit(4096)
        // Timeouts longer than the test: a connection that sends nothing is closed after the
        // request timeout (10 s by default), and a test process held up for that long (a loaded
        // machine running every suite) saw the idle ones closed before it counted them.
        let library = try LibraryServer.start(
            { root in
                try write("#EXTM3U\n#EXTINF:2,\nseg0.ts\n", "index.m3u8", in: root.appendingPathComponent("item"))
            },
            configure: { http in
                http.requestTimeout = .seconds(300)
                http.idleTimeout = .seconds(300)
            })
        let port = library.port

        // 500 connections that never send a byte.
        let idle = try (0..<500).map { _ in try RawHTTPConnection(port: port) }
        // One that sends its request line a byte a second.
        let shared = SharedState()
        let slowloris = try RawHTTPConnection(port: port)
        let slowTask = Task.detached {
            try await runBlocking {
                for byte in Array("GET /library/item/index.m3u8 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Slow: ".utf8) {
                    if shared.stop.load(ordering: .relaxed) { return }
                    try slowloris.send([byte])
                    sleep(1)
                }
            }
        }

        // A normal client: 300 requests, each on a new connection, while the others hold on.
        let latencies = try await runBlocking { () -> [Duration] in
            var latencies: [Duration] = []
            for _ in 0..<300 {
                let started = ContinuousClock.now
                let connection = try RawHTTPConnection(port: port)
                try connection.send("GET /library/item/index.m3u8 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                let response = try connection.readResponse()
                latencies.append(ContinuousClock.now - started)
                guard response.status == 200 else { throw TestSupportError("status \(response.status)") }
                usleep(10_000)
            }
            return latencies
        }
        shared.stop.store(true, ordering: .relaxed)
        let sorted = latencies.sorted()
        let p99 = sorted[Int(Double(sorted.count) * 0.99) - 1]
        let median = sorted[sorted.count / 2]
        print(
            "resilience: 500 idle + 1 slow client; normal client over \(sorted.count) requests: median \(median), p99 \(p99)"
        )
        #expect(p99 < .milliseconds(100), "p99 \(p99), median \(median)")
        // The idle ones were held, not dropped, while the normal client was served (all of
        // them accepted by now, or soon when the test process is busy).
        let deadline = ContinuousClock.now + .seconds(30)
        while library.server.http.connectionCount < 500 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(library.server.http.connectionCount >= 500)
        _ = try? await slowTask.value
        _ = idle
        await library.stop()
    }

    @Test func tenThousandClientsHangingUpMidBodyLeakNoDescriptors() async throws {
        let root = try TestRun.makeTemporaryDirectory("hangups")
        let item = root.appendingPathComponent("item")
        try FileManager.default.createDirectory(at: item, withIntermediateDirectories: true)
        try Data(count: 4 << 20).write(to: item.appendingPathComponent("big.ts"))
        try Data(count: 100_000).write(to: item.appendingPathComponent("medium.ts"))
        // The server runs as its own process, so that its descriptor table holds only its own.
        let server = try ChildProcess(
            executable: try BuiltProducts.executable("streamkit"),
            arguments: [
                "serve", "--root", root.path, "--home", try TestRun.makeTemporaryDirectory("hangups-home").path,
                "--port", "0",
            ], logName: "serve-hangups")
        var output = ""
        let deadline = ContinuousClock.now + .seconds(20)
        while !output.contains("Press Ctrl-C") && ContinuousClock.now < deadline && server.isRunning {
            try await Task.sleep(for: .milliseconds(10))
            output = server.standardOutput
        }
        guard let urlLine = output.split(separator: "\n").first(where: { $0.hasPrefix("URL: ") }),
            let port = UInt16(urlLine.split(separator: ":").last?.dropLast() ?? "")
        else { throw TestSupportError("serve did not start: \(output)\(server.standardError)") }

        func descriptors() throws -> [String] {
            let directory = "/proc/\(server.pid)/fd"
            return try FileManager.default.contentsOfDirectory(atPath: directory).map { name in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)")) ?? "?"
            }
        }
        // The table settles after start-up (libdispatch opens its signal descriptors for the
        // Ctrl-C watcher on its own thread): take it once two readings 200 ms apart agree.
        var before = try descriptors()
        let steady = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < steady {
            try await Task.sleep(for: .milliseconds(200))
            let again = try descriptors()
            if again.sorted() == before.sorted() { break }
            before = again
        }

        let shared = SharedState()
        let workers = 8
        let perWorker = 1250
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    // A load generator: at low priority, beside the other tests of the process.
                    try await runInBackground {
                        for index in 0..<perWorker {
                            do {
                                let connection = try RawHTTPConnection(port: port, receiveBufferSize: 4096)
                                let file = index % 4 == 0 ? "medium.ts" : "big.ts"
                                let range = index % 3 == 0 ? "Range: bytes=1000-\r\n" : ""
                                try connection.send(
                                    "GET /library/item/\(file) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(range)\r\n")
                                _ = try connection.readSome(1 + (worker * perWorker + index) % 3000)
                                // Half hang up with a reset, half with a plain close and unread data.
                                if index % 2 == 0 { connection.reset() }
                                shared.completed.add(1, ordering: .relaxed)
                            } catch {
                                shared.failures.withLock { $0.append("\(error)") }
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(shared.completed.load(ordering: .relaxed) == workers * perWorker)
        #expect(shared.failures.withLock { $0 }.isEmpty, "\(shared.failures.withLock { $0.prefix(3) })")

        // Once the server has noticed every hang-up, its descriptors are the ones it started with.
        var after = try descriptors()
        let settle = ContinuousClock.now + .seconds(30)
        while after.count != before.count && ContinuousClock.now < settle {
            try await Task.sleep(for: .milliseconds(50))
            after = try descriptors()
        }
        print(
            "resilience: \(workers * perWorker) hang-ups; server descriptors before \(before.count), after \(after.count)"
        )
        #expect(after.count == before.count, "before: \(before.count), after: \(after.count)")
        #expect(after.sorted() == before.sorted())
        #expect(server.isRunning)
        server.signal(SIGINT)
        #expect(try await server.wait(timeout: .seconds(10)) == 0)
    }
}

extension ResilienceTests {
    /// CPU seconds (user + system) the process has used so far.
    static func cpuSeconds(of pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

@Suite struct DescriptorExhaustionTests {
    @Test(.requires(Tool("prlimit", package: "util-linux")))
    func runningOutOfDescriptorsPausesAcceptingInsteadOfSpinning() async throws {
        let root = try TestRun.makeTemporaryDirectory("exhaustion")
        try write("#EXTM3U\n", "index.m3u8", in: root.appendingPathComponent("item"))
        // 40 descriptors: room for about 25 connections besides the server's own.
        let server = try ChildProcess(
            executable: try Tool("prlimit", package: "util-linux").requirePath(),
            arguments: [
                "--nofile=40:40", "--", try BuiltProducts.executable("streamkit"), "serve", "--root", root.path,
                "--home", try TestRun.makeTemporaryDirectory("exhaustion-home").path, "--port", "0",
            ],
            logName: "serve-exhaustion")
        var output = ""
        let deadline = ContinuousClock.now + .seconds(20)
        while !output.contains("Press Ctrl-C") && ContinuousClock.now < deadline && server.isRunning {
            try await Task.sleep(for: .milliseconds(10))
            output = server.standardOutput
        }
        guard let urlLine = output.split(separator: "\n").first(where: { $0.hasPrefix("URL: ") }),
            let port = UInt16(urlLine.split(separator: ":").last?.dropLast() ?? "")
        else { throw TestSupportError("serve did not start: \(output)\(server.standardError)") }

        // 60 connections: the kernel completes them all, the server cannot accept them all.
        var held = try (0..<60).map { _ in try RawHTTPConnection(port: port) }
        try await Task.sleep(for: .milliseconds(300))
        let before = ResilienceTests.cpuSeconds(of: server.pid)
        try await Task.sleep(for: .seconds(1))
        let used = ResilienceTests.cpuSeconds(of: server.pid) - before
        #expect(used < 0.3, "the server used \(used) s of CPU in 1 s while out of descriptors")
        #expect(server.isRunning)

        // Descriptors come back when clients leave, and the server serves again.
        held.removeAll()
        let response = try await runBlocking { () -> RawHTTPResponse in
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /library/item/index.m3u8 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            return try connection.readResponse()
        }
        #expect(response.status == 200)
        server.signal(SIGINT)
        #expect(try await server.wait(timeout: .seconds(10)) == 0)
    }
}

/// Flags and counters the test and its client threads share.
private final class SharedState: Sendable {
    let stop = Atomic<Bool>(false)
    let completed = Atomic<Int>(0)
    let failures = Mutex<[String]>([])
}
