import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

/// `streamkit queue`: the persistent download queue in $STREAMKIT_HOME.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Keep a persistent download queue: add, list, start, stop, remove, and run it.",
        discussion: """
            The queue lives in $STREAMKIT_HOME (queue.sqlite; downloads in library/ID). `queue run` runs it
            in the foreground and holds its lock; while it runs, the other queue commands hand their change
            to it and print its answer. Tasks that were running when a run was killed come back ready and
            resume without fetching again what was saved.
            """,
        examples: [
            .init(
                "Queue a stream and a file, then run the queue",
                "streamkit queue add URL --title Show && streamkit queue run --exit-when-done"),
            .init("See the queue", "streamkit queue list"),
        ],
        subcommands: [
            QueueAddCommand.self, QueueListCommand.self, QueueStartCommand.self, QueueStopCommand.self,
            QueueRetryCommand.self, QueueRemoveCommand.self, QueueRunCommand.self,
        ],
        group: "Downloads")

    init() {}
}

/// What the queue commands share: where the queue is, and sending it a change.
enum QueueAccess {
    static func directory(_ home: String?, _ context: CommandContext) -> URL {
        URL(fileURLWithPath: StreamKitHome.resolve(override: home, environment: context.environment), isDirectory: true)
    }

    /// Performs `command` on the queue: directly when no `queue run` holds it, else through it.
    static func perform(
        _ command: DownloadQueueCommand, home: String?, context: CommandContext
    ) async throws
        -> DownloadQueueAnswer
    {
        let directory = directory(home, context)
        do {
            let manager = try await DownloadManager(
                configuration: DownloadManagerConfiguration(directory: directory, runsTasks: false))
            let answer = await manager.perform(command)
            await manager.close()
            return answer
        } catch  where error.kind == .directoryLocked {
            return try await DownloadQueueRemote.send(command, directory: directory)
        }
    }

    /// Prints the answer's tasks, or its error (exit 1).
    static func report(_ answer: DownloadQueueAnswer, json: Bool, context: CommandContext) throws {
        if let error = answer.error {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        if json {
            for task in answer.tasks { context.write(jsonLine(task)) }
            for id in answer.removed { context.write("{\"removed\":\"\(id)\"}\n") }
        } else {
            for task in answer.tasks { context.write("\(task.id)  \(task.state)  \(task.title)\n") }
            for id in answer.removed { context.write("removed \(id)\n") }
        }
    }

    static func jsonLine(_ task: DownloadTaskInfo) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return ((try? encoder.encode(task)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
    }
}

/// `streamkit queue add URL [--title T] [download options]`.
struct QueueAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a task to the queue; prints its id.",
        discussion: """
            An HLS URL (.m3u8, or answered as a playlist) becomes a package; anything else a file fetched
            over -j range connections. The task waits stopped unless --start is given; the same URL and
            selection cannot be queued twice.
            """,
        examples: [
            .init(
                "Queue a stream with French audio",
                "streamkit queue add https://example.com/show/master.m3u8 --audio fr --title Show"),
            .init("Queue a file and start it", "streamkit queue add https://example.com/talk.mp4 --start"),
        ])

    @Argument(valueName: "url", help: "The http or https URL.") var url: String
    @Option(valueName: "title", help: "A title for lists (default: the URL's file name).") var title: String?
    @Option(valueName: "kind", help: "auto, hls or file.") var kind = "auto"
    @Option(valueName: "variant", help: "HLS variant: best, worst, a bandwidth cap (1500k, 2M) or WxH.") var variant =
        "best"
    @Option(valueName: "audio", help: "HLS audio renditions: auto, all, none, a language, name:NAME.") var audio =
        "auto"
    @Option(valueName: "subs", help: "HLS subtitles: all, none, a language, name:NAME.") var subs = "all"
    @Option(
        name: "connections", short: "j", valueName: "n",
        help: "Range connections (file, default 4) or transfers (HLS, default 8).")
    var connections: Int?
    @Flag(help: "Store AES-128 segments decrypted.") var decrypt = false
    @Option(valueName: "type", help: "video or audio.") var type = "video"
    @Option(valueName: "url", help: "A cover image URL.") var thumbnail: String?
    @Option(name: "header", short: "H", valueName: "header", help: "An extra request header, 'Name: value'.")
    var headers: [String] = []
    @Flag(help: "Start the task at once (queue it ready).") var start = false
    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Flag(help: "Print the task as a JSON line.") var json = false

