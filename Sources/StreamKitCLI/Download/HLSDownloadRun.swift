import Foundation
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

/// Runs an HLS download for `streamkit download` and draws it: progress redrawn on a terminal
/// (standard error), a plain line every 2 s otherwise, or JSON lines on standard output.
struct HLSDownloadRun {
    let context: CommandContext
    let json: Bool
    /// Whether the package is in the library (then the result names its `streamkit serve` URL).
    let inLibrary: Bool
    /// The format of the merged subtitle files, when they are asked for (`--subs-format`).
    var subtitles: SubtitleFormat? = nil

    /// Runs `job` as the queue's foreground `task`, which gets its progress and its end.
    func run(_ job: HLSDownloadJob, client: HTTPClient, task: DownloadForegroundTask) async throws {
        let reporter = HLSDownloadReporter(context: context, json: json, job: job, inLibrary: inLibrary)
        let download = HLSDownloader(client: client).start(job)
        // A live recording is finished by the first Ctrl-C and cancelled by a second; VOD stops at once.
        let monitor = InterruptMonitor { count in
            if reporter.isLive && count == 1 {
                reporter.finishing()
                download.finishRecording()
            } else {
                download.cancel()
            }
        }
        let started = ContinuousClock.now
        let events = Task {
            for await event in download.events {
                if case .progress(let progress) = event {
                    task.progress(
                        done: progress.bytesDone, expected: progress.estimatedTotalBytes,
                        fraction: progress.fractionCompleted, bytesPerSecond: progress.bytesPerSecond)
                }
                reporter.report(event)
            }
        }
        defer { monitor.stop() }
        do {
            let result = try await download.result()
            await events.value
            await client.shutdown()
            // A post-step over the complete package: the engine's playlists stay as they are.
            let merged = try subtitles.map { format throws(HLSDownloadError) in
                try PackageSubtitles.write(in: result.directory, format: format)
            }
            await task.finish(.succeeded(bytes: result.bytes))
            reporter.completed(result, elapsed: started.duration(to: .now), subtitles: merged ?? [])
            if result.status == .completeWithGaps { throw ExitCode.finishedWithGaps }
        } catch let error as HLSDownloadError {
            await events.value
            await client.shutdown()
            if error.kind == .cancelled {
                await task.finish(.stopped)
                reporter.interrupted()
                throw ExitCode.interrupted
            }
            await task.finish(.failed(error.description))
            reporter.failed(error)
            // A section the stream does not have is a command line that does not fit it.
            throw error.kind == .invalidSegmentFilter ? ExitCode.usage : ExitCode.failure
        }
    }
}

/// Draws an HLS download's events.
final class HLSDownloadReporter: Sendable {
    private let context: CommandContext
    private let json: Bool
    private let job: HLSDownloadJob
    private let inLibrary: Bool
    private let display: ProgressDisplay
    private struct State {
        var live = false
        var lastProgress: HLSDownloadProgress?
    }
    private let state = Mutex(State())

    init(context: CommandContext, json: Bool, job: HLSDownloadJob, inLibrary: Bool) {
        self.context = context
        self.json = json
        self.job = job
        self.inLibrary = inLibrary
        display = ProgressDisplay(sink: context.errorOutput)
        if !json {
            context.writeError("Downloading \(job.source)\n  into \(job.packageDirectory.path)\n")
        }
    }

    /// Whether the source turned out to be a live playlist.
    var isLive: Bool { state.withLock { $0.live } }

    /// The first Ctrl-C of a live recording.
    func finishing() {
        guard !json else { return }
        display.message("Stopping the recording: finishing the segments in flight (Ctrl-C again to stop at once).\n")
    }

