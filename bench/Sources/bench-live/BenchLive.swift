// bench-live: a day of live HLS recording in minutes, for bench/scale.sh live (issue 26 point 5).
//
//   bench-live SEGMENTS DIRECTORY
//
// Serves a simulated live origin in this process (StreamKitHTTPServer on 127.0.0.1): a media
// playlist whose window of 6 two-second segments advances by one segment at every reload, until
// SEGMENTS have been published (then EXT-X-ENDLIST); every segment is the same 752 bytes of
// MPEG-TS. Records it with HLSDownloader into DIRECTORY/package, with a reload wait that
// returns at once (the recorder's clock injected), so that 43,200 segments (a day) take minutes.
// Prints one JSON line per 1,000 segments recorded: the wall and CPU seconds those 1,000 took
// (the package playlist updates, package.json checkpoints, reloads and fetches together; the
// origin's constant cost a reload included) and the RSS then; then a summary line: the last
// 1,000 against the first 1,000, and the RSS at the end against the RSS after the first 1,000.
import Foundation
import StreamKitDownloads
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitHTTPServer
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

@main
enum BenchLive {
    static let window = 6

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 2, let total = Int(arguments[0]), total >= 2_000 else {
            FileHandle.standardError.write(Data("usage: bench-live SEGMENTS (2000 or more) DIRECTORY\n".utf8))
            exit(64)
        }
        do {
            try await run(total: total, directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
        } catch {
            FileHandle.standardError.write(Data("bench-live: \(error)\n".utf8))
            exit(1)
        }
    }

    /// The playlist at reload `reload` (from 1): the window ending with segment `reload + window - 1`.
    static func playlist(reload: Int, total: Int) -> [UInt8] {
        let last = min(total, reload + window - 1)
        let first = max(0, last - window + 1)
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        for index in first...last { text += "#EXTINF:2.000,\nseg/\(index).ts\n" }
        if last == total - 1 { text += "#EXT-X-ENDLIST\n" }
        return Array(text.utf8)
    }

    static func run(total: Int, directory: URL) async throws {
        let reloads = Atomic<Int>(0)
        let segment = Array(repeating: [0x47, 0x1F, 0xFF, 0x10] + [UInt8](repeating: 0xFF, count: 184), count: 4)
            .flatMap { $0 }
        var router = HTTPRouter()
        router.get("/live.m3u8") { _ in
            let reload = reloads.add(1, ordering: .relaxed).newValue
            return HTTPServerResponse(
                headers: ["Content-Type": "application/vnd.apple.mpegurl"],
                body: .bytes(playlist(reload: reload, total: total)))
        }
        router.get("/seg/:name") { _ in
            HTTPServerResponse(headers: ["Content-Type": "video/mp2t"], body: .bytes(segment))
        }
        let server = try HTTPServer.start(configuration: HTTPServerConfiguration(), router: router)
        let client = try HTTPClient()
        let package = directory.appendingPathComponent("package", isDirectory: true)
        try? FileManager.default.removeItem(at: package)
        let downloader = HLSDownloader(client: client, reloadWait: { _ in await Task.yield() })
        var job = HLSDownloadJob(source: server.baseURL + "live.m3u8", packageDirectory: package)
        job.options.maximumSegments = total + window
        let download = downloader.start(job)

        let clock = ContinuousClock()
        var recorded = 0
        var mark = (at: clock.now, cpu: cpuSeconds())
        var blocks: [(wall: Double, cpu: Double, rss: Double)] = []
        for await event in download.events {
            guard case .recorded(_, let new, _) = event else { continue }
            recorded += new
            while recorded >= (blocks.count + 1) * 1_000 {
                let now = (at: clock.now, cpu: cpuSeconds())
                let block = (wall: seconds(mark.at.duration(to: now.at)), cpu: now.cpu - mark.cpu, rss: rssMegabytes())
                blocks.append(block)
                mark = now
                emit(
                    "{\"segments\": \(blocks.count * 1_000), \"wall_s\": \(rounded(block.wall)),"
                        + " \"cpu_s\": \(rounded(block.cpu)), \"rss_mb\": \(rounded(block.rss))}")
            }
        }
        let result = try await download.result()
        await client.shutdown()
        await server.shutdown(gracePeriod: .seconds(1))
        guard let first = blocks.first, let last = blocks.last, blocks.count >= 2 else {
            throw BenchError("recorded \(recorded) segments, fewer than 2,000")
        }
        emit(
            "{\"summary\": true, \"segments\": \(recorded), \"files\": \(result.files),"
                + " \"last_over_first_wall\": \(rounded(last.wall / first.wall)),"
                + " \"last_over_first_cpu\": \(rounded(last.cpu / first.cpu)),"
                + " \"rss_first_mb\": \(rounded(first.rss)), \"rss_last_mb\": \(rounded(last.rss))}")
    }

    /// One line on standard output at once (not held in a buffer until exit).
    static func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    struct BenchError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func rssMegabytes() -> Double {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}
