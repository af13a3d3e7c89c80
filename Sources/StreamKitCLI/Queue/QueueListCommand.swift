import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue list [--completed] [--json]`.
struct QueueListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List every task: id, state, progress, bytes, speed, title, error.",
        examples: [.init("Every task as JSON lines", "streamkit queue list --json")])

    @Flag(help: "Only the tasks that succeeded.") var completed = false
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print one JSON object per task.")

    init() {}

    func run(_ context: CommandContext) async throws {
        var tasks = try QueueAccess.tasks(home, context)
        if completed { tasks = tasks.filter { $0.state == .success } }
        if format.json {
            for task in tasks { context.write(QueueAccess.jsonLine(task)) }
            return
        }
        if tasks.isEmpty {
            context.write(completed ? "No task has completed.\n" : "The queue is empty.\n")
            return
        }
        context.write("ID                STATE      DONE     BYTES                 SPEED       TITLE\n")
        for task in tasks {
            let percent = String(format: "%5.1f%%", task.progress * 100)
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
            var line = task.id + "  " + task.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0) + "  "
            line += percent + "  " + bytes.padding(toLength: 20, withPad: " ", startingAt: 0) + "  "
            line += speed.padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + task.title + "\n"
            if let error = task.lastError {
                line += (task.state == .waiting ? "    waiting: " : "    error: ") + error + "\n"
            }
            context.write(line)
        }
    }

    /// `seconds` as `H:MM:SS`, or `M:SS` under an hour.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return whole >= 3600
            ? "\(whole / 3600):\(two(whole / 60 % 60)):\(two(whole % 60))" : "\(whole / 60):\(two(whole % 60))"
    }
}
