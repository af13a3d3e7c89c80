import StreamKitCore
import StreamKitDownloads
import StreamKitRTMP
import Synchronization

/// The ``LiveRecorder`` that `streamkit queue run` gives its manager: ``RTMPRecorder`` on a
/// recording task's FLV file, continuing what earlier runs left in it, and with `--hls` the
/// task's folder as a live HLS package laid out as `rtmp record --library` lays it out
/// (``RTMPRecordPackage``), so that `streamkit serve` lists and plays it while it records.
///
/// It lives here, not in StreamKitDownloads, because that module does not depend on
/// StreamKitRTMP: this module is the first that sees both (docs/ARCHITECTURE.md).
struct QueueRTMPRecorder: LiveRecorder {
    /// The HLS segment length aimed at.
    var segmentDuration: Duration = .seconds(4)

    /// RTMP failures that no other run can cure.
    static let permanentKinds: Set<RTMPError.Kind> = [
        .invalidURL, .certificateRejected, .unsupported, .connectRejected, .badName,
    ]

    func record(
        _ job: LiveRecordingJob, progress: @escaping @Sendable (LiveRecordingProgress) -> Void
    ) async throws -> LiveRecordingOutcome {
        let url: RTMPURL
        do {
            url = try RTMPURL(job.url)
        } catch {
            throw LiveRecordingError("\(error)", isTransient: false)
        }
        let package = job.hlsPackage ? RTMPRecordPackage(directory: job.folder, url: job.url) : nil
        let options = RTMPRecorder.Options(
            duration: .milliseconds(Int64((job.duration * 1_000).rounded())),
            idleTimeout: .milliseconds(Int64((job.idleTimeout * 1_000).rounded())),
            hls: package.map { .init(directory: $0.mediaDirectory, segmentDuration: segmentDuration) },
            continues: true)
        // The package's index.m3u8 and package.json, with its first segment and at the end of the run.
        let registered = Mutex(false)
        @Sendable func register(_ value: RTMPRecorder.Progress, status: String) {
            guard let package, value.segments > 0 else { return }
            let bandwidth = value.duration > 0 ? Int(Double(value.bytes) * 8 / value.duration) : 1
            if (try? package.write(bandwidth: bandwidth, codecs: value.codecs, status: status)) != nil {
                registered.withLock { $0 = true }
            }
        }
        let summary: RTMPRecorder.Summary
        do {
            summary = try await RTMPRecorder(url: url, options: options).record(to: job.file) { value in
                if !registered.withLock({ $0 }) { register(value, status: "recording") }
                progress(LiveRecordingProgress(seconds: value.duration, bytes: value.bytes))
            }
        } catch let error as RTMPError {
            if Task.isCancelled { throw CancellationError() }
            throw LiveRecordingError("\(error)", isTransient: !Self.permanentKinds.contains(error.kind))
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw LiveRecordingError("\(error)", isTransient: false)
        }
        let reached = LiveRecordingProgress(seconds: summary.progress.duration, bytes: summary.progress.bytes)
        let complete = summary.endReason == .durationReached
        register(summary.progress, status: complete ? "complete" : "stopped")
        switch summary.endReason {
        case .durationReached: return .durationReached(reached)
        case .cancelled: throw CancellationError()
        default: return .endedEarly(reached, reason: "\(summary.endReason)")
        }
    }
}
