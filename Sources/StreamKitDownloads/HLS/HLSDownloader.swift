import Foundation
import StreamKitCore
import StreamKitHTTPClient
import Synchronization

/// Downloads HLS streams into local packages that play with no network: parses the playlists,
/// chooses the variant and renditions, fetches every segment, map and key over several
/// connections, and writes `index.m3u8` with relative URIs. Running a job again resumes its package.
///
/// ```swift
/// let downloader = HLSDownloader(client: try HTTPClient())
/// let download = downloader.start(HLSDownloadJob(source: url, packageDirectory: folder))
/// for await event in download.events { ... }
/// let result = try await download.result()
/// ```
public final class HLSDownloader: Sendable {
    /// The client every request goes through (its rate limit and connection limits apply).
    public let client: HTTPClient
    /// Where retries and skipped files are logged.
    public let logger: Logger
    /// How a live recording waits between reloads; `nil` for the clock.
    private let reloadWait: ReloadWait?

    /// How a live recording waits for the next reload (the target duration, or half of it when
    /// nothing changed): a benchmark passes one that returns at once, so that a day's recording
    /// against an origin that adds a segment at every reload runs in minutes.
    public typealias ReloadWait = @Sendable (Duration) async throws -> Void

    /// Creates a downloader.
    ///
    /// - Parameters:
    ///   - client: The HTTP client; allow at least ``HLSDownloadOptions/connections`` connections per host.
    ///   - logger: Where to log; disabled by default.
    ///   - reloadWait: How a live recording waits between reloads; the clock by default.
    public init(client: HTTPClient, logger: Logger = .disabled, reloadWait: ReloadWait? = nil) {
        self.client = client
        self.logger = logger
        self.reloadWait = reloadWait
    }

    /// Starts `job`.
    ///
    /// - Parameter job: What to download and where.
    /// - Returns: The running download: its events and result.
    public func start(_ job: HLSDownloadJob) -> HLSDownload {
        let (events, continuation) = AsyncStream.makeStream(of: HLSDownloadEvent.self)
        let control = RecordingControl(wait: reloadWait)
        let client = client
        let logger = logger
        let task = Task {
            defer { continuation.finish() }
            let engine = HLSDownloadEngine(
                job: job, client: client, logger: logger, events: continuation, control: control)
            return try await engine.run()
        }
        return HLSDownload(job: job, events: events, task: task, control: control)
    }
}

/// A running HLS download.
public final class HLSDownload: Sendable {
    /// The job.
    public let job: HLSDownloadJob
    /// Events until the download ends: planned, progress, skipped files, live reloads.
    public let events: AsyncStream<HLSDownloadEvent>
    private let task: Task<HLSDownloadResult, any Error>
    private let control: RecordingControl

    init(
        job: HLSDownloadJob, events: AsyncStream<HLSDownloadEvent>, task: Task<HLSDownloadResult, any Error>,
        control: RecordingControl
    ) {
        self.job = job
        self.events = events
        self.task = task
        self.control = control
    }

    /// Waits for the download to end.
    ///
    /// - Returns: The finished package.
    /// - Throws: ``HLSDownloadError``: what failed (the package state is kept for a resume), or
    ///   `cancelled` after ``cancel()``.
    public func result() async throws -> HLSDownloadResult {
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Stops at once, keeping everything fetched; running the job again resumes. Transfers in
    /// flight keep their partial data.
    public func cancel() { task.cancel() }

    /// For a live playlist: stops taking new segments, lets the transfers in flight finish, and
    /// writes the package as VOD (EXT-X-ENDLIST). For VOD it does nothing.
    public func finishRecording() { control.requestStop() }
}

/// Tells a live recording to stop taking segments, and waits between its reloads.
final class RecordingControl: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let wait: HLSDownloader.ReloadWait?

    init(wait: HLSDownloader.ReloadWait? = nil) { self.wait = wait }

    var stopRequested: Bool { stopped.load(ordering: .acquiring) }

    func requestStop() { stopped.store(true, ordering: .releasing) }

    /// Sleeps for `duration`, returning early when a stop is requested.
    func sleep(_ duration: Duration) async throws {
        if let wait {
            if !stopRequested { try await wait(duration) }
            return
        }
        let deadline = ContinuousClock.now + duration
        while !stopRequested {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return }
            try await Task.sleep(for: min(left, .milliseconds(100)))
        }
    }
}
