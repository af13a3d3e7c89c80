import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue repair`.
struct QueueRepairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Rebuild a damaged queue from the downloads on disk.",
        discussion: """
            Moves queue.sqlite aside (as queue-damaged-DATE.sqlite, kept for inspection) and makes a new queue \
            holding every download in the library: finished packages and files as succeeded, unfinished ones \
            as stopped, resuming from the bytes on disk when started. Refused while `queue run` holds the queue.
            """,
        examples: [.init("Rebuild the queue", "streamkit queue repair")])

    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the outcome as one JSON object.")

    init() {}

    func run(_ context: CommandContext) async throws {
        let report: DownloadRepairReport
        do {
            report = try await DownloadManager.repair(directory: QueueAccess.directory(home, context))
        } catch {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        if format.json {
            let object: [String: Any] = [
                "keptAside": report.keptAside ?? NSNull(), "succeeded": report.succeeded, "stopped": report.stopped,
                "skipped": report.skipped,
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            context.write(String(decoding: data, as: UTF8.self) + "\n")
            return
        }
        if let aside = report.keptAside { context.write("The old queue database is kept as \(aside).\n") }
        context.write(
            "Rebuilt \(report.succeeded.count + report.stopped.count) tasks: \(report.succeeded.count) succeeded, "
                + "\(report.stopped.count) stopped (`streamkit queue start --all` resumes them).\n")
        for skipped in report.skipped { context.write("skipped \(skipped)\n") }
    }
}
