/// How a recording task (``DownloadKind/rtmp``) records: how long, how long without media it
/// waits, and whether it also writes a live HLS package.
public struct LiveRecordingSettings: Hashable, Sendable, Codable {
    /// The media time to record in all, in seconds, over however many runs it takes.
    public var duration: Double
    /// A run ends when no media arrives for this many seconds (the task then tries again, as
    /// after any failure).
    public var idleTimeout: Double
    /// Whether the task's folder is also a live HLS package (`index.m3u8`, `video/`) that the
    /// library serves while it records.
    public var hls: Bool

    /// Creates settings.
    public init(duration: Double, idleTimeout: Double = 10, hls: Bool = false) {
        self.duration = duration
        self.idleTimeout = idleTimeout
        self.hls = hls
    }
}

/// Records live streams for a ``DownloadManager``'s recording tasks. StreamKitDownloads does not
/// speak RTMP (its module does not depend on StreamKitRTMP): whoever builds the manager passes
/// one in ``DownloadManagerConfiguration/liveRecorder``; `streamkit queue run` passes its RTMP
/// recorder. A manager without one fails recording tasks when they run.
public protocol LiveRecorder: Sendable {
    /// Records `job` until its files hold ``LiveRecordingJob/duration`` seconds of media, the
    /// stream ends, or no media comes for the idle timeout; continues what earlier runs wrote.
    ///
    /// - Parameters:
    ///   - job: What to record, and where.
    ///   - progress: Hears the seconds and bytes in the files, at least once a second while media comes.
    /// - Returns: How the run ended.
    /// - Throws: ``LiveRecordingError`` when nothing could be recorded; `CancellationError` when
    ///   cancelled (the files stay whole, to be continued).
    func record(
        _ job: LiveRecordingJob, progress: @escaping @Sendable (LiveRecordingProgress) -> Void
    ) async throws -> LiveRecordingOutcome
}

/// One run of a recording task, as a ``LiveRecorder`` gets it.
public struct LiveRecordingJob: Hashable, Sendable {
    /// The task id.
    public var taskID: String
    /// The stream's URL (`rtmp://`, `rtmps://`).
    public var url: String
    /// The recording: an FLV file in the task's folder, appended to by later runs.
    public var file: String
    /// The task's folder, which becomes a live HLS package when ``hlsPackage`` is set.
    public var folder: String
    /// Whether to write the HLS package in ``folder``.
    public var hlsPackage: Bool
    /// Seconds of media the file must hold in all.
    public var duration: Double
    /// Seconds without media after which the run ends.
    public var idleTimeout: Double
}

/// How far a run of a recording task has come.
public struct LiveRecordingProgress: Hashable, Sendable {
    /// Seconds of media in the file, earlier runs included.
    public var seconds: Double
    /// Bytes in the file.
    public var bytes: Int64

    /// Creates progress.
    public init(seconds: Double, bytes: Int64) {
        self.seconds = seconds
        self.bytes = bytes
    }
}

/// How a run of a recording task ended.
public enum LiveRecordingOutcome: Hashable, Sendable {
    /// The file holds the duration: the task succeeded.
    case durationReached(LiveRecordingProgress)
    /// The stream ended, went idle, or the connection was lost before the duration, for this
    /// reason (in words); the task tries again as its failure policy allows.
    case endedEarly(LiveRecordingProgress, reason: String)
}

/// A run of a recording task that recorded nothing.
public struct LiveRecordingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Whether another run may succeed (a connection that failed, a stream not yet published);
    /// `false` fails the task at once (a file that cannot be written, a codec HLS cannot carry).
    public var isTransient: Bool
    /// What failed, in words.
    public var description: String

    /// Creates an error.
    public init(_ description: String, isTransient: Bool) {
        self.description = description
        self.isTransient = isTransient
    }
}
