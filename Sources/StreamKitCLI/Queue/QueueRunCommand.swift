import Foundation
import StreamKitCore
import StreamKitDownloads
import Synchronization

/// `streamkit queue run [--max-concurrent N] [--exit-when-done]`.
struct QueueRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the queue in the foreground with live progress.",
        discussion: """
            Runs ready tasks in queue order, at most --max-concurrent at once (saved for later runs; default \
            1, at most 16), and performs what other queue commands ask meanwhile. Progress is drawn on a \
            terminal, printed as a line every 2 s otherwise, or as JSON lines with --json. Ctrl-C stops \
            cleanly (running tasks come back ready) and exits 130. With --exit-when-done it exits once \
            nothing is ready or running: 0 when every task it ran succeeded, 1 when one failed.
            """,
        examples: [
            .init(
                "Run until the queue is done, three at a time",
                "streamkit queue run --max-concurrent 3 --exit-when-done")
        ])

    @Option(valueName: "n", help: "Tasks at once, 1 to 16.") var maxConcurrent: Int?
    @Flag(help: "Exit once nothing is ready or running.") var exitWhenDone = false
    @Option(valueName: "rate", help: "At most this many bytes a second for all tasks, such as 500k or 2M.")
    var limitRate: TransferRate?
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print events as JSON lines on standard output.")

    init() {}

    mutating func validate() throws {
        if let maxConcurrent, !(1...16).contains(maxConcurrent) {
            throw ValidationError("--max-concurrent must be between 1 and 16, got \(maxConcurrent)")
        }
    }

    func run(_ context: CommandContext) async throws {
        let directory = QueueAccess.directory(home, context)
        let manager: DownloadManager
        do {
            manager = try await DownloadManager(
                configuration: DownloadManagerConfiguration(
                    directory: directory, userAgent: "streamkit/\(streamKitVersion)", liveRecorder: QueueRTMPRecorder())
            )
            if let maxConcurrent { try await manager.setMaximumConcurrentDownloads(maxConcurrent) }
            if let limitRate { try await manager.setBandwidthLimit(limitRate.bytesPerSecond) }
        } catch {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        let interrupted = Mutex(false)
        let monitor = InterruptMonitor { interrupted.withLock { $0 = true } }
        defer { monitor.stop() }
        let printer = QueueRunPrinter(context: context, json: format.json)
        // The tasks this run started: what --exit-when-done and the summary judge (a task that
        // failed in an earlier run and was left so is not this run's failure).
        let ran = Mutex<Set<String>>([])
        let stream = await manager.events()
        let events = Task {
            for await event in stream {
                if case .stateChanged(let info, _) = event, info.state == .running {
                    ran.withLock { _ = $0.insert(info.id) }
                }
                printer.print(event)
            }
        }
        if !format.json {
            context.writeError("Running the queue in \(directory.path) (\(await manager.allTasks().count) tasks)\n")
        }
        // Commands from other processes are looked for every 50 ms (an answer within about
        // 100 ms); the progress line is drawn every 200 ms.
        var round = 0
        while true {
            if interrupted.withLock({ $0 }) {
                await manager.close()
                await events.value
                printer.finish()
                if !format.json { context.writeError("Interrupted; running tasks will resume next time.\n") }
                throw ExitCode.interrupted
            }
            await manager.serveRemoteCommands()
            if exitWhenDone, await manager.isIdle { break }
            if round % 4 == 0 { printer.tick(await manager.activeTasks()) }
            round += 1
            try? await Task.sleep(for: .milliseconds(50))
        }
        await manager.close()
        await events.value
        let ranIDs = ran.withLock { $0 }
        let tasks = await manager.allTasks().filter { ranIDs.contains($0.id) }
        printer.finish()
        let failed = tasks.filter { $0.state == .failed }
        if !format.json {
            context.writeError(
                "Done: \(tasks.filter { $0.state == .success }.count) succeeded, \(failed.count) failed, "
                    + "\(tasks.filter { $0.state == .stopped }.count) stopped.\n")
        }
        if !failed.isEmpty { throw ExitCode.failure }
    }
}
