import Foundation
import StreamKitCore
import StreamKitHTTPClient

/// What ``DownloadManager/repair(directory:)`` found and did.
public struct DownloadRepairReport: Hashable, Sendable {
    /// Where the old database went (with its `-wal` and `-shm` beside it), or `nil` when there was
    /// none.
    public var keptAside: String?
    /// The tasks rebuilt as `success`: finished packages and files.
    public var succeeded: [String] = []
    /// The tasks rebuilt as `stopped`, resuming from their bytes when started.
    public var stopped: [String] = []
    /// Folders of the library with nothing to rebuild a task from, and why.
    public var skipped: [String] = []
}

/// The records that let a damaged index be rebuilt from the downloads on disk: the request of each
/// file task in its folder, and a partial file's range set on the file itself.
enum TaskRecords {
    /// The request of a file task, in the task's own folder.
    static let requestName = ".streamkit-task.json"
    /// The range set of a partial file, as an extended attribute of that file.
    static let rangesAttribute = "user.streamkit.ranges"

    private struct Ranges: Codable {
        var length: Int64?
        var validator: String?
        var done: ByteRangeSet
    }

    static func writeRequest(_ request: DownloadRequest, folder: URL) {
        guard let data = try? JSONEncoder().encode(request) else { return }
        try? AtomicFile.write(data, to: folder.appendingPathComponent(requestName).path, temporarySuffix: ".tmp")
    }

    static func request(folder: URL) -> DownloadRequest? {
        guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(requestName).path) else {
            return nil
        }
        return try? JSONDecoder().decode(DownloadRequest.self, from: data)
    }

    /// Records `state` on the partial file; where the file system keeps no user attributes, a
    /// repair finds none and fetches the file again.
    static func writeRanges(_ state: FileResumeState, partial: String) {
        let record = Ranges(
            length: state.length, validator: state.validator.map(DownloadIndex.validatorText), done: state.done)
        guard let data = try? JSONEncoder().encode(record) else { return }
        _ = ExtendedAttribute.write(Array(data), name: rangesAttribute, path: partial)
    }

    static func ranges(partial: String) -> FileResumeState? {
        guard case .value(let bytes) = ExtendedAttribute.read(name: rangesAttribute, path: partial),
            let record = try? JSONDecoder().decode(Ranges.self, from: Data(bytes))
        else { return nil }
        return FileResumeState(
            length: record.length, validator: record.validator.flatMap(DownloadIndex.validator), done: record.done)
    }
}

extension DownloadManager {
    /// Rebuilds the queue of `directory` from the downloads on disk, for an index that is damaged
    /// (``DownloadManagerError/Kind/damagedIndex``). The old `queue.sqlite` is kept aside as
    /// `queue-damaged-DATE.sqlite`; every package in `library/` comes back from its
    /// `package.json` (`success` when complete, else `stopped`), and every file task from the
    /// request kept in its folder (`success` when the file is there, else `stopped` with the
    /// bytes its partial file records). Tasks never planned, and downloads made outside the
    /// library, are not on disk to rebuild from.
    ///
    /// - Throws: ``DownloadManagerError``: `directoryLocked` while a manager uses the queue.
    public static func repair(directory: URL) async throws(DownloadManagerError) -> DownloadRepairReport {
        var report = DownloadRepairReport()
        let lock = try DirectoryLock(directory: directory)
        let index = directory.appendingPathComponent("queue.sqlite").path
        if FileManager.default.fileExists(atPath: index) {
            let stamp = ISO8601DateFormatter().string(from: Date()).filter { $0.isNumber }
            let aside = directory.appendingPathComponent("queue-damaged-\(stamp).sqlite").path
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: index + suffix) {
                guard rename(index + suffix, aside + suffix) == 0 else {
                    lock.release()
                    throw DownloadManagerError(
                        .fileSystem, "cannot move \(index + suffix) aside: \(String(cString: strerror(errno)))")
                }
            }
            report.keptAside = aside
        }
        lock.release()
        let manager = try await DownloadManager(configuration: DownloadManagerConfiguration(directory: directory))
        let library = await manager.downloadDirectory
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: library.path)) ?? []).sorted()
        for name in folders where !name.hasPrefix(".") {
            let folder = library.appendingPathComponent(name, isDirectory: true)
            do {
                switch try await manager.restore(folder: folder) {
                case .success?: report.succeeded.append(name)
                case _?: report.stopped.append(name)
                case nil: report.skipped.append("\(name): no package.json and no task record")
                }
            } catch {
                report.skipped.append("\(name): \(error.detail)")
            }
        }
        await manager.removeSecretsOfGoneTasks()
        await manager.close()
        return report
    }

    /// Adds back the task whose download is in `folder`, as it stands on disk.
    ///
    /// - Returns: The task's state, or `nil` when nothing in the folder says what it was.
    private func restore(folder: URL) throws(DownloadManagerError) -> DownloadState? {
        let id = folder.lastPathComponent
        if let manifest = try? PackageManifest.load(from: folder) {
            // A package records no headers: those of a task with credentials are in its secrets file.
            let request = withSecrets(
                DownloadRequest(
                    url: manifest.source, kind: manifest.sourceKind == PackageManifest.dashKind ? .dash : .hls,
                    selection: manifest.selection, decrypt: manifest.decrypt),
                id: id)
            guard request.taskID(salt: idSalt) == id else {
                throw DownloadManagerError(
                    .invalidArgument, "its package.json is for task \(request.taskID(salt: idSalt))")
            }
            let bytes = Self.byteCount(at: folder.path)
            return try restore(
                request, as: manifest.status == .complete ? .success : .stopped, bytesDone: bytes,
                bytesExpected: manifest.status == .complete ? bytes : nil, fileState: nil)
        }
        guard let record = TaskRecords.request(folder: folder), case let request = withSecrets(record, id: id),
            request.kind == .file,
            request.taskID(salt: idSalt) == id
        else {
            return nil
        }
        let file = folder.appendingPathComponent(Self.fileName(fromURL: request.url)).path
        if let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber {
            return try restore(
                request, as: .success, bytesDone: size.int64Value, bytesExpected: size.int64Value, fileState: nil)
        }
        let partial = file + ".streamkit-partial"
        let state = TaskRecords.ranges(partial: partial) ?? FileResumeState()
        return try restore(
            request, as: .stopped, bytesDone: state.done.byteCount, bytesExpected: state.length, fileState: state)
    }

    private func restore(
        _ request: DownloadRequest, as state: DownloadState, bytesDone: Int64, bytesExpected: Int64?,
        fileState: FileResumeState?
    ) throws(DownloadManagerError) -> DownloadState {
        var info = try add(request, autoStart: false, makesFolder: false)
        info.state = state
        info.bytesDone = bytesDone
        info.bytesExpected = bytesExpected
        if let bytesExpected, bytesExpected > 0 { info.progress = min(1, Double(bytesDone) / Double(bytesExpected)) }
        if state == .success {
            info.progress = 1
            info.postProcessingProgress = 1
            info.finishedAt = Date()
        }
        tasks[info.id] = info
        if let fileState {
            try index.saveFileState(fileState, for: info)
        } else {
            try index.update(info)
        }
        return state
    }
}
