import Foundation
import StreamKitCore
import StreamKitHTTP

/// Adding, starting, stopping and removing tasks.
extension DownloadManager {
    /// Adds a task at the end of the queue. It starts when ``autoStart`` is on (or `autoStart` says
    /// so), else it waits stopped for ``start(_:)``.
    ///
    /// - Parameters:
    ///   - request: What to download.
    ///   - autoStart: Whether it starts; ``autoStart`` when `nil`.
    ///   - callbacks: The task's closures, attached before its first state change, so that they
    ///     see every one.
    /// - Returns: The task, after its first state change.
    /// - Throws: ``DownloadManagerError``: `invalidArgument` for a URL that is not http(s) or
    ///   holds credentials (`user:password@`), `duplicateTask` when the same source and selection are queued already.
    @discardableResult
    public func add(
        _ request: DownloadRequest, autoStart: Bool? = nil, callbacks: DownloadTaskCallbacks? = nil
    ) throws(DownloadManagerError)
        -> DownloadTaskInfo
    {
        try add(request, autoStart: autoStart, makesFolder: true, callbacks: callbacks)
    }

    /// ``add(_:autoStart:callbacks:)``; `makesFolder: false` leaves the task's folder to the engine
    /// that runs it (a foreground task: a download that fails before it is planned leaves nothing).
    func add(
        _ request: DownloadRequest, autoStart: Bool?, makesFolder: Bool, callbacks: DownloadTaskCallbacks? = nil
    ) throws(DownloadManagerError)
        -> DownloadTaskInfo
    {
        try Self.checkSource(of: request)
        // The index records the URL: a password in it would be stored in clear.
        guard !URLUserInfo.isPresent(in: request.url) else {
            throw DownloadManagerError(.invalidArgument, "\(URLUserInfo.refusal); send an Authorization header instead")
        }
        if let export = request.exportPath {
            let lower = export.lowercased()
            guard request.kind.isPackage, lower.hasSuffix(".ts") || lower.hasSuffix(".mp4") else {
                throw DownloadManagerError(
                    .invalidArgument, "an export is an HLS or DASH task's .ts or .mp4 file, not '\(export)'")
            }
        }
        guard request.subtitleFormat == nil || request.kind.isPackage else {
            throw DownloadManagerError(.invalidArgument, "merged subtitles are for HLS and DASH tasks")
        }
        let id = request.taskID(salt: idSalt)
        let isRecording = request.kind == .rtmp
        if tasks[id] != nil {
            throw DownloadManagerError(.duplicateTask, "\(request.url) is in the queue already", taskID: id)
        }
        let folder = downloadDirectory.appendingPathComponent(id, isDirectory: true)
        var name = Self.fileName(fromURL: request.url)
        var location = request.kind == .file ? folder.appendingPathComponent(name).path : folder.path
        if let chosen = request.location {
            // A place the user chose: the engine makes it (and names what is wrong with it).
            location = chosen
            if request.kind == .file { name = URL(fileURLWithPath: chosen).lastPathComponent }
        }
        let headers = try storedHeaders(
            request.headers.map { "\($0.name): \($0.value)" },
            keys: request.kind.isPackage ? request.userKeys : HLSUserKeys(),
            id: id)
        var info = DownloadTaskInfo(
            id: id, queueID: 0, url: request.url, kind: request.kind,
            selection: request.kind.isPackage ? request.selection : nil, decrypt: request.decrypt,
            fileType: request.fileType, title: request.title ?? name, thumbnailURL: request.thumbnailURL,
            state: .preparing, progress: 0, bytesDone: 0, bytesExpected: nil, bytesPerSecond: 0,
            postProcessingProgress: 0, lastError: nil, createdAt: Date(), finishedAt: nil, location: location,
            connections: request.connections ?? (request.kind.isPackage ? 8 : configuration.fileOptions.connections),
            headers: headers, exportPath: request.exportPath, recording: isRecording ? request.recording : nil,
            recordedSeconds: isRecording ? 0 : nil, subtitleFormat: request.subtitleFormat,
            keepEncrypted: request.kind.isPackage && request.keepEncrypted)
        do {
            info.queueID = try index.insert(info)
        } catch {
            TaskSecrets.remove(directory: directory, id: id)
            throw error
        }
        tasks[id] = info
        if let callbacks { hub.setCallbacks(callbacks, for: id) }
        emit(.added(info))
        do {
            if makesFolder && request.location == nil {
                try PrivateFiles.createDirectory(folder.path)
                // What `repair` rebuilds a file task from (a package has its package.json).
                if request.kind == .file { TaskRecords.writeRequest(Self.recorded(request), folder: folder) }
            }
        } catch {
            try fail(
                id, DownloadManagerError(.fileSystem, "cannot create \(folder.path): \(error)"))
            return tasks[id] ?? info
        }
        try move(id, to: scheduler.stateForAddedTask(autoStart: autoStart))
        resumeQueue()
        return tasks[id] ?? info
    }

