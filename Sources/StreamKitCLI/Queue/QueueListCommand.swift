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
            let bytes =
                ByteCountText.format(Double(task.bytesDone)) + " / "
                + (task.bytesExpected.map { ByteCountText.format(Double($0)) } ?? "?")
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
}
