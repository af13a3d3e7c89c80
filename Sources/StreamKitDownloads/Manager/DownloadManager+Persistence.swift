import StreamKitCore

/// Saving task rows when the index may refuse: a full disk, a failing database.
extension DownloadManager {
    /// Saves `info`'s row. A refused write is not lost and stops nothing: the task goes on from
    /// its state in memory (so a failed task still lets the next one run), `indexWriteFailed`
    /// says why once, and the row is written again at the task's next change or save of
    /// progress, and when the manager closes.
    func persist(_ info: DownloadTaskInfo) {
        do {
            try index.update(info)
            unsaved.remove(info.id)
        } catch {
            refused(info.id, error)
        }
    }

    /// Saves a file task's range set with its progress. Refused, the range set is kept here and
    /// is what ``fileState(_:)`` gives, so that a retry in this process resumes from every byte
    /// on disk rather than from the last range set the index holds.
    func saveFileState(_ id: String, _ state: FileResumeState) {
        guard var info = tasks[id] else { return }
        info.bytesDone = state.done.byteCount
        info.bytesExpected = state.length
        if let length = state.length, length > 0 { info.progress = min(1, Double(info.bytesDone) / Double(length)) }
        tasks[id] = info
        lastPersist[id] = .now
        do {
            try index.saveFileState(state, for: info)
            unsavedFileStates[id] = nil
            unsaved.remove(id)
        } catch {
            unsavedFileStates[id] = state
            refused(id, error)
        }
    }

    /// The range set a file task resumes from: the newest, whether the index took it or not.
    func fileState(_ id: String) throws(DownloadManagerError) -> FileResumeState {
        if let state = unsavedFileStates[id] { return state }
        return try index.fileState(id)
    }

    /// Writes again what the index refused before.
    func persistUnsaved() {
        for (id, state) in unsavedFileStates { saveFileState(id, state) }
        for id in unsaved {
            if let info = tasks[id] { persist(info) }
        }
    }

    /// Forgets what was not saved of a task that is gone.
    func forgetUnsaved(_ id: String) {
        unsaved.remove(id)
        unsavedFileStates[id] = nil
    }

    /// Notes a refused write; the first of a run of them for a task is reported.
    private func refused(_ id: String, _ error: DownloadManagerError) {
        guard unsaved.insert(id).inserted else { return }
        emit(.indexWriteFailed(DownloadManagerError(error.kind, error.detail, taskID: id)))
    }
}
