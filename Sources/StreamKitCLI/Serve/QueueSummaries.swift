import Foundation
import StreamKitDownloads
import StreamKitMediaServer

/// The download queue of a StreamKit home as the server's page and `/api/tasks` show it.
public enum QueueSummaries {
    /// Reads the part `request` names (every task by default) of the queue's index in `home` (no
    /// lock needed; empty when there is no queue yet). An HLS task stored in `libraryRoot` gets its
    /// play path on the server as soon as its package has an `index.m3u8`: from the first
    /// completed segments on, while it still downloads.
    public static func read(
        home: URL, libraryRoot: String, request: QueueTaskRequest = QueueTaskRequest(limit: .max)
    ) throws -> QueueTaskPage {
        let library = libraryPrefix(libraryRoot)
        let (tasks, states) = try DownloadQueueRemote.page(
            directory: home, offset: request.offset, limit: request.limit, unfinishedFirst: request.unfinishedFirst)
        return QueueTaskPage(
            tasks: tasks.map { summary($0, library: library) },
            states: Dictionary(uniqueKeysWithValues: states.map { ($0.key.rawValue, $0.value) }))
    }

    /// One task as the server shows it, or `nil` when the queue has none of that id.
    public static func task(home: URL, libraryRoot: String, id: String) throws -> QueueTaskSummary? {
        try DownloadQueueRemote.task(directory: home, id: id).map { summary($0, library: libraryPrefix(libraryRoot)) }
    }

    /// `task` as the server shows it; `library` is the library's path with a final `/`.
    static func summary(_ task: DownloadTaskInfo, library: String) -> QueueTaskSummary {
        let folder = library + task.id
        // Most locations are the library's folder as the queue wrote it: no URL made for them
        // (ten thousand tasks at every request).
        let playable =
            task.kind != .file
            && (task.location == folder || URL(fileURLWithPath: task.location).standardizedFileURL.path == folder)
            && FileManager.default.fileExists(atPath: folder + "/" + MediaLibrary.entryName)
        return QueueTaskSummary(
            id: task.id, title: task.title, url: task.url, kind: task.kind.rawValue, state: task.state.rawValue,
            progress: task.progress, bytesDone: task.bytesDone, bytesExpected: task.bytesExpected,
            bytesPerSecond: task.bytesPerSecond, error: task.lastError,
            playPath: playable ? "/library/\(task.id)/\(MediaLibrary.entryName)" : nil)
    }

    static func libraryPrefix(_ libraryRoot: String) -> String {
        URL(fileURLWithPath: libraryRoot, isDirectory: true).standardizedFileURL.path + "/"
    }
}
