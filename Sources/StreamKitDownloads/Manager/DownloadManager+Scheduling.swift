import Foundation
import StreamKitHTTPClient

/// Starting runners as ``DownloadScheduler`` says, running them, and recording how they ended.
extension DownloadManager {
    /// Starts the ready tasks the scheduler picks; a task that cannot start leaves its slot to
    /// the next one.
    func schedule() {
        guard configuration.runsTasks, queueReleased, !closed else { return }
        var skipped: Set<String> = []
        while true {
            let next = scheduler.tasksToStart(queue: queueEntries, running: Set(runners.keys), skipping: skipped)
            if next.isEmpty { return }
            for id in next where !startRunner(id) { skipped.insert(id) }
        }
    }

    /// Moves a ready task to `running` and gives it a runner; `false` when it could not start
    /// (a client that cannot be made fails the task).
    private func startRunner(_ id: String) -> Bool {
        let client: HTTPClient
        do {
            client = try activeClient()
        } catch {
            try? move(id, to: .running)
            try? fail(id, error)
            return false
        }
        if let info = tasks[id], let reason = unmetRequirement(info) {
            do {
                try waitForRequirement(id, reason)
            } catch {
                // Only a task that is no longer ready: nothing to start.
            }
            return false
        }
        do {
            try move(id, to: .running)
        } catch {
            return false
        }
        guard let snapshot = tasks[id] else { return false }
        ranSinceIdle = true
        runners[id] = Task { await self.execute(snapshot, client: client) }
        return true
    }

    /// Emits `allCompleted` when a task ended (succeeded or failed) and nothing is left to run.
    private func checkIdle() {
        guard
            DownloadScheduler.hasDrained(queue: queueEntries, hasRunners: !runners.isEmpty, ranSinceIdle: ranSinceIdle)
        else { return }
        ranSinceIdle = false
        emit(.allCompleted)
    }

    /// The runner ended, having thrown `error` (`nil`: success).
    func finished(_ id: String, error: (any Error)?) {
        runners[id] = nil
        guard let info = tasks[id] else {
            schedule()
            return
        }
        let outcome = DownloadRunOutcome(error: error, taskID: id)
        do {
            switch (outcome, outcome.nextState(from: info.state)) {
            case (_, nil):
                break
            case (.succeeded, .success?):
                var done = info
                done.progress = 1
                done.postProcessingProgress = 1
                if let expected = done.bytesExpected { done.bytesDone = expected }
                tasks[id] = done
                emit(.postProcessing(id: id, fraction: 1))
                try move(id, to: .success)
                if let info = tasks[id] { emit(.completed(info)) }
            case (.failed(let failure), .failed?):
                try fail(id, failure)
            case (.hostUnreachable(let failure), .waiting?):
                try waitForHost(id, failure)
            case (_, let next?):
                try move(id, to: next)
            }
        } catch {
            // A transition refused here would be a bug in the table; the task stays as it is.
        }
        schedule()
        let ended = tasks[id].map { $0.state == .success || $0.state == .failed } ?? false
        if ended { checkIdle() }
    }

    /// Runs `info` with the runner of its kind, its progress passed to the actor through a
    /// ``ProgressGate``, then records how the run ended.
    private nonisolated func execute(_ info: DownloadTaskInfo, client: HTTPClient) async {
        let gate = ProgressGate(interval: configuration.progressInterval)
        let (reports, sink) = AsyncStream.makeStream(of: ProgressGate.Report.self, bufferingPolicy: .bufferingNewest(4))
        let forwarder = Task {
            for await report in reports {
                await self.reportProgress(
                    info.id, done: report.done, expected: report.expected, fraction: report.fraction,
                    speed: report.speed, seconds: report.seconds)
            }
        }
        let progress = ProgressGate.Sink(gate: gate, continuation: sink)
        // Post-processing steps, every one delivered (at most about a hundred a task).
        let (steps, stepSink) = AsyncStream.makeStream(of: Double.self)
        let stepForwarder = Task {
            for await fraction in steps { await self.reportPostProcessing(info.id, fraction: fraction) }
        }
        var failure: (any Error)?
        do {
            switch info.kind {
            case .file:
                let runner = FileTaskRunner(
                    info: info, client: client, options: configuration.fileOptions, manager: self,
                    headers: try requestHeaders(of: info))
                try await runner.run(progress: progress)
            case .hls, .dash:
                let runner = HLSTaskRunner(
                    info: info, client: client, retry: configuration.hlsRetry,
                    policy: DownloadFailurePolicy(configuration.fileOptions), idSalt: idSalt,
                    headers: try requestHeaders(of: info), userKeys: userKeys(ofTask: info.id))
                try await runner.run(progress: progress, postProcessing: { stepSink.yield($0) })
            case .rtmp:
                guard let recorder = configuration.liveRecorder else {
                    throw DownloadManagerError(
                        .invalidArgument, "this process cannot record \(info.url): it has no live recorder",
                        taskID: info.id)
                }
                let runner = RecordingTaskRunner(
                    info: info, recorder: recorder, policy: DownloadFailurePolicy(configuration.fileOptions))
                try await runner.run(progress: progress)
            }
        } catch {
            failure = Task.isCancelled ? CancellationError() : error
        }
        sink.finish()
        stepSink.finish()
        await forwarder.value
        await stepForwarder.value
        await finished(info.id, error: failure)
    }
}
