import Foundation
import StreamKitCore
import StreamKitHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One change to a queue, as a value: what `streamkit queue add/start/stop/remove/retry` ask. A
/// manager performs it directly (``DownloadManager/perform(_:)``), or, when another process runs
/// the queue, it is posted to that process through the index (``DownloadQueueRemote``).
public enum DownloadQueueCommand: Hashable, Sendable, Codable {
    /// Adds a task; `autoStart` overrides the manager's setting when not `nil`.
    case add(DownloadRequest, autoStart: Bool?)
    /// Starts one task, or all with `nil`.
    case start(String?)
    /// Stops one task, or all with `nil`.
    case stop(String?)
    /// Retries a failed task.
    case retry(String)
    /// Removes one task and its files, or only the task with `keepFiles`.
    case remove(String, keepFiles: Bool = false)
    /// Gives a task a new title.
    case setTitle(String, title: String)
    /// Removes every unfinished task.
    case removeUnfinished
    /// Changes the settings given (the others stay); answers with the settings after it.
    case configure(DownloadQueueSettings)
}

/// A queue's settings, as `streamkit queue config` shows and sets them; `nil` in a change means
/// "leave as it is".
public struct DownloadQueueSettings: Hashable, Sendable, Codable {
    /// Where new tasks are stored.
    public var downloadDirectory: String?
    /// Tasks at once, 1...16.
    public var maximumConcurrentDownloads: Int?
    /// Whether added tasks start at once.
    public var autoStart: Bool?
    /// The most bytes a second for all tasks together; 0 in a change removes the limit.
    public var bandwidthLimit: Int64?
    /// Whether tasks may run while the route to their origin is cellular.
    public var allowsCellularAccess: Bool?
    /// The free space a task's file system must keep for it to start; in a change, a negative
    /// value goes back to the default (the smaller of 256 MiB and 1% of the file system).
    public var freeSpaceFloor: Int64?

    /// Creates settings (or a change to them).
    public init(
        downloadDirectory: String? = nil, maximumConcurrentDownloads: Int? = nil, autoStart: Bool? = nil,
        bandwidthLimit: Int64? = nil, allowsCellularAccess: Bool? = nil, freeSpaceFloor: Int64? = nil
    ) {
        self.downloadDirectory = downloadDirectory
        self.maximumConcurrentDownloads = maximumConcurrentDownloads
        self.autoStart = autoStart
        self.bandwidthLimit = bandwidthLimit
        self.allowsCellularAccess = allowsCellularAccess
        self.freeSpaceFloor = freeSpaceFloor
    }
}

/// The outcome of a ``DownloadQueueCommand``: the tasks concerned, or the error.
public struct DownloadQueueAnswer: Hashable, Sendable, Codable {
    /// The tasks the command concerned, after it (none for a removal).
    public var tasks: [DownloadTaskInfo]
    /// The ids removed.
    public var removed: [String]
    /// The error's kind and words, when it failed.
    public var errorKind: String?
    /// What failed.
    public var error: String?
    /// The settings, for `configure`.
    public var settings: DownloadQueueSettings?

    /// Creates an answer.
    public init(
        tasks: [DownloadTaskInfo] = [], removed: [String] = [], errorKind: String? = nil, error: String? = nil,
        settings: DownloadQueueSettings? = nil
    ) {
        self.tasks = tasks
        self.removed = removed
        self.errorKind = errorKind
        self.error = error
        self.settings = settings
    }
}

