import Foundation
import StreamKitCore
import StreamKitDownloads

/// What the queue commands share: where the queue is, and sending it a change.
enum QueueAccess {
    static func directory(_ home: HomeOptions, _ context: CommandContext) -> URL {
        URL(fileURLWithPath: home.path(context), isDirectory: true)
    }

    /// Performs `command` on the queue: directly when no `queue run` holds it, else through it.
    static func perform(
        _ command: DownloadQueueCommand, home: HomeOptions, context: CommandContext
    ) async throws
        -> DownloadQueueAnswer
    {
        try await perform(command, directory: directory(home, context))
    }

    /// Performs `command` on the queue in `directory`: directly when no process holds it, else
    /// through the one that does.
    static func perform(_ command: DownloadQueueCommand, directory: URL) async throws -> DownloadQueueAnswer {
        do {
            let manager = try await DownloadManager(
                configuration: DownloadManagerConfiguration(directory: directory, runsTasks: false))
            let answer = await manager.perform(command)
            await manager.close()
            return answer
        } catch  where error.kind == .directoryLocked {
            return try await DownloadQueueRemote.send(command, directory: directory)
        }
    }

    /// Every task of the queue, read without its lock; an unreadable queue is an error (exit 1).
    static func tasks(_ home: HomeOptions, _ context: CommandContext) throws -> [DownloadTaskInfo] {
        do {
            return try DownloadQueueRemote.tasks(directory: directory(home, context))
        } catch {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
    }

    /// Prints the answer's tasks, or its error (exit 1).
    static func report(_ answer: DownloadQueueAnswer, json: Bool, context: CommandContext) throws {
        if let error = answer.error {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        if json {
            writeJSONLines(answer.tasks, context: context)
            for id in answer.removed { context.write("{\"removed\":\"\(id)\"}\n") }
        } else {
            for task in answer.tasks { context.write("\(task.id)  \(task.state)  \(task.title)\n") }
            for id in answer.removed { context.write("removed \(id)\n") }
        }
    }

    /// One task as a JSON object and a newline.
    static func jsonLine(_ task: DownloadTaskInfo) -> String {
        var line = JSONWriter.bytes { task.writeJSON(to: &$0) }
        line.append(UInt8(ascii: "\n"))
        return String(decoding: line, as: UTF8.self)
    }

    /// Every task as a JSON line, written in chunks of 64 KiB: ten thousand tasks are listed in a
    /// fraction of a second.
    static func writeJSONLines(_ tasks: [DownloadTaskInfo], context: CommandContext) {
        var writer = JSONWriter { chunk in context.write(String(decoding: chunk, as: UTF8.self)) }
        for task in tasks {
            task.writeJSON(to: &writer)
            writer.lineBreak()
        }
        writer.flush()
    }
}