    init() {}

    mutating func validate() throws {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        guard scheme == "http" || scheme == "https", URLComponents(string: url)?.host?.isEmpty == false else {
            throw ValidationError("<url> must be an http or https URL, got '\(url)'")
        }
        guard ["auto", "hls", "file"].contains(kind) else {
            throw ValidationError("--kind must be auto, hls or file, got '\(kind)'")
        }
        guard DownloadFileType(rawValue: type) != nil else {
            throw ValidationError("--type must be video or audio, got '\(type)'")
        }
        try DownloadCommand.validateSelection(variant: variant, audio: audio, subs: subs, connections: connections)
        for header in headers where DownloadCommand.parseHeader(header) == nil {
            throw ValidationError("--header must be 'Name: value', got '\(header)'")
        }
    }

    func run(_ context: CommandContext) async throws {
        var requestHeaders = HTTPHeaders()
        for header in headers {
            if let (name, value) = DownloadCommand.parseHeader(header) { requestHeaders.add(name, value) }
        }
        var resolvedKind = DownloadKind(rawValue: kind)
        if resolvedKind == nil {
            let client = try HTTPClient(configuration: HTTPClientConfiguration(environment: context.environment))
            resolvedKind =
                await SourceProbe.isHLS(url, client: client, headers: requestHeaders, retry: .default) ? .hls : .file
            await client.shutdown()
        }
        let request = DownloadRequest(
            url: url, kind: resolvedKind ?? .file,
            selection: HLSSelection(
                variant: VariantPreference(variant) ?? .best, audio: RenditionPreference(audio) ?? .automatic,
                subtitles: RenditionPreference(subs) ?? .all),
            decrypt: decrypt, fileType: DownloadFileType(rawValue: type) ?? .video, title: title,
            thumbnailURL: thumbnail, connections: connections, headers: requestHeaders)
        let answer = try await QueueAccess.perform(.add(request, autoStart: start), home: home, context: context)
        if let error = answer.error {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        for task in answer.tasks { context.write(json ? QueueAccess.jsonLine(task) : task.id + "\n") }
    }
}

/// `streamkit queue list [--json]`.
struct QueueListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List every task: id, state, progress, bytes, speed, title, error.",
        examples: [.init("Every task as JSON lines", "streamkit queue list --json")])

    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Flag(help: "Print one JSON object per task.") var json = false

    init() {}

    func run(_ context: CommandContext) async throws {
        let tasks: [DownloadTaskInfo]
        do {
            tasks = try DownloadQueueRemote.tasks(directory: QueueAccess.directory(home, context))
        } catch {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        if json {
            for task in tasks { context.write(QueueAccess.jsonLine(task)) }
            return
        }
        if tasks.isEmpty {
            context.write("The queue is empty.\n")
            return
        }
        context.write("ID                STATE      DONE     BYTES                 SPEED       TITLE\n")
        for task in tasks {
            let percent = String(format: "%5.1f%%", task.progress * 100)
            let bytes =
                ByteCountText.format(Double(task.bytesDone)) + " / "
                + (task.bytesExpected.map { ByteCountText.format(Double($0)) } ?? "?")
            let speed = task.state == .running ? ByteCountText.format(task.bytesPerSecond) + "/s" : "-"
            var line = task.id + "  " + task.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0) + "  "
            line += percent + "  " + bytes.padding(toLength: 20, withPad: " ", startingAt: 0) + "  "
            line += speed.padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + task.title + "\n"
            if let error = task.lastError { line += "    error: \(error)\n" }
            context.write(line)
        }
    }
}