extension DownloadRequest: Codable {
    private enum CodingKeys: String, CodingKey {
        case url, kind, selection, decrypt, fileType, title, thumbnailURL, connections, headers, location, exportPath
        case recording, subtitleFormat, keepEncrypted
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var headers = HTTPHeaders()
        for line in try container.decode([String].self, forKey: .headers) {
            if let colon = line.firstIndex(of: ":") {
                headers.add(
                    String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
        }
        self.init(
            url: try container.decode(String.self, forKey: .url),
            kind: try container.decode(DownloadKind.self, forKey: .kind),
            selection: try container.decode(HLSSelection.self, forKey: .selection),
            decrypt: try container.decode(Bool.self, forKey: .decrypt),
            fileType: try container.decode(DownloadFileType.self, forKey: .fileType),
            title: try container.decodeIfPresent(String.self, forKey: .title),
            thumbnailURL: try container.decodeIfPresent(String.self, forKey: .thumbnailURL),
            connections: try container.decodeIfPresent(Int.self, forKey: .connections), headers: headers,
            location: try container.decodeIfPresent(String.self, forKey: .location),
            exportPath: try container.decodeIfPresent(String.self, forKey: .exportPath))
        recording = try container.decodeIfPresent(LiveRecordingSettings.self, forKey: .recording)
        subtitleFormat = try container.decodeIfPresent(SubtitleFormat.self, forKey: .subtitleFormat)
        keepEncrypted = try container.decodeIfPresent(Bool.self, forKey: .keepEncrypted) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encode(kind, forKey: .kind)
        try container.encode(selection, forKey: .selection)
        try container.encode(decrypt, forKey: .decrypt)
        try container.encode(fileType, forKey: .fileType)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(thumbnailURL, forKey: .thumbnailURL)
        try container.encodeIfPresent(connections, forKey: .connections)
        try container.encode(headers.map { "\($0.name): \($0.value)" }, forKey: .headers)
        try container.encodeIfPresent(location, forKey: .location)
        try container.encodeIfPresent(exportPath, forKey: .exportPath)
        try container.encodeIfPresent(recording, forKey: .recording)
        try container.encodeIfPresent(subtitleFormat, forKey: .subtitleFormat)
        if keepEncrypted { try container.encode(true, forKey: .keepEncrypted) }
    }
}

/// Talks to the process that runs a queue (holds its lock) through the index: a command is a
/// row in its `requests` table, which the running manager performs within a few hundred
/// milliseconds and answers in the same row. Reading the queue needs no lock at all.
public enum DownloadQueueRemote {
    /// Every task of the queue in `directory`, read from its index (no lock needed: SQLite's WAL
    /// lets a reader in while the manager writes).
    public static func tasks(directory: URL) throws(DownloadManagerError) -> [DownloadTaskInfo] {
        let path = directory.appendingPathComponent("queue.sqlite").path
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        do {
            return try DownloadIndex(path: path, createSchema: false).tasks()
        } catch  where error.detail.contains("no such table") {
            return []  // a manager is creating the index this moment
        }
    }

    /// One task of the queue in `directory`, read from its index; `nil` when there is none.
    public static func task(directory: URL, id: String) throws(DownloadManagerError) -> DownloadTaskInfo? {
        let path = directory.appendingPathComponent("queue.sqlite").path
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try DownloadIndex(path: path, createSchema: false).task(id)
        } catch  where error.detail.contains("no such table") {
            return nil  // a manager is creating the index this moment
        }
    }

    /// The settings of the queue in `directory`, read from its index (no lock, nothing opened for
    /// writing); the defaults when there is no queue yet.
    public static func settings(directory: URL) throws(DownloadManagerError) -> DownloadQueueSettings {
        let path = directory.appendingPathComponent("queue.sqlite").path
        var settings = DownloadQueueSettings(maximumConcurrentDownloads: 1, autoStart: false)
        guard FileManager.default.fileExists(atPath: path) else { return settings }
        do {
            let index = try DownloadIndex(path: path, createSchema: false)
            if let value = try index.setting("maxConcurrent"), let count = Int(value) {
                settings.maximumConcurrentDownloads = count
            }
            settings.autoStart = try index.setting("autoStart") == "1"
        } catch  where error.detail.contains("no such table") {
            // A manager is creating the index this moment: its defaults.
        }
        return settings
    }

    /// A page of the queue in `directory`: at most `limit` tasks after the first `offset`, in queue
    /// order or, with `unfinishedFirst`, the tasks not yet succeeded first (in queue order), then
    /// the succeeded ones, newest first; with how many tasks are in each state.
    public static func page(
        directory: URL, offset: Int, limit: Int, unfinishedFirst: Bool
    ) throws(DownloadManagerError) -> (tasks: [DownloadTaskInfo], states: [DownloadState: Int]) {
        let path = directory.appendingPathComponent("queue.sqlite").path
        guard FileManager.default.fileExists(atPath: path) else { return ([], [:]) }
        do {
            // Two reads, not one snapshot: a task that changes state in between is counted in the new one.
            let index = try DownloadIndex(path: path, createSchema: false)
            return (
                try index.tasks(offset: offset, limit: limit, unfinishedFirst: unfinishedFirst), try index.stateCounts()
            )
        } catch  where error.detail.contains("no such table") {
            return ([], [:])  // a manager is creating the index this moment
        }
    }

    /// Whether a manager holds the queue in `directory` now.
    public static func isRunning(directory: URL) -> Bool { DirectoryLock.isHeld(directory: directory) }

