/// Runs a recording task of a ``DownloadManager``: the configured ``LiveRecorder`` on the task's
/// file, run again as ``DownloadFailurePolicy`` decides after a failure or a stream that ended
/// before the duration (each run continues the file). Media recorded ends a streak of failures.
struct RecordingTaskRunner: Sendable {
    let info: DownloadTaskInfo
    let recorder: any LiveRecorder
    let policy: DownloadFailurePolicy

    /// Records until the file holds the task's duration.
    ///
    /// - Parameter progress: Where the seconds and bytes go.
    /// - Throws: ``DownloadManagerError`` when the task fails, `CancellationError` when cancelled.
    func run(progress: ProgressGate.Sink) async throws {
        guard let job = info.recordingJob else {
            throw DownloadManagerError(.invalidArgument, "the task has no recording settings", taskID: info.id)
        }
        var streak = FailureStreak()
        var reached = info.recordedSeconds ?? 0
        while true {
            let report = { @Sendable (value: LiveRecordingProgress) in
                progress.report(
                    done: value.bytes, expected: nil, fraction: min(1, value.seconds / job.duration), speed: nil,
                    seconds: value.seconds)
            }
            let failure: DownloadFailure
            let cause: String
            do {
                switch try await recorder.record(job, progress: report) {
                case .durationReached(let last):
                    progress.report(
                        done: last.bytes, expected: last.bytes, fraction: 1, speed: nil, seconds: last.seconds,
                        final: true)
                    return
                case .endedEarly(let last, let reason):
                    report(last)
                    // More media than any run before ends the streak, as bytes do for downloads.
                    streak.progressed(to: Int64(last.seconds * 1_000))
                    reached = max(reached, last.seconds)
                    failure = .transient
                    cause = "\(reason) after \(Self.clock(last.seconds)) of \(Self.clock(job.duration))"
                }
            } catch let error as LiveRecordingError {
                streak.progressed(to: Int64(reached * 1_000))
                failure = error.isTransient ? .transient : .permanent(.transfer)
                cause = error.description
            } catch {
                throw Task.isCancelled ? CancellationError() : error
            }
            if Task.isCancelled { throw CancellationError() }
            // Waiting for the host is not reached: a recording's failures are never `unreachable`
            // (the host probe speaks HTTP).
            try await policy.decide(failure, streak: &streak).carryOut(taskID: info.id, unreachable: .transfer) { _ in
                "recording \(info.url): \(cause)"
            }
        }
    }

    /// `seconds` as `H:MM:SS` (or `M:SS`).
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }
}

extension DownloadTaskInfo {
    /// The FLV file of a recording task, in its folder: the stream's name with `.flv`.
    var recordingFile: String {
        let name = DownloadManager.fileName(fromURL: url)
        return location + "/" + (name == "download" ? "recording" : name) + ".flv"
    }

    /// What a ``LiveRecorder`` gets for this task; `nil` for a task that is not a recording.
    var recordingJob: LiveRecordingJob? {
        guard kind == .rtmp, let recording else { return nil }
        return LiveRecordingJob(
            taskID: id, url: url, file: recordingFile, folder: location, hlsPackage: recording.hls,
            duration: recording.duration, idleTimeout: recording.idleTimeout)
    }
}
