import Foundation
import StreamKitHTTP
import StreamKitHTTPClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a progressive file task of a ``DownloadManager``: ``RangedFileDownloader`` fetches the
/// missing bytes into `NAME.streamkit-partial`, saving its range set in the manager's index,
/// then the partial file takes the task's name. Retries and backoff happen inside the
/// downloader, by ``DownloadFailurePolicy``.
struct FileTaskRunner: Sendable {
    let info: DownloadTaskInfo
    let client: HTTPClient
    let options: RangedFileOptions
    let manager: DownloadManager
    /// The task's headers, credentials included.
    let headers: HTTPHeaders

    /// Fetches the file.
    ///
    /// - Throws: ``DownloadManagerError`` when the task fails, `CancellationError` when cancelled.
    func run(progress: ProgressGate.Sink) async throws {
        let partial = info.location + ".streamkit-partial"
        if FileManager.default.fileExists(atPath: info.location) {
            // Complete already (the rename happened, the state change did not).
            return
        }
        let initial = try await manager.fileState(info.id)
        let id = info.id
        let manager = manager
        let downloader = RangedFileDownloader(
            client: client, url: info.url, headers: headers, partialPath: partial,
            options: options, initial: initial, taskID: id,
            onProgress: { done, length in progress.report(done: done, expected: length, fraction: nil, speed: nil) },
            save: { state in
                await manager.saveFileState(id, state)
                TaskRecords.writeRanges(state, partial: partial)
            })
        _ = try await downloader.run()
        if rename(partial, info.location) != 0 {
            throw DownloadManagerError(
                .fileSystem, "cannot rename \(partial) to \(info.location): \(String(cString: strerror(errno)))",
                taskID: id)
        }
    }
}
