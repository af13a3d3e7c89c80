import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue start [ID|--all]`.
struct QueueStartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Queue a stopped or failed task (or all of them) to run.",
        discussion: "The task becomes ready; `queue run` (running now or later) runs it.",
        examples: [.init("Start everything", "streamkit queue start --all")])

    @Argument(valueName: "id", help: "The task id.") var id: String?
    @Flag(help: "Every stopped or failed task.") var all = false
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the tasks as JSON lines.")

    init() {}

    mutating func validate() throws {
        guard (id == nil) != !all else { throw ValidationError("give a task <id> or --all, not both or neither") }
    }

    func run(_ context: CommandContext) async throws {
        try QueueAccess.report(
            try await QueueAccess.perform(.start(all ? nil : id), home: home, context: context), json: format.json,
            context: context)
    }
}
