import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue remove ID` / `queue remove --unfinished`.
struct QueueRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a task and delete its files, or every unfinished task.",
        discussion: """
            --unfinished keeps the tasks that succeeded and their files. --keep-files removes the task \
            from the queue and leaves what it downloaded where it is (a package stays in the library).
            """,
        examples: [
            .init("Remove one task", "streamkit queue remove 3f2a9c1b7d4e5f60"),
            .init("Remove everything not finished", "streamkit queue remove --unfinished"),
            .init("Forget a task, keep its files", "streamkit queue remove --keep-files 3f2a9c1b7d4e5f60"),
        ])

    @Argument(valueName: "id", completion: .taskIDs, help: "The task id.") var id: String?
    @Flag(help: "Every task that has not succeeded.") var unfinished = false
    @Flag(name: "keep-files", help: "Leave the task's files where they are.") var keepFiles = false
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the ids removed as JSON lines.")

    init() {}

    mutating func validate() throws {
        guard (id == nil) != !unfinished else {
            throw ValidationError("give a task <id> or --unfinished, not both or neither")
        }
        if keepFiles && unfinished { throw ValidationError("--keep-files removes one task: give its <id>") }
    }

    func run(_ context: CommandContext) async throws {
        let command: DownloadQueueCommand = id.map { .remove($0, keepFiles: keepFiles) } ?? .removeUnfinished
        try QueueAccess.report(
            try await QueueAccess.perform(command, home: home, context: context), json: format.json, context: context)
    }
}
