import Foundation

/// How a task run in the foreground ended (``DownloadForegroundTask/finish(_:)``).
public enum DownloadForegroundOutcome: Hashable, Sendable {
    /// Every byte is in place; `bytes` is the final size when known.
    case succeeded(bytes: Int64?)
    /// It failed; the words go to ``DownloadTaskInfo/lastError``.
    case failed(String)
    /// It was stopped (Ctrl-C); what it fetched is kept and the task resumes when started again.
    case stopped
}

extension DownloadManager {
    /// Takes a task to run in this process with an engine of the caller's (`streamkit download`
    /// draws its own progress and prints its own result): the task of `request` (the same source,
    /// selection and ``DownloadRequest/location``) is found, or added, and moved to `running`, so
    /// that the queue, `queue list`, the served page and `/api/tasks` show it while it runs.
    ///
    /// A stopped, failed or ready task is resumed (the same id: nothing is added twice). A task
    /// that succeeded is left as it is (``DownloadForegroundTask/wasFinished``): the caller may run
    /// its engine again, which finds everything in place, and the task stays `success`.
    ///
    /// Use it on a manager that does not run tasks itself (`runsTasks: false`), so that no
    /// runner of the manager takes the same task.
    ///
    /// - Throws: ``DownloadManagerError``: `invalidArgument` for a URL that is not http(s),
    ///   `illegalTransition` for a task being removed, `database` when the index cannot be written.
    public func beginForeground(_ request: DownloadRequest) throws(DownloadManagerError) -> DownloadForegroundTask {
        let id = request.taskID(salt: idSalt)
        if tasks[id] == nil { _ = try add(request, autoStart: false, makesFolder: false) }
        guard let info = tasks[id] else { throw .unknownTask(id) }
        switch info.state {
        case .success:
            return DownloadForegroundTask(manager: self, info: info, wasFinished: true)
        case .running:
            break
        case .ready:
            try move(id, to: .running)
        case .stopped, .failed:
            try move(id, to: .ready, clearingError: true)
            try move(id, to: .running)
        default:
            throw .illegalTransition(from: info.state, to: .running, taskID: id)
        }
        return DownloadForegroundTask(manager: self, info: tasks[id] ?? info, wasFinished: false)
    }

    /// Records how a foreground task ended.
    func endForeground(_ id: String, _ outcome: DownloadForegroundOutcome) {
        guard let info = tasks[id], info.state == .running else { return }
        switch outcome {
        case .succeeded(let bytes):
            if let bytes { reportProgress(id, done: bytes, expected: bytes, fraction: 1, speed: 0) }
            finished(id, error: nil)
        case .failed(let words):
            finished(id, error: DownloadManagerError(.transfer, words, taskID: id))
        case .stopped:
            try? move(id, to: .stopping)
            finished(id, error: CancellationError())
        }
    }
}

/// A task a process runs itself (``DownloadManager/beginForeground(_:)``): the caller's engine
/// reports its progress here, which the manager saves (at most every
/// ``DownloadManagerConfiguration/persistInterval``) for other processes to read, then says how
/// it ended.
public final class DownloadForegroundTask: Sendable {
    /// The task as it was taken (its id, location and state).
    public let info: DownloadTaskInfo
    /// Whether the task had succeeded already; its state is then left as it is.
    public let wasFinished: Bool
    private let manager: DownloadManager
    private let gate: ProgressGate
    private let sink: AsyncStream<ProgressGate.Report>.Continuation
    private let forwarder: Task<Void, Never>

    init(manager: DownloadManager, info: DownloadTaskInfo, wasFinished: Bool) {
        self.manager = manager
        self.info = info
        self.wasFinished = wasFinished
        gate = ProgressGate(interval: manager.configuration.progressInterval)
        let (reports, sink) = AsyncStream.makeStream(of: ProgressGate.Report.self, bufferingPolicy: .bufferingNewest(1))
        self.sink = sink
        let id = info.id
        forwarder = Task.detached {
            for await report in reports {
                await manager.reportProgress(
                    id, done: report.done, expected: report.expected, fraction: report.fraction, speed: report.speed)
            }
        }
    }

    /// The engine's progress: bytes in place, the (estimated) total, the fraction done when the
    /// engine knows it better than the bytes, the speed when it measures one. Cheap; call it as
    /// often as the engine reports.
    public func progress(done: Int64, expected: Int64?, fraction: Double? = nil, bytesPerSecond: Double? = nil) {
        if let report = gate.report(done: done, expected: expected, fraction: fraction, speed: bytesPerSecond) {
            sink.yield(report)
        }
    }

    /// Records how the task ended (nothing changes for a task that ``wasFinished``).
    public func finish(_ outcome: DownloadForegroundOutcome) async {
        sink.finish()
        await forwarder.value
        guard !wasFinished else { return }
        await manager.endForeground(info.id, outcome)
    }
}