/// `streamkit queue start [ID|--all]`.
struct QueueStartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Queue a stopped or failed task (or all of them) to run.",
        discussion: "The task becomes ready; `queue run` (running now or later) runs it.",
        examples: [.init("Start everything", "streamkit queue start --all")])

    @Argument(valueName: "id", help: "The task id.") var id: String?
    @Flag(help: "Every stopped or failed task.") var all = false
    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Flag(help: "Print the tasks as JSON lines.") var json = false

    init() {}

    mutating func validate() throws {
        guard (id == nil) != !all else { throw ValidationError("give a task <id> or --all, not both or neither") }
    }

    func run(_ context: CommandContext) async throws {
        try QueueAccess.report(
            try await QueueAccess.perform(.start(all ? nil : id), home: home, context: context), json: json,
            context: context)
    }
}

/// `streamkit queue stop [ID|--all]`.
struct QueueStopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop a task (or all of them); running ones stop cleanly and keep their bytes.",
        examples: [.init("Stop one task", "streamkit queue stop 3f2a9c1b7d4e5f60")])

    @Argument(valueName: "id", help: "The task id.") var id: String?
    @Flag(help: "Every ready or running task.") var all = false
    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Flag(help: "Print the tasks as JSON lines.") var json = false

    init() {}

    mutating func validate() throws {
        guard (id == nil) != !all else { throw ValidationError("give a task <id> or --all, not both or neither") }
    }

    func run(_ context: CommandContext) async throws {
        try QueueAccess.report(
            try await QueueAccess.perform(.stop(all ? nil : id), home: home, context: context), json: json,
            context: context)
    }
}

/// `streamkit queue retry ID`.
struct QueueRetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Put a failed task back in the queue; it resumes where it stopped.",
        examples: [.init("Retry a task", "streamkit queue retry 3f2a9c1b7d4e5f60")])

    @Argument(valueName: "id", help: "The task id.") var id: String
    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Flag(help: "Print the task as a JSON line.") var json = false

    init() {}

    func run(_ context: CommandContext) async throws {
        try QueueAccess.report(
            try await QueueAccess.perform(.retry(id), home: home, context: context), json: json, context: context)
    }
}

/// `streamkit queue remove ID` / `queue remove --unfinished`.
struct QueueRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a task and delete its files, or every unfinished task.",
        discussion: "--unfinished keeps the tasks that succeeded and their files.",
        examples: [
            .init("Remove one task", "streamkit queue remove 3f2a9c1b7d4e5f60"),
            .init("Remove everything not finished", "streamkit queue remove --unfinished"),
        ])

    @Argument(valueName: "id", help: "The task id.") var id: String?
    @Flag(help: "Every task that has not succeeded.") var unfinished = false
    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Flag(help: "Print the ids removed as JSON lines.") var json = false

    init() {}

    mutating func validate() throws {
        guard (id == nil) != !unfinished else {
            throw ValidationError("give a task <id> or --unfinished, not both or neither")
        }
    }

    func run(_ context: CommandContext) async throws {
        let command: DownloadQueueCommand = id.map { .remove($0) } ?? .removeUnfinished
        try QueueAccess.report(
            try await QueueAccess.perform(command, home: home, context: context), json: json, context: context)
    }
}

