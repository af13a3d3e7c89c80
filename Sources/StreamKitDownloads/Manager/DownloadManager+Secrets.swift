import Foundation
import StreamKitCore
import StreamKitHTTP

/// Credentials in request headers: kept out of the index, in each task's secrets file
/// (``TaskSecrets``).
extension DownloadManager {
    /// The headers `info`'s requests carry, credentials included.
    ///
    /// - Throws: `fileSystem` when the index hides a credential whose secrets file is gone.
    nonisolated func requestHeaders(of info: DownloadTaskInfo) throws(DownloadManagerError) -> HTTPHeaders {
        TaskSecrets.headers(try TaskSecrets.requestLines(stored: info.headers, directory: directory, id: info.id))
    }

    /// The user keys of HLS task `id` (none when it has no secrets file).
    nonisolated func userKeys(ofTask id: String) -> HLSUserKeys {
        TaskSecrets.readKeys(directory: directory, id: id)
    }

    /// The header lines of a new task `id` as the index stores them; credentials among `lines`,
    /// and the task's user keys, go to the task's secrets file first.
    func storedHeaders(
        _ lines: [String], keys: HLSUserKeys = HLSUserKeys(), id: String
    ) throws(DownloadManagerError) -> [String] {
        guard TaskSecrets.holdsSecrets(lines) || !keys.isEmpty else { return lines }
        try TaskSecrets.write(lines, keys: keys, directory: directory, id: id)
        return TaskSecrets.masked(lines)
    }

    /// `request` with its credentials hidden, as a file task's record keeps it.
    static func recorded(_ request: DownloadRequest) -> DownloadRequest {
        var copy = request
        copy.headers = TaskSecrets.headers(TaskSecrets.masked(request.headers.map { "\($0.name): \($0.value)" }))
        return copy
    }

    /// `request` rebuilt from a record, with the credentials of task `id` from its secrets file.
    func withSecrets(_ request: DownloadRequest, id: String) -> DownloadRequest {
        guard let lines = TaskSecrets.read(directory: directory, id: id) else { return request }
        var copy = request
        copy.headers = TaskSecrets.headers(lines)
        return copy
    }

    /// The setting that says every file task's record was checked for credentials once: records
    /// are written without them since, so later openings need not read each one again.
    static let recordsCheckedSetting = "records-without-credentials"

    /// Moves credentials that an older version stored in clear (in the index and in file tasks'
    /// records: a record is read when `records` asks for every one, or when the task's row held
    /// credentials) to secrets files; returns `info` as the index then holds it.
    func moveSecretsOut(_ info: DownloadTaskInfo, records: Bool) throws(DownloadManagerError) -> DownloadTaskInfo {
        var info = info
        let rowHeldSecrets = TaskSecrets.holdsSecrets(info.headers)
        if rowHeldSecrets {
            try TaskSecrets.write(
                info.headers, keys: TaskSecrets.readKeys(directory: directory, id: info.id), directory: directory,
                id: info.id)
            info.headers = TaskSecrets.masked(info.headers)
            try index.setHeaders(info.headers, id: info.id)
        }
        if records || rowHeldSecrets, info.kind == .file, info.ownsFolder {
            let folder = URL(fileURLWithPath: info.location).deletingLastPathComponent()
            if let request = TaskRecords.request(folder: folder),
                TaskSecrets.holdsSecrets(request.headers.map { "\($0.name): \($0.value)" })
            {
                TaskRecords.writeRequest(Self.recorded(request), folder: folder)
            }
        }
        return info
    }
}

extension DownloadManager {
    /// Deletes the secrets files of tasks not in the queue (after a repair, those of tasks that
    /// could not be rebuilt).
    func removeSecretsOfGoneTasks() {
        let folder = directory.appendingPathComponent(TaskSecrets.folderName)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        where name.hasSuffix(".json") && tasks[String(name.dropLast(5))] == nil {
            unlink(folder.appendingPathComponent(name).path)
        }
    }
}
