import Foundation
import StreamKitCore
import StreamKitDownloads

/// Draws `queue run`: state changes as lines, one progress line per running task (redrawn in
/// place on a terminal, every 2 s otherwise, through ``ProgressDisplay``), or JSON lines.
final class QueueRunPrinter: Sendable {
    private let context: CommandContext
    private let json: Bool
    private let display: ProgressDisplay

    init(context: CommandContext, json: Bool) {
        self.context = context
        self.json = json
        display = ProgressDisplay(sink: context.errorOutput)
    }

    func print(_ event: DownloadEvent) {
        if json {
            switch event {
            case .stateChanged(let info, let from):
                context.write(
                    "{\"event\":\"state\",\"id\":\"\(info.id)\",\"from\":\"\(from)\",\"to\":\"\(info.state)\"}\n")
            case .progress(let info):
                let seconds = info.recordedSeconds.map { ",\"seconds\":\(ByteCountText.fixed($0, digits: 3))" } ?? ""
                context.write(
                    "{\"event\":\"progress\",\"id\":\"\(info.id)\",\"bytes\":\(info.bytesDone),\"expected\":\(info.bytesExpected.map(String.init) ?? "null"),\"speed\":\(Int64(info.bytesPerSecond))\(seconds)}\n"
                )
            case .completed(let info):
                context.write("{\"event\":\"completed\",\"task\":\(QueueAccess.jsonLine(info).dropLast())}\n")
            case .failed(let info, _):
                context.write("{\"event\":\"failed\",\"task\":\(QueueAccess.jsonLine(info).dropLast())}\n")
            case .removed(let id): context.write("{\"event\":\"removed\",\"id\":\"\(id)\"}\n")
            case .allCompleted: context.write("{\"event\":\"allCompleted\"}\n")
            case .added(let info): context.write("{\"event\":\"added\",\"id\":\"\(info.id)\"}\n")
            case .indexWriteFailed(let error):
                let line = IndexWriteFailure(id: error.taskID, kind: error.kind.description, error: error.detail)
                context.write(
                    String(decoding: (try? JSONEncoder().encode(line)) ?? Data("{}".utf8), as: UTF8.self) + "\n")
            case .speed, .postProcessing, .current: break
            }
            return
        }
        switch event {
        case .stateChanged(let info, let from):
            display.message("\(info.id) \(from) -> \(info.state)  \(info.title)\n")
        case .failed(let info, let error):
            display.message("\(info.id) failed: \(error.detail)\n")
        case .completed(let info):
            display.message("\(info.id) done: \(info.location)\n")
        case .indexWriteFailed(let error):
            display.message("warning: \(error.taskID.map { "\($0): " } ?? "")\(error.detail)\n")
        default:
            break
        }
    }

    /// The running tasks' progress, a line each, labelled by title.
    func tick(_ tasks: [DownloadTaskInfo]) {
        guard !json else { return }
        let running = tasks.filter { $0.state == .running }
        guard !running.isEmpty else { return }
        display.update(
            running.map { task in
                if let recording = task.recording {
                    // A recording ends with its duration, whatever the bytes.
                    let recorded = task.recordedSeconds ?? 0
                    return ProgressLine(
                        label: task.title, fraction: task.progress, bytes: task.bytesDone, totalBytes: nil,
                        bytesPerSecond: task.bytesPerSecond > 0 ? task.bytesPerSecond : nil,
                        secondsRemaining: max(0, recording.duration - recorded))
                }
                let left =
                    task.bytesExpected.map { total in
                        task.bytesPerSecond > 0 ? Double(max(total - task.bytesDone, 0)) / task.bytesPerSecond : nil
                    } ?? nil
                return ProgressLine(
                    label: task.title, fraction: task.bytesExpected == nil ? nil : task.progress, bytes: task.bytesDone,
                    totalBytes: task.bytesExpected, bytesPerSecond: task.bytesPerSecond > 0 ? task.bytesPerSecond : nil,
                    secondsRemaining: left)
            })
    }

    /// Ends the progress lines before the summary.
    func finish() {
        if !json { display.finish() }
    }
}

/// The JSON line of an `indexWriteFailed` event.
private struct IndexWriteFailure: Encodable {
    var event = "indexWriteFailed"
    var id: String?
    var kind: String
    var error: String
}
