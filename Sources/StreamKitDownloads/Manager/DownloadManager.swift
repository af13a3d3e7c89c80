import Foundation
import StreamKitCore
import StreamKitHTTPClient

/// A persistent download queue: HLS streams and progressive files,
/// kept in a SQLite index so that the queue, every task's state and every file's bytes survive a
/// crash. One manager per directory: a second one, in this process or another, gets a
/// ``DownloadManagerError`` of kind `directoryLocked`.
///
/// ```swift
/// let manager = try await DownloadManager(configuration: .init(directory: home))
/// let info = try await manager.add(DownloadRequest(url: url, kind: .file))
/// try await manager.start(info.id)
/// for await event in await manager.events() { ... }
/// ```
///
/// States move only along ``DownloadState/transitions``. Tasks run in queue order, at most
/// ``maximumConcurrentDownloads`` at once.
public actor DownloadManager {
    /// The manager's directory.
    public nonisolated let directory: URL
    /// The settings it was created with.
    public nonisolated let configuration: DownloadManagerConfiguration
    /// Added tasks start at once (`true`) or wait for ``start(_:)`` (`false`, the default).
    public var autoStart = false
    /// Tasks running at once, 1...16 (default 1); see ``setMaximumConcurrentDownloads(_:)``.
    public internal(set) var maximumConcurrentDownloads = 1
    /// The random part of this directory's task ids (``DownloadIDSalt``).
    public nonisolated let idSalt: String
    /// Where new tasks are stored (default `library/` in ``directory``).
    public internal(set) var downloadDirectory: URL
    /// The most bytes a second all tasks receive together, or `nil` for no limit.
    public internal(set) var bandwidthLimit: Int64?

    private let lock: DirectoryLock
    /// The SQLite index: every task's row, the settings.
    let index: DownloadIndex
    /// Every task, as last saved or about to be.
    var tasks = DownloadTaskTable()
    /// The runner of each task that has one (it holds a slot until it ends).
    var runners: [String: Task<Void, Never>] = [:]
    let hub = DownloadEventHub()
    var lastPersist: [String: ContinuousClock.Instant] = [:]
    /// Tasks whose latest change the index refused (see ``persist(_:)``).
    var unsaved: Set<String> = []
    /// Range sets of file tasks that the index refused, newest first in line to be written.
    var unsavedFileStates: [String: FileResumeState] = [:]
    /// The probe of each `host:port` that tasks wait for (see ``waitForHost(_:_:)``).
    var hostProbes: [String: Task<Void, Never>] = [:]
    /// Free space and cellular access (settings).
    var requirements = DownloadRequirements()
    /// Tasks waiting for a requirement, and the watch that checks them again.
    var requirementWaiters: Set<String> = []
    var requirementWatch: Task<Void, Never>?
    /// Made when the first task runs (a manager that only lists or records tasks, such as the one
    /// behind `streamkit download`, never needs one).
    var client: HTTPClient?
    /// Whether a task ran since the last `allCompleted`.
    var ranSinceIdle = false
    private(set) var closed = false
    /// Whether tasks may start (see ``resumeQueue()``).
    private(set) var queueReleased = false

    /// Opens the manager of `configuration.directory`, creating it if needed, and recovers from a
    /// crash: running tasks come back ready, stops in progress end stopped, removals finish. The
    /// directory and its `library/` are made 0700 and the index 0600 (``PrivateFiles``), also
    /// when an older version made them readable to others.
    ///
    /// - Throws: ``DownloadManagerError``: `directoryLocked` when another manager uses the
    ///   directory, `database` or `fileSystem` when it cannot be opened.
    public init(configuration: DownloadManagerConfiguration) async throws(DownloadManagerError) {
        let directory = configuration.directory
        do {
            try PrivateFiles.createDirectory(directory.path)
        } catch {
            throw DownloadManagerError(.fileSystem, "cannot create \(directory.path): \(error)")
        }
        PrivateFiles.restrictDirectory(directory.path)
        PrivateFiles.restrictDirectory(directory.appendingPathComponent("library").path)
        self.directory = directory
        self.configuration = configuration
        // A lock just released can stay held for a moment by a process being spawned elsewhere in
        // this process (it shares the file until its exec closes it): try a few times, unless the
        // holder is a manager running in another process (a command then goes to it at once: the
        // half second of tries made every command sent to `queue run` take 0.6 s).
        var acquired: DirectoryLock?
        for attempt in 1...10 {
            do {
                acquired = try DirectoryLock(directory: directory)
                break
            } catch  where error.kind == .directoryLocked && attempt < 10 {
                if DirectoryLock.namesAnotherLiveHolder(directory: directory) { throw error }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        guard let acquired else { throw DownloadManagerError(.directoryLocked, "\(directory.path) is locked") }
        lock = acquired
        idSalt = try DownloadIDSalt.load(directory: directory)
        // Opening may create the file and switch it to WAL, which fsyncs: off the cooperative pool.
        let path = directory.appendingPathComponent("queue.sqlite").path
        index = try await offCooperativePool {
            Result { () throws(DownloadManagerError) in try DownloadIndex(path: path) }
        }
        .get()
        downloadDirectory = directory.appendingPathComponent("library", isDirectory: true)
        if let value = try index.setting("maxConcurrent"), let number = Int(value) {
            maximumConcurrentDownloads = number
        }
        if let value = try index.setting("downloadDirectory") {
            downloadDirectory = URL(fileURLWithPath: value, isDirectory: true)
        }
        bandwidthLimit = try index.setting("bandwidthLimit").flatMap { Int64($0) }
        autoStart = try index.setting("autoStart") == "1"
        requirements.allowsCellularAccess = try index.setting("allowsCellular") != "0"
        requirements.freeSpaceFloor = try index.setting("freeSpaceFloor").flatMap { Int64($0) }
        try recover()
        // Nothing runs yet: tasks found ready wait for a subscriber, a callback, a queue change or
        // resumeQueue(), so that whoever opened the manager sees every state change they make.
    }

    /// The client tasks run with, made (with the current bandwidth limit) when first needed.
    func activeClient() throws(DownloadManagerError) -> HTTPClient {
        if let client { return client }
        do {
            let made = try Self.makeClient(configuration, limit: bandwidthLimit)
            client = made
            return made
        } catch {
            throw DownloadManagerError(.transfer, "cannot start the HTTP client: \(error)")
        }
    }

    private static func makeClient(_ configuration: DownloadManagerConfiguration, limit: Int64?) throws -> HTTPClient {
        try HTTPClient(
            configuration: HTTPClientConfiguration(
                userAgent: configuration.userAgent, maximumConnectionsPerHost: 64, maximumConnections: 256,
                globalReceiveRate: limit, bodyBufferLimit: 256 << 10, receiveBufferSize: 256 << 10))
    }

    private func recover() throws(DownloadManagerError) {
        var movedSecrets = false
        let checksRecords = try index.setting(Self.recordsCheckedSetting) == nil
        let stored = try index.tasks()
        tasks.reserveCapacity(stored.count)
        for var info in stored {
            if info.state == .removing {
                deleteFiles(of: info)
                TaskSecrets.remove(directory: directory, id: info.id)
                try index.delete(info.id)
                continue
            }
            let before = info.headers
            info = try moveSecretsOut(info, records: checksRecords)
            movedSecrets = movedSecrets || info.headers != before
            let recovered = info.state.recovered
            if recovered != info.state {
                info.state = recovered
                try index.update(info)
            }
            tasks[info.id] = info
        }
        if checksRecords { try index.setSetting(Self.recordsCheckedSetting, "1") }
        // The write-ahead log still holds the pages with the credentials in clear: fold it in.
        if movedSecrets { _ = try? index.database.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// Cancels running tasks (they come back `ready`, to resume next time), saves, and releases
    /// the directory. The manager does nothing afterwards.
    public func close() async {
        guard !closed else { return }
        closed = true
        for probe in hostProbes.values { probe.cancel() }
        hostProbes = [:]
        requirementWatch?.cancel()
        requirementWatch = nil
        let running = runners
        for (id, runner) in running {
            if var info = tasks[id], info.state == .running {
                info.state = .ready
                info.bytesPerSecond = 0
                tasks[id] = info
                emit(.stateChanged(info, from: .running))
                persist(info)
            }
            runner.cancel()
        }
        for runner in running.values { await runner.value }
        persistUnsaved()
        hub.close()
        await client?.shutdown()
        // Fold the WAL into the database now, off the cooperative pool: the checkpoint fsyncs,
        // which takes seconds on a busy disk, and SQLite would otherwise do it when the last
        // connection closes, on whatever thread drops the manager.
        let index = index
        _ = await offCooperativePool { try? index.database.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        lock.release()
    }

    // MARK: Events

    /// Every task as it is now (a `current` event each, in queue order), then every event, until
    /// the manager closes. The first subscription also lets the tasks found ready at open start.
    public func events() -> DownloadEventStream { subscribe(filter: nil) }

    /// The task as it is now (a `current` event), then its events (state changes, progress, speed,
    /// completion, failure, removal), until the manager closes. Lets the queue start, as
    /// ``events()`` does.
    public func updates(for id: String) -> DownloadEventStream { subscribe(filter: id) }

    /// Sets the manager-wide closures (replacing earlier ones), and lets the queue start.
    public func setCallbacks(_ callbacks: DownloadCallbacks) {
        hub.setCallbacks(callbacks)
        resumeQueue()
    }

    /// Sets one task's closures (replacing earlier ones); `nil` removes them. Lets the queue start.
    public func setCallbacks(_ callbacks: DownloadTaskCallbacks?, for id: String) {
        hub.setCallbacks(callbacks, for: id)
        resumeQueue()
    }

    /// Lets tasks start. A manager starts none when it opens, so that the tasks it resumes do not
    /// change state before anyone listens: the first of ``events()``, ``updates(for:)``,
    /// `setCallbacks`, a queue change (`add`, `start`, `startAll`, `retry`) or this call
    /// starts them. Call it when nothing else will, to resume a queue without listening to it.
    public func resumeQueue() {
        queueReleased = true
        schedule()
    }

    private func subscribe(filter: String?) -> DownloadEventStream {
        // Closing refuses subscribers at once; the streams it has end once its runners have.
        guard !closed else {
            let ended = DownloadEventBuffer()
            ended.finish()
            return DownloadEventStream(buffer: ended)
        }
        let current = allTasks().filter { filter == nil || $0.id == filter }.map(DownloadEvent.current)
        let stream = hub.subscribe(filter: filter, current: current)
        resumeQueue()
        return stream
    }

    func emit(_ event: DownloadEvent) { hub.emit(event, task: event.taskID.flatMap { tasks[$0] }) }

    // MARK: Queries

    /// Every task, in queue order.
    public func allTasks() -> [DownloadTaskInfo] { tasks.inQueueOrder }

    /// The tasks being added, queued, running, waiting for their host or stopping, in queue order:
    /// what a progress display shows, without copying a queue of thousands at every tick.
    public func activeTasks() -> [DownloadTaskInfo] { tasks.activeInQueueOrder }

    /// Whether nothing is being added, queued, running or stopping.
    public var isIdle: Bool {
        DownloadScheduler.isIdle(queue: queueEntries, hasRunners: !runners.isEmpty)
    }

    /// The task with `id`, or `nil`.
    public func info(_ id: String) -> DownloadTaskInfo? { tasks[id] }

    /// The tasks that succeeded, in queue order.
    public func completedTasks() -> [DownloadTaskInfo] { allTasks().filter { $0.state == .success } }

    /// The finished items that play with no network, with the file to open.
    /// An item whose files were deleted behind the manager's back is left out.
    public func localItems() -> [LocalDownloadItem] {
        completedTasks().compactMap { info in
            let file =
                switch info.kind {
                case .hls, .dash: URL(fileURLWithPath: info.location).appendingPathComponent("index.m3u8")
                case .file: URL(fileURLWithPath: info.location)
                case .rtmp: URL(fileURLWithPath: info.recordingFile)
                }
            guard FileManager.default.fileExists(atPath: file.path) else { return nil }
            return LocalDownloadItem(
                id: info.id, title: info.title, fileType: info.fileType, playableFile: file,
                byteCount: Self.byteCount(at: info.location))
        }
    }

    /// The tasks the scheduler acts on, in queue order (read lazily: no step copies the queue).
    var queueEntries: some Sequence<DownloadScheduler.Entry> { tasks.schedulerQueue }

    /// The scheduler, with the current settings.
    var scheduler: DownloadScheduler {
        DownloadScheduler(maximumConcurrent: maximumConcurrentDownloads, autoStart: autoStart)
    }

    // MARK: State changes

    func move(_ id: String, to next: DownloadState, clearingError: Bool = false) throws(DownloadManagerError) {
        guard var info = tasks[id] else { throw .unknownTask(id) }
        let previous = info.state
        guard previous.canTransition(to: next) else { throw .illegalTransition(from: previous, to: next, taskID: id) }
        info.state = next
        if clearingError { info.lastError = nil }
        if next != .running { info.bytesPerSecond = 0 }
        if next == .success {
            info.finishedAt = Date()
            info.lastError = nil
        }
        tasks[id] = info
        lastPersist[id] = .now
        emit(.stateChanged(info, from: previous))
        persist(info)
    }

    func fail(_ id: String, _ error: DownloadManagerError) throws(DownloadManagerError) {
        guard var info = tasks[id] else { return }
        info.lastError = error.detail
        tasks[id] = info
        try move(id, to: .failed)
        if let info = tasks[id] { emit(.failed(info, error)) }
    }

    // MARK: Progress

    func reportProgress(
        _ id: String, done: Int64, expected: Int64?, fraction: Double?, speed: Double, seconds: Double? = nil
    ) {
        guard var info = tasks[id], info.state == .running else { return }
        info.bytesDone = done
        if let seconds { info.recordedSeconds = seconds }
        info.bytesExpected = expected
        info.progress = min(1, fraction ?? expected.map { $0 > 0 ? Double(done) / Double($0) : 0 } ?? 0)
        info.bytesPerSecond = speed
        tasks[id] = info
        emit(.progress(info))
        emit(.speed(id: id, bytesPerSecond: speed))
        persistAtInterval(info)
    }

    /// The runner's post-processing reached `fraction`.
    func reportPostProcessing(_ id: String, fraction: Double) {
        guard var info = tasks[id], info.state == .running else { return }
        info.postProcessingProgress = fraction
        tasks[id] = info
        emit(.postProcessing(id: id, fraction: fraction))
        persistAtInterval(info)
    }

    /// Saves a running task's figures at most once every ``DownloadManagerConfiguration/persistInterval``
    /// (every state change saves them anyway).
    private func persistAtInterval(_ info: DownloadTaskInfo) {
        if let last = lastPersist[info.id], last.duration(to: .now) < configuration.persistInterval { return }
        lastPersist[info.id] = .now
        persist(info)
    }
}