    /// Refuses a request whose URL does not fit its kind: http(s) for HLS and files, rtmp(s) with
    /// a positive duration for a recording, which has no place of the user's and no export.
    private static func checkSource(of request: DownloadRequest) throws(DownloadManagerError) {
        let scheme = request.url.prefix(while: { $0 != ":" }).lowercased()
        let hasHost = URLComponents(string: request.url)?.host?.isEmpty == false
        guard request.kind == .rtmp else {
            guard scheme == "http" || scheme == "https", hasHost else {
                let hint = scheme.hasPrefix("rtmp") ? " (an RTMP stream is recorded by a task of kind rtmp)" : ""
                throw DownloadManagerError(.invalidArgument, "not an http or https URL: '\(request.url)'" + hint)
            }
            return
        }
        guard scheme == "rtmp" || scheme == "rtmps", hasHost else {
            throw DownloadManagerError(.invalidArgument, "a recording needs an rtmp or rtmps URL, not '\(request.url)'")
        }
        guard let recording = request.recording, recording.duration > 0, recording.duration.isFinite else {
            throw DownloadManagerError(
                .invalidArgument, "a recording needs a positive duration: a queued recording must end")
        }
        guard recording.idleTimeout > 0, recording.idleTimeout.isFinite else {
            throw DownloadManagerError(.invalidArgument, "a recording's idle timeout must be positive")
        }
        guard request.location == nil, request.exportPath == nil else {
            throw DownloadManagerError(.invalidArgument, "a recording is kept in its own folder, with no export")
        }
    }

    /// Queues every stopped or failed task.
    public func startAll() throws(DownloadManagerError) {
        for info in allTasks() where info.state == .stopped || info.state == .failed {
            try move(info.id, to: .ready, clearingError: true)
        }
        resumeQueue()
    }

    /// Queues one stopped or failed task; one already ready or running is left as it is.
    ///
    /// - Throws: `unknownTask`, or `illegalTransition` for a task that succeeded or is being removed.
    public func start(_ id: String) throws(DownloadManagerError) {
        guard let info = tasks[id] else { throw .unknownTask(id) }
        if info.state == .ready || info.state == .running { return }
        try move(id, to: .ready, clearingError: true)
        resumeQueue()
    }

    /// Puts a failed task back in the queue (its error is cleared; it resumes where it stopped).
    ///
    /// - Throws: `unknownTask`, or `illegalTransition` when the task has not failed.
    public func retry(_ id: String) throws(DownloadManagerError) {
        guard let info = tasks[id] else { throw .unknownTask(id) }
        guard info.state == .failed else { throw .illegalTransition(from: info.state, to: .ready, taskID: id) }
        try start(id)
    }

    /// Stops every ready or running task; returns once running ones have stopped.
    public func stopAll() async throws(DownloadManagerError) {
        for info in allTasks() where info.state == .ready || info.state == .running {
            try await stop(info.id)
        }
    }

    /// Stops one task: a queued one at once, a running one once its transfers end (everything
    /// fetched is kept). Stopping a stopped, failed or finished task does nothing.
    public func stop(_ id: String) async throws(DownloadManagerError) {
        guard let info = tasks[id] else { throw .unknownTask(id) }
        switch info.state {
        case .ready, .waiting:
            try move(id, to: .stopped)
        case .running:
            try move(id, to: .stopping)
            runners[id]?.cancel()
            await runners[id]?.value
        case .stopping:
            await runners[id]?.value
        default:
            return
        }
    }

    /// Removes one task (whatever its state) and deletes its files, or, with `keepingFiles`,
    /// leaves them where they are: a package stays in the library, a file where it was written
    /// (an unfinished file keeps its partial name).
    public func remove(_ id: String, keepingFiles: Bool = false) async throws(DownloadManagerError) {
        guard let info = tasks[id] else { throw .unknownTask(id) }
        try move(id, to: .removing)
        if let runner = runners[id] {
            runner.cancel()
            await runner.value
        }
        if !keepingFiles { deleteFiles(of: info) }
        TaskSecrets.remove(directory: directory, id: id)
        try index.delete(id)
        tasks[id] = nil
        forgetUnsaved(id)
        hub.setCallbacks(nil, for: id)
        emit(.removed(id: id))
    }

    /// Gives a task a new title (what lists and the library page show); saved at once.
    public func setTitle(_ id: String, title: String) throws(DownloadManagerError) {
        guard var info = tasks[id] else { throw .unknownTask(id) }
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 500, !trimmed.contains(where: \.isNewline) else {
            throw DownloadManagerError(.invalidArgument, "a title is one line of 1 to 500 characters", taskID: id)
        }
        try index.setTitle(trimmed, id: id)
        info.title = trimmed
        tasks[id] = info
    }

    /// Removes every task that has not succeeded, with its files; finished ones stay.
    ///
    /// - Returns: The ids removed.
    @discardableResult
    public func removeUnfinished() async throws(DownloadManagerError) -> [String] {
        var removed: [String] = []
        for info in allTasks() where info.state != .success && info.state != .removing {
            try await remove(info.id)
            removed.append(info.id)
        }
        return removed
    }
}
