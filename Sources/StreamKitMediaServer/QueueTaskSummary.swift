import Foundation

/// A task of the download queue as the page at `/` and `GET /api/tasks` show it. The server
/// does not know the queue: whoever starts it hands it a ``MediaServer/Configuration/queue``
/// function that reads these (the command line reads the Downloads module's index).
public struct QueueTaskSummary: Hashable, Sendable, Codable {
    /// The task id (16 hex digits); for an HLS task, its library folder.
    public var id: String
    public var title: String
    /// The source URL.
    public var url: String
    /// `hls` or `file`.
    public var kind: String
    /// `preparing`, `ready`, `running`, `stopping`, `stopped`, `success`, `failed` or `removing`.
    public var state: String
    /// Done, from 0 to 1.
    public var progress: Double
    public var bytesDone: Int64
    public var bytesExpected: Int64?
    public var bytesPerSecond: Double
    /// Why it last failed.
    public var error: String?
    /// Where an HLS task plays on this server (`/library/ID/index.m3u8`), from its first completed
    /// segments on.
    public var playPath: String?

    public init(
        id: String, title: String, url: String, kind: String, state: String, progress: Double, bytesDone: Int64,
        bytesExpected: Int64?, bytesPerSecond: Double, error: String?, playPath: String?
    ) {
        self.id = id
        self.title = title
        self.url = url
        self.kind = kind
        self.state = state
        self.progress = progress
        self.bytesDone = bytesDone
        self.bytesExpected = bytesExpected
        self.bytesPerSecond = bytesPerSecond
        self.error = error
        self.playPath = playPath
    }
}

/// The part of the download queue a reader asks for: the page at `/` shows the first tasks that
/// need attention, `GET /api/tasks` pages through the queue in order.
public struct QueueTaskRequest: Hashable, Sendable {
    /// Tasks to skip, in the order asked for.
    public var offset: Int
    /// At most this many tasks.
    public var limit: Int
    /// The tasks not yet succeeded first (in queue order), then the succeeded ones, newest first;
    /// otherwise queue order.
    public var unfinishedFirst: Bool

    public init(offset: Int = 0, limit: Int, unfinishedFirst: Bool = false) {
        self.offset = offset
        self.limit = limit
        self.unfinishedFirst = unfinishedFirst
    }
}

/// Tasks of the download queue, with how many there are in each state.
public struct QueueTaskPage: Hashable, Sendable {
    /// The tasks asked for.
    public var tasks: [QueueTaskSummary]
    /// How many tasks the queue holds in each state (the ``QueueTaskSummary/state`` words).
    public var states: [String: Int]

    /// Tasks in the queue in all.
    public var total: Int { states.values.reduce(0, +) }

    public init(tasks: [QueueTaskSummary], states: [String: Int]) {
        self.tasks = tasks
        self.states = states
    }
}
