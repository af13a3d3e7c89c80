// bench-http: measurements of the HTTP client that need a process of their own.
//
//   bench-http concurrent COUNT URL...   download COUNT URLs (cycling through the list) at once
//                                        through one client, bodies discarded; prints JSON with
//                                        the threads before and at most during the transfers
//                                        (BENCH_HTTP_PER_HOST limits connections per host)
//   bench-http failures COUNT URL...     make COUNT requests that fail (cycling through the URLs);
//                                        prints open descriptors and RSS before and after, JSON
import StreamKitHTTP
import StreamKitCore
import Foundation
import StreamKitHTTPClient
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

@main
enum BenchHTTP {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 3, let count = Int(arguments[1]), count > 0 else {
            FileHandle.standardError.write(Data("usage: bench-http concurrent|failures COUNT URL...\n".utf8))
            exit(64)
        }
        let urls = Array(arguments.dropFirst(2))
        do {
            switch arguments[0] {
            case "concurrent": try await concurrent(count: count, urls: urls)
            case "failures": try await failures(count: count, urls: urls)
            default:
                FileHandle.standardError.write(Data("unknown mode \(arguments[0])\n".utf8))
                exit(64)
            }
        } catch {
            FileHandle.standardError.write(Data("bench-http: \(error)\n".utf8))
            exit(1)
        }
    }

    static func concurrent(count: Int, urls: [String]) async throws {
        let perHost = ProcessInfo.processInfo.environment["BENCH_HTTP_PER_HOST"].flatMap(Int.init) ?? count
        let threadsBefore = threadCount()
        let client = try HTTPClient(
            configuration: HTTPClientConfiguration(
                maximumConnectionsPerHost: perHost, maximumConnections: max(perHost, 8)))
        let peakThreads = Peak(threadCount())
        let started = ContinuousClock.now
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<count {
                let url = urls[index % urls.count]
                group.addTask {
                    let response = try await client.execute(HTTPClientRequest(url: url))
                    guard response.status == .ok else {
                        throw HTTPClientError.unexpectedStatus(response.status, url: url)
                    }
                    var bytes = 0
                    for try await chunk in response.body {
                        bytes += chunk.count
                        peakThreads.record(threadCount())
                    }
                    return bytes
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = started.duration(to: .now)
        let statistics = client.statistics
        await client.shutdown()
        print(
            "{\"transfers\":\(count),\"bytes\":\(total),\"seconds\":\(seconds(elapsed)),"
                + "\"connections\":\(statistics.connectionsOpened),\"threadsBefore\":\(threadsBefore),"
                + "\"peakThreads\":\(peakThreads.value)}")
    }

    static func failures(count: Int, urls: [String]) async throws {
        let client = try HTTPClient()
        func fail(_ url: String) async -> Bool {
            do {
                _ = try await client.data(for: HTTPClientRequest(url: url), limit: 1 << 20)
                return false
            } catch {
                return true
            }
        }
        // Warm up: libcurl's globals, the I/O thread, the allocator's arenas.
        for index in 0..<50 { _ = await fail(urls[index % urls.count]) }
        try await Task.sleep(for: .milliseconds(200))
        let descriptorsBefore = openDescriptors()
        let residentBefore = residentKilobytes()
        var failed = 0
        for index in 0..<count where await fail(urls[index % urls.count]) { failed += 1 }
        try await Task.sleep(for: .milliseconds(200))
        let statistics = client.statistics
        print(
            "{\"requests\":\(count),\"failed\":\(failed),\"descriptorsBefore\":\(descriptorsBefore),"
                + "\"descriptorsAfter\":\(openDescriptors()),\"residentKilobytesBefore\":\(residentBefore),"
                + "\"residentKilobytesAfter\":\(residentKilobytes()),\"liveTransferObjects\":\(statistics.liveTransferObjects)}"
        )
        await client.shutdown()
    }

    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    }

    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    static func residentKilobytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// The highest value recorded, from any task.
final class Peak: Sendable {
    private let state: Mutex<Int>
    init(_ initial: Int) { state = Mutex(initial) }
    var value: Int { state.withLock { $0 } }
    func record(_ sample: Int) { state.withLock { $0 = max($0, sample) } }
}
