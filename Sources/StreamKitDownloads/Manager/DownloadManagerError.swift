/// A failure of a ``DownloadManager`` call or of one of its tasks, with what it concerned.
public struct DownloadManagerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        let name: String
        init(_ name: String) { self.name = name }
        /// Another manager (this process or another) holds the directory's lock.
        public static let directoryLocked = Kind("directory locked")
        /// The move between two states is not in ``DownloadState/transitions``.
        public static let illegalTransition = Kind("illegal transition")
        /// No task has this id.
        public static let unknownTask = Kind("unknown task")
        /// A task for the same source and selection is already in the queue.
        public static let duplicateTask = Kind("duplicate task")
        /// An argument is out of range (a URL that is not http(s), a concurrency outside 1...16).
        public static let invalidArgument = Kind("invalid argument")
        /// The index database failed.
        public static let database = Kind("database")
        /// The index database is damaged or empty beside existing downloads; `streamkit queue
        /// repair` (``DownloadManager/repair(directory:)``) rebuilds it.
        public static let damagedIndex = Kind("damaged index")
        /// A file or folder could not be made, written or deleted.
        public static let fileSystem = Kind("file system")
        /// The disk is full: writing a downloaded byte failed with ENOSPC.
        public static let diskFull = Kind("disk full")
        /// The transfer failed (HTTP status, connection, changed representation).
        public static let transfer = Kind("transfer")
        /// The origin host did not answer (refused, unreachable, no such name, connect timeout):
        /// the task waits for it (``DownloadState/waiting``).
        public static let hostUnreachable = Kind("host unreachable")
        /// The task was stopped or removed while it ran.
        public static let cancelled = Kind("cancelled")
        /// A request to the process that runs the queue got no answer.
        public static let noAnswer = Kind("no answer")
        public var description: String { name }
    }

    /// What kind of failure.
    public let kind: Kind
    /// What failed, in words: the URL and status, the file, the state.
    public let detail: String
    /// The task concerned, if any.
    public let taskID: String?

    /// Creates an error.
    public init(_ kind: Kind, _ detail: String, taskID: String? = nil) {
        self.kind = kind
        self.detail = detail
        self.taskID = taskID
    }

    static func illegalTransition(from: DownloadState, to: DownloadState, taskID: String? = nil) -> Self {
        Self(.illegalTransition, "a task cannot go from \(from) to \(to)", taskID: taskID)
    }

    static func unknownTask(_ id: String) -> Self { Self(.unknownTask, "no task with id '\(id)'", taskID: id) }

    public var description: String {
        (taskID.map { "task \($0): " } ?? "") + "\(kind): \(detail)"
    }
}
