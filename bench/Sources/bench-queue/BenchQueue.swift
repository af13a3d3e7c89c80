// bench-queue: a queue of many tasks made through the library's API, for bench/scale.sh.
//
//   bench-queue fill HOME ORIGIN COUNT
//   bench-queue open HOME
//
// fill opens a DownloadManager in HOME and adds COUNT - STOPPED file tasks (ORIGIN/seg/N.ts, tiny
// files nginx serves; STOPPED is one in five, at most 200) with `add`, run eight at a time to
// success, then STOPPED more left stopped, and closes it. It prints one JSON line: the mean time of
// an add over the first and the last 1,000 adds, the time to run the tasks, its peak RSS.
// open opens the manager of HOME (its recovery reads every task) and closes it: the time to open,
// the RSS once open, the peak RSS.
import Foundation
import StreamKitDownloads

#if canImport(Glibc)
import Glibc
#endif

@main
enum BenchQueue {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            switch (arguments.first, arguments.count) {
            case ("fill", 4):
                guard let count = Int(arguments[3]), count >= 5 else { usage() }
                try await fill(home: URL(fileURLWithPath: arguments[1]), origin: arguments[2], count: count)
            case ("open", 2):
                try await open(home: URL(fileURLWithPath: arguments[1]))
            default:
                usage()
            }
        } catch {
            FileHandle.standardError.write(Data("bench-queue: \(error)\n".utf8))
            exit(1)
        }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(Data("usage: bench-queue fill HOME ORIGIN COUNT (5 or more) | open HOME\n".utf8))
        exit(64)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func fill(home: URL, origin: String, count: Int) async throws {
        let clock = ContinuousClock()
        let manager = try await DownloadManager(configuration: DownloadManagerConfiguration(directory: home))
        try await manager.setMaximumConcurrentDownloads(8)
        let events = await manager.events()
        var addTimes: [Double] = []
        let stopped = min(200, count / 5)
        let started = clock.now
        for index in 0..<count - stopped {
            let before = clock.now
            try await manager.add(DownloadRequest(url: "\(origin)/seg/\(index).ts", kind: .file), autoStart: true)
            addTimes.append(seconds(clock.now - before))
        }
        var succeeded = 0
        for await event in events {
            if case .stateChanged(let info, _) = event {
                if info.state == .success { succeeded += 1 }
                if info.state == .failed { throw DownloadManagerError(.invalidArgument, "\(info.url) failed") }
            }
            if succeeded == count - stopped { break }
        }
        let ran = seconds(clock.now - started)
        for index in 0..<stopped {
            let before = clock.now
            try await manager.add(
                DownloadRequest(url: "\(origin)/seg/stopped-\(index).ts", kind: .file), autoStart: false)
            addTimes.append(seconds(clock.now - before))
        }
        await manager.close()
        let first = addTimes.prefix(1_000).reduce(0, +) / Double(min(1_000, addTimes.count))
        let last = addTimes.suffix(1_000).reduce(0, +) / Double(min(1_000, addTimes.count))
        let line =
            "{\"section\": \"queue\", \"size\": \(count), \"label\": \"fill\", \"add_first_1000_ms\": \(first * 1000), "
            + "\"add_last_1000_ms\": \(last * 1000), \"run_s\": \(ran), \"peak_rss_mb\": \(memory("VmHWM:"))}\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    /// Opens the manager of the queue in `home` (its recovery reads every task), then closes it.
    static func open(home: URL) async throws {
        let clock = ContinuousClock()
        let opening = clock.now
        let manager = try await DownloadManager(configuration: DownloadManagerConfiguration(directory: home))
        let tasks = await manager.allTasks()
        let opened = seconds(clock.now - opening)
        let openRSS = memory("VmRSS:")
        await manager.close()
        let line =
            "{\"section\": \"queue\", \"size\": \(tasks.count), \"label\": \"open\", \"open_s\": \(opened), "
            + "\"open_rss_mb\": \(openRSS), \"peak_rss_mb\": \(memory("VmHWM:"))}\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    /// A line of /proc/self/status (`VmRSS:`, `VmHWM:`) in megabytes.
    static func memory(_ field: String) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}
