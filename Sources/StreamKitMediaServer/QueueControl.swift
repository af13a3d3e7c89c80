import StreamKitHTTP

/// What the page and `/api/` may ask of the download queue. The server does not know the queue:
/// whoever starts it gives these functions (`streamkit serve` gives the Downloads module's, which
/// perform a change directly or through the process that runs the queue).
public struct QueueControl: Sendable {
    /// Performs a change; throws ``QueueControlError`` for what the caller got wrong (an unknown
    /// task, a move the task's state does not allow, a URL that is not http(s)).
    public var perform: @Sendable (QueueAction) async throws -> QueueActionResult
    /// One task, or `nil` when the queue has none of that id.
    public var task: @Sendable (String) throws -> QueueTaskSummary?
    /// The queue's settings and whether a process runs it.
    public var status: @Sendable () async throws -> QueueStatus
    /// What a source offers (an ``QueueSourceChoices``), for the page's choice of variant, audio
    /// and subtitles before adding it; none when `nil`.
    public var inspect: (@Sendable (String) async throws -> QueueSourceChoices)?

    public init(
        perform: @escaping @Sendable (QueueAction) async throws -> QueueActionResult,
        task: @escaping @Sendable (String) throws -> QueueTaskSummary?,
        status: @escaping @Sendable () async throws -> QueueStatus,
        inspect: (@Sendable (String) async throws -> QueueSourceChoices)? = nil
    ) {
        self.perform = perform
        self.task = task
        self.status = status
        self.inspect = inspect
    }
}

/// A change to the queue, as `/api/` asks it.
public enum QueueAction: Hashable, Sendable {
    case add(QueueAddition)
    /// One task, or every task with `nil`.
    case start(String?)
    /// One task, or every task with `nil`.
    case stop(String?)
    case retry(String)
    /// Removes a task, and its files unless `keepFiles`.
    case remove(String, keepFiles: Bool)
    case setTitle(String, String)
    /// Tasks at once, 1...16.
    case setConcurrency(Int)
}

/// A task to add, as `POST /api/tasks` takes it: the words of `streamkit queue add`.
public struct QueueAddition: Hashable, Sendable, Codable {
    /// The http(s) URL.
    public var url: String
    public var title: String?
    /// `auto` (the default), `hls`, `dash` or `file`.
    public var kind: String?
    /// `best` (the default), `worst`, a bandwidth cap such as `1500k`, or `WxH`.
    public var variant: String?
    /// `auto` (the default), `all`, `none`, a language, or `name:NAME`.
    public var audio: String?
    /// `all` (the default), `none`, a language, or `name:NAME`.
    public var subtitles: String?
    /// Whether it starts at once (the queue's autostart setting when absent).
    public var start: Bool?

    public init(
        url: String, title: String? = nil, kind: String? = nil, variant: String? = nil, audio: String? = nil,
        subtitles: String? = nil, start: Bool? = nil
    ) {
        self.url = url
        self.title = title
        self.kind = kind
        self.variant = variant
        self.audio = audio
        self.subtitles = subtitles
        self.start = start
    }
}

/// What a change concerned: the tasks after it, the ids it removed.
public struct QueueActionResult: Hashable, Sendable {
    public var tasks: [QueueTaskSummary]
    public var removed: [String]

    public init(tasks: [QueueTaskSummary] = [], removed: [String] = []) {
        self.tasks = tasks
        self.removed = removed
    }
}

/// The queue's settings the page shows, and whether anything runs its tasks.
public struct QueueStatus: Hashable, Sendable, Codable {
    /// Whether a process runs the queue (`streamkit queue run`, or `serve --run-queue`): tasks
    /// added and started wait for one otherwise.
    public var isRunning: Bool
    public var maximumConcurrentDownloads: Int
    public var autoStart: Bool

    public init(isRunning: Bool, maximumConcurrentDownloads: Int, autoStart: Bool) {
        self.isRunning = isRunning
        self.maximumConcurrentDownloads = maximumConcurrentDownloads
        self.autoStart = autoStart
    }
}

/// What a source offers, for choosing before adding it.
public struct QueueSourceChoices: Hashable, Sendable, Codable {
    /// One variant of an HLS source.
    public struct Variant: Hashable, Sendable, Codable {
        public var bandwidth: Int
        /// `WxH`, when the playlist says.
        public var resolution: String?
        public var codecs: String?
        /// The word that picks it in ``QueueAddition/variant``.
        public var choice: String

        public init(bandwidth: Int, resolution: String?, codecs: String?, choice: String) {
            self.bandwidth = bandwidth
            self.resolution = resolution
            self.codecs = codecs
            self.choice = choice
        }
    }

    /// An audio or subtitle rendition.
    public struct Rendition: Hashable, Sendable, Codable {
        public var name: String
        public var language: String?
        /// The word that picks it in ``QueueAddition/audio`` or ``QueueAddition/subtitles``.
        public var choice: String

        public init(name: String, language: String?) {
            self.name = name
            self.language = language
            self.choice = "name:" + name
        }
    }

    /// `hls` (a multivariant or media playlist), `dash` (an MPD, its Representations and
    /// AdaptationSets read as variants and renditions) or `file`.
    public var kind: String
    public var variants: [Variant]
    public var audio: [Rendition]
    public var subtitles: [Rendition]
    /// The title the playlist gives (`com.apple.hls.title`), if any.
    public var title: String?

    public init(
        kind: String, variants: [Variant] = [], audio: [Rendition] = [], subtitles: [Rendition] = [],
        title: String? = nil
    ) {
        self.kind = kind
        self.variants = variants
        self.audio = audio
        self.subtitles = subtitles
        self.title = title
    }
}

/// A change the queue refused, with the status `/api/` answers it with.
public struct QueueControlError: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: HTTPStatus
    public var message: String

    public init(_ status: HTTPStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }
}
