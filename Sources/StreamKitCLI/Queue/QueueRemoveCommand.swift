import Foundation
import StreamKitCore
import StreamKitDownloads

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

    @Argument(valueName: "id", completion: .taskIDs, help: "The task id.") var id: String?
    @Flag(help: "Every task that has not succeeded.") var unfinished = false
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the ids removed as JSON lines.")

    init() {}

    mutating func validate() throws {
        guard (id == nil) != !unfinished else {
            throw ValidationError("give a task <id> or --unfinished, not both or neither")
        }
    }

    func run(_ context: CommandContext) async throws {
        let command: DownloadQueueCommand = id.map { .remove($0) } ?? .removeUnfinished
        try QueueAccess.report(
            try await QueueAccess.perform(command, home: home, context: context), json: format.json, context: context)
    }
}
