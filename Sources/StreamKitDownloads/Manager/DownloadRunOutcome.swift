/// How a run of a task ended, and the state that leaves the task in.
enum DownloadRunOutcome: Hashable, Sendable {
    /// Every byte is in place.
    case succeeded
    /// Stopped, removed, or the manager closed or took the slot back.
    case cancelled
    /// It failed with this error.
    case failed(DownloadManagerError)
    /// Its origin host did not answer: the task waits for it.
    case hostUnreachable(DownloadManagerError)

    /// The outcome of a run that threw `error` (`nil`: it returned).
    ///
    /// - Parameters:
    ///   - error: What the run threw.
    ///   - taskID: The task, named by an error that is not a ``DownloadManagerError``.
    init(error: (any Error)?, taskID: String) {
        guard let error else {
            self = .succeeded
            return
        }
        if error is CancellationError || (error as? DownloadManagerError)?.kind == .cancelled {
            self = .cancelled
        } else if let error = error as? DownloadManagerError, error.kind == .hostUnreachable {
            self = .hostUnreachable(error)
        } else {
            self = .failed(
                error as? DownloadManagerError ?? DownloadManagerError(.transfer, "\(error)", taskID: taskID))
        }
    }

    /// The state a task in `state` moves to now that its run ended, or `nil` when it stays: a
    /// task being stopped ends stopped whatever happened; a running one succeeds, fails, or is
    /// queued again when cancelled (its slot was taken back); any other was moved on already.
    func nextState(from state: DownloadState) -> DownloadState? {
        switch (state, self) {
        case (.stopping, _): .stopped
        case (.running, .succeeded): .success
        case (.running, .cancelled): .ready
        case (.running, .failed): .failed
        case (.running, .hostUnreachable): .waiting
        default: nil
        }
    }
}
