import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue stop [ID|--all]`.
struct QueueStopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop a task (or all of them); running ones stop cleanly and keep their bytes.",
        examples: [.init("Stop one task", "streamkit queue stop 3f2a9c1b7d4e5f60")])

    @OptionGroup var target = TaskTargetOptions(allHelp: "Every ready or running task.")
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the tasks as JSON lines.")

    init() {}

    func run(_ context: CommandContext) async throws {
        try QueueAccess.report(
            try await QueueAccess.perform(.stop(target.task), home: home, context: context), json: format.json,
            context: context)
    }
}
