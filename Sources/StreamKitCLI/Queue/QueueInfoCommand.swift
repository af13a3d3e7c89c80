import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue info ID [--json]`.
struct QueueInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show every field of one task.",
        examples: [.init("One task as JSON", "streamkit queue info 3f2a9c1b7d4e5f60 --json")])

    @Argument(valueName: "id", completion: .taskIDs, help: "The task id.") var id: String
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the task as one JSON object.")

    init() {}

    func run(_ context: CommandContext) async throws {
        let tasks = try QueueAccess.tasks(home, context)
        guard let task = tasks.first(where: { $0.id == id }) else {
            context.writeError("error: no task with id '\(id)' (see `streamkit queue list`)\n")
            throw ExitCode.failure
        }
        if format.json {
            context.write(QueueAccess.jsonLine(task))
            return
        }
        let expected = task.bytesExpected.map { ByteCountText.format(Double($0)) } ?? "unknown"
        var fields: [(String, String)] = [
            ("id", task.id), ("state", task.state.rawValue), ("title", task.title), ("url", task.url),
            ("kind", task.kind.rawValue), ("file type", task.fileType.rawValue), ("location", task.location),
            ("progress", String(format: "%.1f%%", task.progress * 100)),
            ("bytes", "\(ByteCountText.format(Double(task.bytesDone))) of \(expected)"),
            ("post-processing", String(format: "%.0f%%", task.postProcessingProgress * 100)),
            ("connections", "\(task.connections)"),
            ("created", ISO8601DateFormatter().string(from: task.createdAt)),
        ]
        if task.state == .running { fields.append(("speed", ByteCountText.format(task.bytesPerSecond) + "/s")) }
        if let finished = task.finishedAt { fields.append(("finished", ISO8601DateFormatter().string(from: finished))) }
        if task.kind.isPackage {
            fields.append(("decrypt", task.decrypt ? "yes" : "no"))
            if task.keepEncrypted { fields.append(("DRM", "kept encrypted")) }
            if let selection = task.selection { fields.append(("selection", "\(selection)")) }
            if let format = task.subtitleFormat { fields.append(("subtitles", "merged into .\(format.rawValue)")) }
            if let export = task.exportPath { fields.append(("export", export)) }
        }
        if let recording = task.recording {
            let recorded = QueueListCommand.clock(task.recordedSeconds ?? 0)
            fields.append(("recorded", "\(recorded) of \(QueueListCommand.clock(recording.duration))"))
            fields.append(("idle timeout", "\(recording.idleTimeout) s"))
            fields.append(("hls", recording.hls ? "yes (served live from the library)" : "no"))
        }
        for header in task.headers { fields.append(("header", header)) }
        if let thumbnail = task.thumbnailURL { fields.append(("thumbnail", thumbnail)) }
        if let error = task.lastError { fields.append(("error", error)) }
        for (name, value) in fields {
            context.write(QueueListCommand.padded(name, to: 16) + value + "\n")
        }
    }
}
