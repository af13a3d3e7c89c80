import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue retry ID`.
struct QueueRetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Put a failed task back in the queue; it resumes where it stopped.",
        examples: [.init("Retry a task", "streamkit queue retry 3f2a9c1b7d4e5f60")])

    @Argument(valueName: "id", completion: .taskIDs, help: "The task id.") var id: String
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the task as a JSON line.")

    init() {}

    func run(_ context: CommandContext) async throws {
        try QueueAccess.report(
            try await QueueAccess.perform(.retry(id), home: home, context: context), json: format.json, context: context
        )
    }
}
