/// What a ``DownloadManager`` reports, in the order it happens.
public enum DownloadEvent: Hashable, Sendable {
    /// A task as it was when the stream began: every stream opens with one for each task it
    /// concerns, in queue order, before any change.
    case current(DownloadTaskInfo)
    /// A task was added (in `preparing`; a state change follows at once).
    case added(DownloadTaskInfo)
    /// A task moved from one state to another; `info` is the task after the move.
    case stateChanged(DownloadTaskInfo, from: DownloadState)
    /// Bytes arrived: at most ten of these a second a task.
    case progress(DownloadTaskInfo)
    /// The task's receive speed, bytes a second, sent with each progress event.
    case speed(id: String, bytesPerSecond: Double)
    /// Post-processing advanced, 0...1. Sent once, with 1, when a task's output is final (the file
    /// renamed, the package's playlists written); HLS decrypts segments as they arrive, so there is
    /// no separate pass with intermediate values yet.
    case postProcessing(id: String, fraction: Double)
    /// A task succeeded.
    case completed(DownloadTaskInfo)
    /// A task failed; the error says what failed.
    case failed(DownloadTaskInfo, DownloadManagerError)
    /// Nothing is left to run: no task is ready, running or waiting for its host.
    case allCompleted
    /// A task and its files were removed.
    case removed(id: String)
    /// The queue's database refused to record a task's change (a full disk names its file
    /// system). The task goes on as the event before this one says; its row is written again at
    /// its next change and when the manager closes.
    case indexWriteFailed(DownloadManagerError)

    /// The task the event is about, or `nil` for ``allCompleted`` (and an index failure of no task).
    public var taskID: String? {
        switch self {
        case .current(let info), .added(let info), .stateChanged(let info, _), .progress(let info),
            .completed(let info), .failed(let info, _):
            info.id
        case .speed(let id, _), .postProcessing(let id, _), .removed(let id): id
        case .indexWriteFailed(let error): error.taskID
        case .allCompleted: nil
        }
    }
}

/// Closures called for a manager's events, for code written in callback style.
public struct DownloadCallbacks: Sendable {
    /// Every task is done: nothing is ready, running or waiting.
    public var allCompleted: (@Sendable () -> Void)?
    /// One task succeeded.
    public var taskCompleted: (@Sendable (DownloadTaskInfo) -> Void)?
    /// One task failed.
    public var taskFailed: (@Sendable (DownloadTaskInfo, DownloadManagerError) -> Void)?
    /// Creates callbacks.
    public init(
        allCompleted: (@Sendable () -> Void)? = nil, taskCompleted: (@Sendable (DownloadTaskInfo) -> Void)? = nil,
        taskFailed: (@Sendable (DownloadTaskInfo, DownloadManagerError) -> Void)? = nil
    ) {
        self.allCompleted = allCompleted
        self.taskCompleted = taskCompleted
        self.taskFailed = taskFailed
    }
}

/// Closures called for one task's changes.
public struct DownloadTaskCallbacks: Sendable {
    /// The state changed.
    public var stateChanged: (@Sendable (DownloadTaskInfo) -> Void)?
    /// The speed changed.
    public var speedChanged: (@Sendable (DownloadTaskInfo) -> Void)?
    /// The progress changed.
    public var progressChanged: (@Sendable (DownloadTaskInfo) -> Void)?
    /// The post-processing progress changed.
    public var postProcessingChanged: (@Sendable (DownloadTaskInfo) -> Void)?
    /// Creates callbacks.
    public init(
        stateChanged: (@Sendable (DownloadTaskInfo) -> Void)? = nil,
        speedChanged: (@Sendable (DownloadTaskInfo) -> Void)? = nil,
        progressChanged: (@Sendable (DownloadTaskInfo) -> Void)? = nil,
        postProcessingChanged: (@Sendable (DownloadTaskInfo) -> Void)? = nil
    ) {
        self.stateChanged = stateChanged
        self.speedChanged = speedChanged
        self.progressChanged = progressChanged
        self.postProcessingChanged = postProcessingChanged
    }
}
