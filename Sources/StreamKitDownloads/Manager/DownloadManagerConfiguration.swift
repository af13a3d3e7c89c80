import Foundation
import StreamKitHTTPClient

/// How a ``DownloadManager`` is set up.
public struct DownloadManagerConfiguration: Sendable {
    /// The manager's directory: the index `queue.sqlite`, its lock `queue.lock`, and by default the
    /// downloads, in `library/`.
    public var directory: URL
    /// Whether the manager runs tasks. A manager that only edits the queue (the `streamkit queue`
    /// commands other than `run`) sets this to `false`: tasks it makes ready wait for a runner.
    public var runsTasks: Bool
    /// How progressive files are fetched (connections, backoff, save interval).
    public var fileOptions: RangedFileOptions
    /// How HLS requests are retried before the task counts an error.
    public var hlsRetry: HTTPClientRetryPolicy
    /// The least time between two progress events of one task (default 100 ms: ten a second).
    public var progressInterval: Duration
    /// The most time between two saves of a running task's progress (state changes save at once).
    public var persistInterval: Duration
    /// The `User-Agent` sent.
    public var userAgent: String
    /// The first pause before a host that tasks wait for is tried again; it doubles with each
    /// try that finds it still silent.
    public var hostRetryDelay: Duration
    /// The longest pause between two tries of a host.
    public var hostRetryMaximumDelay: Duration
    /// How often tasks waiting for free space or a network that is not cellular are checked again.
    public var requirementCheckInterval: Duration
    /// Where `proc/net/route` and `sys/class/net` are read from to tell a cellular route (`/`;
    /// another folder in tests).
    public var networkRoot: URL
    /// What records the live streams of recording tasks (``DownloadKind/rtmp``); `nil` fails them
    /// when they run. `streamkit queue run` passes its RTMP recorder.
    public var liveRecorder: (any LiveRecorder)?

    /// Creates a configuration.
    public init(
        directory: URL, runsTasks: Bool = true, fileOptions: RangedFileOptions = RangedFileOptions(),
        hlsRetry: HTTPClientRetryPolicy = .default, progressInterval: Duration = .milliseconds(100),
        persistInterval: Duration = .seconds(1), userAgent: String = "streamkit",
        hostRetryDelay: Duration = .seconds(1),
        hostRetryMaximumDelay: Duration = .seconds(600), requirementCheckInterval: Duration = .seconds(2),
        networkRoot: URL = URL(fileURLWithPath: "/"), liveRecorder: (any LiveRecorder)? = nil
    ) {
        self.liveRecorder = liveRecorder
        self.directory = directory
        self.runsTasks = runsTasks
        self.fileOptions = fileOptions
        self.hlsRetry = hlsRetry
        self.progressInterval = progressInterval
        self.persistInterval = persistInterval
        self.userAgent = userAgent
        self.hostRetryDelay = hostRetryDelay
        self.hostRetryMaximumDelay = hostRetryMaximumDelay
        self.requirementCheckInterval = requirementCheckInterval
        self.networkRoot = networkRoot
    }
}