    func report(_ event: HLSDownloadEvent) {
        switch event {
        case .planned(let summary):
            state.withLock { $0.live = summary.live }
            if json {
                emit([
                    "event": .string("planned"), "id": .string(summary.id), "path": .string(summary.directory.path),
                    "files": .number(Double(summary.files)),
                    "filesAlreadyDone": .number(Double(summary.filesAlreadyDone)),
                    "filesVerified": .number(Double(summary.filesVerified)),
                    "filesChanged": .number(Double(summary.filesChanged)),
                    "live": .bool(summary.live),
                    "renditions": .string(summary.renditions.map(\.folder).joined(separator: ",")),
                    "segmentsExcluded": .number(Double(summary.renditions.reduce(0) { $0 + $1.segmentsExcluded })),
                    "segmentsOutsideSections": .number(
                        Double(summary.renditions.reduce(0) { $0 + $1.segmentsOutsideSections })),
                ])
                return
            }
            var lines = summary.renditions.map { rendition in
                "  \(rendition.folder): \(rendition.segments) segments, "
                    + "\(ByteCountText.fixed(rendition.duration, digits: 1)) s"
                    + (rendition.language.map { " (\($0))" } ?? "") + Self.leftOut(rendition)
            }
            if summary.filesAlreadyDone > 0 {
                let confirmed = summary.filesVerified > 0 ? " (\(summary.filesVerified) confirmed by their ETag)" : ""
                lines.append(
                    "  resuming: \(summary.filesAlreadyDone) of \(summary.files) files already in place\(confirmed)")
            }
            if summary.filesChanged > 0 {
                lines.append("  \(summary.filesChanged) completed files changed on the server: fetching them again")
            }
            if summary.live { lines.append("  live: recording; Ctrl-C stops the recording and keeps it") }
            context.writeError(lines.joined(separator: "\n") + "\n")
        case .progress(let progress):
            progressed(progress)
        case .skipped(let path, let url, let reason):
            if json {
                emit([
                    "event": .string("skipped"), "path": .string(path), "url": .string(url), "error": .string(reason),
                ])
                return
            }
            display.message("warning: skipped \(path): \(reason); it becomes a gap\n")
        case .playlistWarnings(let url, let warnings):
            if json {
                for warning in warnings {
                    emit([
                        "event": .string("playlistWarning"), "url": .string(url),
                        "line": .number(Double(warning.line)), "reason": .string(warning.reason),
                    ])
                }
                return
            }
            display.message(warnings.map { "warning: \(url): line \($0.line): \($0.reason)\n" }.joined())
        case .userKeyUnused(let uri):
            if json {
                // No uri: a key for every URI (--key), and the playlists name no key.
                emit(["event": .string("unusedKey")].merging(uri.map { ["uri": .string($0)] } ?? [:]) { $1 })
                return
            }
            display.message(
                uri.map { "warning: a key was given for \($0), which no playlist names; it is not used\n" }
                    ?? "warning: --key was given, but the playlists name no key; it is not used\n")
        case .recorded(let rendition, let count, let seconds):
            if json {
                emit([
                    "event": .string("recorded"), "rendition": .string(rendition), "segments": .number(Double(count)),
                    "recordedSeconds": .number(seconds),
                ])
            }
        }
    }

    /// `; 7 outside the sections, 2 excluded` for a rendition the selection cut.
    static func leftOut(_ rendition: HLSPackageSummary.Rendition) -> String {
        var words: [String] = []
        if rendition.segmentsOutsideSections > 0 {
            words.append("\(rendition.segmentsOutsideSections) outside the sections")
        }
        if rendition.segmentsExcluded > 0 { words.append("\(rendition.segmentsExcluded) excluded") }
        return words.isEmpty ? "" : "; " + words.joined(separator: ", ")
    }

    private func progressed(_ progress: HLSDownloadProgress) {
        state.withLock { $0.lastProgress = progress }
        if json {
            var fields: [String: JSONValue] = [
                "event": .string("progress"), "files": .number(Double(progress.filesDone)),
                "filesTotal": .number(Double(progress.filesTotal)),
                "filesSkipped": .number(Double(progress.filesSkipped)),
                "bytes": .number(Double(progress.bytesDone)), "transferred": .number(Double(progress.bytesTransferred)),
            ]
            if let total = progress.estimatedTotalBytes { fields["estimatedBytes"] = .number(Double(total)) }
            if let speed = progress.bytesPerSecond { fields["bytesPerSecond"] = .number(speed.rounded()) }
            if let eta = progress.estimatedSecondsRemaining { fields["etaSeconds"] = .number(eta.rounded()) }
            if let recorded = progress.recordedSeconds { fields["recordedSeconds"] = .number(recorded) }
            emit(fields)
            return
        }
        display.update([Self.line(progress)])
    }

    /// Ends the progress display once the download is over (the final state, then a new line).
    func finishProgress() {
        if !json { display.finish() }
    }

    /// The progress as the shared progress line: percent, files, bytes of the estimated total,
    /// speed, ETA; a live recording shows the seconds recorded instead of a percent.
    static func line(_ progress: HLSDownloadProgress) -> ProgressLine {
        var note: String?
        var fraction = progress.fractionCompleted
        if let recorded = progress.recordedSeconds {
            note = "recorded \(ByteCountText.fixed(recorded, digits: 1)) s"
            if let limit = progress.recordingLimitSeconds {
                note! += " / \(ByteCountText.fixed(limit, digits: 0)) s"
                fraction = limit > 0 ? min(recorded / limit, 1) : nil
            } else {
                fraction = nil
            }
        }
        if progress.filesSkipped > 0 {
            note = [note, "\(progress.filesSkipped) skipped"].compactMap { $0 }.joined(separator: ", ")
        }
        return ProgressLine(
            fraction: fraction, bytes: progress.bytesDone, totalBytes: progress.estimatedTotalBytes,
            totalIsEstimate: true, bytesPerSecond: progress.bytesPerSecond,
            secondsRemaining: progress.estimatedSecondsRemaining.flatMap { $0 < 360_000 ? $0 : nil },
            files: .init(done: progress.filesDone, total: progress.filesTotal), note: note)
    }

