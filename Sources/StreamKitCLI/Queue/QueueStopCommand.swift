import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue stop [ID|--all]`.
struct QueueStopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop a task (or all of them); running ones stop cleanly and keep their bytes.",
        examples: [.init("Stop one task", "streamkit queue stop 3f2a9c1b7d4e5f60")])

    @Argument(valueName: "id", help: "The task id.") var id: String?
    @Flag(help: "Every ready or running task.") var all = false
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the tasks as JSON lines.")

    init() {}

    mutating func validate() throws {
        guard (id == nil) != !all else { throw ValidationError("give a task <id> or --all, not both or neither") }
    }

    func run(_ context: CommandContext) async throws {
        try QueueAccess.report(
            try await QueueAccess.perform(.stop(all ? nil : id), home: home, context: context), json: format.json,
            context: context)
    }
}