    /// Posts `command` to the manager running the queue in `directory` and waits for its answer.
    ///
    /// - Throws: ``DownloadManagerError`` `noAnswer` when none comes within `timeout`.
    public static func send(
        _ command: DownloadQueueCommand, directory: URL, timeout: Duration = .seconds(30)
    ) async throws -> DownloadQueueAnswer {
        // The request row would hold the URL before the running manager refuses it.
        if case .add(let request, _) = command, URLUserInfo.isPresent(in: request.url) {
            throw DownloadManagerError(.invalidArgument, "\(URLUserInfo.refusal); send an Authorization header instead")
        }
        // SQLite waits for the running manager's lock by sleeping: not on a cooperative thread.
        let path = directory.appendingPathComponent("queue.sqlite").path
        return try await offCooperativePool {
            Result {
                let (posted, secretsOf) = try TaskSecrets.beforePosting(command, directory: directory)
                do {
                    let answer = try sendBlocking(posted, path: path, directory: directory, timeout: timeout)
                    if let secretsOf, answer.error != nil { TaskSecrets.remove(directory: directory, id: secretsOf) }
                    return answer
                } catch {
                    if let secretsOf { TaskSecrets.remove(directory: directory, id: secretsOf) }
                    throw error
                }
            }
        }.get()
    }

    private static func sendBlocking(
        _ command: DownloadQueueCommand, path: String, directory: URL, timeout: Duration
    ) throws -> DownloadQueueAnswer {
        let index = try DownloadIndex(path: path)
        let argument = String(decoding: try JSONEncoder().encode(command), as: UTF8.self)
        let seq: Int64
        do {
            try index.database.query(
                "INSERT INTO requests(action, argument) VALUES('command', ?)", [.text(argument)])
            seq = index.database.lastInsertRowID
        } catch {
            throw DownloadManagerError(.database, "\(error)")
        }
        let deadline = ContinuousClock.now + timeout
        var unheld = 0
        while ContinuousClock.now < deadline {
            // The runner looks for commands every 50 ms.
            usleep(20_000)
            // Nobody runs the queue (it exited meanwhile): no answer will come.
            unheld = DirectoryLock.isHeld(directory: directory) ? 0 : unheld + 1
            if unheld >= 50 {
                _ = try? index.database.query("DELETE FROM requests WHERE seq = ?", [.integer(seq)])
                throw DownloadManagerError(.noAnswer, "no process runs the queue in \(directory.path) any more")
            }
            let rows = try index.database.query(
                "SELECT answer FROM requests WHERE seq = ? AND done = 1", [.integer(seq)])
            if let answer = rows.first?.text("answer") {
                _ = try? index.database.query("DELETE FROM requests WHERE seq = ?", [.integer(seq)])
                return try JSONDecoder().decode(DownloadQueueAnswer.self, from: Data(answer.utf8))
            }
        }
        _ = try? index.database.query("DELETE FROM requests WHERE seq = ?", [.integer(seq)])
        throw DownloadManagerError(
            .noAnswer, "the process running the queue in \(directory.path) did not answer within \(timeout)")
    }
}

extension DownloadManager {
    /// Performs `command`, turning a failure into the answer's error.
    public func perform(_ command: DownloadQueueCommand) async -> DownloadQueueAnswer {
        do {
            switch command {
            case .add(let request, let autoStart):
                return DownloadQueueAnswer(tasks: [try add(request, autoStart: autoStart)])
            case .start(let id):
                if let id {
                    try start(id)
                    return DownloadQueueAnswer(tasks: info(id).map { [$0] } ?? [])
                }
                try startAll()
                return DownloadQueueAnswer(tasks: allTasks())
            case .stop(let id):
                if let id {
                    try await stop(id)
                    return DownloadQueueAnswer(tasks: info(id).map { [$0] } ?? [])
                }
                try await stopAll()
                return DownloadQueueAnswer(tasks: allTasks())
            case .retry(let id):
                try retry(id)
                return DownloadQueueAnswer(tasks: info(id).map { [$0] } ?? [])
            case .remove(let id, let keepFiles):
                try await remove(id, keepingFiles: keepFiles)
                return DownloadQueueAnswer(removed: [id])
            case .setTitle(let id, let title):
                try setTitle(id, title: title)
                return DownloadQueueAnswer(tasks: info(id).map { [$0] } ?? [])
            case .removeUnfinished:
                return DownloadQueueAnswer(removed: try await removeUnfinished())
            case .configure(let change):
                try await configure(change)
                return DownloadQueueAnswer(settings: settings)
            }
        } catch {
            return DownloadQueueAnswer(errorKind: error.kind.description, error: error.description)
        }
    }

    /// Performs the commands other processes posted through ``DownloadQueueRemote``, in order, and
    /// answers them. The process that runs the queue (`queue run`) calls this every 50 ms.
    public func serveRemoteCommands() async {
        guard let pending = try? index.pendingRequests(), !pending.isEmpty else { return }
        for request in pending {
            let answer: DownloadQueueAnswer
            if let command = try? JSONDecoder().decode(DownloadQueueCommand.self, from: Data(request.argument.utf8)) {
                answer = await perform(command)
            } else {
                answer = DownloadQueueAnswer(
                    errorKind: "invalid argument", error: "unreadable command: \(request.argument)")
            }
            let text = (try? JSONEncoder().encode(answer)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            try? index.answer(request.seq, text)
        }
    }
}
