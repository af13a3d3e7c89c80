import Foundation
import StreamKitCore
import StreamKitHTTP
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
    /// The manager directory's, for the package id (``DownloadIDSalt``).
    let idSalt: String
    /// The task's headers, credentials included.
    let headers: HTTPHeaders
    /// The task's user keys, from its secrets file.
    let userKeys: HLSUserKeys

    /// Downloads the package, then merges its subtitles and exports it when the task asks for it.
    ///
    /// - Parameters:
    ///   - progress: Where download progress goes.
    ///   - postProcessing: Hears the export's fraction done, in steps of at most 5%.
    /// - Throws: ``DownloadManagerError`` when the task fails, `CancellationError` when cancelled.
    func run(progress: ProgressGate.Sink, postProcessing: @escaping @Sendable (Double) -> Void) async throws {
        try await download(progress: progress)
        if let cover = info.thumbnailURL {
            // Only a cover the package lacks: a task run again keeps the one it fetched. Without
            // the task's headers: the cover is often on another host, which must not get them.
            let folder = info.location
            if !PackageCover.names.contains(where: { FileManager.default.fileExists(atPath: folder + "/" + $0) }) {
                _ = await PackageCover.fetch(cover, headers: [:], client: client, into: folder)
            }
        }
        if let format = info.subtitleFormat { try await mergeSubtitles(into: format) }
        if let exportPath = info.exportPath { try await export(to: exportPath, postProcessing: postProcessing) }
    }

    /// Merges each WebVTT subtitle rendition into one file beside its folder, off the cooperative
    /// pool. A rendition that cannot be merged (segments that are not WebVTT) is left as it is,
    /// as `download --subs-format` leaves it with a warning; a file that cannot be written fails
    /// the task.
    private func mergeSubtitles(into format: SubtitleFormat) async throws {
        let directory = URL(fileURLWithPath: info.location, isDirectory: true)
        let id = info.id
        let failure = await offCooperativePool { () -> DownloadManagerError? in
            do {
                _ = try PackageSubtitles.write(in: directory, format: format)
                return nil
            } catch {
                return DownloadManagerError(
                    .fileSystem, "merging the subtitles into .\(format.rawValue): \(error)", taskID: id)
            }
        }
        if let failure { throw failure }
    }

    /// Writes the package's main rendition to `path` by concatenation, off the cooperative pool;
    /// progress is passed on each time it gains 1% (reads are at most 2.5% of the whole).
    private func export(to path: String, postProcessing: @escaping @Sendable (Double) -> Void) async throws {
        let directory = URL(fileURLWithPath: info.location, isDirectory: true)
        let (id, stop) = (info.id, StopFlag())
        let result = await withTaskCancellationHandler {
            await offCooperativePool { () -> Result<Void, DownloadManagerError>? in
                do throws(PackageExportError) {
                    let package = try HLSPackage(directory: directory)
                    let container = PackageExporter.container(of: package.main, in: package)
                    guard path.lowercased().hasSuffix("." + container.rawValue) else {
                        let name = container == .fragmentedMP4 ? "fragmented MP4" : "MPEG-TS"
                        throw PackageExportError(
                            "the segments are \(name): the queue exports to .\(container.rawValue) (`streamkit "
                                + "export` remuxes to another container with ffmpeg)")
                    }
                    var reported = 0.0
                    let report = { (value: PackageExportProgress) in
                        let fraction = value.fractionCompleted
                        guard fraction - reported >= 0.01 || (fraction == 1 && reported < 1) else { return }
                        reported = fraction
                        postProcessing(fraction)
                    }
                    try PackageExporter.concatenate(
                        package.main, of: package, to: URL(fileURLWithPath: path), progress: report, reading: report,
                        isCancelled: { stop.isSet })
                    if reported < 1 { postProcessing(1) }
                    return .success(())
                } catch {
                    if error == .cancelled { return nil }
                    return .failure(DownloadManagerError(.fileSystem, "exporting to \(path): \(error)", taskID: id))
                }
            }
        } onCancel: {
            stop.set()
        }
        guard let result, !Task.isCancelled else { throw CancellationError() }
        try result.get()
    }

    /// Downloads the package, running the downloader again as the policy decides.
    private func download(progress: ProgressGate.Sink) async throws {
        var streak = FailureStreak()
        while true {
            emptyUnplannedFolder()
            let download = HLSDownloader(client: client).start(
                info.hlsJob(retry: retry, idSalt: idSalt, headers: headers, userKeys: userKeys))
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
                try await policy.decide(failure, streak: &streak).carryOut(taskID: info.id) { kind in
                    error.description + (kind == .diskFull ? FileSystemSpace.describing(info.location) : "")
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

/// A flag set once from any thread: the export's stop request.
private final class StopFlag: Sendable {
    private let flag = Atomic(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
