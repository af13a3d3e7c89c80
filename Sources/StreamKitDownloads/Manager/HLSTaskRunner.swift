import Foundation
import StreamKitCore
import StreamKitHTTPClient
import Synchronization

/// Runs an HLS task of a ``DownloadManager``: ``HLSDownloader`` on the task's package folder,
/// run again after a failure as ``DownloadFailurePolicy`` decides (each run resumes the
/// package). Requests are retried inside a run by `retry`.
struct HLSTaskRunner: Sendable {
    let info: DownloadTaskInfo
    let client: HTTPClient
    let retry: HTTPClientRetryPolicy
    let policy: DownloadFailurePolicy

    /// Downloads the package.
    ///
    /// - Throws: ``DownloadManagerError`` when the task fails, `CancellationError` when cancelled.
    func run(progress: ProgressGate.Sink) async throws {
        var streak = FailureStreak()
        while true {
            emptyUnplannedFolder()
            let download = HLSDownloader(client: client).start(info.hlsJob(retry: retry))
            let done = Mutex<Int64>(0)
            do {
                try await withTaskCancellationHandler {
                    var last: HLSDownloadProgress?
                    for await event in download.events {
                        guard case .progress(let value) = event else { continue }
                        done.withLock { $0 = value.bytesDone }
                        last = value
                        progress.report(
                            done: value.bytesDone, expected: value.estimatedTotalBytes,
                            fraction: value.fractionCompleted, speed: value.bytesPerSecond)
                    }
                    _ = try await download.result()
                    // The engine's last figures, which the gate may have held back as too soon
                    // after the one before: a finished task shows what it fetched.
                    if let last {
                        progress.report(
                            done: last.bytesDone, expected: last.estimatedTotalBytes,
                            fraction: last.fractionCompleted, speed: last.bytesPerSecond, final: true)
                    }
                } onCancel: {
                    download.cancel()
                }
                return
            } catch let error as HLSDownloadError {
                streak.progressed(to: done.withLock { $0 })
                let failure = DownloadFailure(error, taskCancelled: Task.isCancelled)
                switch policy.decide(failure, streak: &streak) {
                case .cancel:
                    throw CancellationError()
                case .retry(let delay):
                    try await Task.sleep(for: delay)
                case .fail(let kind, let failures):
                    let room = kind == .diskFull ? FileSystemSpace.describing(info.location) : ""
                    throw DownloadFailurePolicy.error(
                        kind, consecutiveFailures: failures, cause: error.description + room, taskID: info.id)
                case .waitForHost(let failures):
                    throw DownloadFailurePolicy.error(
                        .hostUnreachable, consecutiveFailures: failures, cause: error.description, taskID: info.id)
                }
            }
        }
    }

    /// An attempt that failed before the package was planned leaves a folder with no
    /// package.json, which the downloader refuses to reuse; the folder is the task's own.
    private func emptyUnplannedFolder() {
        let manifest = URL(fileURLWithPath: info.location).appendingPathComponent(PackageLayout.manifestName)
        guard info.ownsFolder && !FileManager.default.fileExists(atPath: manifest.path) else { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: info.location)) ?? [] {
            try? FileManager.default.removeItem(atPath: info.location + "/" + name)
        }
    }
}
