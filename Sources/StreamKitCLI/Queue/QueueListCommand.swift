import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue list [--completed] [--ids | --json]`.
struct QueueListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List every task: id, state, progress, bytes, speed, title, error.",
        examples: [.init("Every task as JSON lines", "streamkit queue list --json")])

    @Flag(help: "Only the tasks that succeeded.") var completed = false
    @Flag(help: "Only the ids, one a line (what shell completion offers).") var ids = false
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print one JSON object per task.")

    init() {}

    func validate() throws {
        if ids && format.json { throw ValidationError("give --ids or --json, not both") }
    }

    func run(_ context: CommandContext) async throws {
        var tasks = try QueueAccess.tasks(home, context)
        if completed { tasks = tasks.filter { $0.state == .success } }
        if ids {
            context.write(tasks.map { $0.id + "\n" }.joined())
            return
        }
        if format.json {
            QueueAccess.writeJSONLines(tasks, context: context)
            return
        }
        if tasks.isEmpty {
            context.write(completed ? "No task has completed.\n" : "The queue is empty.\n")
            return
        }
        // Written in chunks, and formatted without Foundation: a queue of ten thousand tasks is
        // listed in a fraction of a second.
        var text = "ID                STATE      DONE     BYTES                 SPEED       TITLE\n"
        for task in tasks {
            let percent = Self.padded(ByteCountText.fixed(task.progress * 100, digits: 1), to: 5, left: true) + "%"
            var bytes =
                ByteCountText.format(Double(task.bytesDone)) + " / "
                + (task.bytesExpected.map { ByteCountText.format(Double($0)) } ?? "?")
            if let recording = task.recording {
                // A recording's measure is time: seconds recorded of the duration, then the file's size.
                bytes =
                    Self.clock(task.recordedSeconds ?? 0) + " / " + Self.clock(recording.duration) + ", "
                    + ByteCountText.format(Double(task.bytesDone))
            }
            let speed = task.state == .running ? ByteCountText.format(task.bytesPerSecond) + "/s" : "-"
            text += task.id + "  " + Self.padded(task.state.rawValue, to: 9) + "  "
            text += percent + "  " + Self.padded(bytes, to: 20) + "  "
            text += Self.padded(speed, to: 10) + "  " + task.title + "\n"
            if let error = task.lastError {
                text += (task.state == .waiting ? "    waiting: " : "    error: ") + error + "\n"
            }
            if text.utf8.count >= 1 << 16 {
                context.write(text)
                text = ""
            }
        }
        context.write(text)
    }

    /// `text` cut or filled with spaces to `width` characters, the spaces after it (or before it,
    /// `left`), as a column of the list.
    static func padded(_ text: String, to width: Int, left: Bool = false) -> String {
        let count = text.count
        guard count < width else { return String(text.prefix(width)) }
        let fill = String(repeating: " ", count: width - count)
        return left ? fill + text : text + fill
    }

    /// `seconds` as `H:MM:SS`, or `M:SS` under an hour.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return whole >= 3600
            ? "\(whole / 3600):\(two(whole / 60 % 60)):\(two(whole % 60))" : "\(whole / 60):\(two(whole % 60))"
    }
}
