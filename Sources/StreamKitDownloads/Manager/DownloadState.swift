/// The state of one task in a ``DownloadManager``: the eight states of a download, as a pure value with
/// its transition table. Every change of state goes through ``transition(to:)``, so an illegal
/// move (finishing a task that never ran, starting one being removed) is refused, not stored.
///
/// | from | to | when |
/// | --- | --- | --- |
/// | preparing | ready | added with `autoStart`, once its folder exists |
/// | preparing | stopped | added without `autoStart`; or found after a crash while being added |
/// | preparing | failed | its folder could not be made |
/// | ready | running | the scheduler gives it a slot |
/// | ready | stopped | stopped before it ran |
/// | ready | waiting | another task found its origin host not answering |
/// | running | stopping | stopped while running: transfers are being cancelled |
/// | running | success | every byte in place |
/// | running | failed | too many errors in a row with no progress, or an error that retrying cannot fix |
/// | running | ready | the process ended while it ran (crash recovery), or a slot was taken back |
/// | running | waiting | its origin host stopped answering (refused, unreachable, no such name, connect timeout) |
/// | waiting | ready | the host answers again (or the process ended while it waited) |
/// | waiting | stopped | stopped while it waited |
/// | stopping | stopped | its transfers ended, state saved |
/// | stopped | ready | started again |
/// | failed | ready | started again, or `retry` |
/// | any but removing | removing | removed: transfers are cancelled, then its files deleted |
public enum DownloadState: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// Being created: the row exists, the folder is being made.
    case preparing
    /// Queued: waits for a slot (at most ``DownloadManager/maximumConcurrentDownloads`` run).
    case ready
    /// Transferring.
    case running
    /// Waits, by itself, for its origin host to answer again: connections to it failed (refused,
    /// unreachable, no such name, timed out). ``DownloadTaskInfo/lastError`` says why; the
    /// manager tries the host with growing pauses and queues the task again when it answers.
    case waiting
    /// Asked to stop; its transfers are ending.
    case stopping
    /// Stopped; keeps what it fetched and resumes from there when started.
    case stopped
    /// Done: every byte in place.
    case success
    /// Failed; ``DownloadTaskInfo/lastError`` says why. Starting it again resumes.
    case failed
    /// Being removed with its files.
    case removing

    /// The states each state may move to.
    public static let transitions: [DownloadState: Set<DownloadState>] = [
        .preparing: [.ready, .stopped, .failed, .removing],
        .ready: [.running, .stopped, .waiting, .removing],
        .running: [.stopping, .success, .failed, .ready, .waiting, .removing],
        .waiting: [.ready, .stopped, .removing],
        .stopping: [.stopped, .removing],
        .stopped: [.ready, .removing],
        .success: [.removing],
        .failed: [.ready, .removing],
        .removing: [],
    ]

    /// Whether the table allows moving from this state to `next`.
    public func canTransition(to next: DownloadState) -> Bool {
        Self.transitions[self, default: []].contains(next)
    }

    /// The state after moving to `next`.
    ///
    /// - Throws: ``DownloadManagerError`` of kind `illegalTransition` when the table forbids it.
    public func transition(to next: DownloadState) throws(DownloadManagerError) -> DownloadState {
        guard canTransition(to: next) else { throw .illegalTransition(from: self, to: next) }
        return next
    }

    /// Whether the task is done (success) or can still change on its own.
    public var isFinished: Bool { self == .success }

    /// The state a task found in the index when a manager opens is put in: what was running comes
    /// back ready (and resumes), so does what waited for its host (tried again at once), a stop in
    /// progress is completed, an interrupted add is kept stopped.
    /// `removing` stays, and the manager completes the removal.
    public var recovered: DownloadState {
        switch self {
        case .running, .waiting: .ready
        case .stopping: .stopped
        case .preparing: .stopped
        default: self
        }
    }

    public var description: String { rawValue }
}