/// `streamkit queue run [--max-concurrent N] [--exit-when-done]`.
struct QueueRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the queue in the foreground with live progress.",
        discussion: """
            Runs ready tasks in queue order, at most --max-concurrent at once (saved for later runs; default
            1, at most 16), and performs what other queue commands ask meanwhile. Progress is drawn on a
            terminal, printed as a line every 2 s otherwise, or as JSON lines with --json. Ctrl-C stops
            cleanly (running tasks come back ready) and exits 130. With --exit-when-done it exits once
            nothing is ready or running: 0 when every task succeeded, 1 when one failed.
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
    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Flag(help: "Print events as JSON lines on standard output.") var json = false

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
                    directory: directory, userAgent: "streamkit/\(streamKitVersion)"))
            if let maxConcurrent { try await manager.setMaximumConcurrentDownloads(maxConcurrent) }
            if let limitRate { try await manager.setBandwidthLimit(limitRate.bytesPerSecond) }
        } catch {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        let interrupted = Mutex(false)
        let monitor = InterruptMonitor { interrupted.withLock { $0 = true } }
        defer { monitor.stop() }
        let printer = QueueRunPrinter(context: context, json: json)
        let stream = await manager.events()
        let events = Task {
            for await event in stream { printer.print(event) }
        }
        if !json {
            context.writeError("Running the queue in \(directory.path) (\(await manager.allTasks().count) tasks)\n")
        }
        while true {
            if interrupted.withLock({ $0 }) {
                await manager.close()
                await events.value
                printer.finish()
                if !json { context.writeError("Interrupted; running tasks will resume next time.\n") }
                throw ExitCode.interrupted
            }
            await manager.serveRemoteCommands()
            if exitWhenDone, await manager.isIdle { break }
            printer.tick(await manager.allTasks())
            try? await Task.sleep(for: .milliseconds(200))
        }
        let tasks = await manager.allTasks()
        await manager.close()
        await events.value
        printer.finish()
        let failed = tasks.filter { $0.state == .failed }
        if !json {
            context.writeError(
                "Done: \(tasks.filter { $0.state == .success }.count) succeeded, \(failed.count) failed, "
                    + "\(tasks.filter { $0.state == .stopped }.count) stopped.\n")
        }
        if !failed.isEmpty { throw ExitCode.failure }
    }
}

/// Draws `queue run`: state changes as lines, one progress line per running task (redrawn in
/// place on a terminal, every 2 s otherwise, through ``ProgressDisplay``), or JSON lines.
final class QueueRunPrinter: Sendable {
    private let context: CommandContext
    private let json: Bool
    private let display: ProgressDisplay

    init(context: CommandContext, json: Bool) {
        self.context = context
        self.json = json
        display = ProgressDisplay(sink: context.errorOutput)
    }

    func print(_ event: DownloadEvent) {
        if json {
            switch event {
            case .stateChanged(let info, let from):
                context.write(
                    "{\"event\":\"state\",\"id\":\"\(info.id)\",\"from\":\"\(from)\",\"to\":\"\(info.state)\"}\n")
            case .progress(let info):
                context.write(
                    "{\"event\":\"progress\",\"id\":\"\(info.id)\",\"bytes\":\(info.bytesDone),\"expected\":\(info.bytesExpected.map(String.init) ?? "null"),\"speed\":\(Int64(info.bytesPerSecond))}\n"
                )
            case .completed(let info):
                context.write("{\"event\":\"completed\",\"task\":\(QueueAccess.jsonLine(info).dropLast())}\n")
            case .failed(let info, _):
                context.write("{\"event\":\"failed\",\"task\":\(QueueAccess.jsonLine(info).dropLast())}\n")
            case .removed(let id): context.write("{\"event\":\"removed\",\"id\":\"\(id)\"}\n")
            case .allCompleted: context.write("{\"event\":\"allCompleted\"}\n")
            case .added(let info): context.write("{\"event\":\"added\",\"id\":\"\(info.id)\"}\n")
            case .speed, .postProcessing: break
            }
            return
        }
        switch event {
        case .stateChanged(let info, let from):
            display.message("\(info.id) \(from) -> \(info.state)  \(info.title)\n")
        case .failed(let info, let error):
            display.message("\(info.id) failed: \(error.detail)\n")
        case .completed(let info):
            display.message("\(info.id) done: \(info.location)\n")
        default:
            break
        }
    }

    /// The running tasks' progress, a line each, labelled by title.
    func tick(_ tasks: [DownloadTaskInfo]) {
        guard !json else { return }
        let running = tasks.filter { $0.state == .running }
        guard !running.isEmpty else { return }
        display.update(
            running.map { task in
                let left =
                    task.bytesExpected.map { total in
                        task.bytesPerSecond > 0 ? Double(max(total - task.bytesDone, 0)) / task.bytesPerSecond : nil
                    } ?? nil
                return ProgressLine(
                    label: task.title, fraction: task.bytesExpected == nil ? nil : task.progress, bytes: task.bytesDone,
                    totalBytes: task.bytesExpected, bytesPerSecond: task.bytesPerSecond > 0 ? task.bytesPerSecond : nil,
                    secondsRemaining: left)
            })
    }

    /// Ends the progress lines before the summary.
    func finish() {
        if !json { display.finish() }
    }
}
