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

    @OptionGroup var target = TaskTargetOptions(allHelp: "Every stopped or failed task.")
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the tasks as JSON lines.")

    init() {}

    func run(_ context: CommandContext) async throws {
        try QueueAccess.report(
            try await QueueAccess.perform(.start(target.task), home: home, context: context), json: format.json,
            context: context)
    }
}