    func completed(_ result: HLSDownloadResult, elapsed: Duration, subtitles: [PackageSubtitles.Outcome] = []) {
        let seconds = max(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, 1e-3)
        if json {
            for outcome in subtitles {
                var fields: [String: JSONValue] = [
                    "event": .string("subtitles"), "rendition": .string(outcome.folder),
                    "cues": .number(Double(outcome.cues)),
                ]
                if let file = outcome.file { fields["path"] = .string(file.path) }
                if let problem = outcome.problem { fields["error"] = .string(problem) }
                emit(fields)
            }
            var fields: [String: JSONValue] = [
                "event": .string("result"),
                "status": .string(result.status == .complete ? "completed" : "completedWithGaps"),
                "id": .string(result.id), "path": .string(result.directory.path),
                "index": .string(result.indexFile.path), "files": .number(Double(result.files)),
                "filesFetched": .number(Double(result.filesFetched)), "bytes": .number(Double(result.bytes)),
                "transferred": .number(Double(result.bytesTransferred)), "gaps": .number(Double(result.gaps.count)),
                "duration": .number((result.duration * 1000).rounded() / 1000),
                "seconds": .number((seconds * 1000).rounded() / 1000), "live": .bool(result.live),
            ]
            if let mpd = result.mpdFile { fields["mpd"] = .string(mpd.path) }
            emit(fields)
            return
        }
        display.finish()
        let speed = ByteCountText.format(Double(result.bytesTransferred) / seconds)
        var note = result.filesFetched < result.files ? ", \(result.files - result.filesFetched) already in place" : ""
        if !result.gaps.isEmpty { note += ", \(result.gaps.count) skipped as gaps" }
        context.write(
            "Saved \(result.directory.path) (\(result.files) files, \(ByteCountText.format(Double(result.bytes))), "
                + "\(ByteCountText.fixed(result.duration, digits: 1)) s of media; "
                + "\(ByteCountText.fixed(seconds, digits: 1)) s at \(speed)/s\(note))\n")
        if inLibrary {
            let base = "http://127.0.0.1:12345/library/\(result.id)/"
            context.write(
                "Play it offline: run `streamkit serve`, then open "
                    + (result.mpdFile == nil
                        ? base + "index.m3u8\n" : base + "manifest.mpd (DASH) or " + base + "index.m3u8 (HLS)\n"))
        } else if let mpd = result.mpdFile {
            context.write("Play it offline: \(mpd.path) (DASH) or \(result.indexFile.path) (HLS)\n")
        } else {
            context.write("Play it offline: \(result.indexFile.path)\n")
        }
        for outcome in subtitles {
            if let file = outcome.file {
                context.write("Subtitles \(outcome.folder): \(file.path) (\(outcome.cues) cues)\n")
            } else {
                context.writeError("warning: subtitles \(outcome.folder) not merged: \(outcome.problem ?? "")\n")
            }
        }
        for gap in result.gaps { context.writeError("gap: \(gap.path) (\(gap.url)): \(gap.reason)\n") }
    }

    func interrupted() {
        if json {
            emit([
                "event": .string("result"), "status": .string("interrupted"), "id": .string(job.packageID),
                "path": .string(job.packageDirectory.path),
            ])
            return
        }
        display.finish()
        context.writeError(
            "Interrupted; everything fetched is kept in \(job.packageDirectory.path). Run the same command to resume.\n"
        )
    }

    func failed(_ error: HLSDownloadError) {
        if json {
            var fields: [String: JSONValue] = [
                "event": .string("result"), "status": .string("failed"), "error": .string(error.description),
                "kind": .string(error.kind.description), "id": .string(job.packageID),
                "path": .string(job.packageDirectory.path),
            ]
            if let url = error.url { fields["url"] = .string(url) }
            if let status = error.status { fields["httpStatus"] = .number(Double(status.rawValue)) }
            if let file = error.path { fields["file"] = .string(file) }
            emit(fields)
        }
        if !json { display.finish() }
        context.writeError("error: \(error)\n")
        if error.kind != .packageConflict && FileManager.default.fileExists(atPath: job.packageDirectory.path) {
            context.writeError(
                "Everything fetched is kept in \(job.packageDirectory.path); run the same command to resume.\n")
        }
    }

    private func emit(_ fields: [String: JSONValue]) {
        context.write(JSONValue.object(fields) + "\n")
    }
}
